//! Response heads: the status line and header section both servers send.
//!
//! A head is built once per file by Cheetah (the canned heads it keeps with
//! the cached file, one per [`Connection`] choice) and per response by
//! `httpd`; the bytes are the same either way.

use alloc::vec::Vec;

use crate::parser::{Method, Request};
use crate::{Status, date};

/// The `Server` header's value.
pub const SERVER: &str = "oxok";

/// What the response says about the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connection {
    /// `Connection: keep-alive`: another request may follow.
    KeepAlive,
    /// `Connection: close`: the server closes after this response.
    Close,
}

impl Connection {
    /// The choice for a request that was understood.
    pub fn for_request(req: &Request) -> Connection {
        if req.keep_alive() { Connection::KeepAlive } else { Connection::Close }
    }
}

/// What goes in a head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head<'a> {
    /// The status line's status.
    pub status: Status,
    /// `Content-Length` (omitted for 304, which has no body).
    pub content_length: u64,
    /// `Content-Type`, if any.
    pub content_type: Option<&'a str>,
    /// `Last-Modified` as Unix seconds, if known.
    pub last_modified: Option<u64>,
    /// `Connection`.
    pub connection: Connection,
}

/// Appends the status line and header section (ending with the empty line).
pub fn write_head(out: &mut Vec<u8>, head: &Head) {
    out.extend_from_slice(b"HTTP/1.1 ");
    push_num(out, u64::from(head.status.code()));
    out.push(b' ');
    out.extend_from_slice(head.status.reason().as_bytes());
    out.extend_from_slice(b"\r\nServer: ");
    out.extend_from_slice(SERVER.as_bytes());
    out.extend_from_slice(b"\r\n");
    if let Some(t) = head.content_type {
        out.extend_from_slice(b"Content-Type: ");
        out.extend_from_slice(t.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if head.status.has_body() {
        out.extend_from_slice(b"Content-Length: ");
        push_num(out, head.content_length);
        out.extend_from_slice(b"\r\n");
    }
    if let Some(t) = head.last_modified {
        out.extend_from_slice(b"Last-Modified: ");
        date::format_into(out, t);
        out.extend_from_slice(b"\r\n");
    }
    if head.status == Status::MethodNotAllowed {
        out.extend_from_slice(b"Allow: GET, HEAD\r\n");
    }
    out.extend_from_slice(match head.connection {
        Connection::KeepAlive => b"Connection: keep-alive\r\n\r\n".as_slice(),
        Connection::Close => b"Connection: close\r\n\r\n".as_slice(),
    });
}

/// A whole error response: the head and a one-line text body (`404 Not
/// Found\n`), the body left out for `HEAD`.
pub fn error(out: &mut Vec<u8>, status: Status, connection: Connection, method: Option<Method>) {
    let mut body = Vec::new();
    push_num(&mut body, u64::from(status.code()));
    body.push(b' ');
    body.extend_from_slice(status.reason().as_bytes());
    body.push(b'\n');
    let head = Head {
        status,
        content_length: body.len() as u64,
        content_type: Some("text/plain; charset=utf-8"),
        last_modified: None,
        connection,
    };
    write_head(out, &head);
    if method != Some(Method::Head) {
        out.extend_from_slice(&body);
    }
}

/// 200 or 304 for a file last modified at `mtime`: 304 when the request's
/// `If-Modified-Since` is no earlier than the file's time.
pub fn file_status(req: &Request, mtime: u64) -> Status {
    match req.if_modified_since {
        Some(since) if mtime <= since => Status::NotModified,
        _ => Status::Ok,
    }
}

/// Whether the response to `req` with `status` carries the file's bytes.
pub fn sends_body(req: &Request, status: Status) -> bool {
    req.method == Method::Get && status.has_body()
}

/// Appends `n` in decimal.
pub fn push_num(out: &mut Vec<u8>, n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut n = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}
