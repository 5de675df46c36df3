//! Shared helpers for the integration tests: random filters over a small
//! universe of fields (so random filters often overlap, refine and match),
//! random packets, and packets constructed to satisfy given filters.

#![allow(dead_code)]

use oxok_abi::filter::RawAtom;
use oxok_dpf::{Atom, Builder, Filter};

pub use oxok_testrng::Rng;

/// A byte likely to match a random atom: small values and all-ones.
pub fn edgy_byte(rng: &mut Rng) -> u8 {
    match rng.below(6) {
        0 => 0,
        1 => 0xff,
        2 | 3 => rng.below(4) as u8,
        _ => rng.byte(),
    }
}

/// A random value of `size` bytes under `mask`.
fn value(rng: &mut Rng, size: u8, mask: u32) -> u32 {
    let mut v = 0u32;
    for _ in 0..size {
        v = (v << 8) | edgy_byte(rng) as u32;
    }
    v & mask
}

/// A random mask for a `size`-byte field, never 0.
fn mask(rng: &mut Rng, size: u8) -> u32 {
    let full = if size == 4 { u32::MAX } else { (1u32 << (8 * size)) - 1 };
    let m = match rng.below(4) {
        0 | 1 => full,
        2 => 0x0f0f_0f0f & full,
        _ => rng.next() as u32 & full,
    };
    if m == 0 { full } else { m }
}

/// A random `eq` atom over offsets `0..12` of its level.
pub fn eq_atom(rng: &mut Rng) -> RawAtom {
    let size = *rng.pick(&[1u8, 1, 2, 4]);
    let offset = rng.below(12) as u16;
    let mask = mask(rng, size);
    RawAtom::eq(size, offset, mask, value(rng, size, mask))
}

/// A random shift from a small menu, so different filters often share one.
pub fn shift_atom(rng: &mut Rng) -> RawAtom {
    match rng.below(3) {
        0 => RawAtom::shift(1, 0, 0x03, 4),
        1 => RawAtom::shift(1, 1, 0x0f, 1),
        _ => RawAtom::shift(1, rng.below(4) as u16, 0x07, 1 + rng.below(3) as u8),
    }
}

/// Random raw atoms: 1..=5 `eq` atoms with an occasional shift between them.
pub fn raw_atoms(rng: &mut Rng) -> Vec<RawAtom> {
    let n = 1 + rng.index(5);
    let mut v = Vec::new();
    for _ in 0..n {
        if rng.chance(4) {
            v.push(shift_atom(rng));
        }
        v.push(eq_atom(rng));
    }
    v
}

pub fn builder(atoms: &[RawAtom]) -> Builder {
    atoms.iter().fold(Builder::new(), |b, a| b.atom(*a))
}

/// A random verified filter (retries past contradictions).
pub fn filter(rng: &mut Rng) -> (Vec<RawAtom>, Filter) {
    loop {
        let atoms = raw_atoms(rng);
        if let Ok(f) = builder(&atoms).build() {
            return (atoms, f);
        }
    }
}

/// A random verified filter that is `atoms` with extra `eq` atoms at the
/// end (possibly after another shift): a likely refinement.
pub fn narrower(rng: &mut Rng, atoms: &[RawAtom]) -> Option<Filter> {
    let mut v = atoms.to_vec();
    if rng.chance(4) {
        v.push(shift_atom(rng));
    }
    for _ in 0..1 + rng.index(2) {
        v.push(eq_atom(rng));
    }
    builder(&v).build().ok()
}

/// A random packet of 0..40 edgy bytes.
pub fn packet(rng: &mut Rng) -> Vec<u8> {
    let len = rng.index(40);
    (0..len).map(|_| edgy_byte(rng)).collect()
}

/// Overwrites `pkt` so `f`'s atoms hold, in order (later atoms may undo
/// earlier ones; callers check with `matches`). Grows the packet as needed.
pub fn impose(pkt: &mut Vec<u8>, f: &Filter) {
    let mut base = 0usize;
    for a in f.atoms() {
        let field = a.field();
        let start = base + field.offset as usize;
        let end = start + field.size as usize;
        if pkt.len() < end {
            pkt.resize(end, 0);
        }
        let mut cur = 0u32;
        for b in &pkt[start..end] {
            cur = (cur << 8) | *b as u32;
        }
        match *a {
            Atom::Eq { field, value } => {
                let new = (cur & !field.mask) | value;
                for (i, b) in pkt[start..end].iter_mut().enumerate() {
                    *b = (new >> (8 * (field.size as usize - 1 - i))) as u8;
                }
            }
            Atom::Shift { field, scale } => base += (cur & field.mask) as usize * scale as usize,
        }
    }
}

/// Packets built to satisfy `fs` (in both orders, from a random start).
pub fn satisfying(rng: &mut Rng, fs: &[&Filter]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for round in 0..2 {
        let mut p = packet(rng);
        let order: Vec<&Filter> = if round == 0 { fs.to_vec() } else { fs.iter().rev().copied().collect() };
        for f in &order {
            impose(&mut p, f);
        }
        for f in &order {
            impose(&mut p, f);
        }
        out.push(p);
    }
    out
}
