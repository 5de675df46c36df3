//! [`Udf`]: a verified program, and its interpreter.

use alloc::vec::Vec;
use core::fmt;

use oxok_abi::xn::{BLOCK_SIZE, MAX_DEPTH, MAX_STEPS, REGS};

use crate::Insn;

/// A verified UDF. Only [`verify`](crate::verify) makes one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Udf {
    insns: Vec<Insn>,
    function: u8,
    worst: u64,
}

/// One result a UDF emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// `ext`: blocks `start..start+len` of type `ty` (`len > 0`).
    Extent {
        /// First block.
        start: u64,
        /// Blocks.
        len: u64,
        /// Type: `DATA` or a template number.
        ty: u64,
    },
    /// `prin`: `principal` holds `rights`.
    Grant {
        /// Principal id.
        principal: u64,
        /// Rights bits.
        rights: u32,
    },
    /// `size`: the byte count.
    Size(u64),
}

/// Why a run stopped without a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// A load at instruction `at` reached byte `addr` outside the block.
    OutOfBlock {
        /// Instruction index.
        at: usize,
        /// The computed address (saturating).
        addr: u64,
    },
    /// More results than the function may emit.
    TooManyResults,
    /// The step bound was reached (never for a verified program; kept as a
    /// second line of defence).
    StepLimit,
    /// No memory to collect the results.
    NoMemory,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Fault::OutOfBlock { at, addr } => write!(f, "insn {at}: read at byte {addr} outside the block"),
            Fault::TooManyResults => f.write_str("too many results"),
            Fault::StepLimit => write!(f, "more than {MAX_STEPS} steps"),
            Fault::NoMemory => f.write_str("no memory for the results"),
        }
    }
}

/// The 8-byte words of a block a run may have read: bit `i` for bytes
/// `8i..8i + 8`. A run over another block that differs from this one only
/// in words outside the set reads the same values, takes the same path and
/// emits the same results: the UDF is deterministic and reads nothing else.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadSet([u64; BLOCK_SIZE / 8 / 64]);

impl ReadSet {
    /// Marks the words of bytes `addr..addr + bytes` (at most 8 bytes, so
    /// at most two words).
    fn mark(&mut self, addr: usize, bytes: u8) {
        let first = addr / 8;
        let last = (addr + usize::from(bytes).clamp(1, 8) - 1) / 8;
        for w in [first, last] {
            if let Some(x) = self.0.get_mut(w / 64) {
                *x |= 1 << (w % 64);
            }
        }
    }

    /// Whether `a` and `b` agree on every word of the set. Only the words
    /// in the set are looked at (a run reads tens of a block's 512).
    pub fn same_on(&self, a: &[u8; BLOCK_SIZE], b: &[u8; BLOCK_SIZE]) -> bool {
        let word = |x: &[u8; BLOCK_SIZE], w: usize| {
            x.get(w * 8..w * 8 + 8).and_then(|s| s.try_into().ok()).map_or(0, u64::from_ne_bytes)
        };
        self.0.iter().enumerate().all(|(i, &mask)| {
            let mut rest = mask;
            while rest != 0 {
                let w = i * 64 + rest.trailing_zeros() as usize;
                if word(a, w) != word(b, w) {
                    return false;
                }
                rest &= rest - 1;
            }
            true
        })
    }
}

/// An open loop while running.
#[derive(Clone, Copy, Default)]
struct Pass {
    start: usize,
    end: usize,
    count: u32,
    index: u32,
    idx: u8,
}

impl Udf {
    pub(crate) fn new(insns: Vec<Insn>, function: u8, worst: u64) -> Udf {
        Udf { insns, function, worst }
    }

    /// The function this program was verified as ([`oxok_abi::xn::func`]).
    pub fn function(&self) -> u8 {
        self.function
    }

    /// The instructions.
    pub fn insns(&self) -> &[Insn] {
        &self.insns
    }

    /// The verifier's worst-case instruction count (≤ `MAX_STEPS`).
    pub fn worst_steps(&self) -> u64 {
        self.worst
    }

    /// Runs the program over `block`, passing each result to `emit`
    /// (which may stop the run by returning a fault). Returns the number of
    /// instructions executed. Reads nothing but `block`; never panics.
    pub fn run(
        &self,
        block: &[u8; BLOCK_SIZE],
        emit: &mut impl FnMut(Emit) -> Result<(), Fault>,
    ) -> Result<u64, Fault> {
        self.run_reading(block, emit, None)
    }

    /// [`run`](Udf::run), adding to `reads` every word a load touched.
    pub fn run_reading(
        &self,
        block: &[u8; BLOCK_SIZE],
        emit: &mut impl FnMut(Emit) -> Result<(), Fault>,
        mut reads: Option<&mut ReadSet>,
    ) -> Result<u64, Fault> {
        let mut regs = [0u64; REGS];
        let mut loops = [Pass::default(); MAX_DEPTH];
        let mut depth = 0usize;
        let mut pc = 0usize;
        let mut steps = 0u64;
        let r = |x: u8| usize::from(x) % REGS;
        loop {
            // End of a loop body: next pass, or leave the loop.
            while depth > 0 && pc == loops[depth - 1].end {
                let l = &mut loops[depth - 1];
                l.index += 1;
                if l.index < l.count {
                    regs[r(l.idx)] = u64::from(l.index);
                    pc = l.start;
                    break;
                }
                depth -= 1;
            }
            let Some(&insn) = self.insns.get(pc) else { return Ok(steps) };
            steps += 1;
            if steps > MAX_STEPS {
                return Err(Fault::StepLimit);
            }
            pc += 1;
            match insn {
                Insn::Li { d, imm } => regs[r(d)] = u64::from(imm),
                Insn::Mov { d, s } => regs[r(d)] = regs[r(s)],
                Insn::Alu { op, d, x, y } => regs[r(d)] = op.apply(regs[r(x)], regs[r(y)]),
                Insn::AluImm { op, d, x, imm } => regs[r(d)] = op.apply(regs[r(x)], imm),
                Insn::Load { bytes, d, base, off } => {
                    regs[r(d)] = load(block, regs[r(base)], off, bytes)
                        .ok_or(Fault::OutOfBlock { at: pc - 1, addr: regs[r(base)].saturating_add(u64::from(off)) })?;
                    if let Some(set) = reads.as_deref_mut() {
                        // In the block: `load` checked it.
                        set.mark((regs[r(base)] + u64::from(off)) as usize, bytes);
                    }
                }
                Insn::Jump { if_zero, r: t, skip } => {
                    if (regs[r(t)] == 0) == if_zero {
                        pc = pc.saturating_add(skip as usize);
                    }
                }
                Insn::Loop { idx, count, body } => {
                    let slot = loops.get_mut(depth).ok_or(Fault::StepLimit)?;
                    *slot = Pass { start: pc, end: pc + usize::from(body), count, index: 0, idx };
                    depth += 1;
                    regs[r(idx)] = 0;
                }
                Insn::Halt => return Ok(steps),
                Insn::Ext { start, len, ty } => {
                    let len = regs[r(len)];
                    if len > 0 {
                        emit(Emit::Extent { start: regs[r(start)], len, ty: regs[r(ty)] })?;
                    }
                }
                Insn::Prin { r: p, rights } => emit(Emit::Grant { principal: regs[r(p)], rights })?,
                Insn::Size { r: s } => emit(Emit::Size(regs[r(s)]))?,
            }
        }
    }
}

/// The little-endian `bytes`-byte word at `base + off`, if it lies inside
/// the block (`bytes` is 1, 2, 4 or 8: the verifier allows no other).
fn load(block: &[u8; BLOCK_SIZE], base: u64, off: u32, bytes: u8) -> Option<u64> {
    let addr = usize::try_from(base.checked_add(u64::from(off))?).ok()?;
    let at = |n: usize| block.get(addr..addr.checked_add(n)?);
    Some(match bytes {
        1 => u64::from(*block.get(addr)?),
        2 => u64::from(u16::from_le_bytes(at(2)?.try_into().ok()?)),
        4 => u64::from(u32::from_le_bytes(at(4)?.try_into().ok()?)),
        8 => u64::from_le_bytes(at(8)?.try_into().ok()?),
        n => at(usize::from(n))?.iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b)),
    })
}
