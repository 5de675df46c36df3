//! The connection table: accepting, demultiplexing, timers.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use oxok_http::{Limits, Method, Request, Status};

use crate::conn::Conn;
use crate::wire::{self, Header, Segment, flags};

/// How a server behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Our Ethernet address.
    pub mac: [u8; 6],
    /// Our IPv4 address.
    pub ip: [u8; 4],
    /// The port served.
    pub port: u16,
    /// Our maximum segment size (what the site's sums were computed for).
    pub mss: u16,
    /// Connection slots; a SYN finding none free is refused with RST.
    pub max_conns: usize,
    /// Connections served at once; beyond this (and within `max_conns`) a
    /// request gets 503 and the connection closes.
    pub serve_conns: usize,
    /// Initial retransmission timeout (clock ticks); doubles per retry.
    pub rto_ticks: u64,
    /// Longest retransmission timeout.
    pub rto_max_ticks: u64,
    /// Retransmissions of one segment before the connection is reset.
    pub max_retries: u32,
    /// A connection with nothing received for this long is closed (FIN);
    /// twice as long, reset.
    pub idle_ticks: u64,
    /// Our receive window.
    pub window: u16,
    /// Responses queued on one connection before more pipelined requests
    /// are left unacknowledged in the client's queue.
    pub max_pipeline: usize,
    /// The HTTP parser's limits.
    pub limits: Limits,
    /// Seed of initial sequence numbers.
    pub seed: u64,
}

/// A response the site keeps: `len` bytes of its stream `stream`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response<S> {
    /// The site's name for the bytes.
    pub stream: S,
    /// How many of them (a `HEAD` response is a head-only stream).
    pub len: u32,
}

/// The file cache and the network as the server sees them.
pub trait Site {
    /// The site's name for one response's bytes.
    type Stream: Copy;
    /// The response to a well-formed request (its `Connection` header
    /// following [`Request::keep_alive`]).
    fn respond(&mut self, req: &Request) -> Response<Self::Stream>;
    /// An error response with `Connection: close` (no body for `HEAD`).
    fn refuse(&mut self, status: Status, method: Option<Method>) -> Response<Self::Stream>;
    /// A queued response is no longer needed (acknowledged, or the
    /// connection is gone).
    fn release(&mut self, stream: Self::Stream);
    /// The ones'-complement sum (unfolded, see `checksum::add`) of bytes
    /// `off..off + len` of `stream` — stored, when the run is one of the
    /// segments summed in advance.
    fn sum(&mut self, stream: Self::Stream, off: u32, len: u32) -> u64;
    /// Sends a frame made of `head` (headers, or a whole frame) followed by
    /// `len` bytes at `off` in `stream`, if given: the bytes go from where
    /// the site keeps them. `false`: not sent.
    fn send(&mut self, head: &[u8], data: Option<(Self::Stream, u32, u32)>) -> bool;
}

/// What the server has done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Connections accepted (SYN answered).
    pub accepted: u64,
    /// SYNs refused with RST because every slot was taken.
    pub refused_full: u64,
    /// Requests answered 503 because `serve_conns` were busy.
    pub unavailable: u64,
    /// Well-formed requests.
    pub requests: u64,
    /// Malformed or refused requests (error responses).
    pub errors: u64,
    /// Segments sent with data.
    pub data_segments: u64,
    /// Data segments whose acknowledgment of the client's data rode along.
    pub piggybacked_acks: u64,
    /// Segments with no data sent only to acknowledge.
    pub bare_acks: u64,
    /// Segments sent again (timeouts and fast retransmits).
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Connections reset by the client.
    pub resets: u64,
    /// Connections given up (retries exhausted or idle).
    pub aborted: u64,
    /// Of those, the ones given up because every retransmission went
    /// unanswered (the rest were idle too long).
    pub unanswered: u64,
    /// Connections closed normally.
    pub closed: u64,
    /// Frames answered with ARP replies.
    pub arp_replies: u64,
    /// Segments for no connection answered with RST.
    pub stray: u64,
    /// Frames the link refused to send.
    pub send_failures: u64,
}

/// What connections share: the configuration, counters, IP ids.
pub(crate) struct Shared {
    pub cfg: Config,
    pub stats: Stats,
    ip_id: u16,
}

impl Shared {
    /// Sends one segment to `peer` with `payload` (stream range) whose sum
    /// the site gives.
    #[allow(clippy::too_many_arguments)]
    pub fn segment<S: Copy>(
        &mut self,
        site: &mut impl Site<Stream = S>,
        peer: (&[u8; 6], [u8; 4], u16),
        seq: u32,
        ack: u32,
        fl: u8,
        mss: Option<u16>,
        data: Option<(S, u32, u32)>,
    ) -> bool {
        let (len, sum) = match data {
            Some((s, off, len)) => (len as usize, site.sum(s, off, len)),
            None => (0, 0),
        };
        self.ip_id = self.ip_id.wrapping_add(1);
        let h = Header {
            src_mac: self.cfg.mac,
            dst_mac: *peer.0,
            src_ip: self.cfg.ip,
            dst_ip: peer.1,
            src_port: self.cfg.port,
            dst_port: peer.2,
            seq,
            ack,
            flags: fl,
            window: self.cfg.window,
            mss,
            ip_id: self.ip_id,
        };
        let mut buf = [0u8; wire::HEADERS_MAX];
        let n = wire::write_header(&mut buf, &h, len, sum);
        let ok = site.send(&buf[..n], data);
        if !ok {
            self.stats.send_failures += 1;
        }
        ok
    }
}

/// A passive-open TCP server for one port.
pub struct Server<S> {
    sh: Shared,
    conns: Vec<Conn<S>>,
    by_peer: BTreeMap<([u8; 4], u16), usize>,
    free: Vec<usize>,
}

impl<S: Copy> Server<S> {
    /// A server with every slot free (and allocated now, to be reused).
    pub fn new(cfg: Config) -> Server<S> {
        let conns = (0..cfg.max_conns).map(|_| Conn::new(cfg.limits)).collect();
        let free = (0..cfg.max_conns).rev().collect();
        Server { sh: Shared { cfg, stats: Stats::default(), ip_id: 0 }, conns, by_peer: BTreeMap::new(), free }
    }

    /// The counters.
    pub fn stats(&self) -> Stats {
        self.sh.stats
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.by_peer.len()
    }

    /// Handles one received frame at time `now` (clock ticks).
    pub fn input(&mut self, frame: &[u8], now: u64, site: &mut impl Site<Stream = S>) {
        let mut out = [0u8; 64];
        if let Some(n) = wire::arp_reply(frame, self.sh.cfg.mac, self.sh.cfg.ip, &mut out) {
            if site.send(&out[..n], None) {
                self.sh.stats.arp_replies += 1;
            }
            return;
        }
        let Some(seg) = wire::parse_tcp(frame, self.sh.cfg.ip) else { return };
        if seg.dst_port != self.sh.cfg.port {
            return;
        }
        match self.by_peer.get(&(seg.src_ip, seg.src_port)).copied() {
            Some(i) => {
                self.conns[i].input(&seg, now, &mut self.sh, site);
                self.reap(i, site);
            }
            None => self.no_conn(&seg, now, site),
        }
    }

    /// A segment for no connection: a SYN opens one, anything else but a
    /// RST is answered with RST.
    fn no_conn(&mut self, seg: &Segment, now: u64, site: &mut impl Site<Stream = S>) {
        if seg.has(flags::RST) {
            return;
        }
        let peer = (&seg.src_mac, seg.src_ip, seg.src_port);
        if seg.has(flags::SYN) && !seg.has(flags::ACK) {
            if let Some(i) = self.free.pop() {
                let busy = self.by_peer.len() >= self.sh.cfg.serve_conns;
                let iss = self.isn(seg, now);
                self.by_peer.insert((seg.src_ip, seg.src_port), i);
                self.sh.stats.accepted += 1;
                self.conns[i].accept(seg, iss, busy, now, &mut self.sh, site);
                return;
            }
            self.sh.stats.refused_full += 1;
        } else {
            self.sh.stats.stray += 1;
        }
        if seg.has(flags::ACK) {
            self.sh.segment(site, peer, seg.ack, 0, flags::RST, None, None);
        } else {
            let ack = seg.seq.wrapping_add(seg.seq_len());
            self.sh.segment(site, peer, 0, ack, flags::RST | flags::ACK, None, None);
        }
    }

    /// An initial sequence number: the seed mixed with the peer and time.
    fn isn(&self, seg: &Segment, now: u64) -> u32 {
        let mut x = self.sh.cfg.seed
            ^ u64::from(u32::from_be_bytes(seg.src_ip)) << 16
            ^ u64::from(seg.src_port)
            ^ now.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        (x as u32).wrapping_add((now as u32).wrapping_mul(250))
    }

    /// Frees slot `i` (listed in `by_peer`) if its connection ended or was
    /// given up.
    fn reap(&mut self, i: usize, site: &mut impl Site<Stream = S>) {
        let c = &mut self.conns[i];
        if c.is_used() && !c.finished() {
            return;
        }
        if c.is_used() {
            self.sh.stats.closed += 1;
            c.free(site);
        }
        self.by_peer.remove(&c.peer_key());
        self.free.push(i);
    }

    /// Runs the timers due at `now`: retransmissions, idle closes.
    pub fn tick(&mut self, now: u64, site: &mut impl Site<Stream = S>) {
        let used: Vec<usize> = self.by_peer.values().copied().collect();
        for i in used {
            self.conns[i].tick(now, &mut self.sh, site);
            self.reap(i, site);
        }
    }

    /// The earliest time a timer is due, if any connection is open.
    pub fn next_deadline(&self) -> Option<u64> {
        self.by_peer.values().map(|&i| self.conns[i].deadline(&self.sh.cfg)).min()
    }

    /// Resets every connection (the server is stopping).
    pub fn shutdown(&mut self, site: &mut impl Site<Stream = S>) {
        let used: Vec<usize> = self.by_peer.values().copied().collect();
        for i in used {
            self.conns[i].abort(&mut self.sh, site);
            self.reap(i, site);
        }
    }
}
