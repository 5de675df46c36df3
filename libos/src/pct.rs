//! Protected control transfer (Aegis §5.1): the registers are the message.
//!
//! A message is nine words carried in `rsi rdx r8 r9 r10 r12 r13 r14 r15`
//! (`rbx` and `rbp` also cross the kernel intact, but Rust's inline
//! assembly cannot name them). The kernel adds the caller's id in `rdi`.
//! A server registers a handler with [`serve`]; its entry runs on a private
//! stack with the message, and its reply goes back in the same registers.
//!
//! **One entry, several services.** Every program registers the entry at
//! start ([`init`], from the runtime), because every process must accept
//! signals. The entry's `dispatch` is the one table that multiplexes the
//! transfers: a message whose word 0 is a *libOS tag* — high 48 bits
//! [`TAG_PREFIX`] ("OXKPCT"), low 16 bits a service number — goes to that
//! libOS service ([`TAG_SIGNAL`] → [`crate::signal`], [`TAG_LRPC`] →
//! [`crate::lrpc`]; an unknown service is answered [`TAG_NOT_SERVING`]);
//! every other message goes to the handler the program installed with
//! [`serve`]. Until a program calls `serve`, untagged messages are answered
//! with [`TAG_NOT_SERVING`] in word 0, which [`call`] reports as
//! `Err(Denied)` — what the kernel answered before every program had an
//! entry — and an asynchronous one is dropped.

use oxok_abi::{Error, upcall};
use oxok_rt::fncell::FnCell;

/// Message words per transfer.
pub const WORDS: usize = oxok_abi::regs::MSG_WORDS;

/// A message (or reply): the nine message registers.
pub type Msg = oxok_rt::sys::Msg;

/// Synchronous transfer to environment `target`: returns the callee's id
/// and its reply. The credential is this environment's call capability
/// for `target` ([`crate::callcap`]); without one the kernel refuses with
/// `BadCap`.
pub fn call(target: u64, msg: &Msg) -> Result<(u64, Msg), Error> {
    crate::callcap::with_target(target, |word| call_word(word, msg))
}

/// How a synchronous call failed: the error, and whether the callee got
/// the message (it was running the call when it died or stopped serving
/// it) or never did (refused at entry: the kernel then leaves `rsi` 0,
/// while a call that reached the callee leaves its ticket there, never 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The kernel's answer.
    pub error: Error,
    /// True if the callee had the message.
    pub reached: bool,
}

/// [`call`], saying on failure whether the callee got the message (a
/// sender that must not claim a delivery that never happened needs that:
/// `BadEnv` alone means "gone before" or "gone while serving").
pub fn call_reporting(target: u64, msg: &Msg) -> Result<(u64, Msg), Failure> {
    let mut failure = None;
    let r = crate::callcap::with_target(target, |word| {
        call_raw(word, msg).map_err(|f| {
            failure = Some(f);
            f.error
        })
    });
    r.map_err(|error| failure.unwrap_or(Failure { error, reached: false }))
}

/// [`call`] with a kernel target word (`oxok_abi::call_target`).
pub fn call_word(target: u64, msg: &Msg) -> Result<(u64, Msg), Error> {
    call_raw(target, msg).map_err(|f| f.error)
}

fn call_raw(target: u64, msg: &Msg) -> Result<(u64, Msg), Failure> {
    let mut m = *msg;
    let callee = match crate::sys::pct_call(target, &mut m) {
        Ok(callee) => callee,
        // The kernel leaves `rsi` (word 0) 0 if the callee never got the
        // message, its ticket otherwise.
        Err(error) => return Err(Failure { error, reached: m[0] != 0 }),
    };
    if m[0] == TAG_NOT_SERVING {
        return Err(Failure { error: Error::Denied, reached: true });
    }
    Ok((callee, m))
}

/// Asynchronous transfer: the callee gets `msg` and the rest of this
/// environment's time; returns when this environment next runs. The
/// credential as for [`call`].
pub fn send(target: u64, msg: &Msg) -> Result<(), Error> {
    crate::callcap::with_target(target, |word| send_word(word, msg))
}

/// [`send`] with a kernel target word (`oxok_abi::call_target`).
pub fn send_word(target: u64, msg: &Msg) -> Result<(), Error> {
    crate::sys::pct_send(target, msg)
}

/// A server's handler: the caller's id, whether it waits (synchronous), and
/// the message, which the handler turns into the reply in place.
pub type Handler = fn(caller: u64, sync: bool, msg: &mut Msg);

static HANDLER: FnCell<Handler> = FnCell::new();

/// Makes the PCT entry run handlers on `stack` instead of the built-in
/// 16 KiB one (a server whose handler needs more: the disk file server's
/// file system keeps whole blocks on the stack). Call it before [`serve`];
/// the stack is the program's for good. A process that forks afterwards
/// gives its child the built-in stack's fresh pages only.
pub fn set_stack(stack: &'static mut [u8]) {
    oxok_rt::pct::set_stack(stack);
}

/// The built-in PCT stack's pages, `[start, end)`.
pub(crate) fn stack_range() -> (u64, u64) {
    oxok_rt::pct::stack_range()
}

/// Accepts protected control transfers: `handler` serves each one (every
/// message but the libOS's tagged ones).
pub fn serve(handler: Handler) -> Result<(), Error> {
    HANDLER.set(handler);
    init()
}

/// Registers this environment's PCT entry. The runtime calls it before
/// `main`, so every process accepts signals and LRPC from its first
/// instruction of Rust; calling it again is harmless.
pub fn init() -> Result<(), Error> {
    oxok_rt::pct::set_dispatch(dispatch);
    crate::sys::upcall_register(0, upcall::PCT, oxok_rt::pct::entry_address()).map(|_| ())
}

/// The high 48 bits of every libOS tag ("OXKPCT").
pub const TAG_PREFIX: u64 = 0x4f58_4b50_4354;
/// Service number of signals ([`crate::signal`]).
pub const SERVICE_SIGNAL: u16 = 1;
/// Service number of lightweight remote procedure calls ([`crate::lrpc`]).
pub const SERVICE_LRPC: u16 = 2;
/// Service number of the "nobody here serves that" reply.
pub const SERVICE_NOT_SERVING: u16 = 0xffff;
/// Service number of the restore notice ([`crate::restore`]).
pub const SERVICE_RESTORE: u16 = 3;

/// The libOS tag of `service`: word 0 of its messages.
pub const fn tag(service: u16) -> u64 {
    TAG_PREFIX << 16 | service as u64
}

/// Word 0 of a signal.
pub const TAG_SIGNAL: u64 = tag(SERVICE_SIGNAL);
/// Word 0 of a lightweight remote procedure call.
pub const TAG_LRPC: u64 = tag(SERVICE_LRPC);
/// Word 0 of the reply to a message nobody here serves.
pub const TAG_NOT_SERVING: u64 = tag(SERVICE_NOT_SERVING);
/// Tag of the restore notice.
pub const TAG_RESTORE: u64 = tag(SERVICE_RESTORE);

/// The libOS service a message's word 0 names, if it is a libOS tag.
pub fn service_of(word0: u64) -> Option<u16> {
    (word0 >> 16 == TAG_PREFIX).then_some(word0 as u16)
}

/// True if code this transfer interrupted may hold a lock the libOS's own
/// services need (the descriptor table, the heap). Services that would
/// take them answer "busy, try again" instead of waiting for a holder that
/// cannot run until they return.
pub(crate) fn interrupted_busy() -> bool {
    crate::fd::table_busy() || crate::heap::busy() || crate::net::socket::busy()
}

/// The dispatch table the runtime's PCT entry (`oxok_rt::pct`) calls with
/// each transfer, on its private stack: libOS services by tag, everything
/// else to the program's [`serve`] handler. The entry then replies with
/// the message as this left it.
extern "C" fn dispatch(caller: u64, mode: u64, msg: &mut Msg) {
    let sync = mode == 1;
    match service_of(msg[0]) {
        Some(SERVICE_SIGNAL) => crate::signal::on_message(caller, sync, msg),
        Some(SERVICE_LRPC) => crate::lrpc::on_message(caller, sync, msg),
        Some(SERVICE_RESTORE) => crate::restore::on_message(caller, msg),
        Some(_) => not_serving(msg),
        None => match HANDLER.get() {
            None => not_serving(msg),
            Some(handler) => handler(caller, sync, msg),
        },
    }
}

/// The reply to a message nobody here serves.
fn not_serving(msg: &mut Msg) {
    *msg = [0; WORDS];
    msg[0] = TAG_NOT_SERVING;
}
