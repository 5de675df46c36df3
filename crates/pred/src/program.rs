//! [`Program`]: a verified predicate, ready to evaluate.

use core::fmt;

use oxok_abi::pred::MAX_INSNS;

use crate::{Code, Insn};

/// A verified predicate. Only [`verify`](crate::verify) makes one, so every
/// `Program` obeys the rules in [`oxok_abi::pred`]: 1 to [`MAX_INSNS`]
/// instructions, valid fields, non-empty clauses that load before they use
/// the value and end with a comparison.
///
/// Fixed size, no allocation: the kernel keeps one per installed predicate
/// (about 1.6 KiB).
#[derive(Clone, PartialEq, Eq)]
pub struct Program {
    /// The instructions; entries at and past `len` are `Or` and unused.
    insns: [Insn; MAX_INSNS],
    /// For a comparison at `i`: where evaluation continues when it fails —
    /// the first instruction of the next clause, or `len`. Filled by `link`.
    next_clause: [u8; MAX_INSNS],
    /// Number of instructions.
    len: u8,
}

impl Program {
    /// A program with no instructions (never returned by `verify`).
    pub(crate) const EMPTY: Program = Program { insns: [Insn::Or; MAX_INSNS], next_clause: [0; MAX_INSNS], len: 0 };

    /// Appends an instruction; ignored once full (`verify` never offers more).
    pub(crate) fn push(&mut self, insn: Insn) {
        if let Some(slot) = self.insns.get_mut(usize::from(self.len)) {
            *slot = insn;
            self.len += 1;
        }
    }

    /// Computes `next_clause` for every comparison, in one backward pass.
    pub(crate) fn link(&mut self) {
        let len = self.len;
        let mut next = len;
        for i in (0..len).rev() {
            let at = usize::from(i);
            match self.insns.get(at) {
                Some(Insn::Or) => next = i + 1,
                Some(Insn::Cmp(..)) => {
                    if let Some(slot) = self.next_clause.get_mut(at) {
                        *slot = next;
                    }
                }
                _ => {}
            }
        }
    }

    /// Number of instructions (1 to [`MAX_INSNS`]); also the most
    /// instructions one evaluation executes.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Always false: a verified program has at least one instruction.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The instructions, in order.
    pub fn insns(&self) -> &[Insn] {
        self.insns.get(..self.len()).unwrap_or(&[])
    }

    /// Where evaluation continues when the comparison at `i` fails.
    pub(crate) fn next_clause(&self, i: usize) -> usize {
        self.next_clause.get(i).map_or(self.len(), |&n| usize::from(n))
    }

    /// Number of clauses (`or` count + 1).
    pub fn clauses(&self) -> usize {
        1 + self.insns().iter().filter(|i| matches!(i, Insn::Or)).count()
    }

    /// Most memory reads one evaluation performs.
    pub fn max_reads(&self) -> usize {
        self.insns().iter().filter(|i| i.operand().is_some_and(|o| o.reads_memory())).count()
    }

    /// The program's bytes again (for exporting an environment's state, or
    /// logging). `verify(program.encode().as_bytes())` gives back an equal
    /// program.
    pub fn encode(&self) -> Code {
        let mut code = Code::new();
        for &insn in self.insns() {
            code.push(insn.encode());
        }
        code
    }
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.insns()).finish()
    }
}
