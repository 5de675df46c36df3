//! Wakeup-predicate bytecode: the format.
//!
//! An environment sleeps until a *wakeup predicate* it installed holds
//! (Xok, SOSP'97 §4.4). A predicate is a small, loop-free program over words
//! of memory the installer may read — its own pages and the kernel's exposed
//! tables — plus [`PARAMS`] `u64` *parameters* that the kernel keeps with the
//! installed predicate and that the owner changes with a separate call,
//! without reinstalling (the fix the Erlang-on-Xok report, §4.6.12, asked
//! for after `select()` spent most of its time installing predicates).
//!
//! This module is the format only. The verifier, the evaluator, a builder
//! and a disassembler live in the `oxok-pred` crate.
//!
//! # The language
//!
//! A program is a **disjunction of clauses**; a clause is a **conjunction of
//! comparisons**. [`op::OR`] separates clauses. Within a clause a single
//! value register (call it `v`) carries a word from a load to the
//! comparisons that follow it:
//!
//! ```text
//!   ld  u64 [0x7f8080000010]   ; v = clock.ticks
//!   ge  p0                     ; ... >= the deadline in parameter 0
//!   or
//!   ld  p1                     ; v = parameter 1 (a per-test on/off switch)
//!   ne  0x0                    ; ... is on
//!   ld  u64 [p2+0x8]           ; v = the word at (parameter 2 + 8): ring head
//!   ne  u64 [p2+0x10]          ; ... differs from the ring tail
//! ```
//!
//! holds when the deadline has passed, or when test 1 is switched on and the
//! ring whose address is parameter 2 is not empty.
//!
//! | opcode | name | effect |
//! | --- | --- | --- |
//! | [`op::LD`]   | `ld x`   | `v = x` |
//! | [`op::AND`]  | `and x`  | `v = v & x` |
//! | [`op::SUB`]  | `sub x`  | `v = v - x` (wrapping; for free-running ring counters) |
//! | [`op::EQ`]   | `eq x`   | term: `v == x` |
//! | [`op::NE`]   | `ne x`   | term: `v != x` |
//! | [`op::LT`]   | `lt x`   | term: `v < x` (unsigned) |
//! | [`op::LE`]   | `le x`   | term: `v <= x` (unsigned) |
//! | [`op::GT`]   | `gt x`   | term: `v > x` (unsigned) |
//! | [`op::GE`]   | `ge x`   | term: `v >= x` (unsigned) |
//! | [`op::TEST`] | `test x` | term: `v & x != 0` (masked test) |
//! | [`op::OR`]   | `or`     | end of a clause |
//!
//! A comparison that fails ends its clause: evaluation continues after the
//! clause's `or`, or, in the last clause, the predicate is false. Reaching an
//! `or` (or the end of the program) means every comparison of that clause
//! held, and the predicate is true. Comparisons do not change `v`, so
//! `ld x; ge 5; le 9` tests `5 <= x <= 9`.
//!
//! There are no jumps and no backward control flow at all: the program
//! counter only increases, so evaluation executes at most one instruction per
//! instruction of the program and performs at most one memory read per
//! instruction.
//!
//! ## Well-formedness (what the verifier demands)
//!
//! * `1..=`[`MAX_INSNS`] instructions; the byte length is a multiple of
//!   [`INSN_SIZE`].
//! * Every field is known and every field the instruction does not use is
//!   zero (so later versions can give them meaning).
//! * No clause is empty (`or` is neither first nor last, and never follows
//!   `or`).
//! * In each clause, `v` is loaded (`ld`) before `and`, `sub` or a comparison
//!   uses it — `v` does not carry over from one clause to the next, since a
//!   failed clause may stop anywhere.
//! * Each clause ends with a comparison (no dangling `ld`/`and`/`sub`).
//!
//! # Encoding
//!
//! Every instruction is [`INSN_SIZE`] = 16 bytes, little-endian:
//!
//! | bytes | field | meaning |
//! | --- | --- | --- |
//! | 0 | `op` | opcode, [`op`] |
//! | 1 | `size` | memory operands: bytes loaded, 1, 2, 4 or 8; otherwise 0 |
//! | 2 | `flags` | bits 0–1: operand kind, [`kind`]; other bits 0 |
//! | 3 | `param` | parameter index `< PARAMS`, for [`kind::PARAM`] and [`kind::MEM_PARAM`]; otherwise 0 |
//! | 4–7 | `reserved` | 0 |
//! | 8–15 | `imm` | immediate value, absolute address, or offset added to the parameter; 0 for [`kind::PARAM`] |
//!
//! `or` has every field but `op` zero.
//!
//! ## Operands
//!
//! | kind | written | value |
//! | --- | --- | --- |
//! | [`kind::IMM`]       | `0x2a`         | `imm` |
//! | [`kind::PARAM`]     | `p3`           | parameter `param` |
//! | [`kind::MEM`]       | `u32 [0x1000]` | the `size`-byte little-endian word at address `imm`, zero-extended |
//! | [`kind::MEM_PARAM`] | `u64 [p2+0x8]` | the `size`-byte word at address `parameter[param] + imm` (wrapping), zero-extended |
//!
//! # Memory reads and protection
//!
//! The kernel performs every load by walking the **installer's** page tables
//! and demanding a present, user-readable mapping for every byte, exactly as
//! a user-mode load by the installer would; a predicate can therefore never
//! read memory its installer could not. Addresses are checked when read, not
//! when installed, because mappings change while a predicate sleeps. A read
//! the kernel refuses (unmapped, not user-readable, in the kernel half,
//! wrapping past the end of the address space; the kernel may also refuse
//! unaligned reads so that every read is one atomic load within one page)
//! ends the evaluation with an error: the predicate counts neither as true
//! nor as false, and the kernel wakes the sleeper with
//! [`Error::BadAddress`](crate::Error::BadAddress) and the faulting address,
//! leaving the predicate installed. Loads are not a snapshot: two loads of
//! one evaluation may see memory from different moments.
//!
//! # Verifier rejections
//!
//! When the kernel refuses a predicate it reports why with one of the
//! [`reject`] codes and the index of the offending instruction.

/// Bytes per instruction.
pub const INSN_SIZE: usize = 16;
/// Most instructions in one predicate.
pub const MAX_INSNS: usize = 64;
/// Most bytes in one predicate (`MAX_INSNS * INSN_SIZE`).
pub const MAX_BYTES: usize = MAX_INSNS * INSN_SIZE;
/// Parameters kept with each installed predicate.
pub const PARAMS: usize = 8;

/// Opcodes (byte 0). Every other value is invalid; 0 is deliberately
/// invalid so that zeroed memory is never a program.
pub mod op {
    /// `ld x`: `v = x`.
    pub const LD: u8 = 0x01;
    /// `and x`: `v = v & x`.
    pub const AND: u8 = 0x02;
    /// `sub x`: `v = v - x`, wrapping.
    pub const SUB: u8 = 0x03;
    /// `eq x`: the term `v == x`.
    pub const EQ: u8 = 0x10;
    /// `ne x`: the term `v != x`.
    pub const NE: u8 = 0x11;
    /// `lt x`: the term `v < x`, unsigned.
    pub const LT: u8 = 0x12;
    /// `le x`: the term `v <= x`, unsigned.
    pub const LE: u8 = 0x13;
    /// `gt x`: the term `v > x`, unsigned.
    pub const GT: u8 = 0x14;
    /// `ge x`: the term `v >= x`, unsigned.
    pub const GE: u8 = 0x15;
    /// `test x`: the term `v & x != 0`.
    pub const TEST: u8 = 0x16;
    /// `or`: ends a clause.
    pub const OR: u8 = 0x20;
}

/// Operand kinds (bits 0–1 of `flags`).
pub mod kind {
    /// The immediate `imm`.
    pub const IMM: u8 = 0;
    /// Parameter number `param`.
    pub const PARAM: u8 = 1;
    /// The `size`-byte word at absolute address `imm`.
    pub const MEM: u8 = 2;
    /// The `size`-byte word at address `parameter[param] + imm` (wrapping).
    pub const MEM_PARAM: u8 = 3;
    /// The bits of `flags` that hold the kind; all others must be 0.
    pub const MASK: u8 = 0x03;
}

/// Why the verifier refused a predicate: stable codes the kernel reports.
pub mod reject {
    /// No instructions.
    pub const EMPTY: u64 = 1;
    /// More than [`MAX_BYTES`](super::MAX_BYTES) bytes.
    pub const TOO_LONG: u64 = 2;
    /// The length is not a multiple of [`INSN_SIZE`](super::INSN_SIZE).
    pub const TRUNCATED: u64 = 3;
    /// An unknown opcode.
    pub const BAD_OPCODE: u64 = 4;
    /// A `size` that is not 1, 2, 4 or 8 for a memory operand, or not 0
    /// for another.
    pub const BAD_SIZE: u64 = 5;
    /// Unknown bits in `flags`.
    pub const BAD_FLAGS: u64 = 6;
    /// A parameter index `>= PARAMS`.
    pub const BAD_PARAM: u64 = 7;
    /// A field the instruction does not use is not zero.
    pub const RESERVED: u64 = 8;
    /// `v` used before a `ld` in its clause.
    pub const NO_VALUE: u64 = 9;
    /// An empty clause (`or` first, last, or after `or`).
    pub const EMPTY_CLAUSE: u64 = 10;
    /// A clause that does not end with a comparison.
    pub const NO_COMPARISON: u64 = 11;
}

/// One instruction as raw fields, before any checking. See the module
/// documentation for the encoding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawInsn {
    /// Opcode ([`op`]).
    pub op: u8,
    /// Operand size in bytes (memory operands) or 0.
    pub size: u8,
    /// Operand kind ([`kind`]) in bits 0–1.
    pub flags: u8,
    /// Parameter index, or 0.
    pub param: u8,
    /// Must be 0.
    pub reserved: u32,
    /// Immediate, address or offset.
    pub imm: u64,
}

impl RawInsn {
    /// Decodes the 16 bytes of one instruction (no checking).
    pub const fn from_bytes(b: &[u8; INSN_SIZE]) -> RawInsn {
        RawInsn {
            op: b[0],
            size: b[1],
            flags: b[2],
            param: b[3],
            reserved: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            imm: u64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]),
        }
    }

    /// Encodes the instruction as its 16 bytes.
    pub const fn to_bytes(self) -> [u8; INSN_SIZE] {
        let r = self.reserved.to_le_bytes();
        let i = self.imm.to_le_bytes();
        [
            self.op, self.size, self.flags, self.param, r[0], r[1], r[2], r[3], i[0], i[1], i[2], i[3], i[4], i[5],
            i[6], i[7],
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_round_trip_and_layout() {
        let raw = RawInsn { op: op::GE, size: 4, flags: kind::MEM_PARAM, param: 7, reserved: 0x0102_0304, imm: 0x1122 };
        let b = raw.to_bytes();
        assert_eq!(b[..8], [op::GE, 4, kind::MEM_PARAM, 7, 4, 3, 2, 1]);
        assert_eq!(b[8..], [0x22, 0x11, 0, 0, 0, 0, 0, 0]);
        assert_eq!(RawInsn::from_bytes(&b), raw);
        assert_eq!(MAX_BYTES, 1024);
    }

    #[test]
    fn reject_codes_are_distinct() {
        let all = [
            reject::EMPTY,
            reject::TOO_LONG,
            reject::TRUNCATED,
            reject::BAD_OPCODE,
            reject::BAD_SIZE,
            reject::BAD_FLAGS,
            reject::BAD_PARAM,
            reject::RESERVED,
            reject::NO_VALUE,
            reject::EMPTY_CLAUSE,
            reject::NO_COMPARISON,
        ];
        for (i, a) in all.iter().enumerate() {
            assert_ne!(*a, 0);
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
