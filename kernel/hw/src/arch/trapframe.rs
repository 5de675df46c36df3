//! The saved user register state: what every entry from user mode pushes,
//! what every return to user mode pops, and what an environment's saved
//! state is between runs.

use super::gdt::{USER_CS, USER_DS};

/// `vector` value for an entry through `syscall` (not a CPU vector).
pub const VECTOR_SYSCALL: u64 = 0x100;

/// RFLAGS bits a user may hold: CF PF AF ZF SF TF DF OF RF AC ID (and bit 1,
/// always set). IF is forced on; IOPL, NT, VM, VIF, VIP are forced off. RF
/// is kept: it only suppresses instruction breakpoints for one instruction,
/// and users set no breakpoints.
const USER_FLAGS_ALLOWED: u64 = 0x0025_0fd5;
const FLAG_IF: u64 = 1 << 9;
const FLAG_RESERVED1: u64 = 1 << 1;

/// Registers in the order the entry stubs push them (lowest address first).
/// The layout is shared with the assembly in `idt.rs` and `syscall.rs`.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
#[allow(missing_docs)]
pub struct TrapFrame {
    pub r15: u64,
    pub r14: u64,
    pub r13: u64,
    pub r12: u64,
    pub r11: u64,
    pub r10: u64,
    pub r9: u64,
    pub r8: u64,
    pub rbp: u64,
    pub rdi: u64,
    pub rsi: u64,
    pub rdx: u64,
    pub rcx: u64,
    pub rbx: u64,
    pub rax: u64,
    /// CPU vector, or [`VECTOR_SYSCALL`].
    pub vector: u64,
    /// The CPU's error code (0 when the vector has none).
    pub error: u64,
    pub rip: u64,
    pub cs: u64,
    pub rflags: u64,
    pub rsp: u64,
    pub ss: u64,
}

impl TrapFrame {
    /// A fresh user frame that starts at `rip` with stack `rsp`.
    pub fn new_user(rip: u64, rsp: u64) -> TrapFrame {
        TrapFrame {
            rip,
            rsp,
            cs: u64::from(USER_CS),
            ss: u64::from(USER_DS),
            rflags: FLAG_IF | FLAG_RESERVED1,
            ..TrapFrame::default()
        }
    }

    /// Makes this frame, holding the sender's registers, a protected
    /// control transfer's message, in place: a fresh user frame at `rip`
    /// (stack pointer 0, the selectors and flags of
    /// [`TrapFrame::new_user`]) keeping the general registers but `rax` and
    /// `r11` (zero) and `rcx` and `rdi` (given).
    #[inline(always)]
    pub fn into_message(&mut self, rip: u64, rcx: u64, rdi: u64) {
        self.r11 = 0;
        self.rdi = rdi;
        self.rcx = rcx;
        self.rax = 0;
        self.vector = 0;
        self.error = 0;
        self.rip = rip;
        self.cs = u64::from(USER_CS);
        self.rflags = FLAG_IF | FLAG_RESERVED1;
        self.rsp = 0;
        self.ss = u64::from(USER_DS);
    }

    /// Redirects this user frame into a handler of the same environment:
    /// `rip`, `rsp`, the first two argument registers and the flags and
    /// selectors of a fresh frame. The other registers keep the interrupted
    /// values (the environment's own, already saved where the handler reads
    /// them; to the handler they are undefined), which spares rewriting the
    /// whole frame on every upcall.
    pub fn enter_handler(&mut self, rip: u64, rsp: u64, rdi: u64, rsi: u64) {
        self.rip = rip;
        self.rsp = rsp;
        self.rdi = rdi;
        self.rsi = rsi;
        self.cs = u64::from(USER_CS);
        self.ss = u64::from(USER_DS);
        self.rflags = FLAG_IF | FLAG_RESERVED1;
    }

    /// Makes this frame a copy of `src`: one `rep movsq` of its 22 words
    /// (the library `memcpy` a plain assignment becomes costs half as many
    /// instructions again, and `memmove` more; a switch copies a frame
    /// once or twice).
    #[inline(always)]
    pub fn copy_from(&mut self, src: &TrapFrame) {
        const WORDS: usize = size_of::<TrapFrame>() / 8;
        // The direction flag is clear in the kernel (every entry clears it,
        // as Rust's ABI requires), so `rep movsq` copies upward.
        // SAFETY: `self` and `src` are distinct (`&mut` and `&`), each `WORDS`
        // aligned words; the copy touches those and the three named registers.
        unsafe {
            core::arch::asm!(
                "rep movsq",
                inout("rcx") WORDS => _,
                inout("rdi") self as *mut TrapFrame => _,
                inout("rsi") src as *const TrapFrame => _,
                options(nostack, preserves_flags)
            );
        }
    }

    /// True if the frame was pushed while the CPU was in ring 3.
    pub fn is_user(&self) -> bool {
        self.cs & 3 == 3
    }

    /// Syscall argument `i` (0..6): rdi, rsi, rdx, r10, r8, r9.
    pub fn arg(&self, i: usize) -> u64 {
        match i {
            0 => self.rdi,
            1 => self.rsi,
            2 => self.rdx,
            3 => self.r10,
            4 => self.r8,
            5 => self.r9,
            _ => 0,
        }
    }

    /// Sets syscall argument `i` in place (for calls that restart).
    pub fn set_arg(&mut self, i: usize, v: u64) {
        match i {
            0 => self.rdi = v,
            1 => self.rsi = v,
            2 => self.rdx = v,
            3 => self.r10 = v,
            4 => self.r8 = v,
            5 => self.r9 = v,
            _ => {}
        }
    }

    /// Sets result register `i` (0..3): rdi, rsi, rdx.
    pub fn set_result(&mut self, i: usize, v: u64) {
        self.set_arg(i, v);
    }

    /// Makes the frame safe to return to whatever a user wrote into it: user
    /// selectors, sanitised flags, canonical lower-half `rip` and `rsp`.
    /// Returns false (and leaves `rip`/`rsp` alone) if they were not.
    pub fn sanitize(&mut self) -> bool {
        self.cs = u64::from(USER_CS);
        self.ss = u64::from(USER_DS);
        self.rflags = (self.rflags & USER_FLAGS_ALLOWED) | FLAG_IF | FLAG_RESERVED1;
        const LOWER_HALF_END: u64 = 0x0000_8000_0000_0000;
        self.rip < LOWER_HALF_END && self.rsp < LOWER_HALF_END
    }
}

impl TrapFrame {
    /// The user-visible registers.
    pub fn regs(&self) -> oxok_abi::Regs {
        let mut r = oxok_abi::Regs::ZERO;
        self.store_regs(&mut r);
        r
    }

    /// Stores the registers into `r` one by one (in place, e.g. straight
    /// into an upcall's record on the user's exception stack).
    #[inline(always)]
    pub fn store_regs(&self, r: &mut oxok_abi::Regs) {
        r.rax = self.rax;
        r.rbx = self.rbx;
        r.rcx = self.rcx;
        r.rdx = self.rdx;
        r.rsi = self.rsi;
        r.rdi = self.rdi;
        r.rbp = self.rbp;
        r.rsp = self.rsp;
        r.r8 = self.r8;
        r.r9 = self.r9;
        r.r10 = self.r10;
        r.r11 = self.r11;
        r.r12 = self.r12;
        r.r13 = self.r13;
        r.r14 = self.r14;
        r.r15 = self.r15;
        r.rip = self.rip;
        r.rflags = self.rflags;
    }

    /// Stores into `r` only what [`TrapFrame::enter_handler`] replaces
    /// (`rip`, `rsp`, `rdi`, `rsi`, `rflags`) and what `syscall` itself
    /// overwrote (`rcx`, `r11`): a foreign system call's record, whose
    /// other registers the handler's entry stores from the registers
    /// themselves (`oxok_abi::upcall::FOREIGN_SYSCALL`).
    #[inline(always)]
    pub fn store_entry_regs(&self, r: &mut oxok_abi::Regs) {
        r.rcx = self.rcx;
        r.rsi = self.rsi;
        r.rdi = self.rdi;
        r.rsp = self.rsp;
        r.r11 = self.r11;
        r.rip = self.rip;
        r.rflags = self.rflags;
    }

    /// A user frame holding `r`, sanitised; `None` if `rip` or `rsp` is not
    /// a canonical lower-half address.
    pub fn from_regs(r: &oxok_abi::Regs) -> Option<TrapFrame> {
        let mut f = TrapFrame {
            rax: r.rax,
            rbx: r.rbx,
            rcx: r.rcx,
            rdx: r.rdx,
            rsi: r.rsi,
            rdi: r.rdi,
            rbp: r.rbp,
            rsp: r.rsp,
            r8: r.r8,
            r9: r.r9,
            r10: r.r10,
            r11: r.r11,
            r12: r.r12,
            r13: r.r13,
            r14: r.r14,
            r15: r.r15,
            rip: r.rip,
            rflags: r.rflags,
            ..TrapFrame::default()
        };
        f.sanitize().then_some(f)
    }
}
