//! Oxok's wakeup predicates: the verifier, the evaluator, a builder and a
//! disassembler for the bytecode defined in [`oxok_abi::pred`] (read that
//! module first: it describes the language and the encoding).
//!
//! An environment that wants to sleep until some condition holds — data in a
//! pipe, a disk block resident, a deadline passed — installs a predicate
//! over memory it may read; the scheduler evaluates it before running the
//! environment and leaves the environment asleep while it is false (Xok,
//! SOSP'97 §4.4; Oxok DESIGN §3). Predicates carry [`PARAMS`] parameters
//! that the owner changes without reinstalling, so `select()` can install
//! one predicate per descriptor once and afterwards only flip parameters
//! (Erlang on Xok §4.6.12).
//!
//! Pure logic, `no_std`, no `unsafe`, no allocation, no panics on any
//! input: the bytes come from a hostile user program by way of the kernel.
//!
//! # Lifecycle
//!
//! 1. The libOS assembles a predicate with [`Builder`] and passes the bytes
//!    ([`Code::as_bytes`]) to the kernel's install call.
//! 2. The kernel runs [`verify`] once and keeps the [`Program`] with the
//!    parameters.
//! 3. The owner changes a parameter with a call; no re-verification.
//! 4. Before running a sleeping environment the scheduler runs
//!    [`Program::eval`], with a read callback that walks the **installer's**
//!    page tables with user-read permission. `Ok(true)`: run it;
//!    `Ok(false)`: skip it; `Err(`[`EvalError::BadRead`]`)`: wake it with an
//!    error.
//!
//! # Errors and the ABI
//!
//! | here | kernel |
//! | --- | --- |
//! | [`VerifyError`] at install | `Invalid`; [`VerifyError::code`] (an [`oxok_abi::pred::reject`] code) and [`VerifyError::at`] say why, and the libOS can reproduce them by running [`verify`] itself |
//! | [`EvalError::BadRead`] when evaluating | the sleeper wakes; its sleep call reports `BadAddress` and the address |
//!
//! ```
//! use oxok_pred::{Builder, EvalError, verify};
//!
//! // Sleep until the u32 at 0x2000 (say, a pipe's byte count) is >= p0,
//! // or the clock's tick counter reaches p1.
//! let ticks = oxok_abi::layout::CLOCK + 16;
//! let code = Builder::new().load_u32(0x2000).ge_param(0).or().load_u64(ticks).ge_param(1).build()?;
//! let program = verify(code.as_bytes())?;
//!
//! let mut params = [512, 1_000, 0, 0, 0, 0, 0, 0];
//! let mut mem = |addr: u64, _size: u8| match addr {
//!     0x2000 => Some(100),
//!     a if a == ticks => Some(900),
//!     _ => None, // the installer cannot read anything else
//! };
//! assert_eq!(program.eval(&params, &mut mem), Ok(false));
//! params[0] = 64; // a smaller read: change the parameter, do not reinstall
//! assert_eq!(program.eval(&params, &mut mem), Ok(true));
//!
//! // A predicate over memory the installer cannot read never holds.
//! let bad = verify(Builder::new().load_u8(0x9000).eq_imm(0).build()?.as_bytes())?;
//! assert_eq!(bad.eval(&params, &mut mem), Err(EvalError::BadRead(0x9000)));
//! # Ok::<(), oxok_pred::VerifyError>(())
//! ```

#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod builder;
mod code;
mod deadline;
mod disasm;
mod eval;
mod insn;
mod program;
mod reads;
mod verify;

pub use builder::Builder;
pub use code::Code;
pub use disasm::{Disassembly, disassemble};
pub use eval::EvalError;
pub use insn::{Cmp, Insn, Operand, Size};
pub use oxok_abi::pred::{INSN_SIZE, MAX_BYTES, MAX_INSNS, PARAMS};
pub use program::Program;
pub use verify::{VerifyError, verify};
