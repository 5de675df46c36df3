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

use core::arch::{asm, naked_asm};
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use oxok_abi::{Call, Error, upcall};

/// Message words per transfer.
pub const WORDS: usize = 9;

/// A message (or reply): the nine message registers.
pub type Msg = [u64; WORDS];

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
    let (rax, rdi): (u64, u64);
    // SAFETY: `syscall` into the kernel; per the ABI every register except
    // rax, rcx, r11 and the message registers (declared inout) is preserved.
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") Call::pct_call.number() => rax,
            inlateout("rdi") target => rdi,
            inlateout("rsi") m[0] => m[0],
            inlateout("rdx") m[1] => m[1],
            inlateout("r8") m[2] => m[2],
            inlateout("r9") m[3] => m[3],
            inlateout("r10") m[4] => m[4],
            inlateout("r12") m[5] => m[5],
            inlateout("r13") m[6] => m[6],
            inlateout("r14") m[7] => m[7],
            inlateout("r15") m[8] => m[8],
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    if let Err(error) = crate::sys::check(rax) {
        return Err(Failure { error, reached: m[0] != 0 });
    }
    if m[0] == TAG_NOT_SERVING {
        return Err(Failure { error: Error::Denied, reached: true });
    }
    Ok((rdi, m))
}

/// Asynchronous transfer: the callee gets `msg` and the rest of this
/// environment's time; returns when this environment next runs. The
/// credential as for [`call`].
pub fn send(target: u64, msg: &Msg) -> Result<(), Error> {
    crate::callcap::with_target(target, |word| send_word(word, msg))
}

/// [`send`] with a kernel target word (`oxok_abi::call_target`).
pub fn send_word(target: u64, msg: &Msg) -> Result<(), Error> {
    let rax: u64;
    // SAFETY: as in `call`; nothing comes back but the status.
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") Call::pct_send.number() => rax,
            inlateout("rdi") target => _,
            inlateout("rsi") msg[0] => _,
            inlateout("rdx") msg[1] => _,
            inlateout("r8") msg[2] => _,
            inlateout("r9") msg[3] => _,
            inlateout("r10") msg[4] => _,
            inlateout("r12") msg[5] => _,
            inlateout("r13") msg[6] => _,
            inlateout("r14") msg[7] => _,
            inlateout("r15") msg[8] => _,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    crate::sys::check(rax)
}

/// A server's handler: the caller's id, whether it waits (synchronous), and
/// the message, which the handler turns into the reply in place.
pub type Handler = fn(caller: u64, sync: bool, msg: &mut Msg);

static HANDLER: AtomicUsize = AtomicUsize::new(0);

const STACK_SIZE: usize = 16 * 1024;
/// Page-aligned and a whole number of pages, so that fork can give a child
/// fresh frames for exactly these pages (`vm::fork`).
#[repr(C, align(4096))]
struct Stack([u8; STACK_SIZE]);
static mut PCT_STACK: Stack = Stack([0; STACK_SIZE]);

/// The top of a stack a program gave with [`set_stack`] (0: the built-in
/// one).
static STACK_TOP: AtomicU64 = AtomicU64::new(0);

/// Makes the PCT entry run handlers on `stack` instead of the built-in
/// 16 KiB one (a server whose handler needs more: the disk file server's
/// file system keeps whole blocks on the stack). Call it before [`serve`];
/// the stack is the program's for good. A process that forks afterwards
/// gives its child the built-in stack's fresh pages only.
pub fn set_stack(stack: &'static mut [u8]) {
    let top = (stack.as_mut_ptr() as u64 + stack.len() as u64) & !15;
    STACK_TOP.store(top, Ordering::Release);
}

/// The built-in PCT stack's pages, `[start, end)`.
pub(crate) fn stack_range() -> (u64, u64) {
    let start = (&raw const PCT_STACK) as u64;
    (start, start + STACK_SIZE as u64)
}

/// Accepts protected control transfers: `handler` serves each one (every
/// message but the libOS's tagged ones).
pub fn serve(handler: Handler) -> Result<(), Error> {
    HANDLER.store(handler as usize, Ordering::Release);
    init()
}

/// Registers this environment's PCT entry. The runtime calls it before
/// `main`, so every process accepts signals and LRPC from its first
/// instruction of Rust; calling it again is harmless.
pub fn init() -> Result<(), Error> {
    crate::sys::upcall_register(0, upcall::PCT, entry as *const () as u64).map(|_| ())
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
    crate::fd::table_busy() || crate::heap::busy()
}

/// The PCT entry: a private stack, the message saved as a `Msg`, the
/// handler, then `pct_reply` with the reply in the message registers.
#[unsafe(naked)]
extern "C" fn entry() -> ! {
    naked_asm!(
        "mov rsp, qword ptr [rip + {top}]",
        "test rsp, rsp",
        "jnz 2f",
        "lea rsp, [rip + {stack} + {size}]",
        "2:",
        // The message, as a `Msg` on the stack (rsi lowest).
        "push r15",
        "push r14",
        "push r13",
        "push r12",
        "push r10",
        "push r9",
        "push r8",
        "push rdx",
        "push rsi",
        "mov r13, rcx", // 1 = synchronous
        "mov rsi, rcx",
        "mov rdx, rsp",
        "sub rsp, 8", // 9 pushes: realign to 16 for the call
        "call {dispatch}",
        "add rsp, 8",
        // Reply to whoever is owed it (PCT_OWED) after a synchronous
        // call — the kernel knows, even after a restore changed the
        // caller's id — to nobody after an asynchronous one.
        "xor edi, edi",
        "mov r12, -1",
        "test r13, r13",
        "cmovnz rdi, r12",
        "pop rsi",
        "pop rdx",
        "pop r8",
        "pop r9",
        "pop r10",
        "pop r12",
        "pop r13",
        "pop r14",
        "pop r15",
        "mov rax, {reply}",
        "syscall",
        // A reply that returns has failed: the caller died while this
        // environment served it. End the call with nobody to answer
        // (caller 0), which resumes this environment's own work.
        "xor edi, edi",
        "mov rax, {reply}",
        "syscall",
        "ud2",
        stack = sym PCT_STACK,
        size = const STACK_SIZE,
        top = sym STACK_TOP,
        dispatch = sym dispatch,
        reply = const Call::pct_reply.number(),
    )
}

/// The dispatch table: libOS services by tag, everything else to the
/// program's [`serve`] handler.
extern "C" fn dispatch(caller: u64, mode: u64, msg: *mut Msg) {
    // SAFETY: `msg` points at the nine words the entry stub pushed on its
    // private stack; nothing else refers to them while this runs.
    let msg = unsafe { &mut *msg };
    let sync = mode == 1;
    match service_of(msg[0]) {
        Some(SERVICE_SIGNAL) => crate::signal::on_message(caller, sync, msg),
        Some(SERVICE_LRPC) => crate::lrpc::on_message(caller, sync, msg),
        Some(SERVICE_RESTORE) => crate::restore::on_message(caller, msg),
        Some(_) => not_serving(msg),
        None => match HANDLER.load(Ordering::Acquire) {
            0 => not_serving(msg),
            h => {
                // SAFETY: HANDLER only ever holds a `Handler` stored by `serve`.
                let handler = unsafe { core::mem::transmute::<usize, Handler>(h) };
                handler(caller, sync, msg);
            }
        },
    }
}

/// The reply to a message nobody here serves.
fn not_serving(msg: &mut Msg) {
    *msg = [0; WORDS];
    msg[0] = TAG_NOT_SERVING;
}
