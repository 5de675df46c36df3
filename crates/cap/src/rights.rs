//! Rights: what a capability lets its holder do with what it names.

use core::fmt;
use core::ops::{BitAnd, BitOr};

/// A set of rights carried by a capability.
///
/// A small bitset over five rights:
/// - [`Rights::READ`]: read the resource (map a frame read-only, read an
///   environment's state, ...);
/// - [`Rights::WRITE`]: modify the resource (map a frame writable, replace an
///   environment's state, ...);
/// - [`Rights::GRANT`]: copy the capability into another environment's list
///   (see [`grant`](crate::grant));
/// - [`Rights::CALL`]: transfer control to the resource — for an
///   environment, a protected control transfer to it or a directed yield
///   of the CPU to it;
/// - [`Rights::EXECUTE`]: make the resource's memory executable — for an
///   environment, map pages into it without `NO_EXECUTE`.
///
/// The value can only hold known bits: [`Rights::from_bits`] rejects anything
/// else, so a right that does not exist can never be "held".
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Rights(u8);

impl Rights {
    /// No rights at all. A capability with no rights still names something
    /// (it can be derived from and revoked), but passes no guard that needs
    /// a right.
    pub const NONE: Rights = Rights(0);
    /// Permission to read.
    pub const READ: Rights = Rights(1 << 0);
    /// Permission to write.
    pub const WRITE: Rights = Rights(1 << 1);
    /// Permission to copy the capability to another capability list.
    pub const GRANT: Rights = Rights(1 << 2);
    /// Permission to transfer control to the resource (an environment:
    /// `pct_call`, `pct_send`, directed `yield_cpu`).
    pub const CALL: Rights = Rights(1 << 4);
    /// Permission to make the resource's memory executable (an
    /// environment: map pages into it without `NO_EXECUTE`).
    pub const EXECUTE: Rights = Rights(1 << 5);
    /// Every right.
    pub const ALL: Rights = Rights(Self::READ.0 | Self::WRITE.0 | Self::GRANT.0 | Self::CALL.0 | Self::EXECUTE.0);

    /// The rights whose bits are `bits`, or `None` if `bits` has a bit that
    /// names no right.
    pub const fn from_bits(bits: u8) -> Option<Rights> {
        if bits & !Self::ALL.0 == 0 { Some(Rights(bits)) } else { None }
    }

    /// The raw bits (only ever the bits of [`Rights::ALL`]).
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// Whether every right in `other` is also in `self` (`self ⊇ other`).
    /// Every set contains [`Rights::NONE`].
    pub const fn contains(self, other: Rights) -> bool {
        self.0 & other.0 == other.0
    }

    /// The rights in either set.
    pub const fn union(self, other: Rights) -> Rights {
        Rights(self.0 | other.0)
    }

    /// The rights in both sets.
    pub const fn intersection(self, other: Rights) -> Rights {
        Rights(self.0 & other.0)
    }

    /// The rights in `self` but not in `other`.
    pub const fn difference(self, other: Rights) -> Rights {
        Rights(self.0 & !other.0)
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl BitOr for Rights {
    type Output = Rights;
    /// Same as [`Rights::union`].
    fn bitor(self, rhs: Rights) -> Rights {
        self.union(rhs)
    }
}

impl BitAnd for Rights {
    type Output = Rights;
    /// Same as [`Rights::intersection`].
    fn bitand(self, rhs: Rights) -> Rights {
        self.intersection(rhs)
    }
}

/// Shows the rights as `rwg`, with `-` for each missing right (`r--`),
/// followed by `c` when [`Rights::CALL`] is held and `x` when
/// [`Rights::EXECUTE`] is (`rwgcx`).
impl fmt::Display for Rights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let flag = |right: Rights, c: char| if self.contains(right) { c } else { '-' };
        write!(f, "{}{}{}", flag(Rights::READ, 'r'), flag(Rights::WRITE, 'w'), flag(Rights::GRANT, 'g'))?;
        if self.contains(Rights::CALL) {
            f.write_str("c")?;
        }
        if self.contains(Rights::EXECUTE) { f.write_str("x") } else { Ok(()) }
    }
}

impl fmt::Debug for Rights {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Rights({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_the_five_rights() {
        assert_eq!(Rights::ALL, Rights::READ | Rights::WRITE | Rights::GRANT | Rights::CALL | Rights::EXECUTE);
        assert_eq!(Rights::ALL.bits(), 0b11_0111);
    }

    #[test]
    fn display() {
        extern crate std;
        use std::string::ToString;
        assert_eq!(Rights::ALL.to_string(), "rwgcx");
        assert_eq!(Rights::NONE.to_string(), "---");
        assert_eq!((Rights::READ | Rights::GRANT).to_string(), "r-g");
    }
}
