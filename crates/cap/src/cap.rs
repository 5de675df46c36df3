//! Capabilities: a name plus the rights held over everything it covers.

use core::fmt;

use crate::{CapError, MAX_DEPTH, Name, Rights};

/// How many `u64` words [`Cap::encode`] produces: depth, rights and
/// [`MAX_DEPTH`] components.
pub const WIRE_WORDS: usize = 2 + MAX_DEPTH;

/// A capability: a hierarchical [`Name`] and the [`Rights`] it grants over
/// every resource whose name the capability's name covers.
///
/// As in Xok, these behave like a generalised UNIX user/group id more than
/// like object pointers: a capability on `/1/42/7` with `READ` lets its
/// holder read frame 42 (generation 7), and a capability on `/1` with all
/// rights lets its holder do anything to any frame.
///
/// A `Cap` value is plain data. It is *unforgeable* only because the kernel
/// keeps every capability in its own memory (an environment's
/// [`CapList`](crate::CapList)) and users name them by slot number; nothing
/// the kernel reads from user memory is ever treated as a capability.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cap {
    /// What the capability covers: this name and every name below it.
    pub name: Name,
    /// What the holder may do to what it covers.
    pub rights: Rights,
}

impl Cap {
    /// A capability on `name` with `rights`. Only the kernel mints
    /// capabilities from nothing (on allocation, or at boot); everyone else
    /// gets theirs by [`derive`](Cap::derive) or [`grant`](crate::grant).
    pub const fn new(name: Name, rights: Rights) -> Cap {
        Cap { name, rights }
    }

    /// The capability on [`Name::ROOT`] with every right: it dominates every
    /// capability. Only the kernel (or the first environment it trusts) holds
    /// it.
    pub const ROOT: Cap = Cap::new(Name::ROOT, Rights::ALL);

    /// Whether `self` dominates `other`: `self`'s name is a prefix of (or
    /// equal to) `other`'s and `self` has every right `other` has. Anything
    /// `other` can pass, `self` can pass.
    ///
    /// A partial order: reflexive, transitive and antisymmetric, with
    /// [`Cap::ROOT`] dominating all.
    pub fn dominates(&self, other: &Cap) -> bool {
        self.name.is_prefix_of(&other.name) && self.rights.contains(other.rights)
    }

    /// A child capability: `self`'s name followed by `suffix`, with `rights`.
    /// The result is always dominated by `self`.
    ///
    /// Deriving needs no particular right (as in Xok): it can only ever
    /// narrow, so it gives the holder nothing it did not have. An empty
    /// suffix keeps the name and only reduces the rights.
    ///
    /// Errors, checked in this order: [`CapError::Widen`] if `rights` is not
    /// a subset of `self.rights`; [`CapError::TooDeep`] if the name would
    /// exceed [`MAX_DEPTH`] components.
    ///
    /// Note that a capability with a non-empty suffix covers only names
    /// *below* `self.name`, so it does not pass the guard of the resource
    /// `self` names; to hand out a weaker capability on the resource itself,
    /// derive with an empty suffix (or grant with fewer rights).
    pub fn derive(&self, suffix: &[u64], rights: Rights) -> Result<Cap, CapError> {
        if !self.rights.contains(rights) {
            return Err(CapError::Widen);
        }
        let name = self.name.extend(suffix)?;
        Ok(Cap { name, rights })
    }

    /// The wire form: `[depth, rights bits, component 0, ..., component 7]`,
    /// components beyond the depth zero. For passing a capability's
    /// *description* through registers or showing it in an exposed table.
    ///
    /// Note that the all-zero form is a valid capability ([`Name::ROOT`]
    /// with no rights); a table that needs "empty" must mark it separately.
    pub fn encode(&self) -> [u64; WIRE_WORDS] {
        let mut words = [0; WIRE_WORDS];
        words[0] = self.name.depth() as u64;
        words[1] = u64::from(self.rights.bits());
        for (word, component) in words[2..].iter_mut().zip(self.name.raw_components()) {
            *word = component;
        }
        words
    }

    /// Reads the wire form written by [`Cap::encode`].
    ///
    /// Never use the result as a credential: a capability is unforgeable
    /// because it lives only in kernel memory and users name it by slot, so
    /// the kernel must not accept decoded user data in place of a slot. This
    /// is for displaying capabilities and reading exposed tables.
    ///
    /// Errors, checked in this order: [`CapError::TooDeep`] if the depth
    /// exceeds [`MAX_DEPTH`]; [`CapError::BadRights`] if the rights word has
    /// any bit that names no right (including any above the low byte);
    /// [`CapError::TooDeep`] if a component beyond the depth is nonzero. So
    /// `decode` accepts exactly the outputs of `encode`.
    pub fn decode(words: &[u64; WIRE_WORDS]) -> Result<Cap, CapError> {
        let [depth, rights, c0, c1, c2, c3, c4, c5, c6, c7] = *words;
        if depth > MAX_DEPTH as u64 {
            return Err(CapError::TooDeep);
        }
        let rights = u8::try_from(rights).ok().and_then(Rights::from_bits).ok_or(CapError::BadRights)?;
        let name = Name::from_parts(depth, [c0, c1, c2, c3, c4, c5, c6, c7])?;
        Ok(Cap { name, rights })
    }
}

/// Shows the name and rights: `/1/42/7 rw-`.
impl fmt::Display for Cap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name, self.rights)
    }
}

impl fmt::Debug for Cap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cap({self})")
    }
}
