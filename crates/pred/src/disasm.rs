//! Text for people: `Display` for operands, instructions and programs, and
//! [`disassemble`] for raw, possibly hostile bytes.
//!
//! The syntax is the one [`oxok_abi::pred`] uses: one instruction per line,
//! `index: mnemonic operand`, with operands written `0x2a` (immediate),
//! `p3` (parameter), `u32 [0x1000]` (memory) or `u64 [p2+0x8]` (memory at a
//! parameter plus an offset).

use core::fmt;

use oxok_abi::pred::{INSN_SIZE, RawInsn};

use crate::{Insn, Operand, Program, verify};

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Operand::Imm(v) => write!(f, "{v:#x}"),
            Operand::Param(p) => write!(f, "p{p}"),
            Operand::Mem { size, addr } => write!(f, "{} [{addr:#x}]", size.name()),
            Operand::MemParam { size, param, offset } => write!(f, "{} [p{param}+{offset:#x}]", size.name()),
        }
    }
}

impl fmt::Display for Insn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.operand() {
            Some(o) => write!(f, "{} {o}", self.name()),
            None => f.write_str(self.name()),
        }
    }
}

impl fmt::Display for Program {
    /// One line per instruction, each ending in a newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, insn) in self.insns().iter().enumerate() {
            writeln!(f, "{i:2}: {insn}")?;
        }
        Ok(())
    }
}

/// Raw bytes to disassemble; see [`disassemble`].
#[derive(Clone, Copy, Debug)]
pub struct Disassembly<'a> {
    /// The bytes, unchecked.
    bytes: &'a [u8],
}

/// Describes arbitrary bytes — for logging a predicate the kernel refused,
/// as well as one it accepted. Each 16-byte instruction gets a line; one
/// that does not decode is shown as `.bad` with its raw fields and the
/// reason, a trailing partial instruction as `.trunc`. A last line says
/// whether [`verify`] accepts the whole: `; ok` or `; rejected: <reason>`.
/// Never panics, allocates nothing.
pub fn disassemble(bytes: &[u8]) -> Disassembly<'_> {
    Disassembly { bytes }
}

impl fmt::Display for Disassembly<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let chunks = self.bytes.chunks_exact(INSN_SIZE);
        let rest = chunks.remainder().len();
        let mut count = 0;
        for (i, chunk) in chunks.enumerate() {
            let mut b = [0u8; INSN_SIZE];
            b.copy_from_slice(chunk);
            let raw = RawInsn::from_bytes(&b);
            match Insn::decode(raw, i) {
                Ok(insn) => writeln!(f, "{i:2}: {insn}")?,
                Err(e) => writeln!(
                    f,
                    "{i:2}: .bad op={:#04x} size={} flags={:#04x} param={} reserved={:#x} imm={:#x} ; {e}",
                    raw.op, raw.size, raw.flags, raw.param, raw.reserved, raw.imm
                )?,
            }
            count = i + 1;
        }
        if rest != 0 {
            writeln!(f, "{count:2}: .trunc {rest} bytes")?;
        }
        match verify(self.bytes) {
            Ok(_) => writeln!(f, "; ok"),
            Err(e) => writeln!(f, "; rejected: {e}"),
        }
    }
}
