//! The process's one TCP/IP stack behind its sockets: a packet ring fed by
//! one filter per bound port or outgoing connection, smoltcp's interface
//! and socket set, and the sockets closed by their owner that still have
//! data or a FIN to deliver ("orphans"). Built on first use from the
//! process's transmit template (its MAC and IPv4 address).

use super::SockAddr;
use super::cork::Corks;
use crate::net::stack::{self, RingDevice, ms_to_ticks, now};
use crate::net::{self, Filter, Ring, filters, neigh};
use crate::sys;
use crate::time::ticks;
use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;
use oxok_abi::Error;
use oxok_abi::net::TxTemplate;
use smoltcp::iface::{Interface, SocketHandle, SocketSet};
use smoltcp::socket::tcp;
use spin::Mutex;

/// Data frames of the stack's ring (`ENTRIES_PER_FRAME` packets each): 62
/// packets, a window's worth and the acknowledgements that come with it.
const RING_FRAMES: usize = 31;
/// The network's prefix length and the gateway's last byte (QEMU's user
/// network: 10.0.2.0/24, gateway .2).
const PREFIX: u8 = 24;
const GATEWAY_HOST: u8 = 2;
/// The address a boot program takes when it has no template.
const DEFAULT_IP: [u8; 4] = [10, 0, 2, 15];
/// Ephemeral ports for `connect` and unbound UDP sends.
const EPHEMERAL: core::ops::RangeInclusive<u16> = 49152..=65535;
/// How often a stack without the ARP filter tries to take it.
const ARP_RETRY_MS: u64 = 1000;
/// How long a closed socket may still deliver its data and FIN.
const ORPHAN_MS: u64 = 20_000;
/// The longest sleep between polls while a call waits.
pub const MAX_SLEEP_MS: u64 = 100;

/// What keeps a TCP connection's packets arriving: the listening port's
/// filter (shared, counted) or a filter of its own.
pub(crate) enum PortRef {
    /// Accepted on this listening port.
    Listen(u16),
    /// An outgoing connection's own filter.
    Own(Filter),
}

struct Listener {
    _filter: Filter,
    /// Listening sockets and accepted connections still using the filter.
    users: usize,
}

struct Orphan {
    handle: SocketHandle,
    port: PortRef,
    until: u64,
}

/// The stack.
pub(crate) struct Net {
    pub dev: RingDevice,
    pub iface: Interface,
    pub set: SocketSet<'static>,
    pub ip: [u8; 4],
    /// The ARP filter, when this stack got it (it is retried each second
    /// while another program holds it).
    arp: Option<Filter>,
    arp_retry: u64,
    listeners: BTreeMap<u16, Listener>,
    udp: BTreeMap<u16, Filter>,
    orphans: Vec<Orphan>,
    next_port: u16,
    /// Corked connections' bytes, not yet handed to smoltcp.
    pub corks: Corks,
}

static NET: Mutex<Option<Net>> = Mutex::new(None);

impl Net {
    fn new() -> Result<Net, Error> {
        let mac = net::mac()?;
        // A program started by another has its template; a boot program
        // sets the machine's own (QEMU's user network).
        let t = match net::template(0) {
            Ok(t) => t,
            Err(_) => {
                let t = TxTemplate { mac, pad: [0; 2], ip: DEFAULT_IP, port_lo: 0, port_hi: u16::MAX };
                net::set_template(0, &t)?;
                t
            }
        };
        let ip = t.ip;
        let ring = Ring::new(RING_FRAMES)?;
        // With a neighbour table server, its answers; otherwise ARP belongs
        // to whoever installed its filter first, and without it this stack
        // still answers for connections whose peer it knows.
        let neigh::Arp { filter: arp, resolver } = neigh::arp(&ring, mac, ip);
        let mut dev = RingDevice::new(ring)?;
        dev.resolver = resolver;
        let gw = [ip[0], ip[1], ip[2], GATEWAY_HOST];
        let iface = stack::interface(&mut dev, mac, ip, PREFIX, gw);
        let seed = (crate::time::rdtsc() % u64::from(EPHEMERAL.end() - EPHEMERAL.start())) as u16;
        Ok(Net {
            dev,
            iface,
            set: SocketSet::new(vec![]),
            ip,
            arp,
            arp_retry: ticks() + ms_to_ticks(ARP_RETRY_MS),
            listeners: BTreeMap::new(),
            udp: BTreeMap::new(),
            orphans: Vec::new(),
            next_port: EPHEMERAL.start() + seed,
            corks: Corks::default(),
        })
    }

    /// Lets smoltcp receive, time out and send (with corked bytes that
    /// have waited long enough); frees finished orphans.
    pub fn poll(&mut self) {
        if self.arp.is_none() && ticks() >= self.arp_retry {
            self.arp_retry = ticks() + ms_to_ticks(ARP_RETRY_MS);
            // A neighbour table whose server ended learns nothing more:
            // ARP goes back to whoever takes its filter (this stack, if it
            // is free).
            if self.dev.resolver.as_ref().is_some_and(|r| !r.live()) {
                self.dev.resolver = None;
            }
            if self.dev.resolver.is_none() {
                self.arp = Filter::install(&self.dev.ring, &filters::arp(), None).ok();
            }
        }
        self.corks.expire(&mut self.set, ticks());
        self.iface.poll(now(), &mut self.dev, &mut self.set);
        self.reap();
    }

    /// The ring's packet count, before a poll (so a sleep after it wakes
    /// for anything that arrived since).
    pub fn seen(&self) -> u64 {
        self.dev.ring.produced()
    }

    /// When to poll next at the latest, as a tick count.
    pub fn wake_tick(&mut self) -> u64 {
        let ms = self.iface.poll_delay(now(), &self.set).map_or(MAX_SLEEP_MS, |d| d.total_millis().min(MAX_SLEEP_MS));
        let tick = ticks() + ms_to_ticks(self.dev.sleep_ms(ms));
        self.corks.next_due().map_or(tick, |due| tick.min(due))
    }

    /// Starts listening on TCP `port` (installing its filter) or adds a
    /// user to it.
    pub fn listen_port(&mut self, port: u16) -> Result<(), Error> {
        if let Some(l) = self.listeners.get_mut(&port) {
            l.users += 1;
            return Ok(());
        }
        let filter = Filter::install(&self.dev.ring, &filters::tcp_listen(port), None)?;
        self.listeners.insert(port, Listener { _filter: filter, users: 1 });
        Ok(())
    }

    /// True if this stack listens on TCP `port`.
    pub fn listening(&self, port: u16) -> bool {
        self.listeners.contains_key(&port)
    }

    /// Drops one user of a port reference (the filter goes with the last).
    pub fn release(&mut self, port: PortRef) {
        match port {
            PortRef::Listen(p) => {
                if let Some(l) = self.listeners.get_mut(&p) {
                    l.users = l.users.saturating_sub(1);
                    if l.users == 0 {
                        self.listeners.remove(&p);
                    }
                }
            }
            PortRef::Own(f) => drop(f),
        }
    }

    /// Installs the filter of an outgoing connection from `local` to `remote`.
    pub fn connection_filter(&mut self, local: u16, remote: SockAddr) -> Result<Filter, Error> {
        let l = (u32::from_be_bytes(self.ip), local);
        let r = (u32::from_be_bytes(remote.ip), remote.port);
        Filter::install(&self.dev.ring, &filters::tcp_connection(l, r), None)
    }

    /// Binds UDP `port` (its filter).
    pub fn udp_bind(&mut self, port: u16) -> Result<(), Error> {
        if self.udp.contains_key(&port) {
            return Err(Error::Exists);
        }
        let f = Filter::install(&self.dev.ring, &filters::udp(port), None)?;
        self.udp.insert(port, f);
        Ok(())
    }

    /// Unbinds UDP `port`.
    pub fn udp_unbind(&mut self, port: u16) {
        self.udp.remove(&port);
    }

    /// A free ephemeral port: not used by this stack; `try_use` says
    /// whether the rest of the system lets us have it (its filter went in).
    pub fn ephemeral<T>(&mut self, mut try_use: impl FnMut(&mut Net, u16) -> Result<T, Error>) -> Result<T, Error> {
        for _ in 0..64 {
            let p = self.next_port;
            self.next_port = if p >= *EPHEMERAL.end() { *EPHEMERAL.start() } else { p + 1 };
            if self.listeners.contains_key(&p) || self.udp.contains_key(&p) {
                continue;
            }
            match try_use(self, p) {
                Err(Error::Exists) => continue,
                r => return r,
            }
        }
        Err(Error::Exists)
    }

    /// Hands a closed TCP socket to the stack to finish (its data and FIN
    /// still go out), then to be freed.
    pub fn orphan(&mut self, handle: SocketHandle, port: PortRef) {
        self.uncork(handle);
        self.set.get_mut::<tcp::Socket>(handle).close();
        self.orphans.push(Orphan { handle, port, until: ticks() + ms_to_ticks(ORPHAN_MS) });
        self.reap();
    }

    /// Hands a corked connection's waiting bytes to its socket.
    pub fn uncork(&mut self, handle: SocketHandle) {
        let sock = self.set.get_mut::<tcp::Socket>(handle);
        self.corks.release(sock, handle);
    }

    /// Frees a socket at once (sending a reset if it was connected) and
    /// drops its use of `port`.
    pub fn abort(&mut self, handle: SocketHandle, port: PortRef) {
        self.kill(handle);
        self.release(port);
    }

    /// Resets and frees a TCP socket.
    pub fn kill(&mut self, handle: SocketHandle) {
        self.corks.forget(handle);
        self.set.get_mut::<tcp::Socket>(handle).abort();
        // Let the reset go out before the socket goes.
        self.iface.poll(now(), &mut self.dev, &mut self.set);
        self.set.remove(handle);
    }

    fn reap(&mut self) {
        let now_tick = ticks();
        let mut i = 0;
        while i < self.orphans.len() {
            let o = &self.orphans[i];
            let s = self.set.get_mut::<tcp::Socket>(o.handle);
            let done = matches!(s.state(), tcp::State::Closed | tcp::State::TimeWait);
            if done || now_tick >= o.until {
                let o = self.orphans.swap_remove(i);
                self.set.remove(o.handle);
                self.release(o.port);
            } else {
                i += 1;
            }
        }
    }

    /// Sockets closed but not yet finished.
    pub fn orphans(&self) -> usize {
        self.orphans.len()
    }

    /// The ring's id (to sleep on it without the lock).
    pub fn ring_id(&self) -> u64 {
        self.dev.ring.id()
    }
}

/// Runs `f` on the stack, building it first if needed.
pub(crate) fn with<R>(f: impl FnOnce(&mut Net) -> Result<R, Error>) -> Result<R, Error> {
    let mut g = NET.lock();
    if g.is_none() {
        *g = Some(Net::new()?);
    }
    match g.as_mut() {
        Some(n) => f(n),
        None => Err(Error::NotFound),
    }
}

/// Whether the stack is in use: code a signal interrupted holds it, so the
/// exit path (which drains the stack) must not run over it.
pub(crate) fn busy() -> bool {
    NET.is_locked()
}

/// Runs `f` on the stack only if it exists.
pub(crate) fn with_existing(f: impl FnOnce(&mut Net)) {
    if let Some(n) = NET.lock().as_mut() {
        f(n);
    }
}

/// Sleeps on the ring until a packet past `seen` arrives or `tick`.
pub(crate) fn sleep(ring: u64, seen: u64, tick: u64) -> Result<(), Error> {
    if tick <= ticks() {
        return sys::yield_cpu(0).map(|_| ());
    }
    net::wait_ring(ring, 0, seen, tick)
}

/// The current tick count.
pub(crate) fn now_tick() -> u64 {
    ticks()
}
