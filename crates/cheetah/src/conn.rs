//! One connection: the passive side's states, the send queue (responses in
//! the site's streams, sent in segments aligned to the stored sums), the
//! acknowledgment and retransmission rules.

use alloc::collections::VecDeque;

use oxok_http::{Event, Limits, Parser, Status};

use crate::server::{Config, Response, Shared, Site};
use crate::wire::{Segment, flags};

fn lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

fn le(a: u32, b: u32) -> bool {
    a == b || lt(a, b)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Free,
    SynReceived,
    Open,
}

struct Queued<S> {
    start: u32,
    resp: Response<S>,
}

pub(crate) struct Conn<S> {
    state: State,
    mac: [u8; 6],
    ip: [u8; 4],
    port: u16,
    irs: u32,
    iss: u32,
    rcv_nxt: u32,
    snd_una: u32,
    snd_nxt: u32,
    snd_max: u32,
    snd_wnd: u32,
    mss: u32,
    cwnd: u32,
    /// Sequence number after the last queued response byte.
    q_end: u32,
    queue: VecDeque<Queued<S>>,
    /// No more responses: a FIN follows the queue.
    closing: bool,
    peer_fin: bool,
    /// Requests get 503 (the server is busy).
    busy: bool,
    parser: Parser,
    rto: u64,
    /// Retransmission (or persist) timer; 0: not running.
    timer: u64,
    retries: u32,
    dupacks: u32,
    last_rx: u64,
    ack_pending: bool,
    /// Three duplicate ACKs came: send the segment at `snd_una` again.
    fast_retransmit: bool,
}

impl<S: Copy> Conn<S> {
    pub fn new(limits: Limits) -> Conn<S> {
        Conn {
            state: State::Free,
            mac: [0; 6],
            ip: [0; 4],
            port: 0,
            irs: 0,
            iss: 0,
            rcv_nxt: 0,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            snd_wnd: 0,
            mss: 536,
            cwnd: 0,
            q_end: 0,
            queue: VecDeque::new(),
            closing: false,
            peer_fin: false,
            busy: false,
            parser: Parser::new(limits),
            rto: 0,
            timer: 0,
            retries: 0,
            dupacks: 0,
            last_rx: 0,
            ack_pending: false,
            fast_retransmit: false,
        }
    }

    pub fn is_used(&self) -> bool {
        self.state != State::Free
    }

    pub fn peer_key(&self) -> ([u8; 4], u16) {
        (self.ip, self.port)
    }

    fn peer(&self) -> (&[u8; 6], [u8; 4], u16) {
        (&self.mac, self.ip, self.port)
    }

    fn fin_seq(&self) -> u32 {
        self.q_end
    }

    fn fin_sent(&self) -> bool {
        self.closing && lt(self.fin_seq(), self.snd_max)
    }

    fn fin_acked(&self) -> bool {
        self.closing && lt(self.fin_seq(), self.snd_una)
    }

    /// Both sides closed and everything acknowledged (or the slot was
    /// already given up).
    pub fn finished(&self) -> bool {
        self.state == State::Free || (self.fin_acked() && self.peer_fin)
    }

    /// Takes a SYN: SYN-ACK with our MSS.
    #[allow(clippy::too_many_arguments)]
    pub fn accept(
        &mut self,
        seg: &Segment,
        iss: u32,
        busy: bool,
        now: u64,
        sh: &mut Shared,
        site: &mut impl Site<Stream = S>,
    ) {
        let cfg = &sh.cfg;
        self.state = State::SynReceived;
        self.mac = seg.src_mac;
        self.ip = seg.src_ip;
        self.port = seg.src_port;
        self.irs = seg.seq;
        self.rcv_nxt = seg.seq.wrapping_add(1);
        self.iss = iss;
        self.snd_una = iss;
        self.snd_nxt = iss.wrapping_add(1);
        self.snd_max = self.snd_nxt;
        self.q_end = self.snd_nxt;
        self.snd_wnd = u32::from(seg.window);
        self.mss = u32::from(seg.mss.unwrap_or(536).min(cfg.mss)).max(64);
        self.cwnd = 10 * self.mss;
        self.closing = false;
        self.peer_fin = false;
        self.busy = busy;
        self.parser.reset();
        self.rto = cfg.rto_ticks;
        self.retries = 0;
        self.dupacks = 0;
        self.last_rx = now;
        self.ack_pending = false;
        self.fast_retransmit = false;
        self.timer = now + self.rto;
        self.syn_ack(true, sh, site);
    }

    /// Sends the SYN-ACK; `with_mss`: with the MSS option.
    ///
    /// A SYN-ACK sent again on our own timeout leaves the option out: the
    /// client may already be established and sending (its ACK and data lost
    /// on the way in), and QEMU's user network (libslirp 4.7, the tests'
    /// host side) re-sizes the connection's buffers for every MSS option on
    /// a SYN, emptying its send buffer — the request it sent is then never
    /// sent again (seen in packet captures of `cheetah-robust`). Without the
    /// option a client that missed the first SYN-ACK assumes 536 bytes
    /// (RFC 9293 §3.7.1), which only limits the size of its requests'
    /// segments.
    fn syn_ack(&mut self, with_mss: bool, sh: &mut Shared, site: &mut impl Site<Stream = S>) {
        let mss = with_mss.then_some(sh.cfg.mss);
        sh.segment(site, self.peer(), self.iss, self.rcv_nxt, flags::SYN | flags::ACK, mss, None);
    }

    /// One segment for this connection.
    pub fn input(&mut self, seg: &Segment, now: u64, sh: &mut Shared, site: &mut impl Site<Stream = S>) {
        self.last_rx = now;
        if seg.has(flags::RST) {
            let wnd = u32::from(sh.cfg.window);
            if le(self.rcv_nxt, seg.seq) && lt(seg.seq, self.rcv_nxt.wrapping_add(wnd.max(1))) {
                sh.stats.resets += 1;
                self.free(site);
            }
            return;
        }
        if seg.has(flags::SYN) {
            if self.state == State::SynReceived && seg.seq == self.irs {
                self.syn_ack(true, sh, site); // our SYN-ACK was lost: the client is still in SYN-SENT
            } else {
                self.send_ack(sh, site); // challenge ACK (RFC 5961)
            }
            return;
        }
        if !seg.has(flags::ACK) {
            return;
        }
        if self.state == State::SynReceived {
            if seg.ack != self.iss.wrapping_add(1) {
                sh.segment(site, self.peer(), seg.ack, 0, flags::RST, None, None);
                return;
            }
            self.state = State::Open;
            self.snd_una = seg.ack;
            self.timer = 0;
            self.retries = 0;
            self.rto = sh.cfg.rto_ticks;
        }
        if !self.ack(seg, now, sh, site) {
            return;
        }
        self.receive(seg, sh, site);
        self.pump(now, false, sh, site);
        if self.ack_pending {
            self.send_ack(sh, site);
        }
    }

    /// The acknowledgment and window of `seg`; `false` if the segment is
    /// to be dropped.
    fn ack(&mut self, seg: &Segment, now: u64, sh: &mut Shared, site: &mut impl Site<Stream = S>) -> bool {
        if lt(self.snd_max, seg.ack) {
            self.send_ack(sh, site); // acknowledges what we never sent
            return false;
        }
        if lt(self.snd_una, seg.ack) {
            self.snd_una = seg.ack;
            if lt(self.snd_nxt, self.snd_una) {
                self.snd_nxt = self.snd_una;
            }
            self.retries = 0;
            self.dupacks = 0;
            self.rto = sh.cfg.rto_ticks;
            self.cwnd = (self.cwnd + self.mss).min(64 * self.mss);
            while let Some(q) = self.queue.front() {
                if le(q.start.wrapping_add(q.resp.len), self.snd_una) {
                    site.release(q.resp.stream);
                    self.queue.pop_front();
                } else {
                    break;
                }
            }
            self.timer = if self.snd_una == self.snd_max { 0 } else { now + self.rto };
        } else if seg.ack == self.snd_una
            && seg.payload.is_empty()
            && !seg.has(flags::FIN)
            && self.snd_una != self.snd_max
            && u32::from(seg.window) == self.snd_wnd
        {
            self.dupacks += 1;
            if self.dupacks == 3 {
                // Fast retransmit: the segment at the first unacknowledged
                // byte, once, from the cache (the rest stays in flight).
                self.cwnd = (self.cwnd / 2).max(2 * self.mss);
                self.fast_retransmit = true;
            }
        }
        self.snd_wnd = u32::from(seg.window);
        true
    }

    /// The data and FIN of `seg`, in order only.
    fn receive(&mut self, seg: &Segment, sh: &mut Shared, site: &mut impl Site<Stream = S>) {
        if seg.payload.is_empty() && !seg.has(flags::FIN) {
            return;
        }
        let mut data = seg.payload;
        if seg.seq != self.rcv_nxt {
            let skip = self.rcv_nxt.wrapping_sub(seg.seq) as usize;
            if lt(seg.seq, self.rcv_nxt) && skip <= data.len() {
                data = &data[skip..]; // part of it we had
            } else {
                self.ack_pending = true; // out of order or old: say what we expect
                return;
            }
        }
        let used = self.feed(data, sh, site);
        self.rcv_nxt = self.rcv_nxt.wrapping_add(used as u32);
        self.ack_pending = true;
        if seg.has(flags::FIN) && used == data.len() && !self.peer_fin {
            self.peer_fin = true;
            self.rcv_nxt = self.rcv_nxt.wrapping_add(1);
            self.closing = true;
        }
    }

    fn queue(&mut self, resp: Response<S>) {
        self.queue.push_back(Queued { start: self.q_end, resp });
        self.q_end = self.q_end.wrapping_add(resp.len);
    }

    /// Parses requests out of `data` and queues their responses; returns
    /// the bytes taken (fewer when the pipeline is full: the rest stays
    /// unacknowledged with the client).
    fn feed(&mut self, data: &[u8], sh: &mut Shared, site: &mut impl Site<Stream = S>) -> usize {
        if self.closing {
            return data.len(); // after the last response: read and dropped
        }
        let mut off = 0;
        while off < data.len() && self.queue.len() < sh.cfg.max_pipeline {
            let (n, ev) = self.parser.feed(&data[off..]);
            off += n;
            match ev {
                Event::Incomplete => {}
                Event::Request(req) if self.busy => {
                    sh.stats.unavailable += 1;
                    let r = site.refuse(Status::Unavailable, Some(req.method));
                    self.queue(r);
                    self.closing = true;
                    return data.len();
                }
                Event::Request(req) => {
                    sh.stats.requests += 1;
                    let r = site.respond(&req);
                    self.queue(r);
                    if !req.keep_alive() {
                        self.closing = true;
                        return data.len();
                    }
                }
                Event::Error(status) => {
                    sh.stats.errors += 1;
                    let r = site.refuse(status, None);
                    self.queue(r);
                    self.closing = true;
                    return data.len();
                }
            }
        }
        off
    }

    /// Sends what the windows allow from `snd_nxt` on: segments end at the
    /// response's multiples of the MSS (so their sums are the stored ones),
    /// the FIN rides on the last. `force` sends one segment even into a
    /// closed window (a probe after a timeout).
    fn pump(&mut self, now: u64, mut force: bool, sh: &mut Shared, site: &mut impl Site<Stream = S>) {
        if self.state != State::Open {
            return;
        }
        if core::mem::take(&mut self.fast_retransmit) && lt(self.snd_una, self.snd_max) {
            let resume = self.snd_nxt;
            self.snd_nxt = self.snd_una;
            self.send_one(now, true, sh, site);
            if lt(self.snd_nxt, resume) {
                self.snd_nxt = resume;
            }
        }
        while self.send_one(now, force, sh, site) {
            force = false;
        }
        if self.timer == 0 && (lt(self.snd_nxt, self.q_end) || (self.closing && !self.fin_sent())) {
            self.timer = now + self.rto; // persist: probe a closed window
        }
    }

    /// Sends one segment from `snd_nxt` if the windows allow (`force`: even
    /// into a closed window); whether it did.
    fn send_one(&mut self, now: u64, force: bool, sh: &mut Shared, site: &mut impl Site<Stream = S>) -> bool {
        let in_flight = self.snd_nxt.wrapping_sub(self.snd_una);
        let room = self.snd_wnd.min(self.cwnd).saturating_sub(in_flight);
        if lt(self.snd_nxt, self.q_end) {
            let Some(q) = self
                .queue
                .iter()
                .find(|q| le(q.start, self.snd_nxt) && lt(self.snd_nxt, q.start.wrapping_add(q.resp.len)))
            else {
                return false;
            };
            let off = self.snd_nxt.wrapping_sub(q.start);
            let end = ((off / self.mss + 1) * self.mss).min(q.resp.len);
            let mut len = end - off;
            if len > room {
                if force || (in_flight == 0 && room > 0) {
                    len = len.min(room.max(1));
                } else {
                    return false;
                }
            }
            let last = self.snd_nxt.wrapping_add(len) == self.q_end;
            let mut fl = flags::ACK;
            if off + len == q.resp.len {
                fl |= flags::PSH;
            }
            if last && self.closing {
                fl |= flags::FIN;
            }
            let resend = lt(self.snd_nxt, self.snd_max);
            let stream = q.resp.stream;
            sh.segment(site, self.peer(), self.snd_nxt, self.rcv_nxt, fl, None, Some((stream, off, len)));
            sh.stats.data_segments += 1;
            if self.ack_pending {
                sh.stats.piggybacked_acks += 1;
                self.ack_pending = false;
            }
            if resend {
                sh.stats.retransmits += 1;
            }
            self.advance(len + u32::from(fl & flags::FIN != 0), now);
            true
        } else if self.closing && self.snd_nxt == self.q_end {
            if room == 0 && !force && in_flight != 0 {
                return false;
            }
            if lt(self.snd_nxt, self.snd_max) {
                sh.stats.retransmits += 1;
            }
            sh.segment(site, self.peer(), self.snd_nxt, self.rcv_nxt, flags::FIN | flags::ACK, None, None);
            self.ack_pending = false;
            self.advance(1, now);
            true
        } else {
            false
        }
    }

    fn advance(&mut self, n: u32, now: u64) {
        self.snd_nxt = self.snd_nxt.wrapping_add(n);
        if lt(self.snd_max, self.snd_nxt) {
            self.snd_max = self.snd_nxt;
        }
        if self.timer == 0 {
            self.timer = now + self.rto;
        }
    }

    fn send_ack(&mut self, sh: &mut Shared, site: &mut impl Site<Stream = S>) {
        sh.segment(site, self.peer(), self.snd_nxt, self.rcv_nxt, flags::ACK, None, None);
        sh.stats.bare_acks += 1;
        self.ack_pending = false;
    }

    /// When this connection's next timer is due.
    pub fn deadline(&self, cfg: &Config) -> u64 {
        let idle = if self.fin_acked() { self.last_rx + cfg.idle_ticks / 4 } else { self.last_rx + cfg.idle_ticks };
        if self.timer != 0 { self.timer.min(idle) } else { idle }
    }

    /// Timers: retransmission from the cache after a timeout; a FIN for a
    /// connection idle too long, a reset for one idle twice as long (or
    /// left half-closed by the client).
    pub fn tick(&mut self, now: u64, sh: &mut Shared, site: &mut impl Site<Stream = S>) {
        if self.state == State::Free {
            return;
        }
        if self.timer != 0 && now >= self.timer {
            self.retries += 1;
            if self.retries > sh.cfg.max_retries {
                sh.stats.aborted += 1;
                sh.stats.unanswered += 1;
                self.abort(sh, site);
                return;
            }
            sh.stats.timeouts += 1;
            self.rto = (self.rto * 2).min(sh.cfg.rto_max_ticks);
            self.timer = now + self.rto;
            if self.state == State::SynReceived {
                self.syn_ack(false, sh, site);
                return;
            }
            self.snd_nxt = self.snd_una;
            self.cwnd = self.mss;
            self.dupacks = 0;
            self.pump(now, true, sh, site);
            return;
        }
        let quiet = now.saturating_sub(self.last_rx);
        if (self.fin_acked() && quiet > sh.cfg.idle_ticks / 4) || quiet > 2 * sh.cfg.idle_ticks {
            sh.stats.aborted += 1;
            self.abort(sh, site);
        } else if quiet > sh.cfg.idle_ticks && !self.closing && self.state == State::Open {
            self.closing = true;
            self.pump(now, false, sh, site);
        }
    }

    /// Resets the connection and frees it.
    pub fn abort(&mut self, sh: &mut Shared, site: &mut impl Site<Stream = S>) {
        if self.state != State::Free {
            sh.segment(site, self.peer(), self.snd_nxt, 0, flags::RST, None, None);
        }
        self.free(site);
    }

    /// Releases the queued responses; the slot (parser and queue storage
    /// included) waits for the next connection.
    pub fn free(&mut self, site: &mut impl Site<Stream = S>) {
        for q in self.queue.drain(..) {
            site.release(q.resp.stream);
        }
        self.state = State::Free;
        self.timer = 0;
        self.parser.reset();
    }
}
