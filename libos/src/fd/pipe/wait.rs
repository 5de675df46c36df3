//! How an end waits for its partner: a reader on an empty pipe, a writer
//! on a full one, a writer on the copy lock (Aegis §5.1: directed yield).
//!
//! 1. If a live partner is known, the rest of the time slice goes to it
//!    (`yield_cpu(partner)`): it runs at once, on our time, and can fill or
//!    drain the pipe — one producer/consumer hand-off per yield, without
//!    the scheduler in between.
//! 2. If the partner cannot run now (`Busy`: it sleeps, say on the
//!    keyboard) or none is known, a few plain yields.
//! 3. Then a short sleep on a wakeup predicate (Xok §5.1): until the
//!    watched header word moves past the value seen, the partner closes
//!    its end or ends ([`Watch::wake_on_gone`]), or a few timer ticks pass
//!    (for a partner that was not the one watched).
//!    The predicate uses predicate index [`WAIT_PRED`](crate::exec::WAIT_PRED), which
//!    `exec::wait` also installs before each sleep; neither is reentrant.

use super::Watch;
use crate::{exposed, sys};
use oxok_abi::layout::{CLOCK, Clock};

/// Plain yields before a sleep.
const PLAIN_YIELDS: u32 = 8;
/// Milliseconds a sleep lasts at most.
const SLEEP_MS: u64 = 10;

/// The waiting state of one read or write call.
#[derive(Default)]
pub struct Waiter {
    plain: u32,
}

impl Waiter {
    /// Waits once (see the module documentation): gives the CPU to
    /// `partner`, or to anyone, or sleeps until the word at `word` differs
    /// from `seen` or the other side's process `gone` goes. Returns when
    /// the caller should look again.
    pub fn wait(&mut self, partner: Option<u64>, gone: Option<Watch>, word: u64, seen: u64) {
        if let Some(p) = partner
            && crate::callcap::yield_to(p).is_ok()
        {
            return;
        }
        self.plain += 1;
        if self.plain <= PLAIN_YIELDS {
            let _ = sys::yield_cpu(0);
            return;
        }
        self.plain = 0;
        if sleep(word, seen, gone).is_err() {
            let _ = sys::yield_cpu(0);
        }
    }
}

/// Sleeps until the u64 at `word` is not `seen`, `gone` goes, or
/// [`SLEEP_MS`] pass.
fn sleep(word: u64, seen: u64, gone: Option<Watch>) -> Result<(), oxok_abi::Error> {
    let clock = exposed::clock().ok_or(oxok_abi::Error::Invalid)?;
    if clock.tick_hz == 0 {
        return Err(oxok_abi::Error::Invalid); // no timer: the sleep could last forever
    }
    let ticks = CLOCK + core::mem::offset_of!(Clock, ticks) as u64;
    let mut b = oxok_pred::Builder::new();
    b.load_u64(word).ne_imm(seen);
    if let Some(watch) = gone {
        watch.wake_on_gone(&mut b);
    }
    let code = b
        .or()
        .load_u64(ticks)
        .ge_imm(clock.ticks + crate::time::ms_to_ticks(SLEEP_MS))
        .build()
        .map_err(|_| oxok_abi::Error::Invalid)?;
    let bytes = code.as_bytes();
    let pred = crate::exec::WAIT_PRED;
    crate::pred::install(pred, bytes)?;
    sys::env_sleep(1 << pred)?;
    Ok(())
}
