//! The verifier: bytes in, a [`Program`] or the first reason to refuse out.

use core::fmt;

use oxok_abi::pred::{INSN_SIZE, MAX_BYTES, MAX_INSNS, RawInsn, reject};

use crate::{Insn, Program};

/// Why [`verify`] refused a predicate. `at` is the index of the offending
/// instruction (for the structural errors found at the end of the program,
/// the instruction count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyError {
    /// No bytes at all.
    Empty,
    /// More than [`MAX_BYTES`] bytes.
    TooLong {
        /// The length offered.
        len: usize,
    },
    /// The length is not a multiple of [`INSN_SIZE`].
    Truncated {
        /// The length offered.
        len: usize,
    },
    /// An unknown opcode.
    BadOpcode {
        /// Instruction index.
        at: usize,
        /// The opcode.
        op: u8,
    },
    /// A `size` field that does not fit the operand kind.
    BadSize {
        /// Instruction index.
        at: usize,
        /// The size field.
        size: u8,
    },
    /// Unknown bits in `flags`.
    BadFlags {
        /// Instruction index.
        at: usize,
        /// The flags field.
        flags: u8,
    },
    /// A parameter index `>= PARAMS`.
    BadParam {
        /// Instruction index.
        at: usize,
        /// The index.
        param: u8,
    },
    /// A field the instruction does not use is not zero.
    Reserved {
        /// Instruction index.
        at: usize,
    },
    /// `and`, `sub` or a comparison before any `ld` in its clause.
    NoValue {
        /// Instruction index.
        at: usize,
    },
    /// An empty clause: `or` first, last, or right after another `or`.
    EmptyClause {
        /// Index of the `or` (or the instruction count, for a trailing one).
        at: usize,
    },
    /// A clause whose last instruction is not a comparison.
    NoComparison {
        /// Index of the `or` ending the clause, or the instruction count.
        at: usize,
    },
}

impl VerifyError {
    /// The stable code the kernel reports ([`oxok_abi::pred::reject`]).
    pub const fn code(&self) -> u64 {
        match self {
            VerifyError::Empty => reject::EMPTY,
            VerifyError::TooLong { .. } => reject::TOO_LONG,
            VerifyError::Truncated { .. } => reject::TRUNCATED,
            VerifyError::BadOpcode { .. } => reject::BAD_OPCODE,
            VerifyError::BadSize { .. } => reject::BAD_SIZE,
            VerifyError::BadFlags { .. } => reject::BAD_FLAGS,
            VerifyError::BadParam { .. } => reject::BAD_PARAM,
            VerifyError::Reserved { .. } => reject::RESERVED,
            VerifyError::NoValue { .. } => reject::NO_VALUE,
            VerifyError::EmptyClause { .. } => reject::EMPTY_CLAUSE,
            VerifyError::NoComparison { .. } => reject::NO_COMPARISON,
        }
    }

    /// The instruction index the error is about, if it is about one.
    pub const fn at(&self) -> Option<usize> {
        match *self {
            VerifyError::Empty | VerifyError::TooLong { .. } | VerifyError::Truncated { .. } => None,
            VerifyError::BadOpcode { at, .. }
            | VerifyError::BadSize { at, .. }
            | VerifyError::BadFlags { at, .. }
            | VerifyError::BadParam { at, .. }
            | VerifyError::Reserved { at }
            | VerifyError::NoValue { at }
            | VerifyError::EmptyClause { at }
            | VerifyError::NoComparison { at } => Some(at),
        }
    }
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            VerifyError::Empty => f.write_str("empty predicate"),
            VerifyError::TooLong { len } => write!(f, "{len} bytes, more than {MAX_BYTES}"),
            VerifyError::Truncated { len } => write!(f, "{len} bytes, not a multiple of {INSN_SIZE}"),
            VerifyError::BadOpcode { at, op } => write!(f, "insn {at}: unknown opcode {op:#04x}"),
            VerifyError::BadSize { at, size } => write!(f, "insn {at}: bad operand size {size}"),
            VerifyError::BadFlags { at, flags } => write!(f, "insn {at}: unknown flags {flags:#04x}"),
            VerifyError::BadParam { at, param } => write!(f, "insn {at}: parameter {param} out of range"),
            VerifyError::Reserved { at } => write!(f, "insn {at}: unused field not zero"),
            VerifyError::NoValue { at } => write!(f, "insn {at}: value used before a load in its clause"),
            VerifyError::EmptyClause { at } => write!(f, "insn {at}: empty clause"),
            VerifyError::NoComparison { at } => write!(f, "insn {at}: clause does not end with a comparison"),
        }
    }
}

/// Checks `bytes` and returns the validated program, or the first problem
/// found (lowest instruction index; length problems before anything else).
///
/// Runs in time linear in `bytes.len()` (capped at [`MAX_BYTES`]), never
/// panics, and allocates nothing. The rules are listed in
/// [`oxok_abi::pred`]; a program it accepts has no loops by construction (it
/// has no jumps), and [`Program::eval`] executes at most
/// [`Program::len`] instructions of it.
pub fn verify(bytes: &[u8]) -> Result<Program, VerifyError> {
    let len = bytes.len();
    if len == 0 {
        return Err(VerifyError::Empty);
    }
    if len > MAX_BYTES {
        return Err(VerifyError::TooLong { len });
    }
    if !len.is_multiple_of(INSN_SIZE) {
        return Err(VerifyError::Truncated { len });
    }
    let mut program = Program::EMPTY;
    let mut has_value = false;
    let mut last_was_cmp = false;
    let mut clause_start = 0;
    for (at, chunk) in bytes.chunks_exact(INSN_SIZE).enumerate().take(MAX_INSNS) {
        let mut b = [0u8; INSN_SIZE];
        b.copy_from_slice(chunk);
        let insn = Insn::decode(RawInsn::from_bytes(&b), at)?;
        match insn {
            Insn::Load(_) => has_value = true,
            Insn::And(_) | Insn::Sub(_) | Insn::Cmp(..) if !has_value => return Err(VerifyError::NoValue { at }),
            Insn::And(_) | Insn::Sub(_) | Insn::Cmp(..) => {}
            Insn::Or => {
                if at == clause_start {
                    return Err(VerifyError::EmptyClause { at });
                }
                if !last_was_cmp {
                    return Err(VerifyError::NoComparison { at });
                }
                clause_start = at + 1;
                has_value = false;
            }
        }
        last_was_cmp = matches!(insn, Insn::Cmp(..));
        program.push(insn);
    }
    let count = program.len();
    if clause_start == count {
        return Err(VerifyError::EmptyClause { at: count });
    }
    if !last_was_cmp {
        return Err(VerifyError::NoComparison { at: count });
    }
    program.link();
    Ok(program)
}
