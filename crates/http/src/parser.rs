//! The incremental request parser.
//!
//! Bytes are taken one at a time through a small state machine, so a
//! request may arrive in pieces of any size (a byte per second included)
//! and the parser never holds more than its [`Limits`] allow: the target is
//! refused with 414 as soon as it is one byte too long, the header section
//! with 431 as soon as it is, a body with 413 as soon as its length is read.
//! Lines must end with CRLF; a bare LF or CR is a 400.

use alloc::string::String;
use alloc::vec::Vec;

use crate::Status;
use crate::date;

/// Longest method token read before the request is refused as garbage.
const MAX_METHOD: usize = 16;
/// Length of `HTTP/1.1`.
const VERSION_LEN: usize = 8;

/// How much of a request the parser accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest request target (bytes); one more gives 414.
    pub max_target: usize,
    /// Longest header section, CRLFs included; more gives 431.
    pub max_headers_bytes: usize,
    /// Most header lines; more gives 431.
    pub max_header_lines: usize,
    /// Longest body (read and discarded); more gives 413.
    pub max_body: u64,
}

impl Limits {
    /// The servers' limits: 2 KiB targets, 8 KiB and 64 lines of headers,
    /// 4 KiB bodies.
    pub const DEFAULT: Limits =
        Limits { max_target: 2048, max_headers_bytes: 8192, max_header_lines: 64, max_body: 4096 };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// The methods the servers implement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `GET`: the file.
    Get,
    /// `HEAD`: the file's head without its body.
    Head,
}

/// The protocol versions the servers speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// `HTTP/1.0`: a connection per request unless `keep-alive` is asked.
    Http10,
    /// `HTTP/1.1`: persistent unless `close` is asked.
    Http11,
}

/// One parsed request: what the servers need of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// `GET` or `HEAD`.
    pub method: Method,
    /// The request target as sent (printable ASCII); see [`crate::path::normalise`].
    pub target: String,
    /// The version of the request line.
    pub version: Version,
    /// The `Host` header, if any (required of HTTP/1.1).
    pub host: Option<String>,
    /// `If-Modified-Since` as Unix seconds, if present and well formed
    /// (a malformed date is ignored, as RFC 9110 says).
    pub if_modified_since: Option<u64>,
    /// The `Content-Length` of the (discarded) body.
    pub content_length: u64,
    /// `Connection: close` was sent.
    pub conn_close: bool,
    /// `Connection: keep-alive` was sent.
    pub conn_keep_alive: bool,
}

impl Request {
    /// Whether the connection stays open after the response: HTTP/1.1
    /// unless the client said `close`, HTTP/1.0 only if it said `keep-alive`.
    pub fn keep_alive(&self) -> bool {
        match self.version {
            Version::Http11 => !self.conn_close,
            Version::Http10 => self.conn_keep_alive && !self.conn_close,
        }
    }
}

/// What one call of [`Parser::feed`] produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Every byte was taken; the request is not complete yet.
    Incomplete,
    /// A whole request (its body, if any, read and discarded). The parser is
    /// ready for the next one (pipelining).
    Request(Request),
    /// The request is refused with this status; the connection should be
    /// answered and closed. The parser stays failed.
    Error(Status),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Method,
    Target,
    Version,
    LineLf,
    Header,
    HeaderLf,
    EndLf,
    Body(u64),
    Failed(Status),
}

/// An incremental HTTP/1.x request parser (one per connection).
#[derive(Debug)]
pub struct Parser {
    limits: Limits,
    state: State,
    method: [u8; MAX_METHOD],
    method_len: usize,
    pub(crate) target: Vec<u8>,
    version: [u8; VERSION_LEN],
    version_len: usize,
    pub(crate) line: Vec<u8>,
    header_bytes: usize,
    header_lines: usize,
    req: Partial,
}

#[derive(Clone, Debug, Default)]
struct Partial {
    method: Option<Method>,
    version: Option<Version>,
    host: Option<String>,
    ims: Option<u64>,
    content_length: Option<u64>,
    transfer_coding: bool,
    close: bool,
    keep_alive: bool,
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

impl Parser {
    /// A parser waiting for a request line.
    pub fn new(limits: Limits) -> Parser {
        Parser {
            limits,
            state: State::Method,
            method: [0; MAX_METHOD],
            method_len: 0,
            target: Vec::new(),
            version: [0; VERSION_LEN],
            version_len: 0,
            line: Vec::new(),
            header_bytes: 0,
            header_lines: 0,
            req: Partial::default(),
        }
    }

    /// Forgets any partial request (a reused connection slot).
    pub fn reset(&mut self) {
        self.state = State::Method;
        self.method_len = 0;
        self.target.clear();
        self.version_len = 0;
        self.line.clear();
        self.header_bytes = 0;
        self.header_lines = 0;
        self.req = Partial::default();
    }

    /// Whether no byte of a next request has been taken (a connection may
    /// close here without losing anything).
    pub fn is_idle(&self) -> bool {
        self.state == State::Method && self.method_len == 0
    }

    /// Takes bytes from `data` and returns how many it used and what
    /// happened. Bytes after a complete request are left for the next call.
    pub fn feed(&mut self, data: &[u8]) -> (usize, Event) {
        let mut used = 0;
        while used < data.len() {
            if let State::Failed(s) = self.state {
                return (used, Event::Error(s));
            }
            if let State::Body(left) = self.state {
                let take = core::cmp::min(left, (data.len() - used) as u64);
                used += take as usize;
                let left = left - take;
                self.state = State::Body(left);
                if left == 0 {
                    return (used, self.finish());
                }
                continue;
            }
            let b = data[used];
            used += 1;
            match self.step(b) {
                Ok(None) => {}
                Ok(Some(ev)) => return (used, ev),
                Err(s) => {
                    self.state = State::Failed(s);
                    return (used, Event::Error(s));
                }
            }
        }
        match self.state {
            State::Failed(s) => (used, Event::Error(s)),
            _ => (used, Event::Incomplete),
        }
    }

    fn step(&mut self, b: u8) -> Result<Option<Event>, Status> {
        match self.state {
            State::Method => {
                if b == b' ' {
                    if self.method_len == 0 {
                        return Err(Status::BadRequest);
                    }
                    self.state = State::Target;
                } else if is_tchar(b) && self.method_len < MAX_METHOD {
                    self.method[self.method_len] = b;
                    self.method_len += 1;
                } else {
                    return Err(Status::BadRequest);
                }
            }
            State::Target => {
                if b == b' ' {
                    if self.target.is_empty() {
                        return Err(Status::BadRequest);
                    }
                    self.state = State::Version;
                } else if !(0x21..0x7f).contains(&b) {
                    return Err(Status::BadRequest);
                } else if self.target.len() >= self.limits.max_target {
                    return Err(Status::UriTooLong);
                } else {
                    self.target.push(b);
                }
            }
            State::Version => {
                if b == b'\r' {
                    self.state = State::LineLf;
                } else if self.version_len < VERSION_LEN && (0x21..0x7f).contains(&b) {
                    self.version[self.version_len] = b;
                    self.version_len += 1;
                } else {
                    return Err(Status::BadRequest);
                }
            }
            State::LineLf => {
                if b != b'\n' {
                    return Err(Status::BadRequest);
                }
                self.request_line()?;
                self.state = State::Header;
            }
            State::Header => {
                self.count_header_byte()?;
                match b {
                    b'\r' => {
                        self.state = if self.line.is_empty() { State::EndLf } else { State::HeaderLf };
                    }
                    b'\n' => return Err(Status::BadRequest),
                    _ => self.line.push(b),
                }
            }
            State::HeaderLf => {
                self.count_header_byte()?;
                if b != b'\n' {
                    return Err(Status::BadRequest);
                }
                self.header_lines += 1;
                if self.header_lines > self.limits.max_header_lines {
                    return Err(Status::HeadersTooLarge);
                }
                let line = core::mem::take(&mut self.line);
                let r = self.header(&line);
                self.line = line;
                self.line.clear();
                r?;
                self.state = State::Header;
            }
            State::EndLf => {
                self.count_header_byte()?;
                if b != b'\n' {
                    return Err(Status::BadRequest);
                }
                return self.head_done();
            }
            State::Body(_) | State::Failed(_) => return Err(Status::BadRequest),
        }
        Ok(None)
    }

    fn count_header_byte(&mut self) -> Result<(), Status> {
        self.header_bytes += 1;
        if self.header_bytes > self.limits.max_headers_bytes {
            return Err(Status::HeadersTooLarge);
        }
        Ok(())
    }

    /// Judges the request line: version first (garbage is 400, another
    /// HTTP version 505), then the method (405).
    fn request_line(&mut self) -> Result<(), Status> {
        let v = &self.version[..self.version_len];
        let version = match v {
            b"HTTP/1.0" => Version::Http10,
            b"HTTP/1.1" => Version::Http11,
            [b'H', b'T', b'T', b'P', b'/', maj, b'.', min] if maj.is_ascii_digit() && min.is_ascii_digit() => {
                return Err(Status::VersionNotSupported);
            }
            _ => return Err(Status::BadRequest),
        };
        self.req.version = Some(version);
        self.req.method = match &self.method[..self.method_len] {
            b"GET" => Some(Method::Get),
            b"HEAD" => Some(Method::Head),
            _ => return Err(Status::MethodNotAllowed),
        };
        Ok(())
    }

    /// One complete header line (without its CRLF).
    fn header(&mut self, line: &[u8]) -> Result<(), Status> {
        if line[0] == b' ' || line[0] == b'\t' {
            return Err(Status::BadRequest); // obsolete line folding
        }
        let colon = line.iter().position(|&c| c == b':').ok_or(Status::BadRequest)?;
        let name = &line[..colon];
        if name.is_empty() || !name.iter().all(|&c| is_tchar(c)) {
            return Err(Status::BadRequest);
        }
        let value = trim(&line[colon + 1..]);
        if value.iter().any(|&c| (c < 0x20 && c != b'\t') || c == 0x7f) {
            return Err(Status::BadRequest);
        }
        if name.eq_ignore_ascii_case(b"host") {
            if self.req.host.is_some() {
                return Err(Status::BadRequest);
            }
            self.req.host = Some(ascii_string(value)?);
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in value.split(|&c| c == b',') {
                let token = trim(token);
                if token.eq_ignore_ascii_case(b"close") {
                    self.req.close = true;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    self.req.keep_alive = true;
                }
            }
        } else if name.eq_ignore_ascii_case(b"if-modified-since") {
            self.req.ims = date::parse(value);
        } else if name.eq_ignore_ascii_case(b"content-length") {
            let n = parse_length(value)?;
            if self.req.content_length.is_some_and(|old| old != n) {
                return Err(Status::BadRequest);
            }
            self.req.content_length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            self.req.transfer_coding = true;
        }
        Ok(())
    }

    fn head_done(&mut self) -> Result<Option<Event>, Status> {
        if self.req.version == Some(Version::Http11) && self.req.host.is_none() {
            return Err(Status::BadRequest);
        }
        if self.req.transfer_coding {
            return Err(Status::NotImplemented);
        }
        let len = self.req.content_length.unwrap_or(0);
        if len > self.limits.max_body {
            return Err(Status::PayloadTooLarge);
        }
        if len > 0 {
            self.state = State::Body(len);
            return Ok(None);
        }
        Ok(Some(self.finish()))
    }

    fn finish(&mut self) -> Event {
        let target = String::from_utf8(core::mem::take(&mut self.target)).unwrap_or_default();
        let req = core::mem::take(&mut self.req);
        let ev = match (req.method, req.version) {
            (Some(method), Some(version)) => Event::Request(Request {
                method,
                target,
                version,
                host: req.host,
                if_modified_since: req.ims,
                content_length: req.content_length.unwrap_or(0),
                conn_close: req.close,
                conn_keep_alive: req.keep_alive,
            }),
            _ => Event::Error(Status::BadRequest),
        };
        self.reset();
        if let Event::Error(s) = ev {
            self.state = State::Failed(s);
        }
        ev
    }
}

fn trim(mut v: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = v {
        v = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = v {
        v = rest;
    }
    v
}

fn ascii_string(v: &[u8]) -> Result<String, Status> {
    if !v.is_ascii() {
        return Err(Status::BadRequest);
    }
    String::from_utf8(v.to_vec()).map_err(|_| Status::BadRequest)
}

/// A `Content-Length`: digits only; a length too large to hold is too large
/// to accept (413).
fn parse_length(v: &[u8]) -> Result<u64, Status> {
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return Err(Status::BadRequest);
    }
    let mut n: u64 = 0;
    for &d in v {
        n = n.checked_mul(10).and_then(|n| n.checked_add(u64::from(d - b'0'))).ok_or(Status::PayloadTooLarge)?;
    }
    Ok(n)
}
