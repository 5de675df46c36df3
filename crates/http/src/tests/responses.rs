use alloc::vec::Vec;

use crate::mime::content_type;
use crate::response::{Connection, Head, error, file_status, push_num, sends_body, write_head};
use crate::{Event, Limits, Method, Parser, Request, Status};

fn req(data: &[u8]) -> Request {
    match Parser::new(Limits::DEFAULT).feed(data).1 {
        Event::Request(r) => r,
        other => panic!("{other:?}"),
    }
}

#[test]
fn head_of_a_file() {
    let mut out = Vec::new();
    write_head(
        &mut out,
        &Head {
            status: Status::Ok,
            content_length: 1024,
            content_type: Some(content_type("/a.html")),
            last_modified: Some(784_111_777),
            connection: Connection::KeepAlive,
        },
    );
    assert_eq!(
        core::str::from_utf8(&out),
        Ok("HTTP/1.1 200 OK\r\nServer: oxok\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 1024\r\n\
            Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\nConnection: keep-alive\r\n\r\n")
    );
}

#[test]
fn not_modified_has_no_length() {
    let mut out = Vec::new();
    let h = Head {
        status: Status::NotModified,
        content_length: 5,
        content_type: None,
        last_modified: None,
        connection: Connection::Close,
    };
    write_head(&mut out, &h);
    assert_eq!(
        core::str::from_utf8(&out),
        Ok("HTTP/1.1 304 Not Modified\r\nServer: oxok\r\nConnection: close\r\n\r\n")
    );
}

#[test]
fn error_bodies_and_allow() {
    let mut out = Vec::new();
    error(&mut out, Status::MethodNotAllowed, Connection::Close, None);
    let s = core::str::from_utf8(&out).unwrap_or("");
    assert!(s.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
    assert!(s.contains("\r\nAllow: GET, HEAD\r\n"));
    assert!(s.contains("\r\nContent-Length: 23\r\n"));
    assert!(s.ends_with("\r\n\r\n405 Method Not Allowed\n"));
    let mut head = Vec::new();
    error(&mut head, Status::NotFound, Connection::KeepAlive, Some(Method::Head));
    assert!(core::str::from_utf8(&head).unwrap_or("").ends_with("Connection: keep-alive\r\n\r\n"));
}

#[test]
fn conditional_get() {
    let r = req(b"GET / HTTP/1.0\r\nIf-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n");
    assert_eq!(file_status(&r, 784_111_777), Status::NotModified);
    assert_eq!(file_status(&r, 784_111_776), Status::NotModified);
    assert_eq!(file_status(&r, 784_111_778), Status::Ok);
    assert!(!sends_body(&r, Status::NotModified));
    assert!(sends_body(&r, Status::Ok));
    let h = req(b"HEAD / HTTP/1.0\r\n\r\n");
    assert_eq!(file_status(&h, 0), Status::Ok);
    assert!(!sends_body(&h, Status::Ok));
    assert_eq!(Connection::for_request(&h), Connection::Close);
}

#[test]
fn types_by_extension() {
    assert_eq!(content_type("/x/index.HTML"), "text/html; charset=utf-8");
    assert_eq!(content_type("/a.png"), "image/png");
    assert_eq!(content_type("/a.tar.gz"), "application/octet-stream");
    assert_eq!(content_type("/.profile"), "application/octet-stream");
    assert_eq!(content_type("/dir.d/file"), "application/octet-stream");
    assert_eq!(content_type("/s.css"), "text/css");
}

#[test]
fn numbers() {
    for n in [0u64, 7, 10, 1234567890, u64::MAX] {
        let mut v = Vec::new();
        push_num(&mut v, n);
        assert_eq!(v, alloc::format!("{n}").into_bytes());
    }
}
