//! `epoll`: an epoll instance is an object of the libOS's descriptor
//! table (kind `epoll`), so it is closed, duplicated, passed over `exec`
//! and copied into a fork child like any descriptor (the child's copy is
//! its own, where Linux would share one instance). Its interest list holds
//! one watch per (descriptor number, object), as Linux keys it: the watch
//! keeps the object weakly, so when the object's last descriptor closes
//! the watch goes (a watch whose descriptor was closed while a duplicate
//! lives on stays and reports, as on Linux).
//!
//! `epoll_wait` looks at the watches with the readiness and the wait that
//! `poll` uses ([`poll::events`], [`poll::wait_for`]): level-triggered,
//! `EPOLLONESHOT` disables a watch once it has reported until
//! `EPOLL_CTL_MOD`, and a watch with `EPOLLET` is treated as
//! level-triggered (it may report more often than Linux would, never
//! less). Successive waits start where the previous one stopped, so with
//! a small `maxevents` every ready watch gets its turn.
//!
//! Watched objects: pipes, sockets, the console and `/dev/urandom`;
//! regular files, `/dev/null` and `/dev/zero` are `EPERM` as on Linux, and
//! so is an epoll instance (no nesting here).

use crate::calls::file::handle;
use crate::calls::poll::{self, Deadline, POLLERR, POLLHUP, POLLIN, POLLOUT, Scan};
use crate::errno::{EEXIST, EINVAL, EMFILE, ENOENT, ENOSPC, EPERM, Res};
use crate::{fdtab, uaccess};
use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::fd::{self, File, Handle, IoError, MAX_FDS};
use spin::Mutex;

const EPOLLIN: u32 = 0x001;
const EPOLLOUT: u32 = 0x004;
const EPOLLERR: u32 = 0x008;
const EPOLLHUP: u32 = 0x010;
const EPOLLRDNORM: u32 = 0x040;
const EPOLLWRNORM: u32 = 0x100;
const EPOLLEXCLUSIVE: u32 = 1 << 28;
const EPOLLWAKEUP: u32 = 1 << 29;
const EPOLLONESHOT: u32 = 1 << 30;
const EPOLLET: u32 = 1 << 31;
/// The bits that say how a watch behaves rather than what it waits for
/// (what a fired `EPOLLONESHOT` watch keeps: Linux's `EP_PRIVATE_BITS`).
const PRIVATE: u32 = EPOLLWAKEUP | EPOLLONESHOT | EPOLLET | EPOLLEXCLUSIVE;
/// What `EPOLLEXCLUSIVE` may be combined with.
const EXCLUSIVE_OK: u32 = EPOLLIN | EPOLLOUT | EPOLLERR | EPOLLHUP | EPOLLWAKEUP | EPOLLET | EPOLLEXCLUSIVE;

const EPOLL_CLOEXEC: u64 = 0o200_0000;
const CTL_ADD: u64 = 1;
const CTL_DEL: u64 = 2;
const CTL_MOD: u64 = 3;

/// `struct epoll_event` (packed on x86-64: events, then the data word).
const EVENT_SIZE: u64 = 12;
/// Linux's `EP_MAX_EVENTS`.
const MAX_EVENTS: u64 = i32::MAX as u64 / EVENT_SIZE;
/// Most watches one instance holds (each a descriptor number and an
/// object, so more than the table's descriptors); beyond: `ENOSPC`.
const MAX_WATCHES: usize = 4 * MAX_FDS;

/// The object a watch looks at.
enum Target {
    /// The console, which lives as long as a descriptor holds it.
    Console,
    /// Any other object, held weakly: it goes when its last descriptor does.
    Object(Weak<dyn File>),
}

impl Target {
    fn of(h: &Handle) -> Target {
        match h {
            Handle::Console => Target::Console,
            Handle::Object(f) => Target::Object(Arc::downgrade(f)),
        }
    }

    /// The object, if a descriptor still holds it.
    fn handle(&self) -> Option<Handle> {
        match self {
            Target::Console => fd::list().iter().any(|&(_, k)| k == "console").then_some(Handle::Console),
            Target::Object(w) => w.upgrade().map(Handle::Object),
        }
    }

    fn is(&self, h: &Handle) -> bool {
        match (self, h) {
            (Target::Console, Handle::Console) => true,
            (Target::Object(w), Handle::Object(f)) => core::ptr::addr_eq(w.as_ptr(), Arc::as_ptr(f)),
            _ => false,
        }
    }
}

/// One entry of the interest list.
struct Watch {
    fd: u64,
    target: Target,
    /// The events asked for, with `EPOLLERR | EPOLLHUP` and the
    /// [`PRIVATE`] bits; a fired one-shot watch keeps only the latter.
    events: u32,
    data: u64,
}

impl Watch {
    /// The events of the watch that hold now (none once its object is
    /// gone); what a sleep must watch goes to `scan`.
    fn ready(&self, scan: &mut Scan) -> u32 {
        if self.events & !PRIVATE == 0 {
            return 0;
        }
        let Some(h) = self.target.handle() else { return 0 };
        let mut want = 0;
        if self.events & (EPOLLIN | EPOLLRDNORM) != 0 {
            want |= POLLIN;
        }
        if self.events & (EPOLLOUT | EPOLLWRNORM) != 0 {
            want |= POLLOUT;
        }
        let got = poll::events(&h, want, scan);
        let mut ev = u32::from(got & (POLLIN | POLLOUT | POLLERR | POLLHUP));
        if got & POLLIN != 0 {
            ev |= EPOLLRDNORM;
        }
        if got & POLLOUT != 0 {
            ev |= EPOLLWRNORM;
        }
        ev & self.events
    }
}

#[derive(Default)]
struct Interest {
    watches: Vec<Watch>,
    /// Where the next wait starts looking.
    next: usize,
}

/// An epoll instance.
#[derive(Default)]
pub struct Epoll {
    interest: Mutex<Interest>,
}

impl Epoll {
    /// Whether a watch has an event now (`poll` or `select` on the
    /// instance's descriptor).
    pub fn any_ready(&self, scan: &mut Scan) -> bool {
        self.interest.lock().watches.iter().any(|w| w.ready(scan) != 0)
    }

    /// Up to `max` (events, data) pairs of the watches ready now, from
    /// where the last call stopped; fired one-shot watches are disabled.
    fn collect(&self, max: usize, scan: &mut Scan) -> Vec<(u32, u64)> {
        let mut i = self.interest.lock();
        i.watches.retain(|w| w.target.handle().is_some());
        let n = i.watches.len();
        let start = if n == 0 { 0 } else { i.next % n };
        let mut out = Vec::new();
        for k in 0..n {
            let j = (start + k) % n;
            let w = &mut i.watches[j];
            let ev = w.ready(scan);
            if ev == 0 {
                continue;
            }
            out.push((ev, w.data));
            if w.events & EPOLLONESHOT != 0 {
                w.events &= PRIVATE;
            }
            if out.len() == max {
                i.next = j + 1;
                break;
            }
        }
        out
    }
}

impl File for Epoll {
    fn read(&self, _: &mut [u8]) -> Result<usize, IoError> {
        Err(IoError::Invalid)
    }
    fn write(&self, _: &[u8]) -> Result<usize, IoError> {
        Err(IoError::Invalid)
    }
    fn kind(&self) -> &'static str {
        "epoll"
    }
    fn as_any(&self) -> Option<&dyn core::any::Any> {
        Some(self)
    }
}

/// The epoll instance `h` is, if it is one.
pub fn instance(h: &Handle) -> Option<&Epoll> {
    h.as_any()?.downcast_ref::<Epoll>()
}

/// A new instance in the lowest free descriptor.
fn create(cloexec: bool) -> Res {
    let obj: Arc<dyn File> = Arc::new(Epoll::default());
    let fd = fd::install(obj).map_err(|_| EMFILE)?;
    fdtab::set(fd, fdtab::Info { cloexec, ..fdtab::Info::default() });
    Ok(fd as i64)
}

/// `epoll_create(size)`: `size` must be positive and means nothing else.
pub fn epoll_create(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    if a[0] as i32 <= 0 {
        return Err(EINVAL);
    }
    create(false)
}

/// `epoll_create1(flags)`: `EPOLL_CLOEXEC` only.
pub fn epoll_create1(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    if a[0] & !EPOLL_CLOEXEC != 0 {
        return Err(EINVAL);
    }
    create(a[0] & EPOLL_CLOEXEC != 0)
}

/// Whether epoll can watch `h`: objects with a readiness of their own.
fn watchable(h: &Handle) -> bool {
    h.as_socket().is_some() || matches!(h.kind(), "console" | "pipe" | "random")
}

/// `epoll_ctl(epfd, op, fd, event)`, checked in Linux's order: the event
/// (`EFAULT`), both descriptors (`EBADF`), a target that cannot be
/// watched (`EPERM`), `epfd` not an instance or the same as `fd`
/// (`EINVAL`), another instance as the target (`EPERM`: no nesting here),
/// `EPOLLEXCLUSIVE` misused (`EINVAL`), then the operation:
/// `ADD` of a watched pair `EEXIST`, `MOD`/`DEL` of an unwatched one
/// `ENOENT`, an unknown one `EINVAL`.
pub fn epoll_ctl(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (epfd, op, fd, addr) = (a[0], a[1], a[2], a[3]);
    let (events, data) = if op == CTL_DEL {
        (0, 0)
    } else {
        let raw = uaccess::read_vec(addr, EVENT_SIZE as usize)?;
        let events = u32::from_le_bytes(raw[..4].try_into().unwrap_or([0; 4]));
        (events, u64::from_le_bytes(raw[4..].try_into().unwrap_or([0; 8])))
    };
    let (eph, target) = (handle(epfd)?, handle(fd)?);
    let nested = instance(&target);
    if nested.is_none() && !watchable(&target) {
        return Err(EPERM);
    }
    let ep = instance(&eph).ok_or(EINVAL)?;
    match nested {
        Some(t) if core::ptr::eq(ep, t) => return Err(EINVAL),
        Some(_) => return Err(EPERM),
        None => {}
    }
    if events & EPOLLEXCLUSIVE != 0 && (op == CTL_MOD || (op == CTL_ADD && events & !EXCLUSIVE_OK != 0)) {
        return Err(EINVAL);
    }
    let mut i = ep.interest.lock();
    i.watches.retain(|w| w.target.handle().is_some());
    let at = i.watches.iter().position(|w| w.fd == fd && w.target.is(&target));
    let events = events | EPOLLERR | EPOLLHUP;
    match (op, at) {
        (CTL_ADD, Some(_)) => Err(EEXIST),
        (CTL_ADD, None) if i.watches.len() >= MAX_WATCHES => Err(ENOSPC),
        (CTL_ADD, None) => {
            i.watches.push(Watch { fd, target: Target::of(&target), events, data });
            Ok(0)
        }
        (CTL_MOD | CTL_DEL, None) => Err(ENOENT),
        (CTL_MOD, Some(j)) if i.watches[j].events & EPOLLEXCLUSIVE != 0 => Err(EINVAL),
        (CTL_MOD, Some(j)) => {
            i.watches[j].events = events;
            i.watches[j].data = data;
            Ok(0)
        }
        (CTL_DEL, Some(j)) => {
            i.watches.remove(j);
            Ok(0)
        }
        _ => Err(EINVAL),
    }
}

/// Waits on instance `epfd` until a watch is ready or `deadline` passes,
/// and writes up to `maxevents` events at `addr`; checked in Linux's
/// order: `maxevents` (`EINVAL`), the array (`EFAULT`), `epfd` (`EBADF`,
/// `EINVAL` if not an instance).
fn wait_on(epfd: u64, addr: u64, maxevents: u64, deadline: Option<Deadline>) -> Res {
    let max = maxevents as i32;
    if max <= 0 || max as u64 > MAX_EVENTS {
        return Err(EINVAL);
    }
    uaccess::writable(addr, max as u64 * EVENT_SIZE)?;
    let h = handle(epfd)?;
    let ep = instance(&h).ok_or(EINVAL)?;
    let got = poll::wait_for(deadline, |scan| Some(ep.collect(max as usize, scan)).filter(|v| !v.is_empty()))?;
    let got = got.unwrap_or_default();
    let raw: Vec<u8> =
        got.iter().flat_map(|&(ev, data)| ev.to_le_bytes().into_iter().chain(data.to_le_bytes())).collect();
    uaccess::write(addr, &raw)?;
    Ok(got.len() as i64)
}

/// `epoll_wait(epfd, events, maxevents, timeout_ms)`.
pub fn epoll_wait(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    wait_on(a[0], a[1], a[2], poll::timeout(a[3] as i32 as i64)?)
}

/// `epoll_pwait`: as `epoll_wait` with the signal mask `a[4]` (size `a[5]`)
/// in force while it waits, as `ppoll` does it.
pub fn epoll_pwait(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let deadline = poll::timeout(a[3] as i32 as i64)?;
    let mask = poll::sigmask_arg(a[4], a[5])?;
    poll::with_mask(mask, || wait_on(a[0], a[1], a[2], deadline))
}

/// `epoll_pwait2`: as `epoll_pwait` with a `timespec` timeout (none: wait
/// forever).
pub fn epoll_pwait2(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let deadline = poll::timeout(poll::timespec_ms(a[3])?)?;
    let mask = poll::sigmask_arg(a[4], a[5])?;
    poll::with_mask(mask, || wait_on(a[0], a[1], a[2], deadline))
}
