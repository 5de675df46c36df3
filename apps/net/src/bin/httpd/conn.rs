//! One client connection: bytes in through `oxok_http`'s parser, one
//! request at a time (pipelined bytes wait until the response before them
//! is out), the response out through a non-blocking socket: the head, then
//! the document straight from the cache, corked so that a small response
//! (and the FIN after a last one) leaves in one segment.

use crate::files::{Cache, Found};
use crate::{Config, Stats};
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use oxok_http::response::{self, Connection, Head};
use oxok_http::{Event, Method, Parser, Request, Status};
use oxok_libos::fd::IoError;
use oxok_libos::net::socket::{Ready, SockAddr, Socket};
use oxok_libos::println;

/// Bytes read from the socket at a time.
const READ_CHUNK: usize = 4096;

/// Where a connection is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Reading a request.
    Reading,
    /// Sending a response; afterwards read the next request.
    Sending,
    /// Sending a last response; afterwards close.
    Closing,
    /// Done: drop it.
    Done,
}

/// A connection.
pub struct Conn {
    pub sock: Arc<Socket>,
    peer: SockAddr,
    parser: Parser,
    /// Bytes received but not yet given to the parser (after a request).
    pending: Vec<u8>,
    head: Vec<u8>,
    head_sent: usize,
    body: Option<Arc<Vec<u8>>>,
    body_sent: usize,
    pub phase: Phase,
    /// Tick of the last progress (idle limit) and of the current
    /// request's first byte (request time limit; 0: none begun).
    pub last: u64,
    pub began: u64,
}

impl Conn {
    pub fn new(sock: Arc<Socket>, peer: SockAddr, now: u64) -> Conn {
        sock.set_nonblocking(true);
        Conn {
            sock,
            peer,
            parser: Parser::new(oxok_http::Limits::DEFAULT),
            pending: Vec::new(),
            head: Vec::new(),
            head_sent: 0,
            body: None,
            body_sent: 0,
            phase: Phase::Reading,
            last: now,
            began: 0,
        }
    }

    /// What to wait for.
    pub fn interest(&self) -> Ready {
        match self.phase {
            Phase::Reading => Ready { read: true, write: false, hangup: false },
            Phase::Sending | Phase::Closing => Ready { read: false, write: true, hangup: false },
            Phase::Done => Ready::default(),
        }
    }

    /// True while no byte of a request has come and nothing is being sent.
    pub fn idle(&self) -> bool {
        self.phase == Phase::Reading && self.parser.is_idle() && self.pending.is_empty()
    }

    /// Reads what the socket has and answers a complete request.
    pub fn on_read(&mut self, now: u64, cfg: &Config, cache: &mut Cache, stats: &mut Stats) {
        let mut buf = [0u8; READ_CHUNK];
        match self.sock.recv(&mut buf) {
            Ok(0) => self.phase = Phase::Done,
            Ok(n) => {
                self.last = now;
                if self.began == 0 {
                    self.began = now;
                }
                self.pending.extend_from_slice(&buf[..n]);
                self.parse(now, cfg, cache, stats);
            }
            Err(IoError::WouldBlock) => {}
            Err(_) => self.phase = Phase::Done,
        }
    }

    /// Feeds pending bytes to the parser until a request or an error.
    fn parse(&mut self, now: u64, cfg: &Config, cache: &mut Cache, stats: &mut Stats) {
        if self.pending.is_empty() || self.phase != Phase::Reading {
            return;
        }
        let (used, ev) = self.parser.feed(&self.pending);
        self.pending.drain(..used.min(self.pending.len()));
        match ev {
            Event::Incomplete => {}
            Event::Request(req) => self.answer(&req, cfg, cache, stats),
            Event::Error(status) => {
                self.pending.clear();
                self.respond_error(status, None, cfg, stats, "-");
            }
        }
        self.last = now;
    }

    fn answer(&mut self, req: &Request, cfg: &Config, cache: &mut Cache, stats: &mut Stats) {
        let conn = Connection::for_request(req);
        let path = match oxok_http::path::normalise(&req.target) {
            Ok(p) => p,
            Err(status) => return self.respond_error(status, Some(req), cfg, stats, &req.target),
        };
        let (data, mtime) = match cache.get(&cfg.root, &path) {
            Found::Doc(d, m) => (d, m),
            Found::Missing => return self.respond_error(Status::NotFound, Some(req), cfg, stats, &req.target),
            Found::Failed => return self.respond_error(Status::InternalError, Some(req), cfg, stats, &req.target),
        };
        let status = response::file_status(req, mtime);
        let head = Head {
            status,
            content_length: data.len() as u64,
            content_type: Some(oxok_http::mime::content_type(&oxok_http::path::with_index(&path))),
            last_modified: Some(mtime),
            connection: conn,
        };
        self.head.clear();
        response::write_head(&mut self.head, &head);
        let body = response::sends_body(req, status);
        let len = if body { data.len() } else { 0 };
        self.body = if body { Some(data) } else { None };
        self.start(conn, status, Some(req), &req.target, len, cfg, stats);
    }

    fn respond_error(&mut self, status: Status, req: Option<&Request>, cfg: &Config, stats: &mut Stats, target: &str) {
        // An understood request keeps its connection for statuses that
        // leave the stream in step (404, 405 after a whole request…); a
        // malformed one closes it.
        let conn = match req {
            Some(r) if matches!(status, Status::NotFound | Status::InternalError) => Connection::for_request(r),
            _ => Connection::Close,
        };
        self.head.clear();
        response::error(&mut self.head, status, conn, req.map(|r| r.method));
        self.body = None;
        let len = self.head.len();
        self.start(conn, status, req, target, len, cfg, stats);
    }

    #[allow(clippy::too_many_arguments)]
    fn start(
        &mut self,
        conn: Connection,
        status: Status,
        req: Option<&Request>,
        target: &str,
        len: usize,
        cfg: &Config,
        stats: &mut Stats,
    ) {
        self.head_sent = 0;
        self.body_sent = 0;
        self.began = 0;
        // The head and body wait for each other (and for the FIN of a last
        // response): one segment for a small document, not three.
        self.sock.set_cork(true);
        self.phase = if conn == Connection::KeepAlive { Phase::Sending } else { Phase::Closing };
        stats.count(status);
        if cfg.log {
            let method = match req.map(|r| r.method) {
                Some(Method::Get) => "GET",
                Some(Method::Head) => "HEAD",
                None => "-",
            };
            let shown: String = target.chars().take(80).collect();
            println!("httpd: {} \"{} {}\" {} {}", self.peer, method, shown, status.code(), len);
        }
    }

    /// Sends what the socket takes; after the whole response reads the
    /// next request (or closes).
    pub fn on_write(&mut self, now: u64, cfg: &Config, cache: &mut Cache, stats: &mut Stats) {
        loop {
            let (buf, from_head) = if self.head_sent < self.head.len() {
                (&self.head[self.head_sent..], true)
            } else if let Some(b) = self.body.as_ref().filter(|b| self.body_sent < b.len()) {
                (&b[self.body_sent..], false)
            } else {
                break;
            };
            match self.sock.send(buf) {
                Ok(n) => {
                    self.last = now;
                    stats.bytes += n as u64;
                    if from_head {
                        self.head_sent += n;
                    } else {
                        self.body_sent += n;
                    }
                }
                Err(IoError::WouldBlock) => return,
                Err(_) => {
                    stats.broken += 1;
                    self.phase = Phase::Done;
                    return;
                }
            }
        }
        self.body = None;
        if self.phase == Phase::Closing {
            let _ = self.sock.shutdown(oxok_libos::net::socket::Shutdown::Write);
            self.phase = Phase::Done;
        } else {
            self.sock.set_cork(false);
            self.phase = Phase::Reading;
            // A pipelined request may already be here.
            self.parse(now, cfg, cache, stats);
        }
    }
}
