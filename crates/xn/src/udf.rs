//! [`Udf`]: a verified program, and its interpreter.

use alloc::vec::Vec;
use core::fmt;

use oxok_abi::xn::{BLOCK_SIZE, MAX_DEPTH, MAX_STEPS, REGS};

use crate::op::Op;
use crate::{Insn, ReadSet};

/// A verified UDF. Only [`verify`](crate::verify) makes one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Udf {
    insns: Vec<Insn>,
    ops: Vec<Op>,
    /// The live registers before each op ([`crate::live`]), if known.
    live: Option<Vec<u8>>,
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

/// An open loop while running.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pass {
    start: usize,
    end: usize,
    count: u32,
    index: u32,
    idx: u8,
}

/// Where a run stands between two steps: with the block, everything the
/// steps after it depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct State {
    pc: usize,
    regs: [u64; REGS],
    loops: [Pass; MAX_DEPTH],
    depth: usize,
    /// The end of the innermost open loop (none: past any index).
    end: usize,
    steps: u64,
}

impl State {
    /// Before the first step.
    pub(crate) const START: State = State {
        pc: 0,
        regs: [0; REGS],
        loops: [Pass { start: 0, end: 0, count: 0, index: 0, idx: 0 }; MAX_DEPTH],
        depth: 0,
        end: usize::MAX,
        steps: 0,
    };

    /// Whether a run from `self` and one from `other` take the same steps
    /// over the same block: the same place, the same open loops at the
    /// same passes, and the same values in every register a step from
    /// here may read before writing it (`live`, bit `r` for register `r`).
    /// The registers outside `live` and the step counts may differ.
    pub(crate) fn same_course(&self, other: &State, live: u8) -> bool {
        fn open(s: &State) -> &[Pass] {
            s.loops.get(..s.depth).unwrap_or(&[])
        }
        (self.pc, self.depth, self.end) == (other.pc, other.depth, other.end)
            && open(self) == open(other)
            && (0..REGS).all(|r| live & (1 << r) == 0 || self.regs[r] == other.regs[r])
    }
}

/// Where a run's results and passes go.
pub(crate) trait Sink {
    /// Whether [`pass`](Sink::pass) is called (false: never, at no cost).
    const PASSES: bool;
    /// One result; a fault stops the run.
    fn emit(&mut self, e: Emit) -> Result<(), Fault>;
    /// A pass of an outermost loop with a body is about to start: `at` is
    /// where the run stands, `reads` the words it read since the last
    /// call (the sink may take them). False stops the run there.
    fn pass(&mut self, _at: &State, _reads: &mut ReadSet) -> bool {
        true
    }
}

/// A sink that only collects results, through a closure.
struct Results<F>(F);

impl<F: FnMut(Emit) -> Result<(), Fault>> Sink for Results<F> {
    const PASSES: bool = false;
    #[inline(always)]
    fn emit(&mut self, e: Emit) -> Result<(), Fault> {
        (self.0)(e)
    }
}

impl Udf {
    /// The program of `insns` (verified as `function`, at most `worst`
    /// steps); `None` without memory for its runnable form.
    pub(crate) fn new(insns: Vec<Insn>, function: u8, worst: u64) -> Option<Udf> {
        let mut ops = Vec::new();
        ops.try_reserve_exact(insns.len()).ok()?;
        ops.extend(insns.iter().enumerate().map(|(at, &i)| Op::of(i, at)));
        let live = crate::live::live(&ops);
        Some(Udf { insns, ops, live, function, worst })
    }

    /// The function this program was verified as ([`oxok_abi::xn::func`]).
    pub fn function(&self) -> u8 {
        self.function
    }

    /// The instructions.
    pub fn insns(&self) -> &[Insn] {
        &self.insns
    }

    /// The registers a run standing at `at` may read before writing them
    /// (bit `r` for register `r`), if known.
    pub(crate) fn live_at(&self, at: &State) -> Option<u8> {
        self.live.as_ref()?.get(at.pc).copied()
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
        reads: Option<&mut ReadSet>,
    ) -> Result<u64, Fault> {
        let mut unused = ReadSet::default();
        let set = reads.unwrap_or(&mut unused);
        let mut at = State::START;
        self.go(block, &mut at, &mut Results(emit), set)?;
        Ok(at.steps)
    }

    /// Runs from `at` until the program ends (true) or the sink stops it
    /// at the start of a pass (false); `at` is then where it stopped.
    /// Adds to `set` every word a load touched.
    ///
    /// A step costs one dispatch: the end of the innermost open loop is
    /// kept in one variable and looked at once per step, and the step
    /// bound (never reached by a verified program: a second line of
    /// defence) is checked where a loop goes round again, since without
    /// that the instructions run forward only.
    pub(crate) fn go<S: Sink>(
        &self,
        block: &[u8; BLOCK_SIZE],
        at: &mut State,
        sink: &mut S,
        set: &mut ReadSet,
    ) -> Result<bool, Fault> {
        let State { mut pc, mut regs, mut loops, mut depth, mut end, mut steps } = *at;
        let r = |x: u8| usize::from(x) % REGS;
        loop {
            // End of a loop body (`end` is past every index while no loop
            // is open): next pass, or leave the loop (and maybe the one
            // around it, which can end at the same place).
            if pc == end {
                while let Some(i) = depth.checked_sub(1).filter(|&i| i < MAX_DEPTH) {
                    let l = &mut loops[i];
                    l.index += 1;
                    if l.index < l.count {
                        regs[r(l.idx)] = u64::from(l.index);
                        pc = l.start;
                        if steps > MAX_STEPS {
                            return Err(Fault::StepLimit);
                        }
                        if S::PASSES && depth == 1 && l.start < l.end {
                            let here = State { pc, regs, loops, depth, end, steps };
                            if stops(sink, here, set, at) {
                                return Ok(false);
                            }
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
            let Some(&op) = self.ops.get(pc) else {
                at.steps = steps;
                return Ok(true);
            };
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
                    if S::PASSES && depth == 1 && pc < end {
                        let here = State { pc, regs, loops, depth, end, steps };
                        if stops(sink, here, set, at) {
                            return Ok(false);
                        }
                    }
                }
                Op::Halt => {
                    at.steps = steps;
                    return Ok(true);
                }
                Op::Ext(start, len, ty) => {
                    let len = regs[r(len)];
                    if len > 0 {
                        sink.emit(Emit::Extent { start: regs[r(start)], len, ty: regs[r(ty)] })?;
                    }
                }
                Op::Prin(p, rights) => sink.emit(Emit::Grant { principal: regs[r(p)], rights })?,
                Op::Size(s) => sink.emit(Emit::Size(regs[r(s)]))?,
            }
        }
    }
}

/// Whether the sink stops the run at the start of a pass standing at
/// `here` (and then `at` is `here`).
#[inline(always)]
fn stops<S: Sink>(sink: &mut S, here: State, set: &mut ReadSet, at: &mut State) -> bool {
    if sink.pass(&here, set) {
        return false;
    }
    *at = here;
    true
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
