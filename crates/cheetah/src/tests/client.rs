//! A scripted TCP client and an in-memory site for the tests.

use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::vec::Vec;

use oxok_http::response::{self, Connection, Head};
use oxok_http::{Limits, Method, Request, Status, path};

use crate::checksum;
use crate::server::{Config, Response, Server, Site};
use crate::sums::SegmentSums;
use crate::wire::{self, Header, Segment, flags};

pub const SERVER_IP: [u8; 4] = [10, 0, 2, 15];
pub const SERVER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
pub const CLIENT_IP: [u8; 4] = [10, 0, 2, 2];
pub const CLIENT_MAC: [u8; 6] = [2, 0, 0, 0, 0, 2];
pub const PORT: u16 = 80;

pub fn config() -> Config {
    Config {
        mac: SERVER_MAC,
        ip: SERVER_IP,
        port: PORT,
        mss: 1460,
        max_conns: 8,
        serve_conns: 6,
        rto_ticks: 200,
        rto_max_ticks: 3000,
        max_retries: 6,
        idle_ticks: 30_000,
        window: 8192,
        max_pipeline: 4,
        limits: Limits::DEFAULT,
        seed: 1,
    }
}

/// One file's content for the test site.
pub fn file(len: usize, salt: u8) -> Vec<u8> {
    (0..len).map(|k| (k as u8).wrapping_mul(31).wrapping_add(salt) ^ (k >> 8) as u8).collect()
}

/// Streams as byte vectors, with the stored sums and use counts.
pub struct TestSite {
    pub files: Vec<(String, Vec<u8>)>,
    pub streams: Vec<(Vec<u8>, SegmentSums)>,
    pub refs: Vec<u32>,
    pub stored_sums: u64,
    pub computed_sums: u64,
    pub pending: Vec<Sent>,
}

impl TestSite {
    pub fn new() -> TestSite {
        TestSite {
            files: alloc::vec![
                (String::from("/1k.bin"), file(1024, 1)),
                (String::from("/10k.bin"), file(10_240, 2)),
                (String::from("/100k.bin"), file(102_400, 3)),
                (String::from("/index.html"), Vec::from(&b"<html>hello</html>"[..])),
            ],
            streams: Vec::new(),
            refs: Vec::new(),
            stored_sums: 0,
            computed_sums: 0,
            pending: Vec::new(),
        }
    }

    fn stream(&mut self, bytes: Vec<u8>) -> usize {
        let sums = SegmentSums::new(&[&bytes], 1460);
        self.streams.push((bytes, sums));
        self.refs.push(1);
        self.streams.len() - 1
    }

    pub fn live(&self) -> u32 {
        self.refs.iter().sum()
    }
}

impl Site for TestSite {
    type Stream = usize;

    fn respond(&mut self, req: &Request) -> Response<usize> {
        let conn = Connection::for_request(req);
        let Ok(p) = path::normalise(&req.target) else { return self.refuse(Status::BadRequest, Some(req.method)) };
        let p = path::with_index(&p);
        let Some((_, body)) = self.files.iter().find(|(n, _)| *n == p) else {
            let mut out = Vec::new();
            response::error(&mut out, Status::NotFound, conn, Some(req.method));
            let len = out.len() as u32;
            return Response { stream: self.stream(out), len };
        };
        let body = body.clone();
        let mut out = Vec::new();
        let head = Head {
            status: Status::Ok,
            content_length: body.len() as u64,
            content_type: Some(oxok_http::mime::content_type(&p)),
            last_modified: Some(1_000_000_000),
            connection: conn,
        };
        response::write_head(&mut out, &head);
        let head_len = out.len() as u32;
        out.extend_from_slice(&body);
        let len = if req.method == Method::Head { head_len } else { out.len() as u32 };
        Response { stream: self.stream(out), len }
    }

    fn refuse(&mut self, status: Status, method: Option<Method>) -> Response<usize> {
        let mut out = Vec::new();
        response::error(&mut out, status, Connection::Close, method);
        let len = out.len() as u32;
        Response { stream: self.stream(out), len }
    }

    fn release(&mut self, s: usize) {
        assert!(self.refs[s] > 0, "stream {s} released twice");
        self.refs[s] -= 1;
    }

    fn send(&mut self, head: &[u8], data: Option<(usize, u32, u32)>) -> bool {
        self.pending.push((Vec::from(head), data));
        true
    }

    fn sum(&mut self, s: usize, off: u32, len: u32) -> u64 {
        let (bytes, sums) = &self.streams[s];
        match sums.get(off, len) {
            Some(v) => {
                self.stored_sums += 1;
                v
            }
            None => {
                self.computed_sums += 1;
                checksum::add(0, &bytes[off as usize..(off + len) as usize])
            }
        }
    }
}

pub struct Wire {
    pub frames: VecDeque<Vec<u8>>,
    pub sent: u64,
}

impl Wire {
    pub fn new() -> Wire {
        Wire { frames: VecDeque::new(), sent: 0 }
    }
}

/// A frame the server sent: head and stream range (copied out after the
/// server returns).
type Sent = (Vec<u8>, Option<(usize, u32, u32)>);

/// A server, its site, and what went over the wire.
pub struct Rig {
    pub server: Server<usize>,
    pub site: TestSite,
    pub now: u64,
    /// Frames from the server not yet read by a client.
    pub wire: Wire,
    /// Drops the server's n-th frame (counting from 0) when it returns true.
    pub lose: fn(u64, &[u8]) -> bool,
}

impl Rig {
    pub fn new(cfg: Config) -> Rig {
        Rig { server: Server::new(cfg), site: TestSite::new(), now: 1000, wire: Wire::new(), lose: |_, _| false }
    }

    fn flush(&mut self) {
        for (head, data) in core::mem::take(&mut self.site.pending) {
            let mut f = head;
            if let Some((s, off, len)) = data {
                f.extend_from_slice(&self.site.streams[s].0[off as usize..(off + len) as usize]);
            }
            let n = self.wire.sent;
            self.wire.sent += 1;
            if !(self.lose)(n, &f) {
                self.wire.frames.push_back(f);
            }
        }
    }

    pub fn deliver(&mut self, frame: &[u8]) {
        self.server.input(frame, self.now, &mut self.site);
        self.flush();
    }

    pub fn advance(&mut self, ticks: u64) {
        self.now += ticks;
        self.server.tick(self.now, &mut self.site);
        self.flush();
    }
}

/// One client connection's view.
pub struct Client {
    pub port: u16,
    pub seq: u32,
    pub ack: u32,
    pub window: u16,
    pub got: Vec<u8>,
    pub fin: bool,
    pub rst: bool,
    /// Segments that came out of order (seq → payload, FIN).
    pub held: alloc::collections::BTreeMap<u32, (Vec<u8>, bool)>,
}

impl Client {
    pub fn new(port: u16) -> Client {
        Client {
            port,
            seq: 5000,
            ack: 0,
            window: 65535,
            got: Vec::new(),
            fin: false,
            rst: false,
            held: Default::default(),
        }
    }

    pub fn frame(&self, fl: u8, seq: u32, payload: &[u8], mss: Option<u16>) -> Vec<u8> {
        let h = Header {
            src_mac: CLIENT_MAC,
            dst_mac: SERVER_MAC,
            src_ip: CLIENT_IP,
            dst_ip: SERVER_IP,
            src_port: self.port,
            dst_port: PORT,
            seq,
            ack: self.ack,
            flags: fl,
            window: self.window,
            mss,
            ip_id: 1,
        };
        let mut buf = [0u8; wire::HEADERS_MAX];
        let n = wire::write_header(&mut buf, &h, payload.len(), checksum::add(0, payload));
        let mut f = Vec::from(&buf[..n]);
        f.extend_from_slice(payload);
        f
    }

    /// Segments on the wire for this client (checksums checked by parsing).
    pub fn take(&self, wire: &mut Wire) -> Vec<Vec<u8>> {
        let mut mine = Vec::new();
        let mut rest = VecDeque::new();
        while let Some(f) = wire.frames.pop_front() {
            match wire::parse_tcp(&f, CLIENT_IP) {
                Some(s) if s.dst_port == self.port => mine.push(f),
                Some(_) => rest.push_back(f),
                None => panic!("a frame from the server does not parse (or has a bad checksum)"),
            }
        }
        wire.frames = rest;
        mine
    }

    pub fn connect(&mut self, rig: &mut Rig) -> Segment<'static> {
        let syn = self.frame(flags::SYN, self.seq, &[], Some(1460));
        rig.deliver(&syn);
        let frames = self.take(&mut rig.wire);
        assert_eq!(frames.len(), 1, "one SYN-ACK");
        let f = alloc::boxed::Box::leak(frames.into_iter().next().unwrap_or_default().into_boxed_slice());
        let s = wire::parse_tcp(f, CLIENT_IP).expect("SYN-ACK parses");
        assert_eq!(s.flags, flags::SYN | flags::ACK);
        assert_eq!(s.ack, self.seq + 1);
        assert_eq!(s.mss, Some(1460));
        self.seq += 1;
        self.ack = s.seq.wrapping_add(1);
        s
    }

    /// Sends `data` (with the handshake's ACK).
    pub fn send(&mut self, rig: &mut Rig, data: &[u8]) {
        let f = self.frame(flags::ACK | flags::PSH, self.seq, data, None);
        self.seq = self.seq.wrapping_add(data.len() as u32);
        rig.deliver(&f);
    }

    /// Reads what the server sent, in order, acknowledging each in-order
    /// segment; returns the segments seen (seq, flags, payload length).
    pub fn pull(&mut self, rig: &mut Rig) -> Vec<(u32, u8, usize)> {
        let mut seen = Vec::new();
        loop {
            let frames = self.take(&mut rig.wire);
            if frames.is_empty() {
                return seen;
            }
            for f in frames {
                let s = wire::parse_tcp(&f, CLIENT_IP).expect("parses");
                seen.push((s.seq, s.flags, s.payload.len()));
                if s.has(flags::RST) {
                    self.rst = true;
                    continue;
                }
                if !s.payload.is_empty() || s.has(flags::FIN) {
                    self.held.insert(s.seq, (Vec::from(s.payload), s.has(flags::FIN)));
                }
                while let Some((data, fin)) = self.held.remove(&self.ack) {
                    self.got.extend_from_slice(&data);
                    self.ack = self.ack.wrapping_add(data.len() as u32 + u32::from(fin));
                    if fin {
                        self.fin = true;
                    }
                }
                self.held.retain(|&q, _| (q.wrapping_sub(self.ack) as i32) > 0);
                if !s.payload.is_empty() || s.has(flags::FIN) {
                    let a = self.frame(flags::ACK, self.seq, &[], None);
                    rig.deliver(&a);
                }
            }
        }
    }

    pub fn close(&mut self, rig: &mut Rig) {
        let f = self.frame(flags::FIN | flags::ACK, self.seq, &[], None);
        self.seq += 1;
        rig.deliver(&f);
    }
}

/// Splits an HTTP response into head and body.
pub fn split(resp: &[u8]) -> (String, Vec<u8>) {
    let end = resp.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
    (String::from_utf8_lossy(&resp[..end]).into_owned(), Vec::from(&resp[end..]))
}
