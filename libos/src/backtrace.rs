//! The backtrace a program prints when it ends for an event nobody handled:
//! the faulting `rip`, then the return addresses found by following the
//! frame-pointer chain (every Oxok program is built with frame pointers).
//! Each step reads only pages the exposed page tables show readable, only
//! upward (a chain that loops or goes down stops), at most [`MAX_FRAMES`]
//! frames — a smashed stack gives a short backtrace, never a second fault.
//!
//! The addresses are printed raw, under a line naming the program;
//! `cargo xtask` (scenario logs, `run`, `symbolize`) adds each one's
//! function and offset from the program's ELF symbol table.

use crate::{exposed, println};

/// How many frames are followed at most.
pub const MAX_FRAMES: usize = 32;

/// The return addresses above the frame whose saved frame pointer is
/// `rbp`, innermost first, at most [`MAX_FRAMES`]; `f` gets each one.
pub fn walk(mut rbp: u64, mut f: impl FnMut(u64)) {
    for _ in 0..MAX_FRAMES {
        if rbp == 0 || !rbp.is_multiple_of(8) {
            return;
        }
        let (Some(next), Some(ret)) = (exposed::read_word(rbp), rbp.checked_add(8).and_then(exposed::read_word)) else {
            return;
        };
        if ret == 0 {
            return;
        }
        f(ret);
        if next <= rbp {
            return;
        }
        rbp = next;
    }
}

/// Prints `backtrace (program NAME):`, then `  #0: rip` and each return
/// address from the frame chain at `rbp`, one per line.
pub fn print(rip: u64, rbp: u64) {
    let me = exposed::env_entry(exposed::self_id());
    let name = me.as_ref().map_or("?", |r| {
        let n = r.name.iter().position(|&b| b == 0).unwrap_or(r.name.len());
        core::str::from_utf8(&r.name[..n]).unwrap_or("?")
    });
    println!("backtrace (program {name}):");
    println!("  #0: {rip:#018x}");
    let mut i = 1;
    walk(rbp, |ret| {
        println!("  #{i}: {ret:#018x}");
        i += 1;
    });
}
