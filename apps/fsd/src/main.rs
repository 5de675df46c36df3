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

mod buffers;
mod io;
mod server;
mod table;

use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::pct::{self, Msg};
use oxok_libos::{Args, exposed, println, sys};
use oxok_pred::Builder;
use oxok_ramfs::{Fs, Limits};
use server::Server;
use spin::Mutex;

oxok_libos::main!(main);

/// The state; locked only by the handler once calls are accepted.
static STATE: Mutex<Option<Server>> = Mutex::new(None);
/// Non-zero once the creator asked the server to stop: the predicate the
/// main thread sleeps on.
static STOP: AtomicU64 = AtomicU64::new(0);
/// Requests served.
static CALLS: AtomicU64 = AtomicU64::new(0);
/// The wakeup-predicate slot the main thread sleeps on.
const STOP_SLOT: u64 = 0;
/// Inodes the file system may hold.
const MAX_INODES: usize = 4096;
/// File data is held to at most this, or a quarter of the free memory at
/// start if that is less.
const MAX_DATA: u64 = 64 << 20;

fn handle(caller: u64, _sync: bool, msg: &mut Msg) {
    CALLS.fetch_add(1, Ordering::Relaxed);
    if let Some(server) = STATE.lock().as_mut() {
        server.serve(caller, msg);
        if server.stopping {
            STOP.store(1, Ordering::Release);
        }
    }
}

fn main(_args: Args) -> i32 {
    let me = exposed::self_id();
    let creator = exposed::env_entry(me).map_or(0, |r| u64::from(r.parent));
    let data = match sys::mem_info() {
        Ok([_, free, size]) => (free.saturating_mul(size) / 4).min(MAX_DATA),
        Err(_) => MAX_DATA / 16,
    };
    let fs = Fs::with_limits(Limits { max_file_size: data, max_bytes: data, max_inodes: MAX_INODES });
    *STATE.lock() = Some(Server::new(fs, creator));
    let code = match Builder::new().load_u64(STOP.as_ptr() as u64).ne_imm(0).build() {
        Ok(code) => code,
        Err(_) => {
            println!("fsd: cannot build the stop predicate");
            return 1;
        }
    };
    let bytes = code.as_bytes();
    if let Err(e) = sys::pred_install(0, STOP_SLOT, bytes.as_ptr() as u64, bytes.len() as u64) {
        println!("fsd: cannot install the stop predicate: {e}");
        return 1;
    }
    println!("fsd: serving files (environment {me}, {} KiB for data)", data >> 10);
    // From here on the main thread neither allocates nor locks anything.
    if let Err(e) = pct::serve(handle) {
        println!("fsd: cannot accept calls: {e}");
        return 1;
    }
    while STOP.load(Ordering::Acquire) == 0 {
        if sys::env_sleep(1 << STOP_SLOT).is_err() {
            let _ = sys::yield_cpu(0);
        }
    }
    println!("fsd: stopped after {} requests", CALLS.load(Ordering::Relaxed));
    0
}
