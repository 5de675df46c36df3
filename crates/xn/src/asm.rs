//! [`Asm`]: a small assembler for UDFs and [`template`] to pack three of
//! them, for libFSes and tests. It checks nothing — [`verify`](crate::verify)
//! does.

use alloc::vec::Vec;

use oxok_abi::xn::{INSN_SIZE, RawInsn, TemplateHeader, op};

/// A UDF under construction.
#[derive(Clone, Debug, Default)]
pub struct Asm(Vec<u8>);

impl Asm {
    /// An empty program.
    pub fn new() -> Asm {
        Asm(Vec::new())
    }

    /// Appends one raw instruction.
    pub fn raw(mut self, op: u8, a: u8, b: u8, c: u8, imm: u32) -> Asm {
        self.0.extend_from_slice(&RawInsn { op, a, b, c, imm }.to_bytes());
        self
    }

    /// `li a, imm`.
    pub fn li(self, a: u8, imm: u32) -> Asm {
        self.raw(op::LI, a, 0, 0, imm)
    }
    /// `mov a, b`.
    pub fn mov(self, a: u8, b: u8) -> Asm {
        self.raw(op::MOV, a, b, 0, 0)
    }
    /// `add a, b, c`.
    pub fn add(self, a: u8, b: u8, c: u8) -> Asm {
        self.raw(op::ADD, a, b, c, 0)
    }
    /// `addi a, b, imm`.
    pub fn addi(self, a: u8, b: u8, imm: u32) -> Asm {
        self.raw(op::ADDI, a, b, 0, imm)
    }
    /// `muli a, b, imm`.
    pub fn muli(self, a: u8, b: u8, imm: u32) -> Asm {
        self.raw(op::MULI, a, b, 0, imm)
    }
    /// `shl a, b, imm`.
    pub fn shl(self, a: u8, b: u8, imm: u32) -> Asm {
        self.raw(op::SHL, a, b, 0, imm)
    }
    /// `eq a, b, c`.
    pub fn eq(self, a: u8, b: u8, c: u8) -> Asm {
        self.raw(op::EQ, a, b, c, 0)
    }
    /// `lt a, b, c`.
    pub fn lt(self, a: u8, b: u8, c: u8) -> Asm {
        self.raw(op::LT, a, b, c, 0)
    }
    /// `ld8 a, [b+off]`.
    pub fn ld8(self, a: u8, b: u8, off: u32) -> Asm {
        self.raw(op::LD8, a, b, 0, off)
    }
    /// `ld16 a, [b+off]`.
    pub fn ld16(self, a: u8, b: u8, off: u32) -> Asm {
        self.raw(op::LD16, a, b, 0, off)
    }
    /// `ld32 a, [b+off]`.
    pub fn ld32(self, a: u8, b: u8, off: u32) -> Asm {
        self.raw(op::LD32, a, b, 0, off)
    }
    /// `ld64 a, [b+off]`.
    pub fn ld64(self, a: u8, b: u8, off: u32) -> Asm {
        self.raw(op::LD64, a, b, 0, off)
    }
    /// `jz b, +skip`.
    pub fn jz(self, b: u8, skip: u32) -> Asm {
        self.raw(op::JZ, 0, b, 0, skip)
    }
    /// `jnz b, +skip`.
    pub fn jnz(self, b: u8, skip: u32) -> Asm {
        self.raw(op::JNZ, 0, b, 0, skip)
    }
    /// `loop idx, count, body`.
    pub fn repeat(self, idx: u8, count: u32, body: u8) -> Asm {
        self.raw(op::LOOP, idx, body, 0, count)
    }
    /// `halt`.
    pub fn halt(self) -> Asm {
        self.raw(op::HALT, 0, 0, 0, 0)
    }
    /// `ext start, len, ty`.
    pub fn ext(self, start: u8, len: u8, ty: u8) -> Asm {
        self.raw(op::EXT, start, len, ty, 0)
    }
    /// `prin a, rights`.
    pub fn prin(self, a: u8, rights: u32) -> Asm {
        self.raw(op::PRIN, a, 0, 0, rights)
    }
    /// `size a`.
    pub fn size(self, a: u8) -> Asm {
        self.raw(op::SIZE, a, 0, 0, 0)
    }

    /// Instructions so far.
    pub fn len(&self) -> usize {
        self.0.len() / INSN_SIZE
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

/// Packs three programs into a template (layout in [`oxok_abi::xn`]).
pub fn template(owns: &Asm, acl: &Asm, size: &Asm) -> Vec<u8> {
    let n = |a: &Asm| u16::try_from(a.len()).unwrap_or(u16::MAX);
    let h = TemplateHeader { owns: n(owns), acl: n(acl), size: n(size) };
    let mut t = Vec::from(h.to_bytes());
    for a in [owns, acl, size] {
        t.extend_from_slice(a.bytes());
    }
    t
}
