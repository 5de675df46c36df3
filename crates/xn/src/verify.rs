//! The UDF verifier: bytes in, a [`Udf`] or the first reason to refuse out.

use alloc::vec::Vec;
use core::fmt;

use oxok_abi::xn::{INSN_SIZE, MAX_DEPTH, MAX_INSNS, MAX_STEPS, RawInsn, reject};

use crate::{Insn, Udf};

/// Why [`verify`] refused a UDF. `at` is the offending instruction's index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyError {
    /// No bytes.
    Empty,
    /// More than `MAX_INSNS` instructions.
    TooLong {
        /// Bytes offered.
        len: usize,
    },
    /// Not a multiple of `INSN_SIZE`.
    Truncated {
        /// Bytes offered.
        len: usize,
    },
    /// Unknown opcode.
    BadOpcode {
        /// Index.
        at: usize,
        /// Opcode.
        op: u8,
    },
    /// Register field `>= REGS`.
    BadRegister {
        /// Index.
        at: usize,
        /// Field value.
        reg: u8,
    },
    /// An unused field is not zero (or unknown rights bits).
    Reserved {
        /// Index.
        at: usize,
    },
    /// A load's constant offset already reaches past the block.
    OutOfBlock {
        /// Index.
        at: usize,
    },
    /// A jump of 0, past its body or program, or into a loop body.
    BadJump {
        /// Index.
        at: usize,
    },
    /// Bad loop count or body.
    BadLoop {
        /// Index.
        at: usize,
    },
    /// Loops nested deeper than `MAX_DEPTH`.
    TooDeep {
        /// Index.
        at: usize,
    },
    /// Worst-case steps above `MAX_STEPS`.
    TooCostly {
        /// The worst case (saturating).
        steps: u64,
    },
    /// `ext`, `prin` or `size` in the wrong function.
    WrongFunction {
        /// Index.
        at: usize,
    },
    /// A shift of 64 or more.
    BadShift {
        /// Index.
        at: usize,
    },
    /// A malformed template header or layout.
    BadTemplate,
    /// No memory to keep the program.
    NoMemory,
}

impl VerifyError {
    /// The stable code the kernel reports ([`oxok_abi::xn::reject`]).
    pub const fn code(&self) -> u64 {
        match self {
            VerifyError::Empty => reject::EMPTY,
            VerifyError::TooLong { .. } => reject::TOO_LONG,
            VerifyError::Truncated { .. } => reject::TRUNCATED,
            VerifyError::BadOpcode { .. } => reject::BAD_OPCODE,
            VerifyError::BadRegister { .. } => reject::BAD_REGISTER,
            VerifyError::Reserved { .. } => reject::RESERVED,
            VerifyError::OutOfBlock { .. } => reject::OUT_OF_BLOCK,
            VerifyError::BadJump { .. } => reject::BAD_JUMP,
            VerifyError::BadLoop { .. } => reject::BAD_LOOP,
            VerifyError::TooDeep { .. } => reject::TOO_DEEP,
            VerifyError::TooCostly { .. } => reject::TOO_COSTLY,
            VerifyError::WrongFunction { .. } => reject::WRONG_FUNCTION,
            VerifyError::BadShift { .. } => reject::BAD_SHIFT,
            VerifyError::BadTemplate => reject::BAD_TEMPLATE,
            VerifyError::NoMemory => reject::NO_MEMORY,
        }
    }
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            VerifyError::Empty => f.write_str("empty UDF"),
            VerifyError::TooLong { len } => write!(f, "{len} bytes, more than {MAX_INSNS} instructions"),
            VerifyError::Truncated { len } => write!(f, "{len} bytes, not a multiple of {INSN_SIZE}"),
            VerifyError::BadOpcode { at, op } => write!(f, "insn {at}: unknown opcode {op:#04x}"),
            VerifyError::BadRegister { at, reg } => write!(f, "insn {at}: no register r{reg}"),
            VerifyError::Reserved { at } => write!(f, "insn {at}: unused field not zero"),
            VerifyError::OutOfBlock { at } => write!(f, "insn {at}: load past the block"),
            VerifyError::BadJump { at } => write!(f, "insn {at}: bad jump target"),
            VerifyError::BadLoop { at } => write!(f, "insn {at}: bad loop"),
            VerifyError::TooDeep { at } => write!(f, "insn {at}: loops nested deeper than {MAX_DEPTH}"),
            VerifyError::TooCostly { steps } => write!(f, "worst case {steps} steps, more than {MAX_STEPS}"),
            VerifyError::WrongFunction { at } => write!(f, "insn {at}: result instruction of another function"),
            VerifyError::BadShift { at } => write!(f, "insn {at}: shift of 64 or more"),
            VerifyError::BadTemplate => f.write_str("malformed template"),
            VerifyError::NoMemory => f.write_str("no memory for the program"),
        }
    }
}

/// One open loop while scanning: where its body ends, its count, and the
/// worst-case cost of one pass of its body so far.
#[derive(Clone, Copy)]
struct Open {
    end: usize,
    count: u64,
    cost: u64,
}

/// Checks `bytes` as the program of `function` ([`oxok_abi::xn::func`])
/// and returns the verified [`Udf`], or the first problem found.
///
/// Time O(n²) in the instruction count (n ≤ `MAX_INSNS`, for the
/// jump-into-loop check), one fallible allocation of n instructions, never
/// panics. A program it accepts terminates within its
/// [`worst_steps`](Udf::worst_steps) ≤ `MAX_STEPS` instructions.
pub fn verify(bytes: &[u8], function: u8) -> Result<Udf, VerifyError> {
    let len = bytes.len();
    if len == 0 {
        return Err(VerifyError::Empty);
    }
    if len > MAX_INSNS * INSN_SIZE {
        return Err(VerifyError::TooLong { len });
    }
    if !len.is_multiple_of(INSN_SIZE) {
        return Err(VerifyError::Truncated { len });
    }
    let n = len / INSN_SIZE;
    let mut insns = Vec::new();
    insns.try_reserve_exact(n).map_err(|_| VerifyError::NoMemory)?;
    for (at, chunk) in bytes.chunks_exact(INSN_SIZE).enumerate() {
        let mut raw = [0u8; INSN_SIZE];
        raw.copy_from_slice(chunk);
        insns.push(Insn::decode(RawInsn::from_bytes(&raw), function, at)?);
    }
    let steps = structure(&insns)?;
    if steps > MAX_STEPS {
        return Err(VerifyError::TooCostly { steps });
    }
    Udf::new(insns, function, steps).ok_or(VerifyError::NoMemory)
}

/// Checks loop nesting and jump targets and returns the worst-case step
/// count (saturating).
fn structure(insns: &[Insn]) -> Result<u64, VerifyError> {
    let n = insns.len();
    let mut open = [Open { end: n, count: 1, cost: 0 }; MAX_DEPTH + 1];
    let mut depth = 0;
    for (at, insn) in insns.iter().enumerate() {
        close(&mut open, &mut depth, at);
        let end = open[depth].end;
        open[depth].cost = open[depth].cost.saturating_add(1);
        match *insn {
            Insn::Jump { skip, .. } => {
                let target = at.saturating_add(1).saturating_add(skip as usize);
                if target > end || jumps_into_loop(insns, at, target) {
                    return Err(VerifyError::BadJump { at });
                }
            }
            Insn::Loop { count, body, .. } => {
                let body_end = at + 1 + usize::from(body);
                if body_end > end {
                    return Err(VerifyError::BadLoop { at });
                }
                if depth == MAX_DEPTH {
                    return Err(VerifyError::TooDeep { at });
                }
                depth += 1;
                open[depth] = Open { end: body_end, count: u64::from(count), cost: 0 };
            }
            _ => {}
        }
    }
    close(&mut open, &mut depth, n);
    Ok(open[0].cost)
}

/// Pops every loop whose body ends at `at`, charging its passes to the
/// enclosing body.
fn close(open: &mut [Open; MAX_DEPTH + 1], depth: &mut usize, at: usize) {
    while *depth > 0 && open[*depth].end == at {
        let done = open[*depth];
        *depth -= 1;
        open[*depth].cost = open[*depth].cost.saturating_add(done.cost.saturating_mul(done.count));
    }
}

/// Whether a jump from `from` to `target` lands inside a loop body that
/// starts between them.
fn jumps_into_loop(insns: &[Insn], from: usize, target: usize) -> bool {
    insns.iter().enumerate().take(target).skip(from + 1).any(|(h, insn)| match *insn {
        Insn::Loop { body, .. } => h + 1 + usize::from(body) > target,
        _ => false,
    })
}
