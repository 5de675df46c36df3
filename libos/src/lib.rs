//! # oxok-libos — ExOS in Rust
//!
//! The library operating system every Oxok program links. It owns every
//! policy the kernel leaves to applications. This first layer is the
//! runtime: program entry ([`main!`]), arguments, the console, exit, panics,
//! and the system-call stubs generated from the call table in `oxok_abi`.
//!
//! `unsafe` lives only in the runtime modules (`rt`, `sys`, `args`, `upcall`,
//! `exposed`, `heap`, `time`, `pct`, `shm`, `vm`, `exec::scratch`, `fd::pipe::frame`, `fs::buffer`, `fs::ftable`, `guest` and `xn::page`), each block with a `// SAFETY:` comment.
#![no_std]
#![deny(unsafe_code)]

extern crate alloc;

#[allow(unsafe_code)]
mod args;
pub mod backtrace;
pub mod callcap;
pub mod console;
pub mod environ;
pub mod exec;
#[allow(unsafe_code)]
pub mod exposed;
pub mod fd;
pub mod fs;
#[allow(unsafe_code)]
pub mod guest;
#[allow(unsafe_code)]
pub mod heap;
pub mod lrpc;
pub mod net;
#[allow(unsafe_code)]
pub mod pct;
pub mod proc;
pub mod process;
pub mod restore;
#[allow(unsafe_code)]
mod rt;
#[allow(unsafe_code)]
pub mod shm;
pub mod signal;
#[allow(unsafe_code)]
pub mod sys;
#[allow(unsafe_code)]
pub mod time;
pub mod tty;
#[allow(unsafe_code)]
pub mod upcall;
#[allow(unsafe_code)]
pub mod vm;
pub mod xn;

pub use args::Args;
pub use oxok_abi as abi;
pub use oxok_abi::Error;

/// Declares the program's entry function: `fn main(args: Args) -> i32`.
/// The return value is the exit status.
#[macro_export]
macro_rules! main {
    ($f:path) => {
        #[unsafe(no_mangle)]
        #[allow(unsafe_code)]
        fn oxok_main(args: $crate::Args) -> i32 {
            $f(args)
        }
    };
}
