//! fsd: the file server. The RAM file system (`crates/ramfs`) lives in this
//! environment's heap and nowhere else; clients reach it only by protected
//! control transfer (Aegis §5.1), each request carrying the kernel-supplied
//! caller id — unlike ExOS's file tables in memory every process could
//! write (Xok §5.2), no client can touch another's open files.
//!
//! The server runs on its callers' time: its main thread only sleeps on a
//! wakeup predicate over its own stop word (so it asks for no CPU while
//! idle), and each transfer runs the handler on the PCT stack and replies.
//! The handler allocates (paths, directories, file pages); that is safe
//! because the main thread does all its own allocation before it starts
//! accepting calls and never touches the heap or the state afterwards, so
//! no lock the handler needs can be held by the code it interrupted.
//!
//! Started by init (clients find it in the exposed environment table as the
//! `fsd` an ancestor started: `oxok_libos::fs::locate`) or by a test
//! program (`oxok_libos::fs::spawn_server`); only its creator can stop it
//! (`STOP`), after which it exits 0. Dead clients' handles are released by
//! a sweep over the exposed environment table every few requests.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

mod ahead;
mod behind;
mod buffers;
mod files;
mod generation;
mod io;
mod run;
mod server;
mod table;

use alloc::boxed::Box;
use alloc::format;
use oxok_libos::{Args, sys};
use oxok_ramfs::{Fs, Limits};

oxok_libos::main!(main);

/// Inodes the file system may hold.
const MAX_INODES: usize = 4096;
/// File data is held to at most this, or a quarter of the free memory at
/// start if that is less.
const MAX_DATA: u64 = 64 << 20;

fn main(_args: Args) -> i32 {
    let data = match sys::mem_info() {
        Ok([_, free, size]) => (free.saturating_mul(size) / 4).min(MAX_DATA),
        Err(_) => MAX_DATA / 16,
    };
    let fs = Fs::with_limits(Limits { max_file_size: data, max_bytes: data, max_inodes: MAX_INODES });
    run::run("fsd", &format!("{} KiB for data", data >> 10), Box::new(fs))
}
