//! upcalls [MODE]: the libOS exception runtime over the kernel's upcalls.
//!
//! Default mode: a page-fault handler maps fresh frames on demand (touch 10
//! unmapped pages: they read as zero and keep their writes); an exception
//! handler skips `ud2` and counts `int3`; a Linux `getpid` is reflected to
//! the foreign-system-call handler, which answers 4242; every register, the
//! flags, `rsp` and the red zone survive a handler round trip — also when
//! the handler itself faults (nested frame) and when the resume sequence
//! faults on the interrupted stack — and a foreign call's round trip, by
//! the full resume and by the foreign entry's short way back, where the
//! handler sees the program's registers in its frame (those the kernel
//! leaves in place stored by the entry) and the program gets back every
//! register but `rax` (the result), `rcx` and `r11` (as Linux's `syscall`
//! leaves them). Ends with `upcalls: ok`.
//!
//! Hostile modes, each ends the program: `unhandled` (a `ud2` with no
//! handler: the runtime exits with status 132), `bad-stack` (exception
//! stack in unmapped memory) and `readonly-stack` (exception stack in the
//! program text): the kernel cannot deliver and must destroy the program;
//! `recurse` (the handler itself executes `ud2`, forever): nested frames
//! run down the exception stack until the kernel cannot write the next one
//! and destroys the program.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::layout::{PAGE_SIZE, PROGRAM_BASE, USER_TOP, pte};
use oxok_libos::abi::upcall::{EXCEPTION, EXCEPTION_STACK, FOREIGN_SYSCALL, KINDS, PAGE_FAULT, REVOCATION};
use oxok_libos::abi::{ANY_FRAME, EnvState, Error, ExceptionFrame};
use oxok_libos::upcall::{self, Kind, Outcome, VECTOR_BREAKPOINT, VECTOR_INVALID_OPCODE};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

/// Pages the page-fault handler fills on demand.
const DZ_BASE: u64 = 0x1300_0000_0000;
const DZ_PAGES: u64 = 32;
/// The page the nested-fault test touches from inside a handler.
const NESTED_PAGE: u64 = DZ_BASE + 16 * PAGE_SIZE;
/// The page used as the interrupted stack in the resume-fault test.
const STACK_PAGE: u64 = DZ_BASE + 20 * PAGE_SIZE;
const RW: u64 = pte::WRITABLE | pte::NO_EXECUTE;

static FAULTS: AtomicU64 = AtomicU64::new(0);
static LAST_ERROR: AtomicU64 = AtomicU64::new(0);
static UD2S: AtomicU64 = AtomicU64::new(0);
static BREAKPOINTS: AtomicU64 = AtomicU64::new(0);
/// When set, the exception handler first reads [`NESTED_PAGE`].
static NESTED: AtomicU64 = AtomicU64::new(0);
/// What the nested read saw.
static NESTED_SAW: AtomicU64 = AtomicU64::new(u64::MAX);
/// Arguments the foreign-call handler saw: rdi rsi rdx r10 r8 r9.
static FOREIGN_ARGS: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];
/// Registers the exception handler saw at the last `ud2`:
/// rbx rbp r12 r13 r14 r15.
static SEEN: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];

fn main(args: Args) -> i32 {
    match args.get(1).unwrap_or("") {
        "" => {}
        "unhandled" => return unhandled(),
        "bad-stack" => return bad_stack(0x3000_0000_0000, "in unmapped memory"),
        "recurse" => return recurse(),
        "readonly-stack" => return bad_stack(PROGRAM_BASE + 2 * PAGE_SIZE, "in read-only program text"),
        other => {
            println!("upcalls: FAIL unknown mode {other}");
            return 2;
        }
    }
    let mut t = Checks::new("upcalls");
    registration(&mut t);
    upcall::set_handler(Kind::PageFault, demand_zero);
    upcall::set_handler(Kind::Exception, skip);
    upcall::set_handler(Kind::ForeignSyscall, foreign);
    demand_paging(&mut t);
    exceptions(&mut t);
    foreign_call(&mut t);
    foreign_registers(&mut t, false);
    foreign_registers(&mut t, true);
    registers(&mut t, false);
    NESTED.store(1, Ordering::SeqCst);
    registers(&mut t, true);
    NESTED.store(0, Ordering::SeqCst);
    t.expect(NESTED_SAW.load(Ordering::SeqCst), 0, "nested fault read a zero page");
    resume_faults(&mut t);
    stress(&mut t);
    t.finish()
}

/// `install` registers the stack and three entries; bad registrations are
/// refused.
fn registration(t: &mut Checks) {
    t.expect(upcall::install(), Ok(()), "install");
    let mut st = EnvState::default();
    t.expect(sys::env_get_state(0, &raw mut st as u64), Ok([]), "get own state");
    let entry = upcall::entry_address();
    t.expect(st.upcalls[EXCEPTION as usize], entry, "exception entry registered");
    t.expect(st.upcalls[PAGE_FAULT as usize], entry, "page-fault entry registered");
    t.expect(st.upcalls[FOREIGN_SYSCALL as usize], upcall::foreign_entry_address(), "foreign-call entry registered");
    t.expect(st.upcalls[REVOCATION as usize], entry, "revocation entry registered");
    t.expect(st.upcalls[EXCEPTION_STACK as usize], upcall::stack_top(), "exception stack registered");
    t.expect(sys::upcall_register(0, KINDS as u64, entry), Err(Error::Invalid), "unknown kind");
    t.expect(sys::upcall_register(0, u64::MAX, entry), Err(Error::Invalid), "kind u64::MAX");
    t.expect(sys::upcall_register(0, EXCEPTION, USER_TOP), Err(Error::Invalid), "entry at USER_TOP");
    t.expect(sys::upcall_register(0, EXCEPTION, 0xffff_ffff_8000_0000), Err(Error::Invalid), "entry in the kernel");
    t.expect(
        sys::upcall_register(0, EXCEPTION_STACK, 0xffff_8000_0000_0000),
        Err(Error::Invalid),
        "exception stack in the kernel",
    );
    t.expect(sys::upcall_register(u64::MAX, EXCEPTION, entry), Err(Error::BadCap), "bad env slot");
    t.expect(sys::env_get_state(0, &raw mut st as u64), Ok([]), "get own state again");
    t.expect(st.upcalls[EXCEPTION as usize], entry, "refusals changed nothing");
}

/// Page faults in the demand-zero range get a fresh frame.
fn demand_zero(f: &mut ExceptionFrame) -> Outcome {
    let page = f.addr & !(PAGE_SIZE - 1);
    if !(DZ_BASE..DZ_BASE + DZ_PAGES * PAGE_SIZE).contains(&page) {
        return Outcome::Unhandled;
    }
    let Ok([slot, _]) = sys::frame_alloc(ANY_FRAME) else {
        return Outcome::Unhandled;
    };
    if sys::page_map(0, slot, page, RW).is_err() {
        let _ = sys::frame_free(slot);
        return Outcome::Unhandled;
    }
    FAULTS.fetch_add(1, Ordering::SeqCst);
    LAST_ERROR.store(f.error, Ordering::SeqCst);
    Outcome::Resume
}

/// Skips `ud2`, counts `int3` (whose `rip` is already past it).
fn skip(f: &mut ExceptionFrame) -> Outcome {
    match f.vector {
        VECTOR_INVALID_OPCODE if mem::code_at(f.regs.rip) == Some([0x0f, 0x0b]) => {
            if NESTED.load(Ordering::SeqCst) != 0 {
                // Fault from inside the handler: the kernel delivers a
                // nested frame below this handler's stack.
                NESTED_SAW.store(mem::read(NESTED_PAGE + 8), Ordering::SeqCst);
            }
            let r = &f.regs;
            for (s, v) in SEEN.iter().zip([r.rbx, r.rbp, r.r12, r.r13, r.r14, r.r15]) {
                s.store(v, Ordering::SeqCst);
            }
            f.regs.rip += 2;
            UD2S.fetch_add(1, Ordering::SeqCst);
            Outcome::Resume
        }
        VECTOR_BREAKPOINT => {
            BREAKPOINTS.fetch_add(1, Ordering::SeqCst);
            Outcome::Resume
        }
        _ => Outcome::Unhandled,
    }
}

/// Answers Linux `getpid` with 4242, and [`mem::GPR_VALUES`]`[0]` (a
/// foreign number) with [`FOREIGN_RESULT`], noting the registers it saw
/// and returning by the short way when [`SHORT_WAY`] is set.
fn foreign(f: &mut ExceptionFrame) -> Outcome {
    if f.regs.rax == mem::GPR_VALUES[0] {
        let r = &f.regs;
        for (s, v) in SEEN.iter().zip([r.rbx, r.rbp, r.r12, r.r13, r.r14, r.r15]) {
            s.store(v, Ordering::SeqCst);
        }
        for (s, v) in FOREIGN_ARGS.iter().zip([r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9]) {
            s.store(v, Ordering::SeqCst);
        }
        f.regs.rax = FOREIGN_RESULT;
        if SHORT_WAY.load(Ordering::SeqCst) == 0 {
            return Outcome::Resume;
        }
        f.regs.rcx = f.regs.rip;
        f.regs.r11 = f.regs.rflags;
        return Outcome::Returned;
    }
    if f.regs.rax != 39 {
        return Outcome::Unhandled;
    }
    let r = &f.regs;
    for (s, v) in FOREIGN_ARGS.iter().zip([r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9]) {
        s.store(v, Ordering::SeqCst);
    }
    f.regs.rax = 4242;
    Outcome::Resume
}

fn demand_paging(t: &mut Checks) {
    let before = FAULTS.load(Ordering::SeqCst);
    let mut zero = true;
    for i in 0..10 {
        let va = DZ_BASE + i * PAGE_SIZE;
        zero &= mem::read(va + 8 * i) == 0;
        mem::write(va + 8 * i, 0xd00d_0000 + i);
    }
    t.check(zero, "demand-zero pages read as zero");
    t.expect(FAULTS.load(Ordering::SeqCst) - before, 10, "ten faults for ten pages");
    t.expect(LAST_ERROR.load(Ordering::SeqCst) & 0b111, 0b100, "error code: user read, not present");
    let kept = (0..10).all(|i| mem::read(DZ_BASE + i * PAGE_SIZE + 8 * i) == 0xd00d_0000 + i);
    t.check(kept, "writes kept");
    t.expect(FAULTS.load(Ordering::SeqCst) - before, 10, "no more faults once mapped");
    // A write fault on a fresh page.
    mem::write(DZ_BASE + 10 * PAGE_SIZE, 77);
    t.expect(LAST_ERROR.load(Ordering::SeqCst) & 0b111, 0b110, "error code: user write, not present");
    t.expect(mem::read(DZ_BASE + 10 * PAGE_SIZE), 77, "write fault page keeps the write");
}

fn exceptions(t: &mut Checks) {
    let before = UD2S.load(Ordering::SeqCst);
    for _ in 0..5 {
        mem::ud2();
    }
    t.expect(UD2S.load(Ordering::SeqCst) - before, 5, "five ud2 skipped");
    mem::int3();
    mem::int3();
    t.expect(BREAKPOINTS.load(Ordering::SeqCst), 2, "two int3 counted");
}

fn foreign_call(t: &mut Checks) {
    let r = sys::raw(39, [1, 2, 3, 4, 5, 6]);
    t.expect(r.status, 4242, "getpid answered by the handler");
    let seen: [u64; 6] = core::array::from_fn(|i| FOREIGN_ARGS[i].load(Ordering::SeqCst));
    t.expect(seen, [1, 2, 3, 4, 5, 6], "handler saw the six arguments");
    t.expect(r.values, [1, 2, 3], "argument registers unchanged");
}

/// What [`foreign`] answers the foreign call of [`foreign_registers`].
const FOREIGN_RESULT: u64 = 0x4e50_0000_0000_0042;
/// When set, [`foreign`] says `Outcome::Returned` (the short way back).
static SHORT_WAY: AtomicU64 = AtomicU64::new(0);

/// Distinctive values in every register across a foreign `syscall`
/// (number `GPR_VALUES[0]`): the handler sees them all in its frame (the
/// arguments and the callee-saved registers are ones the kernel leaves in
/// place for the foreign entry to store), and the program gets every one
/// back but `rax` (the result), `rcx` and `r11`.
fn foreign_registers(t: &mut Checks, short: bool) {
    SHORT_WAY.store(u64::from(short), Ordering::SeqCst);
    let got = mem::with_registers(mem::Trap::ForeignSyscall);
    let tag = if short { " (short way back)" } else { " (full resume)" };
    let v = mem::GPR_VALUES;
    let mut bad = 0;
    for (i, (g, w)) in got.gprs.iter().zip(v.iter()).enumerate() {
        // rax, rcx and r11: the result, and what `syscall` leaves.
        if !matches!(i, 0 | 1 | 8) && g != w {
            println!("upcalls: register #{i}{tag}: got {g:#x}, want {w:#x}");
            bad += 1;
        }
    }
    t.check(bad == 0, &format!("foreign call: every other register survives{tag}"));
    t.expect(got.gprs[0], FOREIGN_RESULT, &format!("foreign call: rax holds the result{tag}"));
    t.expect(got.rbx_rbp, [mem::RBX, mem::RBP], &format!("foreign call: rbx and rbp survive{tag}"));
    t.expect(got.rsp_after, got.rsp_before, &format!("foreign call: rsp survives{tag}"));
    t.expect(got.red_zone, [v[8], v[9], v[10]], &format!("foreign call: red zone intact{tag}"));
    t.check(got.flags & 1 != 0 && got.flags & (1 << 10) != 0, &format!("foreign call: CF and DF survive{tag}"));
    let seen: [u64; 6] = core::array::from_fn(|i| SEEN[i].load(Ordering::SeqCst));
    t.expect(
        seen,
        [mem::RBX, mem::RBP, v[9], v[10], v[11], v[12]],
        &format!("foreign handler saw the callee-saved registers{tag}"),
    );
    let args: [u64; 6] = core::array::from_fn(|i| FOREIGN_ARGS[i].load(Ordering::SeqCst));
    t.expect(args, [v[4], v[3], v[2], v[7], v[5], v[6]], &format!("foreign handler saw the arguments{tag}"));
    SHORT_WAY.store(0, Ordering::SeqCst);
}

/// Distinctive values in every register across a `ud2`.
fn registers(t: &mut Checks, nested: bool) {
    let got = mem::ud2_with_registers();
    let tag = if nested { " (nested fault in handler)" } else { "" };
    let mut bad = 0;
    for (i, (g, w)) in got.gprs.iter().zip(mem::GPR_VALUES.iter()).enumerate() {
        if g != w {
            println!("upcalls: register #{i}{tag}: got {g:#x}, want {w:#x}");
            bad += 1;
        }
    }
    t.check(bad == 0, "all general registers survive");
    t.expect(got.rbx_rbp, [mem::RBX, mem::RBP], "rbx and rbp survive");
    t.expect(got.rsp_after, got.rsp_before, "rsp survives");
    let v = mem::GPR_VALUES;
    t.expect(got.red_zone, [v[8], v[9], v[10]], "red zone intact");
    t.check(got.flags & 1 != 0, "carry flag survives");
    t.check(got.flags & (1 << 10) != 0, "direction flag survives");
    let seen: [u64; 6] = core::array::from_fn(|i| SEEN[i].load(Ordering::SeqCst));
    let want = [mem::RBX, mem::RBP, v[9], v[10], v[11], v[12]];
    t.expect(seen, want, "handler saw the interrupted registers");
}

/// Many round trips while the timer preempts at arbitrary points: every
/// one must restore every register.
fn stress(t: &mut Checks) {
    let v = mem::GPR_VALUES;
    let mut bad = 0;
    for _ in 0..STRESS_ROUNDS {
        let got = mem::ud2_with_registers();
        if got.gprs != v || got.rbx_rbp != [mem::RBX, mem::RBP] || got.rsp_after != got.rsp_before {
            bad += 1;
        }
    }
    t.expect(bad, 0, "registers intact over many round trips");
}

/// Round trips in [`stress`].
const STRESS_ROUNDS: u32 = 3000;

/// The resume sequence itself faults: the interrupted stack is an unmapped
/// demand-zero page, so storing `rip` below it page-faults inside the stub.
fn resume_faults(t: &mut Checks) {
    let before = FAULTS.load(Ordering::SeqCst);
    let ud2s = UD2S.load(Ordering::SeqCst);
    t.check(exposed::pte(STACK_PAGE).is_none(), "stack page not mapped yet");
    let marker = mem::ud2_on_stack(STACK_PAGE + PAGE_SIZE);
    t.expect(marker, 0x51ac_0000_0000_0001, "resumed after a fault in the resume sequence");
    t.expect(UD2S.load(Ordering::SeqCst) - ud2s, 1, "one ud2");
    t.expect(FAULTS.load(Ordering::SeqCst) - before, 1, "one fault on the interrupted stack");
    t.check(exposed::pte(STACK_PAGE).is_some(), "stack page mapped by the handler");
}

/// `ud2` with no handler: the runtime prints and exits with status 132.
fn unhandled() -> i32 {
    if upcall::install().is_err() {
        println!("upcalls: FAIL install");
        return 1;
    }
    println!("upcalls: ud2 with no handler");
    mem::ud2();
    println!("upcalls: FAIL survived an unhandled ud2");
    1
}

/// A handler that faults again, without end.
fn recurse() -> i32 {
    if upcall::install().is_err() {
        println!("upcalls: FAIL install");
        return 1;
    }
    upcall::set_handler(Kind::Exception, |_| {
        mem::ud2();
        Outcome::Resume
    });
    println!("upcalls: ud2 in a handler that faults again");
    mem::ud2();
    println!("upcalls: FAIL survived endless nested faults");
    1
}

/// An exception stack the kernel cannot write: the environment must be
/// destroyed when the next exception comes.
fn bad_stack(top: u64, what: &str) -> i32 {
    if upcall::install().is_err() {
        println!("upcalls: FAIL install");
        return 1;
    }
    upcall::set_handler(Kind::Exception, skip);
    if let Err(e) = sys::upcall_register(0, EXCEPTION_STACK, top) {
        println!("upcalls: FAIL registering an exception stack {what}: {e}");
        return 1;
    }
    println!("upcalls: ud2 with the exception stack {what}");
    mem::ud2();
    println!("upcalls: FAIL survived an exception stack {what}");
    1
}

/// The instructions and memory accesses the checks are made of.
#[allow(unsafe_code)]
mod mem {
    use core::arch::asm;
    use core::sync::atomic::AtomicU64;

    /// Reads the word at `va`; may page-fault (that is the test).
    pub fn read(va: u64) -> u64 {
        // SAFETY: `va` is in the demand-zero range: either mapped, or the
        // page-fault handler maps a zeroed frame there and the read retries.
        unsafe { core::ptr::read_volatile(va as *const u64) }
    }

    /// Writes the word at `va`; may page-fault.
    pub fn write(va: u64, v: u64) {
        // SAFETY: as `read`; the demand-zero pages belong to no Rust object.
        unsafe { core::ptr::write_volatile(va as *mut u64, v) }
    }

    /// The two bytes at `rip`, if mapped.
    pub fn code_at(rip: u64) -> Option<[u8; 2]> {
        if !oxok_libos::exposed::readable(rip) || !oxok_libos::exposed::readable(rip + 1) {
            return None;
        }
        // SAFETY: both bytes checked mapped readable.
        Some(unsafe { [core::ptr::read_volatile(rip as *const u8), core::ptr::read_volatile((rip + 1) as *const u8)] })
    }

    pub fn ud2() {
        // SAFETY: the exception handler skips the instruction; nothing else
        // changes.
        unsafe { asm!("ud2", options(nostack)) }
    }

    pub use oxok_tests::mem::int3;

    pub const RBX: u64 = 0xb0b0_1111_2222_3333;
    pub const RBP: u64 = 0xbebe_4444_5555_6666;
    /// rax rcx rdx rsi rdi r8 r9 r10 r11 r12 r13 r14 r15, in that order.
    pub const GPR_VALUES: [u64; 13] = [
        0xa0a0_0000_0000_00a0,
        0xc0c0_0000_0000_00c0,
        0xd0d0_0000_0000_00d0,
        0x5151_0000_0000_0051,
        0xd1d1_0000_0000_00d1,
        0x0808_0000_0000_0008,
        0x0909_0000_0000_0009,
        0x1010_0000_0000_0010,
        0x1111_0000_0000_0011,
        0x1212_0000_0000_0012,
        0x1313_0000_0000_0013,
        0x1414_0000_0000_0014,
        0x1515_0000_0000_0015,
    ];

    pub struct Observed {
        pub gprs: [u64; 13],
        pub rbx_rbp: [u64; 2],
        pub rsp_before: u64,
        pub rsp_after: u64,
        pub red_zone: [u64; 3],
        pub flags: u64,
    }

    /// rbx, rbp, rsp before, rsp after, red zone ×3, flags.
    static OUT: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];

    /// What [`with_registers`] executes.
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub enum Trap {
        /// `ud2` (the exception handler skips it).
        Ud2,
        /// `syscall` with `rax = GPR_VALUES[0]`, a foreign number.
        ForeignSyscall,
    }

    /// Which instruction the next [`with_registers`] executes (1: `syscall`).
    static SYSCALL_NEXT: AtomicU64 = AtomicU64::new(0);

    /// [`with_registers`] with `ud2`.
    pub fn ud2_with_registers() -> Observed {
        with_registers(Trap::Ud2)
    }

    /// Loads distinctive values into every register, fills the red zone,
    /// sets CF and DF, executes `trap`, and reports what it finds after.
    pub fn with_registers(trap: Trap) -> Observed {
        SYSCALL_NEXT.store(u64::from(trap == Trap::ForeignSyscall), core::sync::atomic::Ordering::SeqCst);
        let mut g = GPR_VALUES;
        // rbx and rbp are saved and restored around the block; the red zone is
        // written only below rsp after the pushes (no `nostack`); DF is cleared
        // SAFETY: before the end, and the exception handler skips the ud2.
        unsafe {
            asm!(
                "push rbx",
                "push rbp",
                "movabs rbx, {rbx}",
                "movabs rbp, {rbp}",
                "mov [rsp - 8], r11",
                "mov [rsp - 64], r12",
                "mov [rsp - 128], r13",
                "mov [rip + {out} + 16], rsp",
                "cmp qword ptr [rip + {which}], 0",
                // Neither changes ZF.
                "stc",
                "std",
                "je 2f",
                "syscall",
                "jmp 3f",
                "2:",
                "ud2",
                "3:",
                "mov [rip + {out}], rbx",
                "mov [rip + {out} + 8], rbp",
                "mov [rip + {out} + 24], rsp",
                "mov rbx, [rsp - 8]",
                "mov [rip + {out} + 32], rbx",
                "mov rbx, [rsp - 64]",
                "mov [rip + {out} + 40], rbx",
                "mov rbx, [rsp - 128]",
                "mov [rip + {out} + 48], rbx",
                "pushfq",
                "pop rbx",
                "mov [rip + {out} + 56], rbx",
                "cld",
                "pop rbp",
                "pop rbx",
                rbx = const RBX,
                rbp = const RBP,
                out = sym OUT,
                which = sym SYSCALL_NEXT,
                inout("rax") g[0],
                inout("rcx") g[1],
                inout("rdx") g[2],
                inout("rsi") g[3],
                inout("rdi") g[4],
                inout("r8") g[5],
                inout("r9") g[6],
                inout("r10") g[7],
                inout("r11") g[8],
                inout("r12") g[9],
                inout("r13") g[10],
                inout("r14") g[11],
                inout("r15") g[12],
            );
        }
        let o: [u64; 8] = core::array::from_fn(|i| OUT[i].load(core::sync::atomic::Ordering::SeqCst));
        Observed {
            gprs: g,
            rbx_rbp: [o[0], o[1]],
            rsp_before: o[2],
            rsp_after: o[3],
            red_zone: [o[4], o[5], o[6]],
            flags: o[7],
        }
    }

    /// Saved rsp while running on the borrowed stack.
    static SAVED_RSP: AtomicU64 = AtomicU64::new(0);

    /// Runs `ud2` with `rsp = top` (an unmapped demand-zero page); returns
    /// a marker set after the resume.
    pub fn ud2_on_stack(top: u64) -> u64 {
        let marker: u64;
        // SAFETY: rsp is switched to `top` only for the ud2 and restored from
        // SAVED_RSP; nothing is pushed on the borrowed stack by this code;
        // the handlers map the page when the resume sequence touches it.
        unsafe {
            asm!(
                "mov [rip + {saved}], rsp",
                "mov rsp, {top}",
                "xor eax, eax",
                "ud2",
                "movabs rax, 0x51ac000000000001",
                "mov rsp, [rip + {saved}]",
                saved = sym SAVED_RSP,
                top = in(reg) top,
                out("rax") marker,
            );
        }
        marker
    }
}
