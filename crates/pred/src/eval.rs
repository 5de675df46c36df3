//! The evaluator: runs a verified [`Program`] against parameters and memory.

use core::fmt;

use oxok_abi::pred::PARAMS;

use crate::{Insn, Operand, Program};

/// Why an evaluation produced no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// The read callback refused to read at this address (the installer
    /// could not read it, or the kernel refuses the read for another reason
    /// such as alignment).
    ///
    /// **Intended kernel semantics:** the predicate is neither true nor
    /// false. The kernel makes the sleeper runnable and its sleep call
    /// returns [`BadAddress`](oxok_abi::Error::BadAddress) with the address,
    /// so that a predicate over memory that went away cannot sleep forever
    /// and can never wake anyone "successfully"; the predicate stays
    /// installed for the owner to fix (remap, change a parameter) or remove.
    BadRead(u64),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::BadRead(addr) => write!(f, "predicate read refused at {addr:#x}"),
        }
    }
}

impl Program {
    /// Evaluates the predicate.
    ///
    /// `params` are the installed predicate's parameters. Every memory load
    /// calls `read(addr, size)` with `size` ∈ {1, 2, 4, 8} bytes; it returns
    /// the zero-extended little-endian value at `addr`, or `None` to refuse.
    /// The kernel's `read` walks the **installer's** page tables and refuses
    /// anything the installer could not read from user mode — that is the
    /// whole of the predicate's protection. Whether unaligned reads or reads
    /// straddling a page boundary are allowed is `read`'s business too (the
    /// kernel should check every byte, or refuse them); this function only
    /// computes addresses (wrapping) and never touches memory itself. Bits a
    /// `read` returns above `size` bytes are ignored.
    ///
    /// Returns `Ok(true)` when some clause holds, `Ok(false)` when none
    /// does, and `Err(EvalError::BadRead(addr))` as soon as a read is
    /// refused — never `Ok(..)` after a refused read. Clauses are evaluated
    /// in order and stop early (a failing comparison skips to the next
    /// clause; a clause that holds ends the evaluation), so a read that
    /// short-circuiting avoids never happens.
    ///
    /// Cost: at most [`len`](Program::len) instructions executed and
    /// [`max_reads`](Program::max_reads) reads; no loops, no allocation, no
    /// panics.
    pub fn eval(
        &self,
        params: &[u64; PARAMS],
        read: &mut impl FnMut(u64, u8) -> Option<u64>,
    ) -> Result<bool, EvalError> {
        self.eval_counted(params, read).0
    }

    /// As [`eval`](Program::eval), also returning how many instructions
    /// were executed (for accounting and tests; always `<= self.len()`).
    pub fn eval_counted(
        &self,
        params: &[u64; PARAMS],
        read: &mut impl FnMut(u64, u8) -> Option<u64>,
    ) -> (Result<bool, EvalError>, usize) {
        let insns = self.insns();
        let mut steps = 0;
        let mut v = 0u64;
        let mut i = 0;
        while let Some(&insn) = insns.get(i) {
            steps += 1;
            let mut next = i + 1;
            match insn {
                Insn::Or => return (Ok(true), steps),
                Insn::Load(o) | Insn::And(o) | Insn::Sub(o) | Insn::Cmp(_, o) => {
                    let x = match value(o, params, read) {
                        Ok(x) => x,
                        Err(e) => return (Err(e), steps),
                    };
                    match insn {
                        Insn::Load(_) => v = x,
                        Insn::And(_) => v &= x,
                        Insn::Sub(_) => v = v.wrapping_sub(x),
                        Insn::Cmp(c, _) if !c.holds(v, x) => {
                            // Strictly forward whatever `next_clause` says.
                            next = next.max(self.next_clause(i));
                            if next >= insns.len() {
                                return (Ok(false), steps);
                            }
                        }
                        _ => {}
                    }
                }
            }
            i = next;
        }
        // Fell off the end: the last clause's final comparison held.
        (Ok(true), steps)
    }
}

/// The value of operand `o`. Inlined always: it runs for every operand of
/// every evaluation (the kernel evaluates sleepers' predicates at every
/// tick), and as a call it cost a third of an evaluation.
#[inline(always)]
fn value(o: Operand, params: &[u64; PARAMS], read: &mut impl FnMut(u64, u8) -> Option<u64>) -> Result<u64, EvalError> {
    let (addr, size) = match o {
        Operand::Imm(v) => return Ok(v),
        Operand::Param(p) => return Ok(params.get(usize::from(p)).copied().unwrap_or(0)),
        // A memory operand always has an address (`Operand::address`, which
        // `Program::reads_only` asks too).
        Operand::Mem { .. } | Operand::MemParam { .. } => match o.address(params) {
            Some(at) => at,
            None => return Ok(0),
        },
    };
    match read(addr, size.bytes()) {
        Some(x) => Ok(x & size.mask()),
        None => Err(EvalError::BadRead(addr)),
    }
}
