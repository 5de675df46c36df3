//! Hierarchical names: the physical names of the kernel's resources.

use core::fmt;

use crate::CapError;

/// The most components a [`Name`] can have.
///
/// Resource names use at most four ([`Name::slot`]), which leaves at least
/// four components for libOS-level derivation below a resource.
pub const MAX_DEPTH: usize = 8;

/// The kind of resource a name lives under: the first component of every
/// resource's physical name.
///
/// The numbers are stable (they appear in exposed tables and in the wire form
/// of a capability) and are never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum Kind {
    /// Physical memory frames: `/1/frame/generation`.
    Frame = 1,
    /// Environments: `/2/id/generation`.
    Env = 2,
    /// Time slots of the slot vector: `/3/cpu/index/generation`.
    Slot = 3,
    /// Installed packet filters (later).
    Filter = 4,
    /// Packet rings (later).
    Ring = 5,
    /// Disk block extents (later).
    Extent = 6,
    /// The console (serial port): `/7/0`.
    Console = 7,
    /// Principals, the identities XN's `acl` functions grant rights to:
    /// `/8/p`. Holding a capability whose name covers `/8/p` means acting
    /// as principal `p`; one on `/8` acts as every principal. Unlike the
    /// other kinds, a principal is no resource that dies: the name has no
    /// generation, so the same principal holds its disk blocks across
    /// boots.
    Principal = 8,
}

impl Kind {
    /// Every kind, in number order.
    pub const ALL: [Kind; 8] =
        [Kind::Frame, Kind::Env, Kind::Slot, Kind::Filter, Kind::Ring, Kind::Extent, Kind::Console, Kind::Principal];

    /// The stable number of this kind (the first component of its names).
    pub const fn number(self) -> u64 {
        self as u64
    }

    /// The kind with this number, if any.
    pub const fn from_number(number: u64) -> Option<Kind> {
        match number {
            1 => Some(Kind::Frame),
            2 => Some(Kind::Env),
            3 => Some(Kind::Slot),
            4 => Some(Kind::Filter),
            5 => Some(Kind::Ring),
            6 => Some(Kind::Extent),
            7 => Some(Kind::Console),
            8 => Some(Kind::Principal),
            _ => None,
        }
    }
}

/// A hierarchical name: a path of up to [`MAX_DEPTH`] `u64` components,
/// written `/c0/c1/...` (the empty path, [`Name::ROOT`], is written `/`).
///
/// Names are fixed-size values (`Copy`, no allocation). A name `p` *covers*
/// every name it is a prefix of, including itself; this is how a capability
/// on `/1` (all frames) reaches frame `/1/42/7`, and how a capability derived
/// below a resource (`/1/42/7/3`) stays confined beneath it.
///
/// The kernel names each resource by its *physical name*, a kind number
/// followed by the resource's physical identity and a *generation*. The
/// generation changes every time the resource is freed and reallocated, so a
/// capability kept from a previous owner (`/1/42/6`) never covers the frame's
/// new guard (`/1/42/7`): stale names do not match.
///
/// Invariant: components beyond the depth are zero, so two names are equal
/// exactly when their paths are equal.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Name {
    depth: Depth,
    components: [u64; MAX_DEPTH],
}

/// How many components a name has: 0 to [`MAX_DEPTH`], and nothing else,
/// so `Option<Cap>` needs no room of its own beside the capability.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(u8)]
enum Depth {
    D0,
    D1,
    D2,
    D3,
    D4,
    D5,
    D6,
    D7,
    D8,
}

const _: () = assert!(MAX_DEPTH == 8, "Depth has a variant for each depth up to MAX_DEPTH");

impl Depth {
    /// Depth `n`, if it is at most [`MAX_DEPTH`].
    const fn of(n: usize) -> Option<Depth> {
        Some(match n {
            0 => Depth::D0,
            1 => Depth::D1,
            2 => Depth::D2,
            3 => Depth::D3,
            4 => Depth::D4,
            5 => Depth::D5,
            6 => Depth::D6,
            7 => Depth::D7,
            8 => Depth::D8,
            _ => return None,
        })
    }

    /// Its number of components.
    const fn n(self) -> usize {
        self as usize
    }
}

impl Name {
    /// The empty path. It is a prefix of every name, so a capability on it
    /// with all rights dominates every capability. Only the kernel holds one.
    pub const ROOT: Name = Name { depth: Depth::D0, components: [0; MAX_DEPTH] };

    /// The name with exactly these components, or [`CapError::TooDeep`] if
    /// there are more than [`MAX_DEPTH`].
    pub const fn new(components: &[u64]) -> Result<Name, CapError> {
        Name::ROOT.extend(components)
    }

    /// `/kind`: the root of one resource namespace (`/1` covers every frame).
    /// Only the kernel holds capabilities on these.
    pub const fn kind_root(kind: Kind) -> Name {
        let mut components = [0; MAX_DEPTH];
        components[0] = kind.number();
        Name { depth: Depth::D1, components }
    }

    /// `/1/frame_number/generation`: the physical name of a memory frame.
    pub const fn frame(frame_number: u64, generation: u64) -> Name {
        Name::numbered(Kind::Frame, frame_number, generation)
    }

    /// `/kind/number/generation`: the shape of most physical names.
    const fn numbered(kind: Kind, number: u64, generation: u64) -> Name {
        let mut components = [0; MAX_DEPTH];
        components[0] = kind.number();
        components[1] = number;
        components[2] = generation;
        Name { depth: Depth::D3, components }
    }

    /// Whether this is exactly `/kind/number/generation` (what
    /// [`Name::env`] and the other numbered names make), compared in place.
    #[inline]
    pub const fn is_numbered(&self, kind: Kind, number: u64, generation: u64) -> bool {
        matches!(self.depth, Depth::D3)
            && self.components[0] == kind.number()
            && self.components[1] == number
            && self.components[2] == generation
    }

    /// `/2/env_id/generation`: the physical name of an environment.
    pub const fn env(env_id: u64, generation: u64) -> Name {
        Name::numbered(Kind::Env, env_id, generation)
    }

    /// `/4/index/generation`: an installed packet
    /// filter's name (its index in the filter table and the generation
    /// of that index).
    pub const fn filter(index: u64, generation: u64) -> Name {
        Name::numbered(Kind::Filter, index, generation)
    }

    /// `/3/cpu/index/generation`: the physical name of time slot `index` in
    /// CPU `cpu`'s slot vector.
    pub const fn slot(cpu: u64, index: u64, generation: u64) -> Name {
        let mut components = [0; MAX_DEPTH];
        components[0] = Kind::Slot.number();
        components[1] = cpu;
        components[2] = index;
        components[3] = generation;
        Name { depth: Depth::D4, components }
    }

    /// `/7/0`: the console (the serial port the kernel writes to and reads
    /// typed input from).
    pub const fn console() -> Name {
        let mut components = [0; MAX_DEPTH];
        components[0] = Kind::Console.number();
        Name { depth: Depth::D2, components }
    }

    /// `/8/p`: principal `p` (see [`Kind::Principal`]). A capability on
    /// it acts as `p`; one on [`Name::kind_root`]`(Kind::Principal)`, `/8`,
    /// covers it and every other principal.
    pub const fn principal(p: u64) -> Name {
        let mut components = [0; MAX_DEPTH];
        components[0] = Kind::Principal.number();
        components[1] = p;
        Name { depth: Depth::D2, components }
    }

    /// The principal this name is, when it is exactly `/8/p`: `Some(p)`.
    /// `/8` itself (every principal) and names below a principal
    /// (`/8/p/…`, which cover no principal) are `None`.
    pub const fn as_principal(&self) -> Option<u64> {
        if self.depth.n() == 2 && self.components[0] == Kind::Principal.number() {
            Some(self.components[1])
        } else {
            None
        }
    }

    /// How many components the name has (0 for [`Name::ROOT`]).
    pub const fn depth(&self) -> usize {
        self.depth.n()
    }

    /// Whether this is [`Name::ROOT`].
    pub const fn is_root(&self) -> bool {
        self.depth.n() == 0
    }

    /// The components, outermost first.
    pub fn components(&self) -> &[u64] {
        // The depth never exceeds MAX_DEPTH (every constructor checks), but
        // fall back to the empty path rather than trust that with a panic.
        self.components.get(..self.depth()).unwrap_or(&[])
    }

    /// The resource kind named by the first component, if it is one.
    /// [`Name::ROOT`] and names under unknown numbers have none.
    pub const fn kind(&self) -> Option<Kind> {
        if self.depth.n() == 0 { None } else { Kind::from_number(self.components[0]) }
    }

    /// Whether `self` is a prefix of `other` (or equal to it): whether `self`
    /// covers `other`.
    ///
    /// This is a partial order: reflexive, transitive and antisymmetric, with
    /// [`Name::ROOT`] below every name.
    pub fn is_prefix_of(&self, other: &Name) -> bool {
        // Word by word over the fixed array (no slice compare: this runs in
        // every capability check). Words past `self`'s depth do not count.
        let depth = self.depth.n();
        if depth > other.depth.n() {
            return false;
        }
        let mut same = true;
        for i in 0..MAX_DEPTH {
            same &= i >= depth || self.components[i] == other.components[i];
        }
        same
    }

    /// This name with one more component, or [`CapError::TooDeep`] if it
    /// already has [`MAX_DEPTH`].
    pub const fn push(&self, component: u64) -> Result<Name, CapError> {
        let depth = self.depth.n();
        let Some(deeper) = Depth::of(depth + 1) else { return Err(CapError::TooDeep) };
        let mut name = *self;
        name.components[depth] = component;
        name.depth = deeper;
        Ok(name)
    }

    /// This name followed by every component of `suffix`, or
    /// [`CapError::TooDeep`] if the result would exceed [`MAX_DEPTH`]
    /// (`suffix` may be any length; an over-long one is refused, not cut).
    pub const fn extend(&self, suffix: &[u64]) -> Result<Name, CapError> {
        let depth = self.depth.n();
        // Written so that no length can overflow: depth <= MAX_DEPTH always.
        if depth > MAX_DEPTH || suffix.len() > MAX_DEPTH - depth {
            return Err(CapError::TooDeep);
        }
        let Some(deeper) = Depth::of(depth + suffix.len()) else { return Err(CapError::TooDeep) };
        let mut name = *self;
        let mut i = 0;
        while i < suffix.len() {
            name.components[depth + i] = suffix[i];
            i += 1;
        }
        name.depth = deeper;
        Ok(name)
    }

    /// The name with its last component removed, or `None` for
    /// [`Name::ROOT`].
    pub const fn parent(&self) -> Option<Name> {
        let depth = self.depth.n();
        let Some(shallower) = depth.checked_sub(1) else { return None };
        let Some(d) = Depth::of(shallower) else { return None };
        let mut name = *self;
        name.depth = d;
        name.components[shallower] = 0;
        Some(name)
    }

    /// Builds a name from a stored depth and component array, checking the
    /// invariant (used by the wire form).
    pub(crate) fn from_parts(depth: u64, components: [u64; MAX_DEPTH]) -> Result<Name, CapError> {
        let depth = usize::try_from(depth).map_err(|_| CapError::TooDeep)?;
        let d = Depth::of(depth).ok_or(CapError::TooDeep)?;
        // Nonzero components past the depth would make the name deeper than
        // it claims; refuse rather than silently drop them.
        if components.iter().skip(depth).any(|&c| c != 0) {
            return Err(CapError::TooDeep);
        }
        Ok(Name { depth: d, components })
    }

    /// The raw component array, zero beyond the depth (used by the wire form).
    pub(crate) const fn raw_components(&self) -> [u64; MAX_DEPTH] {
        self.components
    }
}

impl Default for Name {
    /// [`Name::ROOT`].
    fn default() -> Name {
        Name::ROOT
    }
}

/// Shows the path, `/1/42/7`, or `/` for [`Name::ROOT`].
impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_root() {
            return f.write_str("/");
        }
        for c in self.components() {
            write!(f, "/{c}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Name({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_agree_with_new() {
        assert_eq!(Name::frame(42, 7), Name::new(&[1, 42, 7]).unwrap());
        assert_eq!(Name::env(3, 9), Name::new(&[2, 3, 9]).unwrap());
        assert_eq!(Name::slot(1, 5, 2), Name::new(&[3, 1, 5, 2]).unwrap());
        assert_eq!(Name::kind_root(Kind::Ring), Name::new(&[5]).unwrap());
        assert_eq!(Name::principal(4), Name::new(&[8, 4]).unwrap());
        assert_eq!(Name::principal(4).as_principal(), Some(4));
        assert_eq!(Name::kind_root(Kind::Principal).as_principal(), None);
        assert_eq!(Name::new(&[8, 4, 1]).unwrap().as_principal(), None);
        assert_eq!(Name::env(4, 1).as_principal(), None);
    }

    #[test]
    fn parent_keeps_padding_zero() {
        let n = Name::frame(42, 7);
        let p = n.parent().unwrap();
        assert_eq!(p, Name::new(&[1, 42]).unwrap());
        assert_eq!(p.raw_components()[2], 0);
        assert_eq!(Name::ROOT.parent(), None);
    }

    #[test]
    fn from_parts_checks_invariant() {
        let mut raw = [0; MAX_DEPTH];
        raw[0] = 1;
        assert!(Name::from_parts(1, raw).is_ok());
        assert_eq!(Name::from_parts(0, raw), Err(CapError::TooDeep));
        assert_eq!(Name::from_parts(9, [0; MAX_DEPTH]), Err(CapError::TooDeep));
        assert_eq!(Name::from_parts(u64::MAX, [0; MAX_DEPTH]), Err(CapError::TooDeep));
    }
}
