//! [`Refusal`]: why XN refused an operation, with stable codes.

use core::fmt;

use oxok_abi::xn::refuse;

use crate::{Fault, SetError};

/// Why XN refused an operation. Nothing changed when one is returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The block is past the end of the disk.
    OutOfRange(u64),
    /// A block to allocate is not free.
    NotFree(u64),
    /// The block is not allocated, or not owned where the caller says.
    NotAllocated(u64),
    /// The block is not a metadata block.
    NotMetadata(u64),
    /// `acl` does not grant the caller the rights needed.
    Denied(u64),
    /// `owns` after the change is not `owns` before plus/minus the extent.
    OwnsMismatch(u64),
    /// `owns` of this block emitted an invalid set.
    BadOwns(u64, SetError),
    /// A UDF run over this block stopped.
    UdfFault(u64, Fault),
    /// Writing `block` would persist a pointer to the tainted `child`.
    TaintedPointer {
        /// The block being written.
        block: u64,
        /// The block it points to that is not durably initialised.
        child: u64,
    },
    /// A write of the block is in flight.
    InFlight(u64),
    /// The metadata block to free still owns blocks.
    NotEmpty(u64),
    /// The block is already bound to a frame.
    AlreadyBound(u64),
    /// The block (or the metadata deciding about it) is not bound to a frame.
    NotBound(u64),
    /// A metadata block's frame may not be bound writable.
    MetadataWritable(u64),
    /// The block is dirty, tainted or in flight.
    Busy(u64),
    /// No memory for XN's bookkeeping.
    NoMemory,
    /// No such file system, or a type it does not have.
    BadFs,
    /// The block is freed and waits on the will-free list.
    WillFree(u64),
    /// The block (a copy's source) has never been durably written.
    Tainted(u64),
}

impl Refusal {
    /// The stable code ([`oxok_abi::xn::refuse`]).
    pub const fn code(&self) -> u64 {
        match self {
            Refusal::OutOfRange(_) => refuse::OUT_OF_RANGE,
            Refusal::NotFree(_) => refuse::NOT_FREE,
            Refusal::NotAllocated(_) => refuse::NOT_ALLOCATED,
            Refusal::NotMetadata(_) => refuse::NOT_METADATA,
            Refusal::Denied(_) => refuse::DENIED,
            Refusal::OwnsMismatch(_) => refuse::OWNS_MISMATCH,
            Refusal::BadOwns(..) => refuse::BAD_OWNS,
            Refusal::UdfFault(..) => refuse::UDF_FAULT,
            Refusal::TaintedPointer { .. } => refuse::TAINTED_POINTER,
            Refusal::InFlight(_) => refuse::IN_FLIGHT,
            Refusal::NotEmpty(_) => refuse::NOT_EMPTY,
            Refusal::AlreadyBound(_) => refuse::ALREADY_BOUND,
            Refusal::NotBound(_) => refuse::NOT_BOUND,
            Refusal::MetadataWritable(_) => refuse::METADATA_WRITABLE,
            Refusal::Busy(_) => refuse::BUSY,
            Refusal::NoMemory => refuse::NO_MEMORY,
            Refusal::BadFs => refuse::BAD_FS,
            Refusal::WillFree(_) => refuse::WILL_FREE,
            Refusal::Tainted(_) => refuse::TAINTED,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Refusal::OutOfRange(b) => write!(f, "block {b} is past the disk"),
            Refusal::NotFree(b) => write!(f, "block {b} is not free"),
            Refusal::NotAllocated(b) => write!(f, "block {b} is not allocated there"),
            Refusal::NotMetadata(b) => write!(f, "block {b} is not metadata"),
            Refusal::Denied(b) => write!(f, "acl over block {b} denies the caller"),
            Refusal::OwnsMismatch(b) => write!(f, "owns of block {b} does not change by exactly the extent"),
            Refusal::BadOwns(b, e) => write!(f, "owns of block {b} is invalid: {e:?}"),
            Refusal::UdfFault(b, e) => write!(f, "UDF over block {b}: {e}"),
            Refusal::TaintedPointer { block, child } => {
                write!(f, "block {block} would persist a pointer to tainted block {child}")
            }
            Refusal::InFlight(b) => write!(f, "block {b} has a write in flight"),
            Refusal::NotEmpty(b) => write!(f, "block {b} still owns blocks"),
            Refusal::AlreadyBound(b) => write!(f, "block {b} is already bound"),
            Refusal::NotBound(b) => write!(f, "block {b} is not in the cache"),
            Refusal::MetadataWritable(b) => write!(f, "metadata block {b} cannot be bound writable"),
            Refusal::Busy(b) => write!(f, "block {b} is dirty, tainted or in flight"),
            Refusal::NoMemory => f.write_str("no memory for XN bookkeeping"),
            Refusal::BadFs => f.write_str("no such file system or type"),
            Refusal::WillFree(b) => write!(f, "block {b} waits on the will-free list"),
            Refusal::Tainted(b) => write!(f, "block {b} has never been durably written"),
        }
    }
}
