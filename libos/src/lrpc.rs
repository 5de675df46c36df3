//! Lightweight remote procedure call over protected control transfer:
//! Bershad et al.'s LRPC as Aegis §5.1 builds it — the arguments and the
//! results travel in registers, the client's thread of control runs the
//! server's procedure on the server's stack and the client's time (the
//! transfer donates the slot), and nothing is copied through the kernel.
//!
//! **Wire format.** Request: word 0 [`TAG_LRPC`](crate::pct::TAG_LRPC),
//! word 1 the procedure number, words 2..9 up to [`MAX_ARGS`] arguments
//! (missing ones are 0). Reply: word 0 a status ([`status`]), words 1..9
//! the [`RESULTS`] result words (for a procedure's failure, word 1 is its
//! code).
//!
//! **Server.** A process [`register`]s procedures by number in a private
//! table of [`PROCEDURES`] entries; the PCT dispatch (`pct.rs`) routes
//! tagged messages here, so a process can serve LRPC, signals and its own
//! [`crate::pct::serve`] protocol at once. A procedure runs in the PCT
//! entry's context: it may allocate and print (the libOS answers `Busy`
//! instead when the code the call interrupted holds the heap or the
//! descriptor table), it sees the caller's kernel-supplied id, and it must
//! not wait for the interrupted code.
//!
//! **Errors are typed** ([`LrpcError`]): a bad procedure number, a
//! procedure's own failure, a server that does not exist, and a server that
//! died during the call (the kernel wakes a waiting caller with `BadEnv`,
//! so a client never hangs on a dead server) are different answers.

use crate::pct::{self, Msg, TAG_LRPC, WORDS};
use crate::{proc, sys};
use core::fmt;
use oxok_abi::Error;
use spin::Mutex;

/// Argument words per call.
pub const MAX_ARGS: usize = WORDS - 2;
/// Result words per reply.
pub const RESULTS: usize = WORDS - 1;
/// Procedure numbers are `0..PROCEDURES`.
pub const PROCEDURES: usize = 64;
/// Transfers tried while the server is busy.
pub const TRIES: u32 = 1000;

/// A call's arguments.
pub type Args = [u64; MAX_ARGS];
/// A call's results.
pub type Results = [u64; RESULTS];
/// A procedure: the caller's id and the arguments; the results, or a
/// failure code for the client ([`LrpcError::Failed`]).
pub type Procedure = fn(caller: u64, args: &Args) -> Result<Results, u64>;

/// Reply statuses (word 0).
pub mod status {
    /// The procedure ran; words 1.. are its results.
    pub const OK: u64 = 0;
    /// No procedure with that number.
    pub const NO_PROCEDURE: u64 = 1;
    /// The procedure failed; word 1 is its code.
    pub const FAILED: u64 = 2;
    /// The server cannot run it now (try again).
    pub const BUSY: u64 = 3;
}

/// Why a call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LrpcError {
    /// No live process with that id.
    NoServer,
    /// The server ended (or was destroyed) during the call.
    ServerDied,
    /// The server has no procedure with that number.
    NoProcedure,
    /// More than [`MAX_ARGS`] arguments.
    TooManyArgs,
    /// The procedure ran and failed with this code.
    Failed(u64),
    /// The server stayed busy through [`TRIES`] transfers.
    Busy,
    /// The server accepts no transfers, or its reply is not LRPC.
    NotServing,
    /// Another refusal by the kernel.
    Kernel(Error),
}

impl fmt::Display for LrpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LrpcError::NoServer => write!(f, "no such server"),
            LrpcError::ServerDied => write!(f, "server died during the call"),
            LrpcError::NoProcedure => write!(f, "no such procedure"),
            LrpcError::TooManyArgs => write!(f, "more than {MAX_ARGS} arguments"),
            LrpcError::Failed(c) => write!(f, "procedure failed with code {c}"),
            LrpcError::Busy => write!(f, "server busy"),
            LrpcError::NotServing => write!(f, "not an LRPC server"),
            LrpcError::Kernel(e) => write!(f, "{e}"),
        }
    }
}

/// This process's procedures (private memory). The dispatch only tries the
/// lock and answers `BUSY` if the interrupted code holds it.
static PROCS: Mutex<[Option<Procedure>; PROCEDURES]> = Mutex::new([None; PROCEDURES]);

fn index(number: u64) -> Result<usize, LrpcError> {
    usize::try_from(number).ok().filter(|&n| n < PROCEDURES).ok_or(LrpcError::NoProcedure)
}

/// Serves procedure `number` with `procedure` (replacing any earlier one).
pub fn register(number: u64, procedure: Procedure) -> Result<(), LrpcError> {
    PROCS.lock()[index(number)?] = Some(procedure);
    Ok(())
}

/// Stops serving procedure `number`.
pub fn unregister(number: u64) -> Result<(), LrpcError> {
    PROCS.lock()[index(number)?] = None;
    Ok(())
}

/// Calls procedure `number` of process `server` with `args` (at most
/// [`MAX_ARGS`]); returns its results.
pub fn call(server: u64, number: u64, args: &[u64]) -> Result<Results, LrpcError> {
    if args.len() > MAX_ARGS {
        return Err(LrpcError::TooManyArgs);
    }
    let mut msg: Msg = [0; WORDS];
    msg[0] = TAG_LRPC;
    msg[1] = number;
    msg[2..2 + args.len()].copy_from_slice(args);
    for _ in 0..TRIES {
        if !proc::alive(server) {
            return Err(LrpcError::NoServer);
        }
        match pct::call(server, &msg) {
            Ok((_, reply)) => {
                let mut results = [0; RESULTS];
                results.copy_from_slice(&reply[1..]);
                return match reply[0] {
                    status::OK => Ok(results),
                    status::NO_PROCEDURE => Err(LrpcError::NoProcedure),
                    status::FAILED => Err(LrpcError::Failed(reply[1])),
                    status::BUSY => {
                        backoff(server);
                        continue;
                    }
                    _ => Err(LrpcError::NotServing),
                };
            }
            Err(Error::Busy) => backoff(server),
            Err(Error::Denied) => return Err(LrpcError::NotServing),
            // It was alive just before: it died during the call (or on
            // the way to it).
            Err(Error::BadEnv) => return Err(LrpcError::ServerDied),
            Err(e) => return Err(LrpcError::Kernel(e)),
        }
    }
    Err(LrpcError::Busy)
}

/// Gives the busy server the CPU (directed yield), or yields plainly.
fn backoff(server: u64) {
    if crate::callcap::yield_to(server).is_err() {
        let _ = sys::yield_cpu(0);
    }
}

/// Called by the PCT dispatch for a message tagged [`TAG_LRPC`]; turns it
/// into the reply. An asynchronous call runs the procedure and drops the
/// results.
pub(crate) fn on_message(caller: u64, _sync: bool, msg: &mut Msg) {
    let mut args: Args = [0; MAX_ARGS];
    args.copy_from_slice(&msg[2..]);
    let found = match (index(msg[1]), PROCS.try_lock()) {
        (Err(_), _) => Err(status::NO_PROCEDURE),
        (Ok(_), None) => Err(status::BUSY),
        (Ok(i), Some(table)) => table[i].ok_or(status::NO_PROCEDURE),
    };
    *msg = [0; WORDS];
    let procedure = match found {
        Ok(_) if pct::interrupted_busy() => Err(status::BUSY),
        other => other,
    };
    match procedure {
        Err(s) => msg[0] = s,
        Ok(p) => match p(caller, &args) {
            Ok(results) => msg[1..].copy_from_slice(&results),
            Err(code) => {
                msg[0] = status::FAILED;
                msg[1] = code;
            }
        },
    }
}
