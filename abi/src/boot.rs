//! Boot-time conventions shared by the kernel and the host tool (`xtask`).
//!
//! ## Kernel command line
//!
//! Space-separated words, each `key` or `key=value`:
//!
//! | word | meaning |
//! | --- | --- |
//! | `run=a,b&c` | boot programs (default `init`): `,` separates steps that run one after another (a step starts when every environment has ended), `&` programs started together; `prog+arg+arg` passes arguments |
//! | `tick_hz=N` | timer interrupts per second (default 1000) |
//! | `slot_ticks=T` | ticks per CPU time slot, 1..=1000 (default 4: 4 ms at 1000 Hz; 32 slots make a 128 ms round) |
//! | `slot_grace=G` | ticks a slot-end handler has to yield before it is preempted and charged, 1..=1000 (default 1) |
//! | `critical_grace=C` | most ticks the critical-section flag defers a slot end, 0..=1000 (default 2; 0 ignores the flag) |
//! | `strikes=S` | consecutive overruns that destroy an environment, 1..=1000 (default 3) |
//! | `slots=N` | slots per CPU, 1..=32 (`layout::SLOT_VECTOR_SLOTS`, the default); the exposed vector's header says how many are in use |
//! | `ktest` | run the kernel's built-in self tests before starting programs |
//! | `gen_limit=N` | test aid: an environment-table row is retired for good once its generation reaches N (default and most 2²²−1), so the retirement that keeps stale environment capabilities from ever matching can be seen in seconds |
//! | `frame_gen_limit=N` | test aid: a frame is retired for good (owner `OWNER_RETIRED`) when freeing it would take its generation to N (default 2³²−1), so stale frame capabilities never match a new owner |
//! | `log=error\|warn\|info\|debug\|trace` | kernel log level (default `info`) |
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

/// The QEMU process status that corresponds to a debug-exit value.
pub const fn qemu_status(value: u32) -> i32 {
    ((value << 1) | 1) as i32
}
