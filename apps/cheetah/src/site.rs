//! The server's view of the cache and the network: responses are streams
//! of cached bytes (a canned head, then the file), sent by handing the
//! kernel a gather list that points into the cache's own frames — headers
//! from one frame of ours, the payload straight from the file's pages.

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;
use oxok_cheetah::{Response, Site, checksum};
use oxok_http::response::{Connection, file_status, sends_body};
use oxok_http::{Method, Request, Status, path};
use oxok_libos::abi::net::{PACKET_MAX, TX_PIECES_MAX, TxPiece};
use oxok_libos::net::Ring;
use oxok_libos::shm::Region;
use oxok_libos::{Error, net, println, sys};

use crate::cache::{Cache, Found};
use crate::canned::Errors;
use crate::pages::PAGE;

/// A response's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Cached file `id` behind its head `kind` (0/1: 200 keep-alive/close,
    /// 2/3: 304 keep-alive/close).
    File { id: u32, kind: u8 },
    /// Canned error response `idx`.
    Canned { idx: u16 },
}

/// Counters of the site.
#[derive(Clone, Copy, Debug, Default)]
pub struct SiteStats {
    pub stored_sums: u64,
    pub computed_sums: u64,
    pub frames_sent: u64,
    pub bytes_sent: u64,
    /// Data segments deliberately not sent (`--drop`).
    pub dropped: u64,
    /// Packets taken out of the ring into the backlog while sending.
    pub backlogged: u64,
    /// Packets dropped because the backlog was full.
    pub backlog_drops: u64,
}

/// Packets held in the backlog at most.
const BACKLOG_MAX: usize = 1024;

/// The cache, the canned errors and the transmit side.
pub struct Cheetah {
    pub cache: Cache,
    errors: Errors,
    hdr: Region,
    pub now: u64,
    pub hz: u64,
    pub log: bool,
    /// Lose every n-th data segment (a test of retransmission); 0: none.
    pub drop_every: u64,
    data_sends: u64,
    pub stats: SiteStats,
    /// Where our packets arrive.
    pub ring: Ring,
    /// Packets taken from the ring but not yet handled (oldest first): a
    /// long burst of sends empties the ring as it goes, so the client's
    /// ACKs and new SYNs are not dropped behind it.
    pub backlog: VecDeque<Vec<u8>>,
    spare: Vec<Vec<u8>>,
}

impl Cheetah {
    pub fn new(cache: Cache, ring: Ring, log: bool, drop_every: u64) -> Result<Cheetah, Error> {
        Ok(Cheetah {
            ring,
            backlog: VecDeque::new(),
            spare: Vec::new(),
            cache,
            errors: Errors::new()?,
            hdr: Region::create(1)?,
            now: 0,
            hz: 1000,
            log,
            drop_every,
            data_sends: 0,
            stats: SiteStats::default(),
        })
    }

    /// Moves what the ring holds into the backlog (bounded; beyond it,
    /// packets are dropped as the ring would).
    pub fn drain(&mut self) {
        while self.ring.ready() {
            let mut buf = self.spare.pop().unwrap_or_default();
            buf.resize(PACKET_MAX, 0);
            let Some(n) = self.ring.recv(&mut buf) else {
                self.spare.push(buf);
                return;
            };
            if self.backlog.len() >= BACKLOG_MAX {
                self.stats.backlog_drops += 1;
                self.spare.push(buf);
                continue;
            }
            buf.truncate(n.min(PACKET_MAX));
            self.stats.backlogged += 1;
            self.backlog.push_back(buf);
        }
    }

    /// Gives a handled packet's buffer back for reuse.
    pub fn recycle(&mut self, buf: Vec<u8>) {
        if self.spare.len() < 64 {
            self.spare.push(buf);
        }
    }

    fn canned(&self, status: Status, keep_alive: bool, method: Option<Method>) -> Response<Stream> {
        let idx = self.errors.index(status, keep_alive);
        let c = self.errors.all[idx];
        let len = if method == Some(Method::Head) { c.head_len } else { c.len };
        Response { stream: Stream::Canned { idx: idx as u16 }, len }
    }

    /// The gather pieces of `len` bytes at `off` of `stream`.
    fn pieces(&self, stream: Stream, off: u32, len: u32, out: &mut [TxPiece]) -> usize {
        let mut n = 0;
        match stream {
            Stream::Canned { idx } => {
                let c = self.errors.all[usize::from(idx)];
                let at = (c.at + off) as usize;
                out[0] = TxPiece { frame_slot: self.errors.pages.slot(at / PAGE), offset: (at % PAGE) as u32, len };
                n = 1;
            }
            Stream::File { id, kind } => {
                let Some(f) = self.cache.files.get(id as usize).and_then(Option::as_ref) else { return 0 };
                let h = f.heads[usize::from(kind)];
                let (mut at, end) = (off, off + len);
                if at < h.len {
                    let e = end.min(h.len);
                    out[n] = TxPiece { frame_slot: f.pages.slot(0), offset: h.off + at, len: e - at };
                    n += 1;
                    at = e;
                }
                while at < end && n < out.len() {
                    let b = (at - h.len) as usize;
                    let page = 1 + b / PAGE;
                    let o = b % PAGE;
                    let take = ((PAGE - o) as u32).min(end - at);
                    out[n] = TxPiece { frame_slot: f.pages.slot(page), offset: o as u32, len: take };
                    n += 1;
                    at += take;
                }
            }
        }
        n
    }

    /// Sums bytes `off..off + len` of `stream` by reading them (a segment
    /// that is not one of those summed in advance).
    fn compute_sum(&mut self, stream: Stream, off: u32, len: u32) -> u64 {
        self.stats.computed_sums += 1;
        let mut buf = [0u8; 1514];
        let len = (len as usize).min(buf.len());
        let out = &mut buf[..len];
        let off = off as usize;
        match stream {
            Stream::Canned { idx } => {
                let c = self.errors.all[usize::from(idx)];
                self.errors.pages.read(c.at as usize + off, out);
            }
            Stream::File { id, kind } => {
                let Some(f) = self.cache.files.get(id as usize).and_then(Option::as_ref) else { return 0 };
                let h = f.heads[usize::from(kind)];
                let head_len = h.len as usize;
                let in_head = head_len.saturating_sub(off).min(len);
                if in_head > 0 {
                    f.pages.read(h.off as usize + off, &mut out[..in_head]);
                }
                if in_head < len {
                    let body = off + in_head - head_len;
                    f.pages.read(PAGE + body, &mut out[in_head..]);
                }
            }
        }
        checksum::add(0, out)
    }

    /// Puts `head` at the start of our header frame.
    fn write_hdr(&self, head: &[u8]) {
        for (k, chunk) in head.chunks(8).enumerate() {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.hdr.words()[k].store(u64::from_le_bytes(w), Ordering::Relaxed);
        }
    }
}

impl Site for Cheetah {
    type Stream = Stream;

    fn respond(&mut self, req: &Request) -> Response<Stream> {
        let keep = Connection::for_request(req) == Connection::KeepAlive;
        let m = Some(req.method);
        let (resp, status) = match path::normalise(&req.target) {
            Err(s) => (self.canned(s, keep, m), s),
            Ok(p) => match self.cache.lookup(&p, self.now, self.hz) {
                Found::Missing => (self.canned(Status::NotFound, keep, m), Status::NotFound),
                Found::Failed => (self.canned(Status::InternalError, keep, m), Status::InternalError),
                Found::File(i) => match self.cache.files[i].as_mut() {
                    None => (self.canned(Status::InternalError, keep, m), Status::InternalError),
                    Some(f) => {
                        let status = file_status(req, f.mtime);
                        let kind = if status == Status::Ok { 0 } else { 2 } + u8::from(!keep);
                        let head = f.heads[usize::from(kind)].len;
                        let len = if sends_body(req, status) { head + f.size } else { head };
                        f.refs += 1;
                        (Response { stream: Stream::File { id: i as u32, kind }, len }, status)
                    }
                },
            },
        };
        if self.log {
            let verb = if req.method == Method::Head { "HEAD" } else { "GET" };
            println!("cheetah: {verb} {} {}", req.target, status.code());
        }
        resp
    }

    fn refuse(&mut self, status: Status, method: Option<Method>) -> Response<Stream> {
        if self.log {
            println!("cheetah: refused {}", status.code());
        }
        self.canned(status, false, method)
    }

    fn release(&mut self, stream: Stream) {
        if let Stream::File { id, .. } = stream {
            self.cache.release(id as usize);
        }
    }

    fn sum(&mut self, stream: Stream, off: u32, len: u32) -> u64 {
        let stored = match stream {
            Stream::Canned { idx } => {
                let c = self.errors.all[usize::from(idx)];
                match (off, len) {
                    (0, l) if l == c.len => Some(c.full_sum),
                    (0, l) if l == c.head_len => Some(c.head_sum),
                    _ => None,
                }
            }
            Stream::File { id, kind } => self.cache.files.get(id as usize).and_then(Option::as_ref).and_then(|f| {
                let h = f.heads[usize::from(kind)];
                if off == 0 && len == h.len {
                    Some(h.sum)
                } else if kind < 2 {
                    f.sums[usize::from(kind)].get(off, len)
                } else {
                    None
                }
            }),
        };
        match stored {
            Some(s) => {
                self.stats.stored_sums += 1;
                s
            }
            None => self.compute_sum(stream, off, len),
        }
    }

    fn send(&mut self, head: &[u8], data: Option<(Stream, u32, u32)>) -> bool {
        if data.is_some() && self.drop_every != 0 {
            self.data_sends += 1;
            if self.data_sends.is_multiple_of(self.drop_every) {
                self.stats.dropped += 1;
                return true; // lost on the way
            }
        }
        self.write_hdr(head);
        let mut pieces = [TxPiece::default(); TX_PIECES_MAX];
        pieces[0] = TxPiece { frame_slot: self.hdr.frame_slots()[0], offset: 0, len: head.len() as u32 };
        let mut n = 1;
        if let Some((s, off, len)) = data {
            n += self.pieces(s, off, len, &mut pieces[1..]);
        }
        // Every transmit buffer may be with the device: yield, then sleep
        // until a packet arrives — the peer's acknowledgements follow what
        // the device sent, and the device sends while we are idle — or a
        // tick passes, a bounded number of times (the kernel reclaims on
        // each send). The ring is emptied meanwhile. (A sleep of a whole
        // tick each time, 4 ms at 250 Hz, made a 100 KB response wait on
        // the timer: `bench/README.md`, "A budget counted in ticks".)
        for attempt in 0..100 {
            match net::send_pieces(&pieces[..n]) {
                Ok(()) => {
                    self.stats.frames_sent += 1;
                    self.stats.bytes_sent += pieces[..n].iter().map(|p| u64::from(p.len)).sum::<u64>();
                    // The ring emptied at every call: a call lets the
                    // next batch of packets in (the kernel's receive
                    // rule), and two batches fill a ring.
                    self.drain();
                    return true;
                }
                Err(Error::WouldBlock) => {
                    let seen = self.ring.produced();
                    self.drain();
                    if attempt < 20 {
                        let _ = sys::yield_cpu(0);
                    } else {
                        let _ = self.ring.wait_packet_or_tick(seen);
                    }
                }
                Err(_) => return false,
            }
        }
        false
    }
}
