//! Deadline predicates: recognising a program that holds exactly from some
//! value of one counter on, so the kernel can key its sleeper by that value
//! instead of evaluating it every tick.

use oxok_abi::pred::PARAMS;

use crate::{Cmp, Insn, Operand, Program, Size};

impl Program {
    /// If every clause is "the `u64` at `word` ≥ x" (`ld u64 [word]; ge x`,
    /// or `gt x`, with `x` an immediate or a parameter), the least `t`
    /// such that the predicate holds exactly when that word is `≥ t`;
    /// otherwise `None`. The kernel passes the clock page's tick counter
    /// as `word`: such a predicate is a pure deadline, which only the
    /// clock can make true and which no read can refuse (the clock page is
    /// mapped read-only in every address space). A clause that can never
    /// hold (`gt u64::MAX`) makes the answer `None` too: the caller then
    /// treats the program like any other.
    pub fn deadline(&self, params: &[u64; PARAMS], word: u64) -> Option<u64> {
        let mut earliest: Option<u64> = None;
        for clause in self.insns().split(|i| matches!(i, Insn::Or)) {
            let [Insn::Load(Operand::Mem { size: Size::U64, addr }), Insn::Cmp(cmp, x)] = clause else {
                return None;
            };
            if *addr != word {
                return None;
            }
            let x = match *x {
                Operand::Imm(v) => v,
                Operand::Param(p) => *params.get(usize::from(p))?,
                _ => return None,
            };
            let t = match cmp {
                Cmp::Ge => x,
                Cmp::Gt => x.checked_add(1)?,
                _ => return None,
            };
            earliest = Some(earliest.map_or(t, |e| e.min(t)));
        }
        earliest
    }
}
