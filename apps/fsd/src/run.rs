//! The server loop both file servers share: the state behind a lock only
//! the PCT handler takes once calls are accepted, and a main thread that
//! sleeps on its stop word.

use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::pct::{self, Msg};
use oxok_libos::{exposed, println, sys};
use oxok_pred::Builder;
use spin::Mutex;

use crate::files::Backend;
use crate::server::Server;

/// The state; locked only by the handler once calls are accepted.
static STATE: Mutex<Option<Server>> = Mutex::new(None);
/// Non-zero once the creator asked the server to stop: the predicate the
/// main thread sleeps on.
static STOP: AtomicU64 = AtomicU64::new(0);
/// Requests served.
static CALLS: AtomicU64 = AtomicU64::new(0);
/// The wakeup-predicate index the main thread sleeps on.
const STOP_SLOT: u64 = 0;

fn handle(caller: u64, _sync: bool, msg: &mut Msg) {
    CALLS.fetch_add(1, Ordering::Relaxed);
    if let Some(server) = STATE.lock().as_mut() {
        server.serve(caller, msg);
        if server.stopping {
            STOP.store(1, Ordering::Release);
        }
    }
}

/// Serves `fs` until the creator stops the server; `name` prefixes the
/// lines it prints, `what` says what it serves.
pub fn run(name: &str, what: &str, fs: Backend) -> i32 {
    let me = exposed::self_id();
    let creator = exposed::env_entry(me).map_or(0, |r| u64::from(r.parent));
    *STATE.lock() = Some(Server::new(fs, creator));
    let code = match Builder::new().load_u64(STOP.as_ptr() as u64).ne_imm(0).build() {
        Ok(code) => code,
        Err(_) => {
            println!("{name}: cannot build the stop predicate");
            return 1;
        }
    };
    let bytes = code.as_bytes();
    if let Err(e) = sys::pred_install(0, STOP_SLOT, bytes.as_ptr() as u64, bytes.len() as u64) {
        println!("{name}: cannot install the stop predicate: {e}");
        return 1;
    }
    println!("{name}: serving files (environment {me}, {what})");
    // From here on the main thread neither allocates nor locks anything.
    if let Err(e) = pct::serve(handle) {
        println!("{name}: cannot accept calls: {e}");
        return 1;
    }
    while STOP.load(Ordering::Acquire) == 0 {
        if sys::env_sleep(1 << STOP_SLOT).is_err() {
            let _ = sys::yield_cpu(0);
        }
    }
    // Whatever the file system still holds goes out before the end.
    if let Some(server) = STATE.lock().as_mut() {
        server.fs.finish();
    }
    println!("{name}: stopped after {} requests", CALLS.load(Ordering::Relaxed));
    0
}
