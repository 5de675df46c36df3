//! A verified filter: its atoms in canonical order, and how one filter alone
//! is evaluated on a packet (the reference the trie is tested against).

use oxok_abi::filter::{MAX_ATOMS, RawAtom, RawFilter};

/// A big-endian field of a packet, relative to the current base.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Field {
    /// Byte offset from the base.
    pub offset: u16,
    /// Width in bytes: 1, 2 or 4.
    pub size: u8,
    /// The bits that matter (within `size` bytes, not 0).
    pub mask: u32,
}

impl Field {
    /// The masked field at `base + offset` of `packet`, or `None` when any
    /// byte of it lies past the end of the packet.
    #[inline]
    pub fn read(&self, packet: &[u8], base: usize) -> Option<u32> {
        let start = base.checked_add(self.offset as usize)?;
        let end = start.checked_add(self.size as usize)?;
        let bytes = packet.get(start..end)?;
        let mut v = 0u32;
        for b in bytes {
            v = (v << 8) | *b as u32;
        }
        Some(v & self.mask)
    }

    /// One past the last byte the field covers, relative to the base.
    pub fn end(&self) -> usize {
        self.offset as usize + self.size as usize
    }
}

/// One verified atom.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Atom {
    /// `(field & mask) == value`.
    Eq {
        /// The field.
        field: Field,
        /// Its required masked value (no bits outside the mask).
        value: u32,
    },
    /// `base += (field & mask) * scale`.
    Shift {
        /// The field holding the header length.
        field: Field,
        /// The multiplier (1..=`MAX_SCALE`).
        scale: u8,
    },
}

impl Atom {
    /// The field the atom reads.
    pub fn field(&self) -> Field {
        match *self {
            Atom::Eq { field, .. } | Atom::Shift { field, .. } => field,
        }
    }

    /// The atom in the wire format.
    pub fn to_raw(&self) -> RawAtom {
        match *self {
            Atom::Eq { field, value } => RawAtom::eq(field.size, field.offset, field.mask, value),
            Atom::Shift { field, scale } => RawAtom::shift(field.size, field.offset, field.mask, scale),
        }
    }
}

const FILLER: Atom = Atom::Eq { field: Field { offset: 0, size: 1, mask: 0 }, value: 0 };

/// A verified filter (made only by [`verify`](crate::verify) and
/// [`decode`](crate::decode)), its atoms in canonical order: within each
/// stretch between shifts, the `eq` atoms sorted by field and value, without
/// duplicates. Reordering them does not change what the filter accepts (a
/// conjunction), but makes filters that test the same fields share a path in
/// the trie.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Filter {
    atoms: [Atom; MAX_ATOMS],
    len: u8,
}

impl Filter {
    /// Builds from atoms already checked by the verifier, putting them in
    /// canonical order.
    pub(crate) fn canonical(atoms: &[Atom]) -> Filter {
        let mut f = Filter { atoms: [FILLER; MAX_ATOMS], len: 0 };
        let mut start = 0;
        for a in atoms {
            let n = f.len as usize;
            f.atoms[n] = *a;
            f.len += 1;
            if let Atom::Shift { .. } = a {
                f.sort_dedup(start);
                start = f.len as usize;
            }
        }
        f.sort_dedup(start);
        f
    }

    /// Sorts the `eq` atoms from `start` up to the end (or the last atom if it
    /// is a shift) and drops exact duplicates.
    fn sort_dedup(&mut self, start: usize) {
        let len = self.len as usize;
        let end = match self.atoms[..len].last() {
            Some(Atom::Shift { .. }) if len > start => len - 1,
            _ => len,
        };
        self.atoms[start..end].sort_unstable();
        let mut w = start;
        for r in start..len {
            if r < end && w > start && self.atoms[w - 1] == self.atoms[r] {
                continue;
            }
            self.atoms[w] = self.atoms[r];
            w += 1;
        }
        self.atoms[w..len].fill(FILLER);
        self.len = w as u8;
    }

    /// The atoms, in canonical order.
    pub fn atoms(&self) -> &[Atom] {
        &self.atoms[..self.len as usize]
    }

    /// Does this filter alone accept `packet`? (The straightforward
    /// evaluation; the kernel demultiplexes with the merged trie instead.)
    pub fn matches(&self, packet: &[u8]) -> bool {
        let mut base = 0usize;
        for a in self.atoms() {
            match *a {
                Atom::Eq { field, value } => {
                    if field.read(packet, base) != Some(value) {
                        return false;
                    }
                }
                Atom::Shift { field, scale } => match field.read(packet, base) {
                    Some(v) => base = base.saturating_add((v as usize).saturating_mul(scale as usize)),
                    None => return false,
                },
            }
        }
        true
    }

    /// The filter in the wire format (canonical order), e.g. for the exposed
    /// filter table.
    pub fn to_raw(&self) -> RawFilter {
        let mut raw = RawFilter::default();
        for (r, a) in raw.atoms.iter_mut().zip(self.atoms()) {
            *r = a.to_raw();
        }
        raw
    }
}

/// One atom as text: `u16[12]&ffff=0800`, `>>u8[14]&0f*4` (a shift).
impl core::fmt::Display for Atom {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let field = self.field();
        let w = 2 * field.size as usize;
        let bits = 8 * field.size as u32;
        match *self {
            Atom::Eq { value, .. } => {
                write!(f, "u{bits}[{}]&{:0w$x}={:0w$x}", field.offset, field.mask, value)
            }
            Atom::Shift { scale, .. } => write!(f, ">>u{bits}[{}]&{:0w$x}*{scale}", field.offset, field.mask),
        }
    }
}

/// The atoms as text, separated by spaces (for the shell's filter view).
impl core::fmt::Display for Filter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (i, a) in self.atoms().iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{a}")?;
        }
        Ok(())
    }
}
