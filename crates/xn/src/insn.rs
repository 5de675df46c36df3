//! Decoded UDF instructions: the typed form of [`RawInsn`] and the per
//! instruction checks (the structural ones are in `verify`).

use oxok_abi::xn::{BLOCK_SIZE, MAX_LOOP, REGS, RawInsn, func, op, rights};

use crate::VerifyError;

/// A register number, always `< REGS` in a verified program.
pub type Reg = u8;

/// Two-register arithmetic and comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alu {
    /// Wrapping add.
    Add,
    /// Wrapping subtract.
    Sub,
    /// Wrapping multiply.
    Mul,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// 1 if equal, else 0.
    Eq,
    /// 1 if less (unsigned), else 0.
    Lt,
}

impl Alu {
    /// Applies the operation.
    pub fn apply(self, x: u64, y: u64) -> u64 {
        match self {
            Alu::Add => x.wrapping_add(y),
            Alu::Sub => x.wrapping_sub(y),
            Alu::Mul => x.wrapping_mul(y),
            Alu::And => x & y,
            Alu::Or => x | y,
            Alu::Eq => u64::from(x == y),
            Alu::Lt => u64::from(x < y),
        }
    }
}

/// Register-and-immediate arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AluImm {
    /// Wrapping add.
    Add,
    /// Wrapping multiply.
    Mul,
    /// Bitwise and.
    And,
    /// Shift left (`imm < 64`).
    Shl,
    /// Shift right (`imm < 64`).
    Shr,
}

impl AluImm {
    /// Applies the operation.
    pub fn apply(self, x: u64, imm: u32) -> u64 {
        let y = u64::from(imm);
        match self {
            AluImm::Add => x.wrapping_add(y),
            AluImm::Mul => x.wrapping_mul(y),
            AluImm::And => x & y,
            AluImm::Shl => x.checked_shl(imm).unwrap_or(0),
            AluImm::Shr => x.checked_shr(imm).unwrap_or(0),
        }
    }
}

/// One checked instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insn {
    /// `li d, imm`.
    Li {
        /// Destination.
        d: Reg,
        /// Value.
        imm: u32,
    },
    /// `mov d, s`.
    Mov {
        /// Destination.
        d: Reg,
        /// Source.
        s: Reg,
    },
    /// `op d, x, y`.
    Alu {
        /// Operation.
        op: Alu,
        /// Destination.
        d: Reg,
        /// First source.
        x: Reg,
        /// Second source.
        y: Reg,
    },
    /// `op d, x, imm`.
    AluImm {
        /// Operation.
        op: AluImm,
        /// Destination.
        d: Reg,
        /// Source.
        x: Reg,
        /// Immediate.
        imm: u32,
    },
    /// `ldN d, [base+off]`.
    Load {
        /// Bytes loaded: 1, 2, 4 or 8.
        bytes: u8,
        /// Destination.
        d: Reg,
        /// Base register.
        base: Reg,
        /// Constant offset.
        off: u32,
    },
    /// `jz r, +skip` (`if_zero`) or `jnz r, +skip`.
    Jump {
        /// Jump when `r == 0` (else when `r != 0`).
        if_zero: bool,
        /// Tested register.
        r: Reg,
        /// Instructions skipped (`>= 1`).
        skip: u32,
    },
    /// `loop idx, count, body`.
    Loop {
        /// Index register.
        idx: Reg,
        /// Passes (`1..=MAX_LOOP`).
        count: u32,
        /// Body length (`>= 1`).
        body: u8,
    },
    /// `halt`.
    Halt,
    /// `ext start, len, ty` (owns).
    Ext {
        /// Start register.
        start: Reg,
        /// Length register.
        len: Reg,
        /// Type register.
        ty: Reg,
    },
    /// `prin r, rights` (acl).
    Prin {
        /// Principal register.
        r: Reg,
        /// Rights granted.
        rights: u32,
    },
    /// `size r` (size).
    Size {
        /// Source register.
        r: Reg,
    },
}

impl Insn {
    /// Checks one raw instruction of a `function` program at index `at`.
    pub fn decode(raw: RawInsn, function: u8, at: usize) -> Result<Insn, VerifyError> {
        let RawInsn { op: code, a, b, c, imm } = raw;
        let reg = |r: u8| if usize::from(r) < REGS { Ok(r) } else { Err(VerifyError::BadRegister { at, reg: r }) };
        // `zero(fields)`: the unused fields must be 0.
        let zero =
            |fields: &[u64]| if fields.iter().all(|&f| f == 0) { Ok(()) } else { Err(VerifyError::Reserved { at }) };
        let (b64, c64, i64_) = (u64::from(b), u64::from(c), u64::from(imm));
        let only = |wanted: u8| if function == wanted { Ok(()) } else { Err(VerifyError::WrongFunction { at }) };
        let alu = |o: Alu| -> Result<Insn, VerifyError> {
            zero(&[i64_])?;
            Ok(Insn::Alu { op: o, d: reg(a)?, x: reg(b)?, y: reg(c)? })
        };
        let alui = |o: AluImm| -> Result<Insn, VerifyError> {
            zero(&[c64])?;
            if matches!(o, AluImm::Shl | AluImm::Shr) && imm >= 64 {
                return Err(VerifyError::BadShift { at });
            }
            Ok(Insn::AluImm { op: o, d: reg(a)?, x: reg(b)?, imm })
        };
        let load = |bytes: u8| -> Result<Insn, VerifyError> {
            zero(&[c64])?;
            if i64_ + u64::from(bytes) > BLOCK_SIZE as u64 {
                return Err(VerifyError::OutOfBlock { at });
            }
            Ok(Insn::Load { bytes, d: reg(a)?, base: reg(b)?, off: imm })
        };
        let jump = |if_zero: bool| -> Result<Insn, VerifyError> {
            zero(&[u64::from(a), c64])?;
            if imm == 0 {
                return Err(VerifyError::BadJump { at });
            }
            Ok(Insn::Jump { if_zero, r: reg(b)?, skip: imm })
        };
        match code {
            op::LI => zero(&[b64, c64]).and_then(|()| Ok(Insn::Li { d: reg(a)?, imm })),
            op::MOV => zero(&[c64, i64_]).and_then(|()| Ok(Insn::Mov { d: reg(a)?, s: reg(b)? })),
            op::ADD => alu(Alu::Add),
            op::SUB => alu(Alu::Sub),
            op::MUL => alu(Alu::Mul),
            op::AND => alu(Alu::And),
            op::OR => alu(Alu::Or),
            op::EQ => alu(Alu::Eq),
            op::LT => alu(Alu::Lt),
            op::ADDI => alui(AluImm::Add),
            op::MULI => alui(AluImm::Mul),
            op::ANDI => alui(AluImm::And),
            op::SHL => alui(AluImm::Shl),
            op::SHR => alui(AluImm::Shr),
            op::LD8 => load(1),
            op::LD16 => load(2),
            op::LD32 => load(4),
            op::LD64 => load(8),
            op::JZ => jump(true),
            op::JNZ => jump(false),
            op::LOOP => {
                zero(&[c64])?;
                if imm == 0 || imm > MAX_LOOP || b == 0 {
                    return Err(VerifyError::BadLoop { at });
                }
                Ok(Insn::Loop { idx: reg(a)?, count: imm, body: b })
            }
            op::HALT => zero(&[u64::from(a), b64, c64, i64_]).map(|()| Insn::Halt),
            op::EXT => {
                only(func::OWNS)?;
                zero(&[i64_])?;
                Ok(Insn::Ext { start: reg(a)?, len: reg(b)?, ty: reg(c)? })
            }
            op::PRIN => {
                only(func::ACL)?;
                zero(&[b64, c64, u64::from(imm & !rights::ALL)])?;
                Ok(Insn::Prin { r: reg(a)?, rights: imm })
            }
            op::SIZE => {
                only(func::SIZE)?;
                zero(&[b64, c64, i64_])?;
                Ok(Insn::Size { r: reg(a)? })
            }
            other => Err(VerifyError::BadOpcode { at, op: other }),
        }
    }
}
