//! [`Op`]: a verified instruction in the form the interpreter runs.

use crate::{Alu, AluImm, Insn};

/// An instruction as the interpreter runs it, in 8 bytes: one dispatch per
/// step (an operation, a load's width, a jump's sense each its own
/// variant), a jump's target and a loop's end as instruction indices.
/// Registers are taken modulo [`REGS`] where used (every one is `< REGS`
/// in a verified program; the mask costs less than a bounds check).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
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
    pub(crate) fn of(insn: Insn, at: usize) -> Op {
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
