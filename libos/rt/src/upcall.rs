//! The upcall entry and its exception stack: the kernel enters with `rdi`
//! → an [`ExceptionFrame`] and `rsi` the upcall kind; the entry calls the
//! libOS's dispatch with both, then resumes the interrupted code from
//! `frame.regs` without entering the kernel (the resume sequence is
//! explained in the libOS's `upcall` module). The foreign entry does the
//! same for foreign system calls, with a shorter way back when the
//! dispatch says only the call's result changed. Neither issues a call.

use core::arch::naked_asm;
use core::cell::UnsafeCell;
use core::mem::offset_of;
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use oxok_abi::upcall as kinds;
use oxok_abi::{ExceptionFrame, Regs};

/// Bytes in the built-in exception stack: enough for the libOS's own
/// handlers (faults, copy-on-write, signals, slot ends). A program whose
/// handlers need more — the Linux personality runs whole Linux system
/// calls on it — gives its own with [`use_stack`] before registering.
pub const STACK_SIZE: usize = 16 * 1024;

/// What a handler decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Resume the interrupted code from `frame.regs` (as the handler left
    /// them).
    Resume,
    /// The handler does not deal with this event: the program ends.
    Unhandled,
    /// A foreign system call returned and the handler changed nothing but
    /// `regs.rax` (the result), `regs.rcx` (= `regs.rip`) and `regs.r11`
    /// (= `regs.rflags`), as a Linux `syscall` leaves them. Resumes as
    /// [`Outcome::Resume`], by the shorter way back of the foreign entry
    /// ([`foreign_entry_address`]). Any other event: as `Resume`.
    Returned,
}

/// What the entry calls with each upcall: the frame (which it may change)
/// and the upcall kind the kernel delivered it as. When it returns, the
/// entry resumes from `frame.regs`.
pub type Dispatch = extern "C" fn(frame: &mut ExceptionFrame, upcall: u64);

/// Until the libOS sets its dispatch: the program ends (status 134).
extern "C" fn unset(_: &mut ExceptionFrame, _: u64) {
    let _ = crate::sys::env_exit(134);
}

/// The dispatch the entry calls through (always a [`Dispatch`]).
static DISPATCH: AtomicPtr<()> = AtomicPtr::new(unset as Dispatch as *mut ());

/// Makes the entry call `dispatch` for every upcall from now on.
pub fn set_dispatch(dispatch: Dispatch) {
    DISPATCH.store(dispatch as *mut (), Ordering::Release);
}

/// What the foreign entry calls with a foreign system call's frame: true
/// if the handler changed only the call's result ([`Outcome::Returned`])
/// and the short way back applies.
pub type ForeignDispatch = extern "C" fn(frame: &mut ExceptionFrame) -> bool;

/// Until the libOS sets its foreign dispatch: the program ends (status 159).
extern "C" fn foreign_unset(_: &mut ExceptionFrame) -> bool {
    let _ = crate::sys::env_exit(159);
    false
}

/// The dispatch the foreign entry calls through (always a [`ForeignDispatch`]).
static FOREIGN_DISPATCH: AtomicPtr<()> = AtomicPtr::new(foreign_unset as ForeignDispatch as *mut ());

/// Makes the foreign entry call `dispatch` for every foreign system call.
pub fn set_foreign_dispatch(dispatch: ForeignDispatch) {
    FOREIGN_DISPATCH.store(dispatch as *mut (), Ordering::Release);
}

/// An exception stack of `N` bytes, the first page of them its guard: written
/// only by the kernel (frames) and by code running on it (through `rsp`),
/// never through a Rust reference. Page aligned, so fork can give a child
/// fresh frames for exactly its pages.
#[repr(C, align(4096))]
pub struct ExceptionStack<const N: usize>(UnsafeCell<[u8; N]>);

impl<const N: usize> ExceptionStack<N> {
    /// A stack (for a `static`); `N` must be a whole number of pages
    /// above the guard page.
    pub const fn new() -> Self {
        assert!(N > GUARD && N.is_multiple_of(GUARD));
        ExceptionStack(UnsafeCell::new([0; N]))
    }
}

impl<const N: usize> Default for ExceptionStack<N> {
    fn default() -> Self {
        Self::new()
    }
}

/// A page below the stack that the libOS makes read-only ([`guard_page`]):
/// a handler that runs the stack down hits it and the kernel ends the
/// program, instead of its frames overwriting the statics below.
pub const GUARD: usize = 4096;

// SAFETY: Rust code never reads or writes the bytes through the cell; only
// its address is taken. The CPU uses it as a stack.
unsafe impl<const N: usize> Sync for ExceptionStack<N> {}

static STACK: ExceptionStack<{ GUARD + STACK_SIZE }> = ExceptionStack::new();

/// The stack in use, `[guard page, top)`; (0, 0) until [`use_stack`] chose
/// one, meaning the built-in one.
static CHOSEN: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

/// Makes `stack` the exception stack instead of the built-in one. Call it
/// before the libOS registers the stack with the kernel (its `install`),
/// which reads [`stack_top`]; the choice holds for good (and in children
/// of `fork`, which copy this program's statics).
pub fn use_stack<const N: usize>(stack: &'static ExceptionStack<N>) {
    let base = stack.0.get() as u64;
    CHOSEN[0].store(base, Ordering::Relaxed);
    CHOSEN[1].store(base + N as u64, Ordering::Release);
}

/// The exception stack's guard page and top: `(guard, top)`.
fn bounds() -> (u64, u64) {
    match CHOSEN[1].load(Ordering::Acquire) {
        0 => (STACK.0.get() as u64, STACK.0.get() as u64 + (GUARD + STACK_SIZE) as u64),
        top => (CHOSEN[0].load(Ordering::Relaxed), top),
    }
}

/// The top (exclusive, 16-aligned) of the exception stack.
pub fn stack_top() -> u64 {
    bounds().1
}

/// The guard page below the exception stack.
pub fn guard_page() -> u64 {
    bounds().0
}

/// The exception stack's pages above its guard, `[start, end)` (what
/// fork gives a child fresh frames for).
pub fn stack_range() -> (u64, u64) {
    let (guard, top) = bounds();
    (guard + GUARD as u64, top)
}

/// The address of the assembly entry every kind is registered with.
pub fn entry_address() -> u64 {
    entry as *const () as u64
}

/// The address of the foreign-system-call entry ([`foreign_entry`]).
pub fn foreign_entry_address() -> u64 {
    foreign_entry as *const () as u64
}

/// Offset of a register inside the frame.
macro_rules! reg {
    ($r:ident) => {
        offset_of!(ExceptionFrame, regs) + offset_of!(Regs, $r)
    };
}

/// Bytes below the interrupted `rsp` where the resume sequence keeps `rip`
/// (`ret` pops it, `ret 128` then skips the red zone).
const RIP_SLOT: usize = 128 + 8;
/// Bytes below the interrupted `rsp` where it keeps `rflags` for `popfq`.
const FLAGS_SLOT: usize = 128 + 16;
/// Bytes below the interrupted `rsp` where it keeps `rax` for `pop rax`.
const RAX_SLOT: usize = 128 + 24;

const _: () = assert!(kinds::RED_ZONE == 128);

/// The upcall entry. The kernel enters with `rdi` → [`ExceptionFrame`],
/// `rsi` the upcall kind and `rsp` below the frame; every other register
/// is undefined. Both go to the dispatch as its arguments unchanged.
#[unsafe(naked)]
extern "C" fn entry() -> ! {
    naked_asm!(
        // Rust code needs DF clear and a call-aligned stack.
        "cld",
        "mov rbx, rdi",
        "and rsp, -16",
        "call qword ptr [rip + {dispatch}]",
        // rbx (callee-saved) still points at the frame.
        "jmp {resume}",
        dispatch = sym DISPATCH,
        resume = sym resume_from_rbx,
    )
}

/// The resume sequence (see the libOS's `upcall` module), with `rbx`
/// pointing at the frame; entered by a jump from [`entry`] and
/// [`foreign_entry`], on the exception stack below the frame.
#[unsafe(naked)]
extern "C" fn resume_from_rbx() -> ! {
    naked_asm!(
        // Read what the stores below may overwrite (a nested frame's last
        // fields) first.
        "mov rax, rbx",
        "mov rcx, [rax + {rip}]",
        "mov rdx, [rax + {rflags}]",
        "mov rsi, [rax + {rax}]",
        "mov rdi, [rax + {rsp}]",
        "mov r15, [rax + {r15}]",
        "mov [rdi - {rip_slot}], rcx",
        "mov [rdi - {flags_slot}], rdx",
        "mov [rdi - {rax_slot}], rsi",
        "mov rbx, [rax + {rbx}]",
        "mov rcx, [rax + {rcx}]",
        "mov rdx, [rax + {rdx}]",
        "mov rsi, [rax + {rsi}]",
        "mov rdi, [rax + {rdi}]",
        "mov rbp, [rax + {rbp}]",
        "mov r8, [rax + {r8}]",
        "mov r9, [rax + {r9}]",
        "mov r10, [rax + {r10}]",
        "mov r11, [rax + {r11}]",
        "mov r12, [rax + {r12}]",
        "mov r13, [rax + {r13}]",
        "mov r14, [rax + {r14}]",
        // The last read of the frame; then one instruction onto the
        // interrupted stack, with the three slots at and above rsp.
        "mov rax, [rax + {rsp}]",
        "lea rsp, [rax - {rax_slot}]",
        "pop rax",
        "popfq",
        "ret 128",
        rip_slot = const RIP_SLOT,
        flags_slot = const FLAGS_SLOT,
        rax_slot = const RAX_SLOT,
        rax = const reg!(rax),
        rbx = const reg!(rbx),
        rcx = const reg!(rcx),
        rdx = const reg!(rdx),
        rsi = const reg!(rsi),
        rdi = const reg!(rdi),
        rbp = const reg!(rbp),
        rsp = const reg!(rsp),
        r8 = const reg!(r8),
        r9 = const reg!(r9),
        r10 = const reg!(r10),
        r11 = const reg!(r11),
        r12 = const reg!(r12),
        r13 = const reg!(r13),
        r14 = const reg!(r14),
        r15 = const reg!(r15),
        rip = const reg!(rip),
        rflags = const reg!(rflags),
    )
}

/// The foreign-system-call entry. The kernel enters as for [`entry`], and
/// leaves every register the program had at its `syscall` except `rdi`,
/// `rsi` (the frame and the kind), `rsp`, `rip`, and `rcx`/`r11` (which
/// `syscall` itself overwrites). It stored only those in the frame
/// (`oxok_abi::upcall::FOREIGN_SYSCALL`): the entry first stores the
/// others (`rax rbx rdx rbp r8`–`r15`) from the registers, so the frame is
/// whole before any handler reads it. The foreign dispatch runs the handler
/// with the frame saved on the exception stack. When it says the short way
/// applies ([`Outcome::Returned`]), the registers the handler has not
/// changed are still the program's: the callee-saved ones (`rbx rbp
/// r12–r15`) survived the Rust call as the Rust ABI requires, so the way
/// back reloads only what the call clobbered or set — `rax` (the result),
/// `rdi rsi rdx r8 r9 r10` (the arguments Linux preserves), `rcx` (= `rip`)
/// and `r11` (= `rflags`) — takes the flags with `popfq` while still on the
/// exception stack (below the frame; `mov` changes no flag), switches to
/// the program's `rsp` and jumps to `rcx`. Nothing is stored on the
/// program's stack, so its red zone stays untouched. Otherwise the full
/// resume sequence of [`entry`] runs.
#[unsafe(naked)]
extern "C" fn foreign_entry() -> ! {
    naked_asm!(
        "cld",
        // The registers the kernel left in place, into the frame.
        "mov [rdi + {rax}], rax",
        "mov [rdi + {rbx}], rbx",
        "mov [rdi + {rdx}], rdx",
        "mov [rdi + {rbp}], rbp",
        "mov [rdi + {r8}], r8",
        "mov [rdi + {r9}], r9",
        "mov [rdi + {r10}], r10",
        "mov [rdi + {r12}], r12",
        "mov [rdi + {r13}], r13",
        "mov [rdi + {r14}], r14",
        "mov [rdi + {r15}], r15",
        // rsp is 8 mod 16 (as if called): one push aligns it for the call.
        "push rdi",
        "call qword ptr [rip + {dispatch}]",
        "pop rdi",
        "test al, al",
        "jz 2f",
        "mov rcx, [rdi + {rip}]",
        "mov r11, [rdi + {rflags}]",
        "push r11",
        "popfq",
        "mov rax, [rdi + {rax}]",
        "mov rdx, [rdi + {rdx}]",
        "mov rsi, [rdi + {rsi}]",
        "mov r8, [rdi + {r8}]",
        "mov r9, [rdi + {r9}]",
        "mov r10, [rdi + {r10}]",
        "mov rsp, [rdi + {rsp}]",
        "mov rdi, [rdi + {rdi}]",
        "jmp rcx",
        // The full resume: as `entry` after its call, with the frame in rbx.
        "2:",
        "mov rbx, rdi",
        "jmp {resume}",
        dispatch = sym FOREIGN_DISPATCH,
        resume = sym resume_from_rbx,
        rip = const reg!(rip),
        rflags = const reg!(rflags),
        rax = const reg!(rax),
        rbx = const reg!(rbx),
        rdx = const reg!(rdx),
        rbp = const reg!(rbp),
        rsi = const reg!(rsi),
        rdi = const reg!(rdi),
        rsp = const reg!(rsp),
        r8 = const reg!(r8),
        r9 = const reg!(r9),
        r10 = const reg!(r10),
        r12 = const reg!(r12),
        r13 = const reg!(r13),
        r14 = const reg!(r14),
        r15 = const reg!(r15),
    )
}
