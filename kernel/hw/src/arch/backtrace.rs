//! Frame-pointer backtraces for panics. The walk only follows frame
//! pointers that lie inside one of the kernel's own stacks, so a corrupted
//! chain ends the walk instead of faulting.

use super::stack::{IST_STACK_SIZE, KERNEL_STACK_SIZE, ist_tops, kernel_stack_top};

const MAX_FRAMES: usize = 24;

fn on_a_kernel_stack(addr: u64) -> bool {
    let k = kernel_stack_top();
    if addr >= k - KERNEL_STACK_SIZE as u64 && addr + 16 <= k {
        return true;
    }
    ist_tops().iter().any(|&t| addr >= t - IST_STACK_SIZE as u64 && addr + 16 <= t)
}

/// Return addresses up the chain starting at frame pointer `rbp`.
pub fn frames(mut rbp: u64) -> impl Iterator<Item = u64> {
    let mut n = 0;
    core::iter::from_fn(move || {
        if n >= MAX_FRAMES || !rbp.is_multiple_of(8) || !on_a_kernel_stack(rbp) {
            return None;
        }
        // SAFETY: [rbp, rbp+16) lies within a kernel stack (checked above),
        // which is mapped, aligned memory; we only read two words of it.
        let (next, ret) = unsafe { (*(rbp as *const u64), *((rbp + 8) as *const u64)) };
        n += 1;
        rbp = next;
        (ret != 0).then_some(ret)
    })
}
