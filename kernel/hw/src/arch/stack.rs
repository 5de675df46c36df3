//! The kernel's stacks. One kernel stack per CPU (the interrupt model): every
//! entry from user mode starts at its top, and nothing lives on it between
//! entries.

/// Size of the per-CPU kernel stack.
pub const KERNEL_STACK_SIZE: usize = 64 * 1024;
/// Size of each interrupt-stack-table stack (#DF, NMI, #MC).
pub const IST_STACK_SIZE: usize = 16 * 1024;

/// Bytes of the guard page below each stack.
pub const GUARD_SIZE: usize = 4096;

/// A stack with a page below it that the kernel's tables leave unmapped
/// (`paging::init`): a stack that overflows faults on the guard — a double
/// fault, taken on its own stack — instead of writing over what lies below.
#[repr(C, align(4096))]
pub struct GuardedStack<const N: usize> {
    guard: [u8; GUARD_SIZE],
    stack: [u8; N],
}

/// The boot CPU's kernel stack, above its guard page (entry code names it
/// by symbol and starts at `KERNEL_STACK + GUARD_SIZE + KERNEL_STACK_SIZE`).
#[unsafe(no_mangle)]
pub static mut KERNEL_STACK: GuardedStack<KERNEL_STACK_SIZE> =
    GuardedStack { guard: [0; GUARD_SIZE], stack: [0; KERNEL_STACK_SIZE] };
/// Stack for double faults, above its guard page.
pub static mut DOUBLE_FAULT_STACK: GuardedStack<IST_STACK_SIZE> =
    GuardedStack { guard: [0; GUARD_SIZE], stack: [0; IST_STACK_SIZE] };
/// Stack for NMIs, above its guard page.
pub static mut NMI_STACK: GuardedStack<IST_STACK_SIZE> =
    GuardedStack { guard: [0; GUARD_SIZE], stack: [0; IST_STACK_SIZE] };
/// Stack for machine checks, above its guard page.
pub static mut MACHINE_CHECK_STACK: GuardedStack<IST_STACK_SIZE> =
    GuardedStack { guard: [0; GUARD_SIZE], stack: [0; IST_STACK_SIZE] };

/// Top (highest address, exclusive) of the kernel stack.
pub fn kernel_stack_top() -> u64 {
    kernel_stack_guard() + (GUARD_SIZE + KERNEL_STACK_SIZE) as u64
}

/// Address of the guard page below the kernel stack (page-aligned).
fn kernel_stack_guard() -> u64 {
    (&raw const KERNEL_STACK) as u64
}

/// The guard pages (page-aligned addresses) below every kernel stack, with
/// the stack's name: the kernel stack, then the IST stacks in IST order.
pub fn guards() -> [(u64, &'static str); 4] {
    [
        (kernel_stack_guard(), "kernel stack"),
        ((&raw const DOUBLE_FAULT_STACK) as u64, "double-fault stack"),
        ((&raw const NMI_STACK) as u64, "NMI stack"),
        ((&raw const MACHINE_CHECK_STACK) as u64, "machine-check stack"),
    ]
}

/// The stack whose guard page holds `addr`, if any: a fault there is that
/// stack overflowing.
pub fn guard_of(addr: u64) -> Option<&'static str> {
    guards().into_iter().find(|&(guard, _)| (guard..guard + GUARD_SIZE as u64).contains(&addr)).map(|(_, name)| name)
}

/// Tops of the three IST stacks, in IST order 1..=3.
pub fn ist_tops() -> [u64; 3] {
    let [_, df, nmi, mc] = guards().map(|(guard, _)| guard + (GUARD_SIZE + IST_STACK_SIZE) as u64);
    [df, nmi, mc]
}
