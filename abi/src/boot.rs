//! Boot-time conventions shared by the kernel and the host tool (`xtask`).
//!
//! ## Kernel command line
//!
//! Space-separated words, each `key` or `key=value`:
//!
//! | word | meaning |
//! | --- | --- |
//! | `run=a,b&c` | boot programs (default `init`): `,` separates steps that run one after another (a step starts when every environment has ended), `&` programs started together; `prog+arg+arg` passes arguments |
//! | `tick_hz=N` | timer interrupts per second, 10..=10000 (default 250, as Debian's Linux kernels) |
//! | `slot_ticks=T` | ticks per CPU time slot, 1..=1000 (default 4 ms of ticks: 1 at 250 Hz, 4 at 1000 Hz; 32 slots make a 128 ms round) |
//! | `slot_grace=G` | ticks a slot-end handler has to yield before it is preempted and charged, 1..=1000 (default 1) |
//! | `critical_grace=C` | most ticks the critical-section flag defers a slot end, 0..=1000 (default 2 ms of ticks, rounded up: 1 at 250 Hz, 2 at 1000 Hz; 0 ignores the flag) |
//! | `strikes=S` | consecutive overruns that destroy an environment, 1..=1000 (default 3) |
//! | `slots=N` | slots per CPU, 1..=32 (`layout::SLOT_VECTOR_SLOTS`, the default); the exposed vector's header says how many are in use |
//! | `restart_records=N` | restart granularity: records `page_batch` applies between restart points, 1..=4096 (default 64, `BATCH_STEP`; `page_protect_range` changes 8·N pages); published as `SysInfo::restart_records` |
//! | `ktest` | run the kernel's built-in self tests before starting programs |
//! | `crash` | panic on purpose once boot is done (shows the panic report; `cargo xtask` symbolises its backtrace) |
//! | `crash=stack` | recurse in the kernel once boot is done until the kernel stack's guard page stops it (the double fault's report says `kernel stack overflow`) |
//! | `halt_status` | an orderly halt passes the exit status of the last boot program to end to the host ([`EXIT_STATUS_BASE`]) |
//! | `gen_limit=N` | test aid: an environment-table row is retired for good once its generation reaches N (default and most 2²²−1), so the retirement that keeps stale environment capabilities from ever matching can be seen in seconds |
//! | `frame_gen_limit=N` | test aid: a frame is retired for good (owner `OWNER_RETIRED`) when freeing it would take its generation to N (default 2³²−1), so stale frame capabilities never match a new owner |
//! | `log=error\|warn\|info\|debug\|trace[,subsystem=level...]` | kernel log level (default `warn`), optionally per kernel module (`log=warn,sched=debug`) |
//!
//! ## Leaving QEMU
//!
//! The kernel ends a QEMU run by writing to the `isa-debug-exit` device at
//! [`DEBUG_EXIT_PORT`]; QEMU then exits with status `(value << 1) | 1`.

/// I/O port of QEMU's `isa-debug-exit` device (`iobase=0xf4,iosize=0x04`).
pub const DEBUG_EXIT_PORT: u16 = 0xf4;

/// Written when no environment is left to run: an orderly halt.
pub const EXIT_HALT: u32 = 0x10;
/// Written by the kernel's panic handler.
pub const EXIT_PANIC: u32 = 0x11;

/// With the command-line word `halt_status`, an orderly halt after the last
/// boot program ended with status `n` (1..) writes `EXIT_STATUS_BASE + n`
/// (`n` above [`EXIT_STATUS_MAX`] is written as that maximum), so the host
/// sees the guest's exit status; see [`guest_status`].
pub const EXIT_STATUS_BASE: u32 = 0x40;
/// The largest exit status a halt passes exactly.
pub const EXIT_STATUS_MAX: u32 = 0x3f;

/// The guest exit status a QEMU process status stands for: 0 for an
/// ordinary halt, `n` for a halt with status `n`, `None` otherwise.
pub const fn guest_status(qemu: i32) -> Option<i32> {
    if qemu == qemu_status(EXIT_HALT) {
        return Some(0);
    }
    let base = qemu_status(EXIT_STATUS_BASE);
    let top = qemu_status(EXIT_STATUS_BASE + EXIT_STATUS_MAX);
    if qemu > base && qemu <= top && (qemu - base) % 2 == 0 { Some((qemu - base) / 2) } else { None }
}

/// The QEMU process status that corresponds to a debug-exit value.
pub const fn qemu_status(value: u32) -> i32 {
    ((value << 1) | 1) as i32
}
