//! Waiting for descriptors: `poll` and `ppoll`. The console is the one
//! source whose readiness the personality can see without consuming it:
//! `poll` takes what has arrived into a small buffer of its own (which
//! `read` on the console drains first) and sleeps on a wakeup predicate
//! over the kernel's count of received bytes, or the clock for a timeout.
//! Sockets report their real readiness (the libOS polls its stack), and a
//! `poll` over sockets sleeps on the stack's packet ring (in slices of at
//! most 50 ms when the console is in the set too). Files and the devices
//! are always ready; pipes are reported ready (a read may then block until
//! the writer writes).

use crate::errno::{EINVAL, Res};
use crate::uaccess;
use alloc::vec::Vec;
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::abi::layout::{CLOCK, Clock, SYSINFO, SysInfo};
use oxok_libos::net::socket;
use oxok_libos::{exposed, fd, sys};
use spin::Mutex;

const POLLIN: u16 = 0x001;
const POLLOUT: u16 = 0x004;
const POLLHUP: u16 = 0x010;
const POLLNVAL: u16 = 0x020;
/// The longest sleep on sockets when the console is polled too.
const MIXED_SLICE_MS: u64 = 50;

/// Console bytes taken by `poll` and not yet read.
static PENDING: Mutex<Vec<u8>> = Mutex::new(Vec::new());

/// The wakeup-predicate slot `poll` sleeps on (the libOS keeps 2 for the
/// console and 3 for `wait`; `nanosleep` uses 1).
const POLL_SLOT: u64 = 0;

/// Takes console bytes `poll` buffered, up to `buf.len()`; 0 if none.
pub fn take_pending(buf: &mut [u8]) -> usize {
    let mut p = PENDING.lock();
    let n = p.len().min(buf.len());
    buf[..n].copy_from_slice(&p[..n]);
    p.drain(..n);
    n
}

/// True if console input is waiting. To see it the personality must take
/// it: one byte, kept for the next `read`, so at most that byte is lost if
/// the program ends without reading.
fn console_ready() -> bool {
    let mut p = PENDING.lock();
    if !p.is_empty() {
        return true;
    }
    let mut buf = [0u8; 1];
    match sys::console_read(buf.as_mut_ptr() as u64, buf.len() as u64) {
        Ok([n]) if n > 0 => {
            p.extend_from_slice(&buf[..n as usize]);
            true
        }
        _ => false,
    }
}

/// The events of `fd` that hold now, of those in `want`.
fn revents(fd: i32, want: u16) -> u16 {
    if fd < 0 {
        return 0;
    }
    let Ok(h) = fd::get(fd as usize) else { return POLLNVAL };
    if let Some(s) = h.as_socket() {
        let r = s.ready();
        let mut got = if r.hangup { POLLHUP } else { 0 };
        got |= if r.read { POLLIN } else { 0 } | if r.write { POLLOUT } else { 0 };
        return got & (want | POLLHUP);
    }
    let ready = match h.kind() {
        "console" => POLLOUT | if want & POLLIN != 0 && console_ready() { POLLIN } else { 0 },
        _ => POLLIN | POLLOUT,
    };
    ready & want
}

/// Sleeps until console input arrives after `seen` bytes or the clock
/// reaches `deadline_ticks` (`None`: no timeout).
fn sleep(seen: u64, deadline_ticks: Option<u64>) -> Result<(), i64> {
    let counter = SYSINFO + core::mem::offset_of!(SysInfo, console_in) as u64;
    let ticks = CLOCK + core::mem::offset_of!(Clock, ticks) as u64;
    let mut b = oxok_pred::Builder::new();
    b.load_u64(counter).ne_imm(seen);
    if let Some(t) = deadline_ticks {
        b.or().load_u64(ticks).ge_imm(t);
    }
    let code = b.build().map_err(|_| EINVAL)?;
    let bytes = code.as_bytes();
    sys::pred_install(0, POLL_SLOT, bytes.as_ptr() as u64, bytes.len() as u64).map_err(crate::errno::from_kernel)?;
    sys::env_sleep(1 << POLL_SLOT).map_err(crate::errno::from_kernel)?;
    Ok(())
}

/// Polls the `count` records at `fds` until one is ready or `timeout_ms`
/// passes (negative: forever).
fn poll_records(fds: u64, count: u64, timeout_ms: i64) -> Res {
    if count > fd::MAX_FDS as u64 * 4 {
        return Err(EINVAL);
    }
    let mut raw = uaccess::read_vec(fds, count as usize * 8)?;
    uaccess::writable(fds, count * 8)?;
    let clock = exposed::clock().ok_or(EINVAL)?;
    let deadline = (timeout_ms >= 0 && clock.tick_hz > 0)
        .then(|| clock.ticks.saturating_add((timeout_ms as u64).saturating_mul(clock.tick_hz).div_ceil(1000)));
    loop {
        let seen = exposed::sysinfo().map_or(0, |i| i.console_in);
        let mut ready = 0;
        for rec in raw.chunks_mut(8) {
            let fd = i32::from_le_bytes([rec[0], rec[1], rec[2], rec[3]]);
            let want = u16::from_le_bytes([rec[4], rec[5]]);
            let got = revents(fd, want | POLLNVAL);
            rec[6..8].copy_from_slice(&got.to_le_bytes());
            if got != 0 {
                ready += 1;
            }
        }
        let expired = timeout_ms == 0 || deadline.is_some_and(|d| exposed::clock().is_some_and(|c| c.ticks >= d));
        if ready > 0 || expired {
            uaccess::write(fds, &raw)?;
            return Ok(ready);
        }
        let sockets: Vec<(fd::Handle, u16)> = raw
            .chunks(8)
            .filter_map(|rec| {
                let fd = i32::from_le_bytes([rec[0], rec[1], rec[2], rec[3]]);
                let want = u16::from_le_bytes([rec[4], rec[5]]);
                let h = fd::get(usize::try_from(fd).ok()?).ok()?;
                h.as_socket().is_some().then_some((h, want))
            })
            .collect();
        if sockets.is_empty() {
            sleep(seen, deadline)?;
            continue;
        }
        let console = raw.chunks(8).any(|rec| {
            let fd = i32::from_le_bytes([rec[0], rec[1], rec[2], rec[3]]);
            usize::try_from(fd).ok().and_then(|f| fd::get(f).ok()).is_some_and(|h| h.kind() == "console")
        });
        let now = exposed::clock().map_or(0, |c| c.ticks);
        let left_ms = deadline.map(|d| d.saturating_sub(now).saturating_mul(1000) / clock.tick_hz.max(1));
        let slice = match (console, left_ms) {
            (true, l) => Some(l.unwrap_or(MIXED_SLICE_MS).clamp(1, MIXED_SLICE_MS)),
            (false, l) => l.map(|l| l.max(1)),
        };
        let set: Vec<(&socket::Socket, socket::Ready)> = sockets
            .iter()
            .filter_map(|(h, want)| {
                let r = socket::Ready { read: want & POLLIN != 0, write: want & POLLOUT != 0, hangup: false };
                h.as_socket().map(|s| (s, r))
            })
            .collect();
        socket::poll(&set, slice).map_err(crate::errno::from_io)?;
    }
}

pub fn poll(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    poll_records(a[0], a[1], a[2] as i32 as i64)
}

/// `ppoll`: as `poll` with a `timespec` timeout; the signal mask is not
/// applied (no signal is delivered to Linux programs yet).
pub fn ppoll(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let timeout_ms = if a[2] == 0 {
        -1
    } else {
        let raw = uaccess::read_vec(a[2], 16)?;
        let sec = i64::from_le_bytes(raw[..8].try_into().unwrap_or([0; 8]));
        let nsec = i64::from_le_bytes(raw[8..].try_into().unwrap_or([0; 8]));
        if sec < 0 || !(0..1_000_000_000).contains(&nsec) {
            return Err(EINVAL);
        }
        sec.saturating_mul(1000).saturating_add((nsec + 999_999) / 1_000_000)
    };
    poll_records(a[0], a[1], timeout_ms)
}
