use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::{Event, Limits, Method, Parser, Request, Status, Version};

fn parse_all(data: &[u8]) -> (usize, Event) {
    Parser::new(Limits::DEFAULT).feed(data)
}

fn request(data: &[u8]) -> Request {
    match parse_all(data) {
        (n, Event::Request(r)) => {
            assert_eq!(n, data.len());
            r
        }
        other => panic!("expected a request, got {other:?}"),
    }
}

fn status(data: &[u8]) -> Status {
    match parse_all(data) {
        (_, Event::Error(s)) => s,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn simple_get_11() {
    let r = request(b"GET /index.html HTTP/1.1\r\nHost: example\r\n\r\n");
    assert_eq!(r.method, Method::Get);
    assert_eq!(r.target, "/index.html");
    assert_eq!(r.version, Version::Http11);
    assert_eq!(r.host.as_deref(), Some("example"));
    assert!(r.keep_alive());
}

#[test]
fn head_10_closes_by_default() {
    let r = request(b"HEAD / HTTP/1.0\r\n\r\n");
    assert_eq!(r.method, Method::Head);
    assert_eq!(r.version, Version::Http10);
    assert!(!r.keep_alive());
}

#[test]
fn keep_alive_rules() {
    assert!(request(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keep_alive());
    assert!(!request(b"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n").keep_alive());
    assert!(!request(b"GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, close\r\n\r\n").keep_alive());
    assert!(request(b"GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade\r\n\r\n").keep_alive());
    assert!(!request(b"GET / HTTP/1.0\r\nConnection: upgrade\r\n\r\n").keep_alive());
}

#[test]
fn every_split_gives_the_same_request() {
    let data = b"GET /a/b.txt?x=1 HTTP/1.1\r\nHost: h\r\nIf-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Length: 3\r\n\r\nabc";
    let whole = request(data);
    assert_eq!(whole.if_modified_since, Some(784_111_777));
    assert_eq!(whole.content_length, 3);
    for cut in 0..data.len() {
        let mut p = Parser::new(Limits::DEFAULT);
        let (n, ev) = p.feed(&data[..cut]);
        assert_eq!((n, ev), (cut, Event::Incomplete), "cut {cut}");
        let (n, ev) = p.feed(&data[cut..]);
        assert_eq!(n, data.len() - cut);
        assert_eq!(ev, Event::Request(whole.clone()));
    }
    // One byte at a time (a slow client).
    let mut p = Parser::new(Limits::DEFAULT);
    for (i, b) in data.iter().enumerate() {
        let (n, ev) = p.feed(core::slice::from_ref(b));
        assert_eq!(n, 1);
        if i + 1 < data.len() {
            assert_eq!(ev, Event::Incomplete);
        } else {
            assert_eq!(ev, Event::Request(whole.clone()));
        }
    }
}

#[test]
fn pipelined_requests_leave_the_rest() {
    let data = b"GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\nGET /3";
    let mut p = Parser::new(Limits::DEFAULT);
    let mut off = 0;
    let mut got = Vec::new();
    loop {
        let (n, ev) = p.feed(&data[off..]);
        off += n;
        match ev {
            Event::Request(r) => got.push(r.target),
            Event::Incomplete => break,
            Event::Error(s) => panic!("{s:?}"),
        }
    }
    assert_eq!(got, vec![String::from("/1"), String::from("/2")]);
    assert_eq!(off, data.len());
    assert!(!p.is_idle());
}

#[test]
fn methods_other_than_get_and_head_are_405() {
    for m in ["POST", "PUT", "DELETE", "OPTIONS", "get", "PATCH", "TRACE"] {
        let line = alloc::format!("{m} / HTTP/1.1\r\nHost: h\r\n\r\n");
        assert_eq!(status(line.as_bytes()), Status::MethodNotAllowed, "{m}");
    }
}

#[test]
fn garbage_is_400() {
    for g in [
        &b"\x00\x01\x02\x03"[..],
        b"GET\r\n\r\n",
        b"GET /\r\n\r\n",
        b" GET / HTTP/1.1\r\n",
        b"GET  / HTTP/1.1\r\n",
        b"GET / HTTP/1.1 x\r\n",
        b"GET / FTP/1.0\r\n",
        b"GET / HTTP/1.1\r\nHost h\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n",
        b"GET / HTTP/1.1\r\nBad Name: v\r\n\r\n",
        b"GET / HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        b"GET / HTTP/1.0\r\nContent-Length: x\r\n\r\n",
        b"GET / HTTP/1.0\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        b"GET / HTTP/1.0\r\nX: a\x01b\r\n\r\n",
        b"GET /\x7f HTTP/1.0\r\n\r\n",
        b"AVERYLONGMETHODNAMEXX / HTTP/1.0\r\n\r\n",
    ] {
        assert_eq!(status(g), Status::BadRequest, "{:?}", String::from_utf8_lossy(g));
    }
}

#[test]
fn missing_cr_is_400() {
    assert_eq!(status(b"GET / HTTP/1.0\n\n"), Status::BadRequest);
    assert_eq!(status(b"GET / HTTP/1.0\r\nHost: h\n\r\n"), Status::BadRequest);
    assert_eq!(status(b"GET / HTTP/1.0\r\n\rX"), Status::BadRequest);
    assert_eq!(status(b"GET / HTTP/1.0\rX"), Status::BadRequest);
}

#[test]
fn other_versions_are_505() {
    assert_eq!(status(b"GET / HTTP/2.0\r\n\r\n"), Status::VersionNotSupported);
    assert_eq!(status(b"GET / HTTP/0.9\r\n\r\n"), Status::VersionNotSupported);
}

#[test]
fn overlong_target_is_414_as_soon_as_it_is() {
    let limits = Limits::DEFAULT;
    let mut data = Vec::from(&b"GET /"[..]);
    data.resize(4 + limits.max_target, b'a');
    let mut p = Parser::new(limits);
    assert_eq!(p.feed(&data).1, Event::Incomplete);
    let (n, ev) = p.feed(b"aaaa");
    assert_eq!((n, ev), (1, Event::Error(Status::UriTooLong)));
    // A target of exactly the limit is accepted.
    let mut ok = Vec::from(&b"GET /"[..]);
    ok.resize(4 + limits.max_target, b'a');
    ok.extend_from_slice(b" HTTP/1.0\r\n\r\n");
    assert_eq!(request(&ok).target.len(), limits.max_target);
    // The parser stays failed.
    assert_eq!(p.feed(b"GET / HTTP/1.0\r\n\r\n").1, Event::Error(Status::UriTooLong));
}

#[test]
fn overlong_headers_are_431() {
    let limits = Limits::DEFAULT;
    let mut data = Vec::from(&b"GET / HTTP/1.1\r\nHost: h\r\nX-Big: "[..]);
    data.resize(data.len() + limits.max_headers_bytes, b'x');
    let (n, ev) = parse_all(&data);
    assert_eq!(ev, Event::Error(Status::HeadersTooLarge));
    assert!(n < data.len());
    let mut many = Vec::from(&b"GET / HTTP/1.1\r\nHost: h\r\n"[..]);
    for _ in 0..limits.max_header_lines {
        many.extend_from_slice(b"A: b\r\n");
    }
    many.extend_from_slice(b"\r\n");
    assert_eq!(status(&many), Status::HeadersTooLarge);
}

#[test]
fn bodies_are_discarded_or_413() {
    let r = request(b"GET /x HTTP/1.0\r\nContent-Length: 4\r\n\r\nbody");
    assert_eq!(r.content_length, 4);
    assert_eq!(status(b"GET / HTTP/1.0\r\nContent-Length: 4097\r\n\r\n"), Status::PayloadTooLarge);
    assert_eq!(status(b"GET / HTTP/1.0\r\nContent-Length: 99999999999999999999999\r\n\r\n"), Status::PayloadTooLarge);
    assert_eq!(status(b"GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"), Status::NotImplemented);
}

#[test]
fn bad_dates_are_ignored() {
    let r = request(b"GET / HTTP/1.0\r\nIf-Modified-Since: yesterday\r\n\r\n");
    assert_eq!(r.if_modified_since, None);
}

#[test]
fn random_bytes_never_panic_and_stay_bounded() {
    let mut rng = oxok_testrng::Rng::new(14);
    for _ in 0..2000 {
        let len = rng.index(300);
        let mut data = rng.bytes(len);
        if rng.chance(2) {
            let mut v = Vec::from(&b"GET /"[..]);
            v.append(&mut data);
            data = v;
        }
        let mut p = Parser::new(Limits { max_target: 64, max_headers_bytes: 128, max_header_lines: 4, max_body: 8 });
        let mut off = 0;
        while off < data.len() {
            let cut = core::cmp::min(data.len(), off + 1 + rng.index(20));
            let (n, ev) = p.feed(&data[off..cut]);
            assert!(n <= cut - off);
            off += n;
            if let Event::Error(_) = ev {
                break;
            }
            if n == 0 {
                break;
            }
        }
        assert!(p.target.capacity() <= 128 && p.line.len() <= 128);
    }
}
