//! A foreign program in the same address space (the Linux personality's
//! guest): checked copies between its memory and the libOS's, entering it
//! for the first time, and the CPU's own answers a loader passes on to it
//! (feature bits, random numbers).
//!
//! Every copy first checks, through the exposed page tables, that each page
//! of the range is present and user-accessible (and writable for writes),
//! so a copy never faults, and that none of it is the runtime's own memory,
//! so a copy never touches a Rust object: a bad range is an error, and the
//! caller turns it into `-EFAULT`. Which ranges the guest may name at all is the caller's
//! policy (its own table of the guest's memory); this module only makes the
//! access itself safe.

use crate::exposed;
use core::mem::offset_of;
use oxok_abi::layout::PAGE_SIZE;
use oxok_abi::{Error, Regs};

/// True if every page of `[addr, addr + len)` is mapped user-accessible
/// (and user-writable when `write`) and none of it is the runtime's own
/// memory (`page::own_memory`: the image, the heap, the main stack, which
/// the guest never has). Empty ranges are accepted.
pub fn mapped(addr: u64, len: u64, write: bool) -> bool {
    if len == 0 {
        return true;
    }
    if crate::page::own_memory(addr, len) {
        return false;
    }
    let Some(last) = addr.checked_add(len - 1) else { return false };
    let mut page = addr & !(PAGE_SIZE - 1);
    loop {
        let ok = if write { exposed::writable(page) } else { exposed::readable(page) };
        if !ok {
            return false;
        }
        match page.checked_add(PAGE_SIZE) {
            Some(next) if next <= last => page = next,
            _ => return true,
        }
    }
}

/// Copies `buf.len()` bytes at guest address `addr` into `buf`.
/// `BadAddress` if any page of the range is not mapped user-readable.
pub fn copy_in(addr: u64, buf: &mut [u8]) -> Result<(), Error> {
    if !mapped(addr, buf.len() as u64, false) {
        return Err(Error::BadAddress);
    }
    // The destination is a Rust buffer that cannot overlap the source, which
    // is none of the runtime's own memory (checked by `mapped`).
    // SAFETY: every page of the source range is mapped user-readable (checked
    // above); the guest runs only while the libOS does not, so nothing unmaps it.
    unsafe { core::ptr::copy(addr as *const u8, buf.as_mut_ptr(), buf.len()) };
    Ok(())
}

/// Copies `data` to guest address `addr`. `BadAddress` if any page of the
/// range is not mapped user-writable.
pub fn copy_out(addr: u64, data: &[u8]) -> Result<(), Error> {
    if !mapped(addr, data.len() as u64, true) {
        return Err(Error::BadAddress);
    }
    // SAFETY: every page of the destination is mapped user-writable and is
    // no Rust object (checked above), and not moved while the copy runs
    // (see `copy_in`); `copy` allows the ranges to overlap.
    unsafe { core::ptr::copy(data.as_ptr(), addr as *mut u8, data.len()) };
    Ok(())
}

/// Writes `len` zero bytes at guest address `addr` (checked as
/// [`copy_out`]).
pub fn zero(addr: u64, len: u64) -> Result<(), Error> {
    if !mapped(addr, len, true) {
        return Err(Error::BadAddress);
    }
    let len = usize::try_from(len).map_err(|_| Error::Invalid)?;
    // SAFETY: the range is mapped user-writable and no Rust object (checked
    // above).
    unsafe { core::ptr::write_bytes(addr as *mut u8, 0, len) };
    Ok(())
}

/// Starts the guest at `entry` with stack pointer `sp` (its System V
/// initial stack) and every other general register zero — `rdx` too, which
/// the ELF ABI reads as "no function for `atexit`". Never returns: the
/// guest comes back into the libOS only through upcalls.
pub fn enter(entry: u64, sp: u64) -> ! {
    // SAFETY: the caller built the guest's memory and initial stack; from
    // here on the libOS's own stack is abandoned (nothing on it is used
    // again) and the guest's code runs in this environment.
    unsafe {
        core::arch::asm!(
            "mov rsp, {sp}",
            "push {entry}",
            "xor eax, eax",
            "xor ebx, ebx",
            "xor ecx, ecx",
            "xor edx, edx",
            "xor esi, esi",
            "xor edi, edi",
            "xor ebp, ebp",
            "xor r8d, r8d",
            "xor r9d, r9d",
            "xor r10d, r10d",
            "xor r11d, r11d",
            "xor r12d, r12d",
            "xor r13d, r13d",
            "xor r14d, r14d",
            "xor r15d, r15d",
            "ret",
            sp = in(reg) sp,
            entry = in(reg) entry,
            options(noreturn),
        )
    }
}

/// Resumes the guest from `regs` — every general register, `rflags`,
/// `rsp` and `rip` — from ordinary code (not an upcall handler), e.g.
/// after the personality ran a call that had to leave the exception stack
/// (a fork). As the upcall runtime's resume sequence: `rip`, `rflags` and
/// `rax` are stored just below the guest's 128-byte red zone (which stays
/// untouched), the stack switches there in one instruction, and `pop rax`,
/// `popfq`, `ret 128` leave `rsp == regs.rsp`. A fault on those stores (a
/// guest stack page not yet present) is resolved by the page-fault upcall
/// like any other, on the caller's stack.
pub fn resume(regs: &Regs) -> ! {
    // The caller's stack is abandoned (nothing on it is needed again); the
    // three stores lie below the guest's red zone, where anything may write.
    // SAFETY: `regs` is a live structure read before the switch; from the
    // switch on only the guest's stack is used.
    unsafe {
        core::arch::asm!(
            "mov rax, [rdi + {rsp}]",
            "mov rcx, [rdi + {rip}]",
            "mov [rax - 136], rcx",
            "mov rcx, [rdi + {rflags}]",
            "mov [rax - 144], rcx",
            "mov rcx, [rdi + {rax}]",
            "mov [rax - 152], rcx",
            "mov rbx, [rdi + {rbx}]",
            "mov rcx, [rdi + {rcx}]",
            "mov rdx, [rdi + {rdx}]",
            "mov rsi, [rdi + {rsi}]",
            "mov rbp, [rdi + {rbp}]",
            "mov r8, [rdi + {r8}]",
            "mov r9, [rdi + {r9}]",
            "mov r10, [rdi + {r10}]",
            "mov r11, [rdi + {r11}]",
            "mov r12, [rdi + {r12}]",
            "mov r13, [rdi + {r13}]",
            "mov r14, [rdi + {r14}]",
            "mov r15, [rdi + {r15}]",
            "mov rdi, [rdi + {rdi}]",
            "lea rsp, [rax - 152]",
            "pop rax",
            "popfq",
            "ret 128",
            in("rdi") regs as *const Regs,
            rax = const offset_of!(Regs, rax),
            rbx = const offset_of!(Regs, rbx),
            rcx = const offset_of!(Regs, rcx),
            rdx = const offset_of!(Regs, rdx),
            rsi = const offset_of!(Regs, rsi),
            rdi = const offset_of!(Regs, rdi),
            rbp = const offset_of!(Regs, rbp),
            rsp = const offset_of!(Regs, rsp),
            r8 = const offset_of!(Regs, r8),
            r9 = const offset_of!(Regs, r9),
            r10 = const offset_of!(Regs, r10),
            r11 = const offset_of!(Regs, r11),
            r12 = const offset_of!(Regs, r12),
            r13 = const offset_of!(Regs, r13),
            r14 = const offset_of!(Regs, r14),
            r15 = const offset_of!(Regs, r15),
            rip = const offset_of!(Regs, rip),
            rflags = const offset_of!(Regs, rflags),
            options(noreturn),
        )
    }
}

/// An FXSAVE image (512 bytes, 16-aligned): the guest's x87/MMX/SSE
/// state. The libOS is built without SSE, so while an upcall handler runs
/// the unit still holds exactly what the interrupted guest left there.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct Fxsave(pub [u8; 512]);

impl Fxsave {
    /// A clean state: x87 control word and MXCSR as after reset.
    pub fn clean() -> Fxsave {
        let mut b = [0u8; 512];
        b[0..2].copy_from_slice(&oxok_abi::FCW_DEFAULT.to_le_bytes());
        b[24..28].copy_from_slice(&oxok_abi::MXCSR_DEFAULT.to_le_bytes());
        b[28..32].copy_from_slice(&0xffffu32.to_le_bytes());
        Fxsave(b)
    }
}

/// Saves the unit's x87/SSE state (`fxsave64`).
pub fn fxsave(out: &mut Fxsave) {
    // SAFETY: `out` is a 16-aligned, 512-byte buffer the instruction
    // writes and nothing else aliases; the unit's state is unchanged.
    unsafe { core::arch::asm!("fxsave64 [{}]", in(reg) out.0.as_mut_ptr(), options(nostack)) }
}

/// Loads the unit's x87/SSE state from `image`, with MXCSR's reserved
/// bits cleared first (a guest-supplied image could otherwise raise #GP).
pub fn fxrstor(image: &Fxsave) {
    let mut clean = *image;
    let mxcsr = u32::from_le_bytes([clean.0[24], clean.0[25], clean.0[26], clean.0[27]]) & 0xffff;
    clean.0[24..28].copy_from_slice(&mxcsr.to_le_bytes());
    // SAFETY: a 16-aligned 512-byte image with MXCSR's reserved bits clear
    // (the only field whose bad values fault); the instruction only reads it.
    unsafe { core::arch::asm!("fxrstor64 [{}]", in(reg) clean.0.as_ptr(), options(nostack)) }
}

/// The CPU's feature bits for `AT_HWCAP` (CPUID leaf 1, `edx`), as Linux
/// reports them on x86.
pub fn hwcap() -> u64 {
    u64::from(core::arch::x86_64::__cpuid(1).edx)
}

/// Eight random bytes from the CPU (`rdrand`), if it has the instruction
/// and it delivered (it may fail transiently; tried a few times).
pub fn rdrand() -> Option<u64> {
    if core::arch::x86_64::__cpuid(1).ecx & (1 << 30) == 0 {
        return None;
    }
    for _ in 0..10 {
        let mut v = 0u64;
        // SAFETY: CPUID says the CPU has RDRAND (checked above); the
        // intrinsic only writes `v`.
        if unsafe { rdrand_step(&mut v) } == 1 {
            return Some(v);
        }
    }
    None
}

/// `rdrand` into `v`; 1 when it delivered. Only for CPUs that have it.
#[target_feature(enable = "rdrand")]
fn rdrand_step(v: &mut u64) -> i32 {
    core::arch::x86_64::_rdrand64_step(v)
}
