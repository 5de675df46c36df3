//! [`Udf`]: a verified program, and its interpreter.

use alloc::vec::Vec;
use core::fmt;

use oxok_abi::xn::{BLOCK_SIZE, MAX_DEPTH, MAX_STEPS, REGS};

use crate::{Alu, AluImm, Insn};

/// A verified UDF. Only [`verify`](crate::verify) makes one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Udf {
    insns: Vec<Insn>,
    ops: Vec<Op>,
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
    /// at most two words; `addr` inside the block).
    #[inline(always)]
    pub fn mark(&mut self, addr: usize, bytes: u8) {
        let first = addr / 8;
        let last = (addr + usize::from(bytes).clamp(1, 8) - 1) / 8;
        let words = self.0.len();
        for w in [first, last] {
            self.0[(w / 64) % words] |= 1 << (w % 64);
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

/// An instruction as the interpreter runs it, in 8 bytes: one dispatch per
/// step (an operation, a load's width, a jump's sense each its own
/// variant), a jump's target and a loop's end as instruction indices.
/// Registers are taken modulo [`REGS`] where used (every one is `< REGS`
/// in a verified program; the mask costs less than a bounds check).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Li(u8, u32),
    Mov(u8, u8),
    Add(u8, u8, u8),
    Sub(u8, u8, u8),
    Mul(u8, u8, u8),
    And(u8, u8, u8),
    Or(u8, u8, u8),
    Eq(u8, u8, u8),
    Lt(u8, u8, u8),
    AddI(u8, u8, u32),
    MulI(u8, u8, u32),
    AndI(u8, u8, u32),
    Shl(u8, u8, u32),
    Shr(u8, u8, u32),
    /// `(bytes, d, base, off)`: a width the verifier never passes.
    Load(u8, u8, u8, u32),
    Ld8(u8, u8, u32),
    Ld16(u8, u8, u32),
    Ld32(u8, u8, u32),
    Ld64(u8, u8, u32),
    /// `(r, target)`.
    Jz(u8, u32),
    Jnz(u8, u32),
    /// `(idx, count, end)`.
    Loop(u8, u32, u16),
    Halt,
    Ext(u8, u8, u8),
    Prin(u8, u32),
    Size(u8),
}

const _: () = assert!(size_of::<Op>() == 8);

impl Op {
    fn of(insn: Insn, at: usize) -> Op {
        match insn {
            Insn::Li { d, imm } => Op::Li(d, imm),
            Insn::Mov { d, s } => Op::Mov(d, s),
            Insn::Alu { op, d, x, y } => match op {
                Alu::Add => Op::Add(d, x, y),
                Alu::Sub => Op::Sub(d, x, y),
                Alu::Mul => Op::Mul(d, x, y),
                Alu::And => Op::And(d, x, y),
                Alu::Or => Op::Or(d, x, y),
                Alu::Eq => Op::Eq(d, x, y),
                Alu::Lt => Op::Lt(d, x, y),
            },
            Insn::AluImm { op, d, x, imm } => match op {
                AluImm::Add => Op::AddI(d, x, imm),
                AluImm::Mul => Op::MulI(d, x, imm),
                AluImm::And => Op::AndI(d, x, imm),
                AluImm::Shl => Op::Shl(d, x, imm),
                AluImm::Shr => Op::Shr(d, x, imm),
            },
            Insn::Load { bytes, d, base, off } => match bytes {
                1 => Op::Ld8(d, base, off),
                2 => Op::Ld16(d, base, off),
                4 => Op::Ld32(d, base, off),
                8 => Op::Ld64(d, base, off),
                n => Op::Load(n, d, base, off),
            },
            Insn::Jump { if_zero, r, skip } => {
                // At most MAX_INSNS (the verifier keeps targets in the program).
                let to = u32::try_from(at.saturating_add(1).saturating_add(skip as usize)).unwrap_or(u32::MAX);
                if if_zero { Op::Jz(r, to) } else { Op::Jnz(r, to) }
            }
            Insn::Loop { idx, count, body } => {
                let end = u16::try_from(at + 1 + usize::from(body)).unwrap_or(u16::MAX);
                Op::Loop(idx, count, end)
            }
            Insn::Halt => Op::Halt,
            Insn::Ext { start, len, ty } => Op::Ext(start, len, ty),
            Insn::Prin { r, rights } => Op::Prin(r, rights),
            Insn::Size { r } => Op::Size(r),
        }
    }
}

impl Udf {
    /// The program of `insns` (verified as `function`, at most `worst`
    /// steps); `None` without memory for its runnable form.
    pub(crate) fn new(insns: Vec<Insn>, function: u8, worst: u64) -> Option<Udf> {
        let mut ops = Vec::new();
        ops.try_reserve_exact(insns.len()).ok()?;
        ops.extend(insns.iter().enumerate().map(|(at, &i)| Op::of(i, at)));
        Some(Udf { insns, ops, function, worst })
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
    ///
    /// A step costs one dispatch: the end of the innermost open loop is
    /// kept in one variable and looked at once per step, and the step
    /// bound (never reached by a verified program: a second line of
    /// defence) is checked where a loop goes round again, since without
    /// that the instructions run forward only.
    pub fn run_reading(
        &self,
        block: &[u8; BLOCK_SIZE],
        emit: &mut impl FnMut(Emit) -> Result<(), Fault>,
        reads: Option<&mut ReadSet>,
    ) -> Result<u64, Fault> {
        let mut unused = ReadSet::default();
        let set = reads.unwrap_or(&mut unused);
        let mut regs = [0u64; REGS];
        let r = |x: u8| usize::from(x) % REGS;
        let mut loops = [Pass::default(); MAX_DEPTH];
        let mut depth = 0usize;
        // The end of the innermost open loop (none: past any index).
        let mut end = usize::MAX;
        let mut pc = 0usize;
        let mut steps = 0u64;
        loop {
            // End of a loop body (`end` is past every index while no loop
            // is open): next pass, or leave the loop (and maybe the one
            // around it, which can end at the same place).
            if pc == end {
                while let Some(l) = depth.checked_sub(1).and_then(|i| loops.get_mut(i)) {
                    l.index += 1;
                    if l.index < l.count {
                        regs[r(l.idx)] = u64::from(l.index);
                        pc = l.start;
                        if steps > MAX_STEPS {
                            return Err(Fault::StepLimit);
                        }
                        break;
                    }
                    depth -= 1;
                    end = depth.checked_sub(1).and_then(|i| loops.get(i)).map_or(usize::MAX, |l| l.end);
                    if pc != end {
                        break;
                    }
                }
            }
            let Some(&op) = self.ops.get(pc) else { return Ok(steps) };
            steps += 1;
            pc += 1;
            match op {
                Op::Li(d, imm) => regs[r(d)] = u64::from(imm),
                Op::Mov(d, s) => regs[r(d)] = regs[r(s)],
                Op::Add(d, x, y) => regs[r(d)] = regs[r(x)].wrapping_add(regs[r(y)]),
                Op::Sub(d, x, y) => regs[r(d)] = regs[r(x)].wrapping_sub(regs[r(y)]),
                Op::Mul(d, x, y) => regs[r(d)] = regs[r(x)].wrapping_mul(regs[r(y)]),
                Op::And(d, x, y) => regs[r(d)] = regs[r(x)] & regs[r(y)],
                Op::Or(d, x, y) => regs[r(d)] = regs[r(x)] | regs[r(y)],
                Op::Eq(d, x, y) => regs[r(d)] = u64::from(regs[r(x)] == regs[r(y)]),
                Op::Lt(d, x, y) => regs[r(d)] = u64::from(regs[r(x)] < regs[r(y)]),
                Op::AddI(d, x, imm) => regs[r(d)] = regs[r(x)].wrapping_add(u64::from(imm)),
                Op::MulI(d, x, imm) => regs[r(d)] = regs[r(x)].wrapping_mul(u64::from(imm)),
                Op::AndI(d, x, imm) => regs[r(d)] = regs[r(x)] & u64::from(imm),
                Op::Shl(d, x, imm) => regs[r(d)] = regs[r(x)].checked_shl(imm).unwrap_or(0),
                Op::Shr(d, x, imm) => regs[r(d)] = regs[r(x)].checked_shr(imm).unwrap_or(0),
                Op::Ld8(d, b, off) => regs[r(d)] = u64::from(word::<1>(block, set, regs[r(b)], off, pc)?[0]),
                Op::Ld16(d, b, off) => {
                    regs[r(d)] = u64::from(u16::from_le_bytes(word(block, set, regs[r(b)], off, pc)?))
                }
                Op::Ld32(d, b, off) => {
                    regs[r(d)] = u64::from(u32::from_le_bytes(word(block, set, regs[r(b)], off, pc)?))
                }
                Op::Ld64(d, b, off) => regs[r(d)] = u64::from_le_bytes(word(block, set, regs[r(b)], off, pc)?),
                Op::Load(bytes, d, b, off) => {
                    let (base, off) = (regs[r(b)], u64::from(off));
                    regs[r(d)] = load(block, base, off, bytes)
                        .ok_or(Fault::OutOfBlock { at: pc - 1, addr: base.saturating_add(off) })?;
                    // In the block: `load` checked it.
                    set.mark((base + off) as usize, bytes);
                }
                Op::Jz(t, to) => {
                    if regs[r(t)] == 0 {
                        pc = to as usize;
                    }
                }
                Op::Jnz(t, to) => {
                    if regs[r(t)] != 0 {
                        pc = to as usize;
                    }
                }
                Op::Loop(idx, count, body_end) => {
                    let slot = loops.get_mut(depth).ok_or(Fault::StepLimit)?;
                    *slot = Pass { start: pc, end: usize::from(body_end), count, index: 0, idx };
                    depth += 1;
                    end = usize::from(body_end);
                    regs[r(idx)] = 0;
                }
                Op::Halt => return Ok(steps),
                Op::Ext(start, len, ty) => {
                    let len = regs[r(len)];
                    if len > 0 {
                        emit(Emit::Extent { start: regs[r(start)], len, ty: regs[r(ty)] })?;
                    }
                }
                Op::Prin(p, rights) => emit(Emit::Grant { principal: regs[r(p)], rights })?,
                Op::Size(s) => emit(Emit::Size(regs[r(s)]))?,
            }
        }
    }
}

/// The `N` bytes at `base + off` (a load of instruction `pc - 1`), marked
/// read in `set`, if they lie inside the block.
#[inline(always)]
fn word<const N: usize>(
    block: &[u8; BLOCK_SIZE],
    set: &mut ReadSet,
    base: u64,
    off: u32,
    pc: usize,
) -> Result<[u8; N], Fault> {
    let addr = base.saturating_add(u64::from(off));
    let bytes = usize::try_from(addr)
        .ok()
        .and_then(|a| block.get(a..a.checked_add(N)?))
        .and_then(|s| <[u8; N]>::try_from(s).ok())
        .ok_or(Fault::OutOfBlock { at: pc - 1, addr })?;
    set.mark(addr as usize, N as u8);
    Ok(bytes)
}

/// The little-endian `bytes`-byte word at `base + off`, if it lies inside
/// the block (`bytes` is 1, 2, 4 or 8: the verifier allows no other).
fn load(block: &[u8; BLOCK_SIZE], base: u64, off: u64, bytes: u8) -> Option<u64> {
    let addr = usize::try_from(base.checked_add(off)?).ok()?;
    let at = |n: usize| block.get(addr..addr.checked_add(n)?);
    Some(match bytes {
        1 => u64::from(*block.get(addr)?),
        2 => u64::from(u16::from_le_bytes(at(2)?.try_into().ok()?)),
        4 => u64::from(u32::from_le_bytes(at(4)?.try_into().ok()?)),
        8 => u64::from_le_bytes(at(8)?.try_into().ok()?),
        n => at(usize::from(n))?.iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b)),
    })
}
