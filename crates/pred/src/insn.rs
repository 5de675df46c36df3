//! Decoded instructions: the typed form of [`RawInsn`], and the checks that
//! turn one into the other.

use oxok_abi::pred::{PARAMS, RawInsn, kind, op};

use crate::VerifyError;

/// Width of a memory load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// One byte.
    U8,
    /// Two bytes.
    U16,
    /// Four bytes.
    U32,
    /// Eight bytes.
    U64,
}

impl Size {
    /// Every size, narrowest first.
    pub const ALL: [Size; 4] = [Size::U8, Size::U16, Size::U32, Size::U64];

    /// The size with this many bytes, if it is 1, 2, 4 or 8.
    pub const fn from_bytes(bytes: u8) -> Option<Size> {
        match bytes {
            1 => Some(Size::U8),
            2 => Some(Size::U16),
            4 => Some(Size::U32),
            8 => Some(Size::U64),
            _ => None,
        }
    }

    /// Bytes loaded.
    pub const fn bytes(self) -> u8 {
        match self {
            Size::U8 => 1,
            Size::U16 => 2,
            Size::U32 => 4,
            Size::U64 => 8,
        }
    }

    /// The bits a value of this size can have.
    pub const fn mask(self) -> u64 {
        match self {
            Size::U8 => 0xff,
            Size::U16 => 0xffff,
            Size::U32 => 0xffff_ffff,
            Size::U64 => u64::MAX,
        }
    }

    /// The name used in disassembly: `u8`, `u16`, `u32`, `u64`.
    pub const fn name(self) -> &'static str {
        match self {
            Size::U8 => "u8",
            Size::U16 => "u16",
            Size::U32 => "u32",
            Size::U64 => "u64",
        }
    }
}

/// Where an instruction's value `x` comes from.
///
/// A parameter index is meaningful only below [`PARAMS`]; the verifier
/// rejects larger ones, so every operand in a [`Program`](crate::Program)
/// has a valid index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// An immediate value.
    Imm(u64),
    /// A parameter, by index.
    Param(u8),
    /// The word at an absolute address.
    Mem {
        /// Width of the load.
        size: Size,
        /// Virtual address, in the installer's address space.
        addr: u64,
    },
    /// The word at `parameter + offset` (wrapping).
    MemParam {
        /// Width of the load.
        size: Size,
        /// Parameter holding the base address.
        param: u8,
        /// Added to the base.
        offset: u64,
    },
}

impl Operand {
    /// The `size`-byte word at `addr`.
    pub const fn mem(size: Size, addr: u64) -> Operand {
        Operand::Mem { size, addr }
    }

    /// The `size`-byte word at `parameter[param] + offset`.
    pub const fn at_param(size: Size, param: u8, offset: u64) -> Operand {
        Operand::MemParam { size, param, offset }
    }

    /// Whether evaluating this operand reads memory.
    pub const fn reads_memory(self) -> bool {
        matches!(self, Operand::Mem { .. } | Operand::MemParam { .. })
    }

    /// Where evaluating this operand with `params` reads, and how wide: the
    /// address is computed here and nowhere else (a parameter's base plus
    /// the offset wraps). `None` for an operand that reads nothing.
    #[inline(always)]
    pub fn address(self, params: &[u64; PARAMS]) -> Option<(u64, Size)> {
        match self {
            Operand::Imm(_) | Operand::Param(_) => None,
            Operand::Mem { size, addr } => Some((addr, size)),
            Operand::MemParam { size, param, offset } => {
                let base = params.get(usize::from(param)).copied().unwrap_or(0);
                Some((base.wrapping_add(offset), size))
            }
        }
    }

    /// Encodes the operand into the `size`, `flags`, `param` and `imm`
    /// fields of `raw`.
    const fn encode_into(self, mut raw: RawInsn) -> RawInsn {
        match self {
            Operand::Imm(v) => {
                raw.flags = kind::IMM;
                raw.imm = v;
            }
            Operand::Param(p) => {
                raw.flags = kind::PARAM;
                raw.param = p;
            }
            Operand::Mem { size, addr } => {
                raw.flags = kind::MEM;
                raw.size = size.bytes();
                raw.imm = addr;
            }
            Operand::MemParam { size, param, offset } => {
                raw.flags = kind::MEM_PARAM;
                raw.size = size.bytes();
                raw.param = param;
                raw.imm = offset;
            }
        }
        raw
    }

    /// Decodes and checks the operand fields of instruction `at`.
    fn decode(raw: RawInsn, at: usize) -> Result<Operand, VerifyError> {
        if raw.flags & !kind::MASK != 0 {
            return Err(VerifyError::BadFlags { at, flags: raw.flags });
        }
        let k = raw.flags & kind::MASK;
        let uses_param = k == kind::PARAM || k == kind::MEM_PARAM;
        let reads = k == kind::MEM || k == kind::MEM_PARAM;
        let size = if reads {
            Size::from_bytes(raw.size).ok_or(VerifyError::BadSize { at, size: raw.size })?
        } else if raw.size != 0 {
            return Err(VerifyError::BadSize { at, size: raw.size });
        } else {
            Size::U64
        };
        if uses_param && usize::from(raw.param) >= PARAMS {
            return Err(VerifyError::BadParam { at, param: raw.param });
        }
        if (!uses_param && raw.param != 0) || (k == kind::PARAM && raw.imm != 0) {
            return Err(VerifyError::Reserved { at });
        }
        Ok(match k {
            kind::IMM => Operand::Imm(raw.imm),
            kind::PARAM => Operand::Param(raw.param),
            kind::MEM => Operand::Mem { size, addr: raw.imm },
            _ => Operand::MemParam { size, param: raw.param, offset: raw.imm },
        })
    }
}

impl From<u64> for Operand {
    /// An immediate.
    fn from(v: u64) -> Operand {
        Operand::Imm(v)
    }
}

/// A comparison: one term of a clause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `v == x`.
    Eq,
    /// `v != x`.
    Ne,
    /// `v < x`, unsigned.
    Lt,
    /// `v <= x`, unsigned.
    Le,
    /// `v > x`, unsigned.
    Gt,
    /// `v >= x`, unsigned.
    Ge,
    /// `v & x != 0`.
    Test,
}

impl Cmp {
    /// Every comparison, in opcode order.
    pub const ALL: [Cmp; 7] = [Cmp::Eq, Cmp::Ne, Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Test];

    /// Whether the term holds for value `v` and operand value `x`.
    pub const fn holds(self, v: u64, x: u64) -> bool {
        match self {
            Cmp::Eq => v == x,
            Cmp::Ne => v != x,
            Cmp::Lt => v < x,
            Cmp::Le => v <= x,
            Cmp::Gt => v > x,
            Cmp::Ge => v >= x,
            Cmp::Test => v & x != 0,
        }
    }

    /// The opcode.
    pub const fn opcode(self) -> u8 {
        match self {
            Cmp::Eq => op::EQ,
            Cmp::Ne => op::NE,
            Cmp::Lt => op::LT,
            Cmp::Le => op::LE,
            Cmp::Gt => op::GT,
            Cmp::Ge => op::GE,
            Cmp::Test => op::TEST,
        }
    }

    /// The mnemonic.
    pub const fn name(self) -> &'static str {
        match self {
            Cmp::Eq => "eq",
            Cmp::Ne => "ne",
            Cmp::Lt => "lt",
            Cmp::Le => "le",
            Cmp::Gt => "gt",
            Cmp::Ge => "ge",
            Cmp::Test => "test",
        }
    }
}

/// One instruction, decoded and checked field by field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insn {
    /// `ld x`: `v = x`.
    Load(Operand),
    /// `and x`: `v = v & x`.
    And(Operand),
    /// `sub x`: `v = v - x`, wrapping.
    Sub(Operand),
    /// A term: the clause fails unless `cmp(v, x)` holds.
    Cmp(Cmp, Operand),
    /// End of a clause.
    Or,
}

impl Insn {
    /// The operand, if the instruction has one.
    pub const fn operand(self) -> Option<Operand> {
        match self {
            Insn::Load(o) | Insn::And(o) | Insn::Sub(o) | Insn::Cmp(_, o) => Some(o),
            Insn::Or => None,
        }
    }

    /// The mnemonic.
    pub const fn name(self) -> &'static str {
        match self {
            Insn::Load(_) => "ld",
            Insn::And(_) => "and",
            Insn::Sub(_) => "sub",
            Insn::Cmp(c, _) => c.name(),
            Insn::Or => "or",
        }
    }

    /// Encodes the instruction. Encoding never fails; an operand with a
    /// parameter index `>= PARAMS` encodes as written and the verifier
    /// rejects it.
    pub const fn encode(self) -> RawInsn {
        let raw = RawInsn { op: 0, size: 0, flags: 0, param: 0, reserved: 0, imm: 0 };
        match self {
            Insn::Load(o) => o.encode_into(RawInsn { op: op::LD, ..raw }),
            Insn::And(o) => o.encode_into(RawInsn { op: op::AND, ..raw }),
            Insn::Sub(o) => o.encode_into(RawInsn { op: op::SUB, ..raw }),
            Insn::Cmp(c, o) => o.encode_into(RawInsn { op: c.opcode(), ..raw }),
            Insn::Or => RawInsn { op: op::OR, ..raw },
        }
    }

    /// Decodes and checks one instruction; `at` is its index, for the
    /// error. Checks the fields only, not the instruction's place in the
    /// program (that is [`verify`](crate::verify)'s job).
    pub fn decode(raw: RawInsn, at: usize) -> Result<Insn, VerifyError> {
        let cmp = match raw.op {
            op::LD => return Ok(Insn::Load(Self::operand_of(raw, at)?)),
            op::AND => return Ok(Insn::And(Self::operand_of(raw, at)?)),
            op::SUB => return Ok(Insn::Sub(Self::operand_of(raw, at)?)),
            op::OR => {
                let unused = RawInsn { op: op::OR, ..RawInsn::default() };
                return if raw == unused { Ok(Insn::Or) } else { Err(VerifyError::Reserved { at }) };
            }
            op::EQ => Cmp::Eq,
            op::NE => Cmp::Ne,
            op::LT => Cmp::Lt,
            op::LE => Cmp::Le,
            op::GT => Cmp::Gt,
            op::GE => Cmp::Ge,
            op::TEST => Cmp::Test,
            other => return Err(VerifyError::BadOpcode { at, op: other }),
        };
        Ok(Insn::Cmp(cmp, Self::operand_of(raw, at)?))
    }

    /// The operand of an instruction that has one, checking `reserved` too.
    fn operand_of(raw: RawInsn, at: usize) -> Result<Operand, VerifyError> {
        let o = Operand::decode(raw, at)?;
        if raw.reserved != 0 {
            return Err(VerifyError::Reserved { at });
        }
        Ok(o)
    }
}
