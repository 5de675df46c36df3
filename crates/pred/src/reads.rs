//! What a predicate reads: every address an evaluation may load, so the
//! kernel can tell which events can change a sleeper's predicate (a device
//! interrupt cannot change the environment table or the clock).

use oxok_abi::pred::PARAMS;

use crate::Program;

impl Program {
    /// Whether every read an evaluation with `params` may make — in any
    /// clause, whether or not short-circuiting would reach it — lies where
    /// `within(addr, bytes)` says. True for a program that reads nothing.
    /// The addresses are those [`eval`](Program::eval) computes
    /// ([`Operand::address`](crate::Operand::address)).
    pub fn reads_only(&self, params: &[u64; PARAMS], within: impl Fn(u64, u8) -> bool) -> bool {
        self.insns()
            .iter()
            .filter_map(|insn| insn.operand()?.address(params))
            .all(|(addr, size)| within(addr, size.bytes()))
    }
}
