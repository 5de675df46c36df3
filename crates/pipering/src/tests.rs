//! The counters and the wrap split, including garbage counters.

extern crate std;

use super::*;
use oxok_testrng::Rng;
use std::vec;
use std::vec::Vec;

const CAP: u64 = 3840;

#[test]
fn used_readable_writable() {
    let c = Counters { read: 100, written: 150 };
    assert_eq!(c.used(CAP), Some(50));
    assert_eq!(c.readable(CAP, 10), Some(10));
    assert_eq!(c.readable(CAP, 1000), Some(50));
    assert_eq!(c.writable(CAP, 10_000), Some(CAP as usize - 50));
    let full = Counters { read: 7, written: 7 + CAP };
    assert_eq!(full.writable(CAP, 1), Some(0));
    assert_eq!(full.readable(CAP, usize::MAX), Some(CAP as usize));
    let empty = Counters { read: 9, written: 9 };
    assert_eq!(empty.readable(CAP, 5), Some(0));
}

#[test]
fn counters_wrap_around_u64() {
    let c = Counters { read: u64::MAX - 5, written: 10 };
    assert_eq!(c.used(CAP), Some(16));
}

#[test]
fn scribbled_counters_are_refused() {
    for c in [
        Counters { read: 0, written: CAP + 1 },
        Counters { read: 10, written: 9 },
        Counters { read: 0, written: u64::MAX },
        Counters { read: u64::MAX, written: u64::MAX - 1 },
    ] {
        assert_eq!(c.used(CAP), None, "{c:?}");
        assert_eq!(c.readable(CAP, 1), None);
        assert_eq!(c.writable(CAP, 1), None);
    }
}

#[test]
fn a_copy_splits_once_at_the_end() {
    let s: Vec<Span> = spans(CAP - 3, 10, CAP as usize).collect();
    assert_eq!(s, [Span { ring: CAP as usize - 3, buf: 0, len: 3 }, Span { ring: 0, buf: 3, len: 7 }]);
    let s: Vec<Span> = spans(5, 10, CAP as usize).collect();
    assert_eq!(s, [Span { ring: 5, buf: 0, len: 10 }]);
    assert_eq!(spans(5, 0, CAP as usize).count(), 0);
    assert_eq!(spans(5, 1, 0).count(), 0, "no ring, no pieces");
}

#[test]
fn spans_stay_inside_and_cover_the_buffer_for_any_position() {
    let mut rng = Rng::new(11);
    for _ in 0..10_000 {
        let pos = rng.next();
        let len = rng.below(CAP + 1) as usize;
        let mut covered = 0;
        for s in spans(pos, len, CAP as usize) {
            assert!(s.ring + s.len <= CAP as usize);
            assert_eq!(s.buf, covered);
            covered += s.len;
        }
        assert_eq!(covered, len);
    }
}

#[test]
fn a_simulated_ring_carries_a_stream_intact() {
    // A writer and a reader sharing a small ring through the counters and
    // spans only, with counters starting near the wrap of u64.
    const SMALL: usize = 37;
    let mut ring = [0u8; SMALL];
    let start = u64::MAX - 100;
    let mut c = Counters { read: start, written: start };
    let input: Vec<u8> = (0..5000u32).map(|i| (i * 31 % 251) as u8).collect();
    let (mut sent, mut got) = (0, Vec::new());
    let mut rng = Rng::new(3);
    while got.len() < input.len() {
        let n = c.writable(SMALL as u64, (input.len() - sent).min(rng.below(50) as usize)).unwrap();
        for s in spans(c.written, n, SMALL) {
            ring[s.ring..s.ring + s.len].copy_from_slice(&input[sent + s.buf..sent + s.buf + s.len]);
        }
        sent += n;
        c.written = c.written.wrapping_add(n as u64);
        let want = rng.below(50) as usize;
        let n = c.readable(SMALL as u64, want).unwrap();
        let mut buf = vec![0; n];
        for s in spans(c.read, n, SMALL) {
            buf[s.buf..s.buf + s.len].copy_from_slice(&ring[s.ring..s.ring + s.len]);
        }
        got.extend_from_slice(&buf);
        c.read = c.read.wrapping_add(n as u64);
    }
    assert_eq!(got, input);
}
