//! The IDT, the exception entry stubs, and the one exit path back to user
//! mode (`exit_to_user`, shared with `syscall`).

use super::gdt::{IST_DOUBLE_FAULT, IST_MACHINE_CHECK, IST_NMI, KERNEL_CS};
use super::trapframe::TrapFrame;
use core::arch::{asm, global_asm};
use core::mem::size_of;

/// Names of the 32 architectural exception vectors.
pub const EXCEPTION_NAMES: [&str; 32] = [
    "divide error",
    "debug",
    "non-maskable interrupt",
    "breakpoint",
    "overflow",
    "bound range exceeded",
    "invalid opcode",
    "device not available",
    "double fault",
    "coprocessor segment overrun",
    "invalid TSS",
    "segment not present",
    "stack-segment fault",
    "general protection fault",
    "page fault",
    "reserved",
    "x87 floating-point error",
    "alignment check",
    "machine check",
    "SIMD floating-point error",
    "virtualization exception",
    "control protection",
    "reserved",
    "reserved",
    "reserved",
    "reserved",
    "reserved",
    "reserved",
    "hypervisor injection",
    "VMM communication",
    "security exception",
    "reserved",
];

/// Vectors with entry stubs: all of them (exceptions 0–31, interrupts above).
pub const STUBS: usize = 256;

// Each stub is 16 bytes apart: stub `v` lives at `trap_stubs + 16 * v`.
// Vectors with a CPU error code (8, 10–14, 17, 21, 29, 30) don't push a zero.
global_asm!(
    r#"
    .macro TRAP_STUB vec, has_error
    .balign 16
    .if \has_error == 0
    push $0
    .endif
    push $\vec
    jmp trap_common
    .endm

    .section .text.trap, "ax"
    .balign 16
    .global trap_stubs
trap_stubs:
    TRAP_STUB 0, 0
    TRAP_STUB 1, 0
    TRAP_STUB 2, 0
    TRAP_STUB 3, 0
    TRAP_STUB 4, 0
    TRAP_STUB 5, 0
    TRAP_STUB 6, 0
    TRAP_STUB 7, 0
    TRAP_STUB 8, 1
    TRAP_STUB 9, 0
    TRAP_STUB 10, 1
    TRAP_STUB 11, 1
    TRAP_STUB 12, 1
    TRAP_STUB 13, 1
    TRAP_STUB 14, 1
    TRAP_STUB 15, 0
    TRAP_STUB 16, 0
    TRAP_STUB 17, 1
    TRAP_STUB 18, 0
    TRAP_STUB 19, 0
    TRAP_STUB 20, 0
    TRAP_STUB 21, 1
    TRAP_STUB 22, 0
    TRAP_STUB 23, 0
    TRAP_STUB 24, 0
    TRAP_STUB 25, 0
    TRAP_STUB 26, 0
    TRAP_STUB 27, 0
    TRAP_STUB 28, 0
    TRAP_STUB 29, 1
    TRAP_STUB 30, 1
    TRAP_STUB 31, 0

    /* Vectors 32-255: interrupts, no error code. push imm32 keeps vectors
       above 127 positive. */
    vector = 32
    .rept 224
    .balign 16
    push $0
    .byte 0x68
    .long vector
    jmp trap_common
    vector = vector + 1
    .endr

trap_common:
    push %rax
    push %rbx
    push %rcx
    push %rdx
    push %rsi
    push %rdi
    push %rbp
    push %r8
    push %r9
    push %r10
    push %r11
    push %r12
    push %r13
    push %r14
    push %r15
    cld
    mov %rsp, %rdi
    call {trap_entry}
    /* fall through: return to whatever frame is at %rsp */

    .global exit_to_user
exit_to_user:
    /* sysret is equivalent to iret when rcx == rip, r11 == rflags,
       rip is canonical and the frame is a user one: take it then. */
    mov 136(%rsp), %rax
    cmp 96(%rsp), %rax
    jne 1f
    shr $47, %rax
    jnz 1f
    mov 152(%rsp), %rax
    cmp 32(%rsp), %rax
    jne 1f
    cmpq ${user_cs}, 144(%rsp)
    jne 1f
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %r11
    pop %r10
    pop %r9
    pop %r8
    pop %rbp
    pop %rdi
    pop %rsi
    pop %rdx
    pop %rcx
    pop %rbx
    pop %rax
    mov 40(%rsp), %rsp
    sysretq
1:
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %r11
    pop %r10
    pop %r9
    pop %r8
    pop %rbp
    pop %rdi
    pop %rsi
    pop %rdx
    pop %rcx
    pop %rbx
    pop %rax
    add $16, %rsp
    iretq
    .purgem TRAP_STUB
    "#,
    trap_entry = sym trap_entry,
    user_cs = const super::gdt::USER_CS as u64,
    options(att_syntax)
);

unsafe extern "C" {
    static trap_stubs: [u8; STUBS * 16];
    fn exit_to_user() -> !;
}

const _: () = assert!(size_of::<TrapFrame>() == 176, "entry stubs assume this layout");

extern "C" fn trap_entry(frame: *mut TrapFrame) {
    // SAFETY: the stub passes a pointer to the frame it just built on the
    // kernel stack; it is valid, aligned and exclusively ours until we return.
    let frame = unsafe { &mut *frame };
    super::handlers::trap(frame);
}

/// Returns to user mode with the registers in `frame`, which must already be
/// sanitised (user selectors, canonical lower-half `rip`).
pub fn enter_user(frame: &TrapFrame) -> ! {
    // SAFETY: `exit_to_user` pops a TrapFrame from %rsp and returns to ring 3;
    // the frame is a complete, sanitised user frame. Nothing on the current
    // kernel stack is needed afterwards (the next entry starts at its top).
    unsafe {
        asm!("mov rsp, {f}", "jmp {exit}", f = in(reg) frame as *const TrapFrame, exit = sym exit_to_user, options(noreturn))
    }
}

#[derive(Clone, Copy)]
#[repr(C)]
struct Gate {
    offset_low: u16,
    selector: u16,
    ist: u8,
    attr: u8,
    offset_mid: u16,
    offset_high: u32,
    _reserved: u32,
}

const MISSING: Gate = Gate { offset_low: 0, selector: 0, ist: 0, attr: 0, offset_mid: 0, offset_high: 0, _reserved: 0 };

static mut IDT: [Gate; 256] = [MISSING; 256];

fn gate(handler: u64, ist: u8, user_callable: bool) -> Gate {
    Gate {
        offset_low: handler as u16,
        selector: KERNEL_CS,
        ist,
        // present, interrupt gate (IF cleared on entry), DPL 0 or 3
        attr: if user_callable { 0xee } else { 0x8e },
        offset_mid: (handler >> 16) as u16,
        offset_high: (handler >> 32) as u32,
        _reserved: 0,
    }
}

#[repr(C, packed)]
struct Pointer {
    limit: u16,
    base: u64,
}

/// Fills every gate and loads the IDT.
pub fn init() {
    let base = (&raw const trap_stubs) as u64;
    for v in 0..=255u8 {
        let ist = match v {
            2 => IST_NMI,
            8 => IST_DOUBLE_FAULT,
            18 => IST_MACHINE_CHECK,
            _ => 0,
        };
        // `int3` from user mode is a breakpoint, not a #GP.
        let user = v == 3;
        // SAFETY: boot is single-threaded and no IDT is loaded yet that
        // could observe a half-written gate.
        unsafe { IDT[usize::from(v)] = gate(base + 16 * u64::from(v), ist, user) };
    }
    let ptr = Pointer { limit: (size_of::<[Gate; 256]>() - 1) as u16, base: (&raw const IDT) as u64 };
    // SAFETY: the IDT is 'static and every present gate points at a stub.
    unsafe { asm!("lidt [{}]", in(reg) &ptr, options(readonly, nostack, preserves_flags)) }
}
