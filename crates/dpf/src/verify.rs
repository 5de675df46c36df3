//! The verifier: the install block in, a canonical [`Filter`] or the first
//! reason to refuse out. Never panics, whatever the bytes.

use core::fmt;

use oxok_abi::filter::{FILTER_BYTES, MAX_ATOMS, MAX_PACKET, MAX_SCALE, RawAtom, RawFilter, op, reject};

use crate::filter::{Atom, Field, Filter};
use crate::shape::Shape;

/// Why a filter was refused by the verifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reject {
    /// No atoms.
    Empty,
    /// The block is not `FILTER_BYTES` long.
    BadLength,
    /// An unknown operation.
    BadOp,
    /// A size other than 1, 2 or 4.
    BadSize,
    /// A reserved or unused field is not 0, or a byte after the end is not 0.
    Reserved,
    /// A zero mask or one wider than the field.
    BadMask,
    /// The value has bits outside the mask.
    BadValue,
    /// A shift multiplier of 0 or above `MAX_SCALE`.
    BadScale,
    /// A field that can lie at or beyond `MAX_PACKET`.
    OutOfRange,
    /// The last atom is a shift.
    DanglingShift,
    /// The atoms contradict each other.
    Contradiction,
}

impl Reject {
    /// The stable code ([`oxok_abi::filter::reject`]).
    pub fn code(self) -> u64 {
        match self {
            Reject::Empty => reject::EMPTY,
            Reject::BadLength => reject::BAD_LENGTH,
            Reject::BadOp => reject::BAD_OP,
            Reject::BadSize => reject::BAD_SIZE,
            Reject::Reserved => reject::RESERVED,
            Reject::BadMask => reject::BAD_MASK,
            Reject::BadValue => reject::BAD_VALUE,
            Reject::BadScale => reject::BAD_SCALE,
            Reject::OutOfRange => reject::OUT_OF_RANGE,
            Reject::DanglingShift => reject::DANGLING_SHIFT,
            Reject::Contradiction => reject::CONTRADICTION,
        }
    }
}

/// A refusal: why, and the index of the offending atom (for whole-filter
/// reasons, the atom count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifyError {
    /// Why.
    pub reason: Reject,
    /// Which atom.
    pub at: usize,
}

impl VerifyError {
    /// The stable code ([`oxok_abi::filter::reject`]).
    pub fn code(&self) -> u64 {
        self.reason.code()
    }
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "filter refused at atom {}: {:?}", self.at, self.reason)
    }
}

fn err(reason: Reject, at: usize) -> VerifyError {
    VerifyError { reason, at }
}

/// Decodes and verifies the block the install call copied from the user:
/// exactly [`FILTER_BYTES`] bytes.
pub fn decode(bytes: &[u8]) -> Result<Filter, VerifyError> {
    let block: &[u8; FILTER_BYTES] = bytes.try_into().map_err(|_| err(Reject::BadLength, 0))?;
    verify(&RawFilter::from_bytes(block))
}

/// Verifies a raw filter: its atoms up to the first [`op::END`], the rest
/// zero. See [`oxok_abi::filter`] for the rules.
pub fn verify(raw: &RawFilter) -> Result<Filter, VerifyError> {
    let n = raw.atoms.iter().position(|a| a.op == op::END).unwrap_or(MAX_ATOMS);
    if let Some(i) = raw.atoms[n..].iter().position(|a| *a != RawAtom::default()) {
        return Err(err(Reject::Reserved, n + i));
    }
    verify_atoms(&raw.atoms[..n])
}

/// Verifies a list of raw atoms (no end marker): what [`verify`] does after
/// finding the end. Used by the [`Builder`](crate::Builder).
pub fn verify_atoms(raw: &[RawAtom]) -> Result<Filter, VerifyError> {
    if raw.is_empty() {
        return Err(err(Reject::Empty, 0));
    }
    if raw.len() > MAX_ATOMS {
        return Err(err(Reject::BadLength, MAX_ATOMS));
    }
    let mut atoms = [Atom::Eq { field: Field::default(), value: 0 }; MAX_ATOMS];
    // The largest base any packet can produce so far.
    let mut max_base: u64 = 0;
    for (i, a) in raw.iter().enumerate() {
        let width_mask = match a.size {
            1 => 0xff,
            2 => 0xffff,
            4 => 0xffff_ffff,
            _ => return Err(err(Reject::BadSize, i)),
        };
        if a.reserved != 0 || a.reserved2 != 0 {
            return Err(err(Reject::Reserved, i));
        }
        if a.mask == 0 || a.mask & !width_mask != 0 {
            return Err(err(Reject::BadMask, i));
        }
        let field = Field { offset: a.offset, size: a.size, mask: a.mask };
        if max_base + field.end() as u64 > MAX_PACKET as u64 {
            return Err(err(Reject::OutOfRange, i));
        }
        atoms[i] = match a.op {
            op::EQ => {
                if a.scale != 0 {
                    return Err(err(Reject::Reserved, i));
                }
                if a.value & !a.mask != 0 {
                    return Err(err(Reject::BadValue, i));
                }
                Atom::Eq { field, value: a.value }
            }
            op::SHIFT => {
                if a.value != 0 {
                    return Err(err(Reject::Reserved, i));
                }
                if a.scale == 0 || a.scale > MAX_SCALE {
                    return Err(err(Reject::BadScale, i));
                }
                max_base += a.mask as u64 * a.scale as u64;
                Atom::Shift { field, scale: a.scale }
            }
            _ => return Err(err(Reject::BadOp, i)),
        };
    }
    if let Some(Atom::Shift { .. }) = atoms[..raw.len()].last() {
        return Err(err(Reject::DanglingShift, raw.len() - 1));
    }
    let filter = Filter::canonical(&atoms[..raw.len()]);
    if Shape::of(&filter).is_none() {
        return Err(err(Reject::Contradiction, raw.len()));
    }
    Ok(filter)
}
