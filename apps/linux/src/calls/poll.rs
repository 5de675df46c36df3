//! Waiting for descriptors: `poll` and `ppoll`, and the readiness
//! ([`events`]) and the wait ([`wait_for`]) that `select` and `epoll`
//! share with them. The console is ready when the libOS's terminal has a
//! read's worth (`tty::ready`: typed bytes go through the line discipline,
//! so in canonical mode a whole line). A pipe end reports
//! its readiness from the pipe's shared counters without consuming
//! anything (`File::readiness`). Files and the devices are always ready.
//! Sockets report their real readiness (the libOS polls its stack).
//! A wait sleeps on one wakeup predicate over the kernel's count of
//! received console bytes, the watched pipes' counters, the pending
//! signals, and the clock for a timeout; a signal ends it with `EINTR`.
//! A wait over sockets sleeps on the stack's packet ring instead, in
//! slices of at most 50 ms, then looks at everything again.

use crate::errno::{EINVAL, Res};
use crate::uaccess;
use alloc::vec::Vec;
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::abi::layout::{CLOCK, Clock, SYSINFO, SysInfo};
use oxok_libos::fd::pipe::Watch;
use oxok_libos::net::socket;
use oxok_libos::{exposed, fd, sys};

pub const POLLIN: u16 = 0x001;
pub const POLLOUT: u16 = 0x004;
pub const POLLNVAL: u16 = 0x020;
/// The longest sleep on sockets before everything is looked at again
/// (console, pipes, signals).
const SOCKET_SLICE_MS: u64 = 50;

/// The wakeup-predicate index `poll` sleeps on (the libOS keeps 2 for the
/// console and 3 for `wait`; `nanosleep` uses 1).
const POLL_SLOT: u64 = 0;

/// True if a console read would not wait: the libOS's terminal takes what
/// was typed through its line discipline (a whole line in canonical mode).
fn console_ready() -> bool {
    oxok_libos::tty::ready()
}

pub const POLLERR: u16 = 0x008;
pub const POLLHUP: u16 = 0x010;

/// Most pipe words one sleep watches (3 instructions each of 64); beyond
/// them the sleep also ends every few ticks, to look again.
const WATCHED: usize = 12;
/// Instructions a poll's predicate needs after its partners' clauses: the
/// signals', the timer's and the recheck's (`timers::wake_on`, `sleep`).
const AFTER_PARTNERS: usize = 16;

/// What one look at the watched objects leaves for the sleep after it:
/// the pipes' wake words and the sockets (with the events asked of them).
#[derive(Default)]
pub struct Scan {
    wake: Vec<(u64, u64)>,
    gone: Vec<Watch>,
    sockets: Vec<(fd::Handle, u16)>,
}

/// The events of object `h` that hold now, of those in `want` (errors and
/// hang-ups always count); what a sleep must watch goes to `scan`. One
/// answer for `poll`, `select` and `epoll`.
pub fn events(h: &fd::Handle, want: u16, scan: &mut Scan) -> u16 {
    if let Some(s) = h.as_socket() {
        scan.sockets.push((h.clone(), want));
        let r = s.ready();
        let mut got = if r.hangup { POLLHUP } else { 0 };
        got |= if r.read { POLLIN } else { 0 } | if r.write { POLLOUT } else { 0 };
        return got & (want | POLLHUP);
    }
    if let Some(ep) = crate::calls::epoll::instance(h) {
        return if ep.any_ready(scan) { POLLIN & want } else { 0 };
    }
    let ready = match h.kind() {
        "console" => POLLOUT | if want & POLLIN != 0 && console_ready() { POLLIN } else { 0 },
        _ => {
            let r = h.readiness();
            if let Some(w) = r.wake {
                scan.wake.push(w);
            }
            if let Some(p) = r.partner {
                scan.gone.push(p);
            }
            let mut ev = 0;
            if r.read {
                ev |= POLLIN;
            }
            if r.write {
                ev |= POLLOUT;
            }
            if r.hangup {
                ev |= if r.read { POLLHUP } else { POLLERR };
            }
            ev
        }
    };
    ready & (want | POLLHUP | POLLERR | POLLNVAL)
}

/// The events of descriptor `fd` as [`events`] (`POLLNVAL` if it is not
/// open; none for a negative one, which `poll` skips).
fn revents(fd: i32, want: u16, scan: &mut Scan) -> u16 {
    if fd < 0 {
        return 0;
    }
    match fd::get(fd as usize) {
        Ok(h) => events(&h, want, scan),
        Err(_) => POLLNVAL,
    }
}

/// True if `fd` has one of `events` now (or an error); a pipe's wake
/// word goes to `wake`.
pub fn ready(fd: i32, events: u16, wake: &mut Vec<(u64, u64)>) -> bool {
    let mut scan = Scan::default();
    let got = revents(fd, events, &mut scan);
    wake.append(&mut scan.wake);
    got != 0
}

/// Sleeps until console input arrives after `seen` bytes, a pipe word in
/// `scan` changes or a pipe's partner there goes (as many as the predicate
/// has room for), a signal the program does not block is pending, or the
/// clock reaches `deadline_ticks` (`None`: no timeout).
fn sleep(seen: u64, scan: &Scan, deadline_ticks: Option<u64>) -> Result<(), i64> {
    let wake = &scan.wake;
    let counter = SYSINFO + core::mem::offset_of!(SysInfo, console_in) as u64;
    let ticks = CLOCK + core::mem::offset_of!(Clock, ticks) as u64;
    let mut b = oxok_pred::Builder::new();
    b.load_u64(counter).ne_imm(seen);
    for &(word, value) in wake.iter().take(WATCHED) {
        b.or().load_u64(word).ne_imm(value);
    }
    for &partner in &scan.gone {
        if b.len() + Watch::INSNS + AFTER_PARTNERS > oxok_pred::MAX_INSNS {
            break;
        }
        partner.wake_on_gone(&mut b);
    }
    crate::timers::wake_on(b.or());
    // A partner that did not fit above can go without changing a word:
    // look again every few ticks while pipes are watched.
    let now = exposed::clock().map_or(0, |c| c.ticks);
    let recheck = (!wake.is_empty()).then_some(now + 10);
    if let Some(t) = [deadline_ticks, recheck].into_iter().flatten().min() {
        b.or().load_u64(ticks).ge_imm(t);
    }
    let code = b.build().map_err(|_| EINVAL)?;
    let bytes = code.as_bytes();
    oxok_libos::pred::install(POLL_SLOT, bytes).map_err(crate::errno::from_kernel)?;
    sys::env_sleep(1 << POLL_SLOT).map_err(crate::errno::from_kernel)?;
    Ok(())
}

/// When a wait with a timeout ends: a clock tick, which the wakeup
/// predicate watches, and the same moment on the TSC clock that
/// `clock_gettime` reads. Under emulation the two drift apart, so the wait
/// ends only when both have passed: a timeout never looks short to the
/// program that measures it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline {
    ticks: u64,
    ns: u64,
}

impl Deadline {
    /// Do not wait.
    pub const NOW: Deadline = Deadline { ticks: 0, ns: 0 };

    /// Whether both clocks have passed it.
    fn passed(&self) -> bool {
        exposed::clock().is_none_or(|c| c.ticks >= self.ticks) && crate::calls::time::now_ns() >= self.ns
    }

    /// The tick a sleep waits for: its own, or the next one when the tick
    /// clock is there and the TSC clock is not yet.
    fn wake_tick(&self) -> u64 {
        self.ticks.max(exposed::clock().map_or(0, |c| c.ticks) + 1)
    }
}

/// The deadline `timeout_ms` from now (`None` for a negative timeout:
/// forever): on the tick clock one tick more than the count, since the
/// current tick is already partly gone, so the wait is never shorter than
/// asked.
pub fn deadline(timeout_ms: i64) -> Result<Option<Deadline>, i64> {
    let clock = exposed::clock().ok_or(EINVAL)?;
    Ok((timeout_ms >= 0 && clock.tick_hz > 0).then(|| {
        let ms = timeout_ms as u64;
        Deadline {
            ticks: clock.ticks.saturating_add(ms.saturating_mul(clock.tick_hz).div_ceil(1000)).saturating_add(1),
            ns: crate::calls::time::now_ns().saturating_add(ms.saturating_mul(1_000_000)),
        }
    }))
}

/// Looks at the watched objects with `look` until it finds something
/// (`Some`) or `deadline` passes (`Ok(None)`; [`Deadline::NOW`]: look
/// once); `look` fills the [`Scan`] that the sleep between looks waits
/// on. `EINTR` when a signal the program does not block arrives first.
/// The one wait of `poll`, `select` and `epoll_wait`.
pub fn wait_for<T>(deadline: Option<Deadline>, mut look: impl FnMut(&mut Scan) -> Option<T>) -> Result<Option<T>, i64> {
    loop {
        let seen = exposed::sysinfo().map_or(0, |i| i.console_in);
        let mut scan = Scan::default();
        if let Some(found) = look(&mut scan) {
            return Ok(Some(found));
        }
        if deadline.is_some_and(|d| d.passed()) {
            return Ok(None);
        }
        crate::signals::check_interrupted()?;
        if scan.sockets.is_empty() {
            sleep(seen, &scan, deadline.map(|d| d.wake_tick()))?;
            continue;
        }
        let clock = exposed::clock().ok_or(EINVAL)?;
        let left_ms =
            deadline.map(|d| d.wake_tick().saturating_sub(clock.ticks).saturating_mul(1000) / clock.tick_hz.max(1));
        let slice = left_ms.unwrap_or(SOCKET_SLICE_MS).clamp(1, SOCKET_SLICE_MS);
        let set: Vec<(&socket::Socket, socket::Ready)> = scan
            .sockets
            .iter()
            .filter_map(|(h, want)| {
                let r = socket::Ready { read: want & POLLIN != 0, write: want & POLLOUT != 0, hangup: false };
                h.as_socket().map(|s| (s, r))
            })
            .collect();
        socket::poll(&set, Some(slice)).map_err(crate::errno::from_io)?;
    }
}

/// Waits until one of `records` — (descriptor, events wanted, events got)
/// — is ready or `deadline` passes ([`Deadline::NOW`]: do not wait);
/// fills in the events; returns how many records have some. `EINTR` when
/// a signal the program does not block arrives first.
pub fn wait_ready(records: &mut [(i32, u16, u16)], deadline: Option<Deadline>) -> Res {
    let found = wait_for(deadline, |scan| {
        let mut ready = 0;
        for rec in records.iter_mut() {
            rec.2 = revents(rec.0, rec.1, scan);
            if rec.2 != 0 {
                ready += 1;
            }
        }
        (ready > 0).then_some(ready)
    })?;
    Ok(found.unwrap_or(0))
}

/// The deadline of a `poll`-style timeout in milliseconds: 0 does not
/// wait, a negative one waits forever.
pub fn timeout(timeout_ms: i64) -> Result<Option<Deadline>, i64> {
    if timeout_ms == 0 { Ok(Some(Deadline::NOW)) } else { deadline(timeout_ms) }
}

/// The `timespec` at `addr` as a timeout in milliseconds, rounded up (-1
/// when `addr` is 0: wait forever); `EINVAL` if it is negative or
/// malformed.
pub fn timespec_ms(addr: u64) -> Res {
    if addr == 0 {
        return Ok(-1);
    }
    let raw = uaccess::read_vec(addr, 16)?;
    let sec = i64::from_le_bytes(raw[..8].try_into().unwrap_or([0; 8]));
    let nsec = i64::from_le_bytes(raw[8..].try_into().unwrap_or([0; 8]));
    if sec < 0 || !(0..1_000_000_000).contains(&nsec) {
        return Err(EINVAL);
    }
    Ok(sec.saturating_mul(1000).saturating_add((nsec + 999_999) / 1_000_000))
}

/// The signal mask a `ppoll`-style call passes at `addr` with `size`
/// (none if `addr` is 0; `EINVAL` unless `size` is 8).
pub fn sigmask_arg(addr: u64, size: u64) -> Result<Option<u64>, i64> {
    if addr == 0 {
        return Ok(None);
    }
    if size != 8 {
        return Err(EINVAL);
    }
    uaccess::read_u64(addr).map(Some)
}

/// Polls the `count` records at `fds` until one is ready or `timeout_ms`
/// passes (negative: forever).
fn poll_records(fds: u64, count: u64, timeout_ms: i64) -> Res {
    if count > fd::MAX_FDS as u64 * 4 {
        return Err(EINVAL);
    }
    let mut raw = uaccess::read_vec(fds, count as usize * 8)?;
    uaccess::writable(fds, count * 8)?;
    let mut records: Vec<(i32, u16, u16)> = raw
        .chunks(8)
        .map(|r| (i32::from_le_bytes([r[0], r[1], r[2], r[3]]), u16::from_le_bytes([r[4], r[5]]), 0))
        .collect();
    let deadline = timeout(timeout_ms)?;
    let ready = wait_ready(&mut records, deadline)?;
    for (rec, r) in raw.chunks_mut(8).zip(&records) {
        rec[6..8].copy_from_slice(&r.2.to_le_bytes());
    }
    uaccess::write(fds, &raw)?;
    Ok(ready)
}

pub fn poll(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    poll_records(a[0], a[1], a[2] as i32 as i64)
}

/// `ppoll`: as `poll` with a `timespec` timeout and, while it waits, the
/// signal mask `a[3]` ([`with_mask`]).
pub fn ppoll(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let timeout_ms = timespec_ms(a[2])?;
    let mask = sigmask_arg(a[3], a[4])?;
    with_mask(mask, || poll_records(a[0], a[1], timeout_ms))
}

/// Runs a wait with the signal mask `mask` in force (`ppoll`, `pselect6`):
/// if a signal interrupts it, the handler runs under that mask and the old
/// one comes back after it, as `rt_sigsuspend` does.
pub fn with_mask(mask: Option<u64>, wait: impl FnOnce() -> Res) -> Res {
    use core::sync::atomic::Ordering;
    let Some(m) = mask else { return wait() };
    let old = crate::signals::MASK.swap(m & !crate::signals::UNBLOCKABLE, Ordering::AcqRel);
    let r = wait();
    if r == Err(crate::errno::EINTR) {
        crate::calls::signal::SUSPEND_MASK.store(old | crate::calls::signal::SUSPENDED, Ordering::Release);
        crate::attention::raise();
    } else {
        crate::signals::MASK.store(old, Ordering::Release);
    }
    r
}
