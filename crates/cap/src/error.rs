//! Why a capability operation failed.

use core::fmt;

/// Why a capability operation failed.
///
/// Every variant is a plain value: no operation in this crate panics on
/// input a caller controls, it returns one of these instead. The kernel maps
/// them onto its ABI error codes (see the crate documentation for the
/// mapping); this crate knows nothing about the ABI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CapError {
    /// The slot number is outside the capability list.
    BadSlot,
    /// The slot number is inside the list but the slot holds no capability.
    EmptySlot,
    /// Every slot of the destination list is occupied.
    Full,
    /// The capability names the resource but lacks a right the operation
    /// needs (for a grant: the source lacks [`Rights::GRANT`](crate::Rights::GRANT)).
    Denied,
    /// The capability's name does not cover the guarded resource's name.
    WrongName,
    /// The operation asked for rights the source capability does not have.
    Widen,
    /// The name would be deeper than [`MAX_DEPTH`](crate::MAX_DEPTH)
    /// components (or a wire form claims such a depth, or carries
    /// components beyond its stated depth).
    TooDeep,
    /// A rights value carries bits that name no right.
    BadRights,
}

impl CapError {
    /// A short English description.
    pub const fn text(self) -> &'static str {
        match self {
            CapError::BadSlot => "capability slot out of range",
            CapError::EmptySlot => "capability slot is empty",
            CapError::Full => "capability list is full",
            CapError::Denied => "capability lacks a needed right",
            CapError::WrongName => "capability does not name the resource",
            CapError::Widen => "requested rights exceed the source capability",
            CapError::TooDeep => "capability name too deep",
            CapError::BadRights => "unknown rights bits",
        }
    }

    /// Every error, for exhaustive tests and tables.
    pub const ALL: [CapError; 8] = [
        CapError::BadSlot,
        CapError::EmptySlot,
        CapError::Full,
        CapError::Denied,
        CapError::WrongName,
        CapError::Widen,
        CapError::TooDeep,
        CapError::BadRights,
    ];
}

impl fmt::Display for CapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

impl core::error::Error for CapError {}
