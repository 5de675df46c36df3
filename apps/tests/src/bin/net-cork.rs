//! net-cork: corked TCP sends (`TCP_CORK`, `MSG_MORE`) on the libOS's
//! sockets, driven by the host (`net-cork` scenario, port 7). The NIC's
//! exposed `sent` counter says how many frames left; nothing else on the
//! machine sends while it runs.
//!
//! Connection 1: corked writes send nothing; taking the cork off sends
//! them in one segment; a corked write left alone still goes (the 200 ms
//! ceiling: the host answers only once it has the bytes); `MSG_MORE`
//! writes then a shutdown leave in one segment that carries the FIN; a
//! corked write of 5,000 bytes sends its whole segments at once. The host
//! checks every byte. Connection 2: the host closes the connection while
//! bytes wait corked; they go or are lost with it, and the program goes
//! on (no panic, nothing leaked).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::fd::IoError;
use oxok_libos::net::socket::{Kind, Shutdown, SockAddr, Socket};
use oxok_libos::{Args, exposed, println};
use oxok_tests::Checks;

oxok_libos::main!(main);

/// Frames the NIC has sent so far.
fn sent() -> u64 {
    exposed::net_header().map_or(0, |h| h.sent)
}

/// Bytes `from..to` of the test stream (`oxok_tests::stream`, which the
/// host checks).
fn piece(from: usize, to: usize) -> Vec<u8> {
    let mut v = alloc::vec![0u8; to - from];
    oxok_tests::stream::fill(from as u64, &mut v);
    v
}

/// Reads until `want` bytes came (or the stream ends).
fn read_exact(s: &Socket, want: usize) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while got.len() < want {
        match s.recv(&mut buf[..(want - got.len()).min(256)]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    got
}

/// Lets acknowledgements the stack owes go out (smoltcp delays them up to
/// 10 ms): a receive that times out polls the stack until it ends. The
/// host sends nothing meanwhile.
fn settle(c: &mut Checks, s: &Socket) {
    s.set_recv_timeout(50);
    let r = s.recv(&mut [0u8; 1]);
    c.check(matches!(r, Err(IoError::TimedOut)), &alloc::format!("nothing arrives while settling ({r:?})"));
    s.set_recv_timeout(0);
}

/// Sends all of `data` (corked or not, as the socket is).
fn send_all(c: &mut Checks, s: &Socket, data: &[u8], more: bool, what: &str) {
    let mut at = 0;
    while at < data.len() {
        let r = if more { s.send_more(&data[at..]) } else { s.send(&data[at..]) };
        match r {
            Ok(n) => at += n,
            Err(e) => {
                c.check(false, &alloc::format!("{what}: send failed: {e}"));
                return;
            }
        }
    }
}

fn main(_: Args) -> i32 {
    let mut c = Checks::new("net-cork");
    let listener = match Socket::new(Kind::Tcp) {
        Ok(s) => s,
        Err(e) => {
            println!("net-cork: FAIL socket: {e}");
            return 1;
        }
    };
    let bound = listener.bind(SockAddr::new([0; 4], 7)).and_then(|_| listener.listen(4));
    c.check(bound.is_ok(), "listen on port 7");
    println!("net-cork: listening on port 7");

    let Ok((s, _)) = listener.accept() else {
        c.check(false, "accept the first connection");
        return c.finish();
    };
    c.expect(read_exact(&s, 3), b"go\n".to_vec(), "the host's go");

    // Corked writes wait; the cork's removal sends them as one segment.
    settle(&mut c, &s);
    s.set_cork(true);
    c.check(s.cork(), "the cork reads back");
    let before = sent();
    send_all(&mut c, &s, &piece(0, 100), false, "corked 1");
    send_all(&mut c, &s, &piece(100, 300), false, "corked 2");
    c.expect(sent() - before, 0, "frames sent while corked");
    s.set_cork(false);
    c.expect(sent() - before, 1, "frames sent by taking the cork off (300 bytes)");
    c.expect(read_exact(&s, 5), b"next\n".to_vec(), "the host has 300 bytes");

    // A corked write nobody uncorks still goes: the host answers only once
    // it has the bytes.
    settle(&mut c, &s);
    s.set_cork(true);
    let before = sent();
    send_all(&mut c, &s, &piece(300, 310), false, "corked, left");
    c.expect(sent() - before, 0, "frames sent right after a corked write");
    c.expect(read_exact(&s, 5), b"more\n".to_vec(), "the host got the corked bytes without uncorking");
    s.set_cork(false);

    // A corked write larger than a segment sends its whole segments at once.
    s.set_cork(true);
    let before = sent();
    send_all(&mut c, &s, &piece(310, 5310), false, "corked 5000");
    let whole = sent() - before;
    c.check((1..=3).contains(&whole), &alloc::format!("whole segments of 5,000 corked bytes went at once ({whole})"));
    s.set_cork(false);
    c.expect(read_exact(&s, 5), b"last\n".to_vec(), "the host has 5,310 bytes");

    // MSG_MORE, then the shutdown: the data and the FIN in one segment.
    settle(&mut c, &s);
    let before = sent();
    send_all(&mut c, &s, &piece(5310, 5400), true, "more 1");
    send_all(&mut c, &s, &piece(5400, 5460), true, "more 2");
    c.expect(sent() - before, 0, "frames sent after MSG_MORE writes");
    c.check(s.shutdown(Shutdown::Write).is_ok(), "shutdown");
    c.expect(sent() - before, 1, "frames sent by the shutdown (150 bytes and the FIN)");
    c.expect(read_exact(&s, 4), b"bye\n".to_vec(), "the host has the whole stream and its end");
    drop(s);

    // Connection 2: the host closes while bytes wait corked.
    let Ok((s2, _)) = listener.accept() else {
        c.check(false, "accept the second connection");
        return c.finish();
    };
    c.expect(read_exact(&s2, 6), b"reset\n".to_vec(), "the host's warning");
    s2.set_cork(true);
    send_all(&mut c, &s2, &piece(0, 40), false, "corked before the reset");
    // The close arrives: the read sees the end of the stream (or a reset).
    let mut buf = [0u8; 16];
    let end = s2.recv(&mut buf);
    c.check(matches!(end, Ok(0) | Err(IoError::ConnReset)), &alloc::format!("the close is seen ({end:?})"));
    drop(s2);
    drop(listener);
    println!("net-cork: done");
    c.finish()
}
