//! # oxok-libos — ExOS in Rust
//!
//! The library operating system every Oxok program links. It owns every
//! policy the kernel leaves to applications: program start-up ([`main!`]),
//! the console, exit, panics, VM, processes, descriptors, files, signals,
//! LRPC; the system-call stubs generated from the call table in `oxok_abi`
//! are the runtime's, re-exported as [`sys`].
//!
//! The crate is `#![forbid(unsafe_code)]`: everything that needs `unsafe`
//! — the entry, the system-call stubs, the PCT and upcall entries, fork's
//! switch, the heap's backing, the exposed tables, pages by address, a
//! guest's memory — is in the runtime crate below it, [`oxok_rt`]
//! (re-exported as [`rt`]), behind a safe API.
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod backtrace;
pub mod callcap;
pub mod console;
pub mod environ;
pub mod exec;
pub mod fd;
pub mod fs;
pub mod lrpc;
pub mod net;
pub mod pct;
pub mod pred;
pub mod principal;
pub mod proc;
pub mod process;
pub mod restore;
pub mod shm;
pub mod signal;
mod start;
pub mod time;
pub mod tty;
pub mod upcall;
pub mod vm;
pub mod xn;

pub use oxok_abi as abi;
pub use oxok_abi::Error;
pub use oxok_rt as rt;
pub use oxok_rt::{Args, exposed, guest, heap, sys};
#[doc(hidden)]
pub use start::start;

/// Declares the program's entry function: `fn main(args: Args) -> i32`.
/// The return value is the exit status.
#[macro_export]
macro_rules! main {
    ($f:path) => {
        $crate::rt::program_main!($crate::start, $f);
    };
}
