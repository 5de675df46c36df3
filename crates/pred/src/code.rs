//! [`Code`]: predicate bytes in a fixed buffer.

use oxok_abi::pred::{INSN_SIZE, MAX_BYTES, RawInsn};

/// Encoded predicate bytes, up to [`MAX_BYTES`], in a fixed buffer (no
/// allocation). What the libOS hands to the install call.
#[derive(Clone, PartialEq, Eq)]
pub struct Code {
    /// The bytes; only the first `len` are meaningful.
    bytes: [u8; MAX_BYTES],
    /// Bytes used, a multiple of `INSN_SIZE`.
    len: usize,
}

impl Code {
    /// No instructions.
    pub const fn new() -> Code {
        Code { bytes: [0; MAX_BYTES], len: 0 }
    }

    /// Appends one instruction; returns false (and changes nothing) when
    /// the buffer is full.
    pub fn push(&mut self, raw: RawInsn) -> bool {
        match self.bytes.get_mut(self.len..self.len + INSN_SIZE) {
            Some(slot) => {
                slot.copy_from_slice(&raw.to_bytes());
                self.len += INSN_SIZE;
                true
            }
            None => false,
        }
    }

    /// The encoded bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or(&[])
    }

    /// Number of instructions.
    pub fn insn_count(&self) -> usize {
        self.len / INSN_SIZE
    }
}

impl Default for Code {
    fn default() -> Code {
        Code::new()
    }
}

impl core::fmt::Debug for Code {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Code").field("bytes", &self.as_bytes()).finish()
    }
}
