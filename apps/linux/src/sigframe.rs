//! The Linux x86-64 signal frame (`struct rt_sigframe`): what a handler
//! finds on its stack, and what `rt_sigreturn` reads back.
//!
//! From the new stack pointer up: the return address (the action's
//! `SA_RESTORER` trampoline, which calls `rt_sigreturn`), a `ucontext`
//! (flags, link, the alternate-stack description, the `sigcontext` with
//! every interrupted register, the mask to restore) and a `siginfo`; above
//! them, 64-aligned, the 512-byte FXSAVE image the `sigcontext`'s
//! `fpstate` points at. The frame goes below the interrupted code's red
//! zone, or to the top of the alternate stack for `SA_ONSTACK` actions.
//! Everything is written through the checked copies, so a bad stack is an
//! error (the program is then ended with `SIGSEGV`, as Linux does).

use crate::signals::{self, ALTSTACK, MASK, SA_NODEFER, SA_RESETHAND, SA_RESTORER, SIG_DFL, UNBLOCKABLE, bit};
use crate::uaccess;
use alloc::vec;
use core::sync::atomic::Ordering;
use oxok_libos::abi::{ExceptionFrame, Regs};
use oxok_libos::guest::{self, Fxsave};

/// Bytes of `pretcode` + `ucontext` + `siginfo`.
const FRAME: u64 = 8 + UC_SIZE + 128;
/// The `ucontext` within the frame, and its size.
const UC: usize = 8;
const UC_SIZE: u64 = 304;
/// The `sigcontext` within the frame.
const SC: usize = UC + 40;
/// The saved mask within the frame.
const SIGMASK: usize = UC + 296;
/// The `siginfo` within the frame.
const INFO: usize = UC + UC_SIZE as usize;
/// The FXSAVE image's size.
const FPSTATE: u64 = 512;
/// Red zone below the interrupted stack pointer.
const RED_ZONE: u64 = 128;
const SS_ONSTACK: u64 = 1;
const SS_DISABLE: u64 = 2;

/// `rflags` bits a signal handler may change through the frame: CF PF AF
/// ZF SF DF OF AC.
const USER_FLAGS: u64 = 0x1 | 0x4 | 0x10 | 0x40 | 0x80 | 0x400 | 0x800 | 0x40000;

/// The registers in `sigcontext` order.
fn regs_out(r: &Regs) -> [u64; 18] {
    [
        r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15, r.rdi, r.rsi, r.rbp, r.rbx, r.rdx, r.rax, r.rcx, r.rsp,
        r.rip, r.rflags,
    ]
}

fn put(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

fn get(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().unwrap_or([0; 8]))
}

/// Pushes a frame for `sig` with `action` (handler, flags, restorer, mask)
/// and points the registers at the handler. `fault`: the faulting address
/// for a synchronous fault (else the signal came from a process).
///
/// `saved`: the mask the handler's return restores, when it is not the one
/// in force now (`rt_sigsuspend` replaced it while it slept).
pub fn push(
    frame: &mut ExceptionFrame,
    sig: u64,
    action: &[u64; 4],
    fault: Option<u64>,
    saved: Option<u64>,
) -> Result<(), i64> {
    if action[1] & SA_RESTORER == 0 {
        return Err(crate::errno::EFAULT);
    }
    let regs = frame.regs;
    let alt = *ALTSTACK.lock();
    let alt_on = alt[1] & SS_DISABLE == 0;
    let on_alt = alt_on && regs.rsp > alt[0] && regs.rsp <= alt[0].wrapping_add(alt[2]);
    let sp = if action[1] & signals::SA_ONSTACK != 0 && alt_on && !on_alt {
        alt[0].wrapping_add(alt[2])
    } else {
        regs.rsp.wrapping_sub(RED_ZONE)
    };
    let fp = sp.checked_sub(FPSTATE).ok_or(crate::errno::EFAULT)? & !63;
    let base = (fp.checked_sub(FRAME).ok_or(crate::errno::EFAULT)? & !15) - 8;

    let mut fx = Fxsave([0; 512]);
    guest::fxsave(&mut fx);
    uaccess::write(fp, &fx.0)?;

    let old_mask = MASK.load(Ordering::Acquire);
    let mut b = vec![0u8; FRAME as usize];
    put(&mut b, 0, action[2]);
    // uc_flags 0, uc_link 0; the alternate stack as sigaltstack reports it.
    put(&mut b, UC + 16, alt[0]);
    put(&mut b, UC + 24, alt[1] | if on_alt { SS_ONSTACK } else { 0 });
    put(&mut b, UC + 32, alt[2]);
    for (i, v) in regs_out(&regs).iter().enumerate() {
        put(&mut b, SC + i * 8, *v);
    }
    // cs, gs, fs, ss (16 bits each) as Linux's user selectors.
    put(&mut b, SC + 144, 0x33 | (0x2b << 48));
    put(&mut b, SC + 152, if fault.is_some() { frame.error } else { 0 });
    put(&mut b, SC + 160, if fault.is_some() { frame.vector } else { 0 });
    let restore = saved.unwrap_or(old_mask);
    put(&mut b, SC + 168, restore);
    put(&mut b, SC + 176, fault.unwrap_or(0));
    put(&mut b, SC + 184, fp);
    put(&mut b, SIGMASK, restore);
    // siginfo: signo, errno 0, code; then the sender or the address.
    put(&mut b, INFO, sig);
    match fault {
        Some(addr) => {
            put(&mut b, INFO + 8, 1); // SEGV_MAPERR / ILL_ILLOPC / FPE_INTDIV
            put(&mut b, INFO + 16, addr);
        }
        None => put(&mut b, INFO + 16, crate::calls::process::linux_pid(oxok_libos::proc::pid()) as u64 & 0xffff_ffff),
    }
    uaccess::write(base, &b)?;

    let mut blocked = old_mask | action[3];
    if action[1] & SA_NODEFER == 0 {
        blocked |= bit(sig);
    }
    MASK.store(blocked & !UNBLOCKABLE, Ordering::Release);
    if action[1] & SA_RESETHAND != 0 {
        signals::set_action(sig, [SIG_DFL, 0, 0, 0]);
    }
    let r = &mut frame.regs;
    r.rsp = base;
    r.rip = action[0];
    r.rdi = sig;
    r.rsi = base + INFO as u64;
    r.rdx = base + UC as u64;
    r.rax = 0;
    // The handler starts with DF and TF clear, as the ABI requires.
    r.rflags &= !(0x400 | 0x100);
    Ok(())
}

/// `rt_sigreturn`: the frame is where the handler's `ret` left the stack
/// pointer (just above the return address). Restores the registers, the
/// mask and the FXSAVE image; a frame that cannot be read ends the program
/// with `SIGSEGV`.
pub fn restore(frame: &mut ExceptionFrame) -> Result<(), i64> {
    let base = frame.regs.rsp.wrapping_sub(8);
    let b = uaccess::read_vec(base, FRAME as usize)?;
    let v = |i: usize| get(&b, SC + i * 8);
    let fp = get(&b, SC + 184);
    if fp != 0 {
        let mut fx = Fxsave([0; 512]);
        uaccess::read(fp, &mut fx.0)?;
        guest::fxrstor(&fx);
    }
    let r = &mut frame.regs;
    (r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15) = (v(0), v(1), v(2), v(3), v(4), v(5), v(6), v(7));
    (r.rdi, r.rsi, r.rbp, r.rbx, r.rdx, r.rax, r.rcx, r.rsp, r.rip) =
        (v(8), v(9), v(10), v(11), v(12), v(13), v(14), v(15), v(16));
    r.rflags = (r.rflags & !USER_FLAGS) | (v(17) & USER_FLAGS);
    MASK.store(get(&b, SIGMASK) & !UNBLOCKABLE, Ordering::Release);
    Ok(())
}
