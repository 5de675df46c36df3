//! Waiting on several sockets at once, and letting the stack run on its
//! own: [`poll`], [`pump`], [`drain`].

use super::{Ready, Socket, host};
use crate::fd::IoError;
use alloc::vec::Vec;

/// Waits until one of `socks` is ready for what its entry asks (`Ready`'s
/// `read`/`write`; hangups are always reported), or `timeout_ms` passes
/// (`Some(0)`: just look; `None`: no limit). Returns each socket's
/// readiness, masked to what was asked plus hangup.
pub fn poll(socks: &[(&Socket, Ready)], timeout_ms: Option<u64>) -> Result<Vec<Ready>, IoError> {
    let until = timeout_ms.map(|ms| if ms == 0 { 0 } else { host::now_tick() + crate::net::stack::ms_to_ticks(ms) });
    loop {
        let mut out = Vec::with_capacity(socks.len());
        let (ring, seen, wake) = host::with(|net| {
            let seen = net.seen();
            net.poll();
            for (s, want) in socks {
                let r = s.ready_in(net);
                out.push(Ready { read: r.read && want.read, write: r.write && want.write, hangup: r.hangup });
            }
            Ok((net.ring_id(), seen, net.wake_tick()))
        })?;
        if out.iter().any(|r| r.read || r.write || r.hangup) {
            return Ok(out);
        }
        let wake = match until {
            Some(0) => return Ok(out),
            Some(t) if host::now_tick() >= t => return Ok(out),
            Some(t) => wake.min(t),
            None => wake,
        };
        host::sleep(ring, seen, wake)?;
    }
}

/// Polls the stack once without waiting (lets timers and queued data
/// progress; a program that computes for long may call it).
pub fn pump() {
    host::with_existing(|net| net.poll());
}

/// Waits up to `ms` milliseconds for closed connections to deliver their
/// last data and FIN (before a program exits); returns how many are left.
pub fn drain(ms: u64) -> usize {
    let until = host::now_tick() + crate::net::stack::ms_to_ticks(ms);
    loop {
        let mut left = 0;
        let mut wait = None;
        host::with_existing(|net| {
            let seen = net.seen();
            net.poll();
            left = net.orphans();
            wait = Some((net.ring_id(), seen, net.wake_tick()));
        });
        let Some((ring, seen, wake)) = wait else { return 0 };
        if left == 0 || host::now_tick() >= until {
            return left;
        }
        if host::sleep(ring, seen, wake.min(until)).is_err() {
            return left;
        }
    }
}
