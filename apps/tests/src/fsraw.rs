//! Raw requests to a file server, past the libOS client: what a test needs
//! to send what the client never would, or to look without the client's
//! own steps (such as its waiting closes) going first.

use oxok_libos::Error;
use oxok_libos::fs::proto::{self, Status};
use oxok_libos::pct::{self, Msg};

/// A request: word 0 from `op`, `len` and `arg`, then `words`.
pub fn request(op: u8, len: usize, arg: u64, words: &[u64]) -> Msg {
    let mut m: Msg = [0; proto::WORDS];
    m[0] = proto::request(op, len, arg);
    for (d, s) in m[1..].iter_mut().zip(words) {
        *d = *s;
    }
    m
}

/// A path op's request with `payload` (at most [`proto::INLINE`] bytes)
/// inline, `arg` its argument (an `OPEN`'s flags).
pub fn path_request(op: u8, arg: u64, payload: &[u8]) -> Msg {
    let mut m: Msg = [0; proto::WORDS];
    m[0] = proto::request(op, payload.len(), arg);
    proto::put_bytes(&mut m[1..], payload);
    m
}

/// The reply to one request (retried while the server is busy).
pub fn raw(server: u64, msg: &Msg) -> Result<Msg, Error> {
    loop {
        match pct::call(server, msg) {
            Err(Error::Busy) => {
                let _ = oxok_libos::callcap::yield_to(server);
            }
            other => return other.map(|(_, r)| r),
        }
    }
}

/// The status of one request's reply.
pub fn status(server: u64, msg: &Msg) -> Option<Status> {
    raw(server, msg).ok().map(|r| Status::of(r[0]))
}

/// The server's open handles over all clients (`INFO` reply word 2),
/// asked past the client (whose waiting closes nothing sends ahead).
pub fn open_handles(server: u64) -> Option<u64> {
    raw(server, &request(proto::op::INFO, 0, 0, &[])).ok().filter(|r| Status::of(r[0]) == Status::Ok).map(|r| r[2])
}

/// A file server of the test's own (`fs::spawn_server`), or `None` after
/// printing `PROGRAM: FAIL no file server: …`.
pub fn own_server(program: &str) -> Option<oxok_libos::exec::Child> {
    match oxok_libos::fs::spawn_server() {
        Ok(s) => Some(s),
        Err(e) => {
            oxok_libos::println!("{program}: FAIL no file server: {e}");
            None
        }
    }
}
