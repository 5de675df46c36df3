//! # oxok-rt — the libOS runtime
//!
//! Every `unsafe` the library operating system needs, behind a small safe
//! API (the pattern of Asterinas's OSTD, as `oxok-hw` is for the kernel):
//! `oxok-libos` above it is `#![forbid(unsafe_code)]`.
//!
//! * [`entry`](program_main!): `_start`, the initial stack's [`Args`];
//! * [`sys`]: the system-call stubs, generated from the call table,
//!   the message calls (`pct_call`, `pct_send`, `pct_reply`) included;
//! * [`pct`] and [`upcall`]: the PCT and upcall entries with their stacks,
//!   calling the dispatch the libOS sets; [`fork`]: fork's switch and the
//!   fork-private section ([`fork_private!`]) — naked code composed of the
//!   table's fragments (`oxok_abi::syscall_asm!`), so no call is
//!   hand-written outside the generated stubs;
//! * [`heap`]: the global allocator's backing;
//! * [`exposed`]: reading the kernel's exposed read-only tables and writing
//!   the application area;
//! * [`page`]: typed access to pages the program mapped (`SharedPage`,
//!   `SharedRegion`, `PageRef`), made only for checked mappings;
//! * [`guest`]: a foreign program's memory, entering and resuming it, the
//!   x87/SSE state (`fxsave`/`fxrstor`), `rdrand`;
//! * [`fncell`]: atomic handler cells.
//!
//! Each `unsafe` block has a `// SAFETY:` comment, each `unsafe fn` a
//! `# Safety` section; a safe function hands out no memory it cannot
//! vouch for.
#![no_std]

extern crate alloc;

mod args;
mod entry;
pub mod exposed;
pub mod fncell;
pub mod fork;
pub mod guest;
pub mod heap;
pub mod page;
pub mod pct;
pub mod sys;
pub mod upcall;

pub use args::Args;
