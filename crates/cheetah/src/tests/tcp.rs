use alloc::format;

use super::client::{CLIENT_IP, Client, Rig, config, file, split};
use crate::wire::{self, flags};

fn get(rig: &mut Rig, port: u16, req: &str) -> Client {
    let mut c = Client::new(port);
    c.connect(rig);
    c.send(rig, req.as_bytes());
    c.pull(rig);
    c
}

#[test]
fn http10_get_of_each_size_byte_for_byte() {
    let mut rig = Rig::new(config());
    for (i, (name, len, salt)) in
        [("/1k.bin", 1024, 1), ("/10k.bin", 10_240, 2), ("/100k.bin", 102_400, 3)].into_iter().enumerate()
    {
        let mut c = Client::new(40_000 + i as u16);
        c.connect(&mut rig);
        c.send(&mut rig, format!("GET {name} HTTP/1.0\r\n\r\n").as_bytes());
        let segs = c.pull(&mut rig);
        assert!(c.fin, "the server closes after an HTTP/1.0 response");
        let (head, body) = split(&c.got);
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
        assert!(head.contains(&format!("Content-Length: {len}\r\n")));
        assert!(head.contains("Connection: close\r\n"));
        assert_eq!(body, file(len, salt));
        // The first data segment acknowledges the request: no bare ACK.
        assert!(segs[0].1 & flags::ACK != 0 && segs[0].2 > 0);
        // The FIN rides on the last data segment.
        let last = segs.iter().rev().find(|s| s.2 > 0).copied();
        assert!(last.is_some_and(|s| s.1 & flags::FIN != 0));
        assert_eq!(segs.iter().filter(|s| s.2 == 0).count(), 0, "no segment without data");
        c.close(&mut rig);
        assert_eq!(rig.server.open(), 0, "slot freed after both FINs");
    }
    let st = rig.server.stats();
    // The only segments without data: the ACK of each client's FIN.
    assert_eq!(st.bare_acks, 3);
    assert_eq!(st.requests, 3);
    assert!(st.piggybacked_acks >= 3);
    assert_eq!(rig.site.computed_sums, 0, "every segment's sum was the stored one");
    assert!(rig.site.stored_sums >= 1 + 8 + 71);
    assert_eq!(rig.site.live(), 0, "every response released");
    assert_eq!(st.closed, 3);
}

#[test]
fn keep_alive_serves_several_and_head() {
    let mut rig = Rig::new(config());
    let mut c = Client::new(41_000);
    c.connect(&mut rig);
    c.send(&mut rig, b"GET /1k.bin HTTP/1.1\r\nHost: x\r\n\r\nHEAD /10k.bin HTTP/1.1\r\nHost: x\r\n\r\n");
    c.pull(&mut rig);
    assert!(!c.fin);
    c.send(&mut rig, b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    c.pull(&mut rig);
    assert!(c.fin);
    let text = alloc::string::String::from_utf8_lossy(&c.got).into_owned();
    assert_eq!(text.matches("HTTP/1.1 200 OK").count(), 3, "{text}");
    assert_eq!(text.matches("HTTP/1.1 404 Not Found").count(), 1);
    assert!(text.contains("Content-Length: 10240\r\n"));
    assert!(text.ends_with("<html>hello</html>"));
    assert_eq!(text.matches("Connection: keep-alive").count(), 3);
    c.close(&mut rig);
    assert_eq!(rig.server.open(), 0);
    assert_eq!(rig.site.live(), 0);
}

#[test]
fn lost_segments_are_sent_again_from_the_cache() {
    let mut rig = Rig::new(config());
    // Lose every 5th frame the server sends (SYN-ACK included if it falls).
    rig.lose = |n, _| n % 5 == 3;
    let mut c = Client::new(42_000);
    let syn = c.frame(flags::SYN, c.seq, &[], Some(1460));
    rig.deliver(&syn);
    let frames = c.take(&mut rig.wire);
    let s = wire::parse_tcp(&frames[0], super::client::CLIENT_IP).expect("SYN-ACK");
    c.seq += 1;
    c.ack = s.seq.wrapping_add(1);
    c.send(&mut rig, b"GET /100k.bin HTTP/1.0\r\n\r\n");
    for _ in 0..200 {
        c.pull(&mut rig);
        if c.fin {
            break;
        }
        rig.advance(250);
    }
    assert!(c.fin, "the whole response arrived");
    let (_, body) = split(&c.got);
    assert_eq!(body, file(102_400, 3));
    let st = rig.server.stats();
    assert!(st.retransmits > 0 && st.timeouts > 0, "{st:?}");
    c.close(&mut rig);
    for _ in 0..20 {
        c.pull(&mut rig);
        rig.advance(250);
    }
    assert_eq!(rig.site.live(), 0);
}

#[test]
fn small_window_is_respected() {
    let mut rig = Rig::new(config());
    let mut c = Client::new(43_000);
    c.window = 1000;
    c.connect(&mut rig);
    c.send(&mut rig, b"GET /10k.bin HTTP/1.0\r\n\r\n");
    let segs = c.pull(&mut rig);
    assert!(segs.iter().all(|s| s.2 <= 1000));
    assert!(c.fin);
    assert_eq!(split(&c.got).1, file(10_240, 2));
    assert!(rig.site.computed_sums > 0, "partial segments are summed at send time");
}

#[test]
fn garbage_gets_400_and_close() {
    let mut rig = Rig::new(config());
    let c = get(&mut rig, 44_000, "\x16\x03\x01 garbage\r\n\r\n");
    assert!(alloc::string::String::from_utf8_lossy(&c.got).starts_with("HTTP/1.1 400 Bad Request\r\n"));
    assert!(c.fin);
    let c = get(&mut rig, 44_001, "GET /../etc/passwd HTTP/1.0\r\n\r\n");
    assert!(alloc::string::String::from_utf8_lossy(&c.got).starts_with("HTTP/1.1 400 Bad Request\r\n"));
    let c = get(&mut rig, 44_002, "DELETE / HTTP/1.0\r\n\r\n");
    assert!(alloc::string::String::from_utf8_lossy(&c.got).starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
    let long = format!("GET /{} HTTP/1.0\r\n\r\n", "a".repeat(3000));
    let c = get(&mut rig, 44_003, &long);
    assert!(alloc::string::String::from_utf8_lossy(&c.got).starts_with("HTTP/1.1 414 URI Too Long\r\n"));
}

#[test]
fn a_full_table_answers_503_then_rst() {
    let mut cfg = config();
    cfg.max_conns = 3;
    cfg.serve_conns = 2;
    let mut rig = Rig::new(cfg);
    let mut a = Client::new(45_000);
    a.connect(&mut rig);
    let mut b = Client::new(45_001);
    b.connect(&mut rig);
    let mut busy = Client::new(45_002);
    busy.connect(&mut rig);
    busy.send(&mut rig, b"GET /1k.bin HTTP/1.1\r\nHost: x\r\n\r\n");
    busy.pull(&mut rig);
    assert!(alloc::string::String::from_utf8_lossy(&busy.got).starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
    assert!(busy.fin);
    let refused = Client::new(45_003);
    let syn = refused.frame(flags::SYN, refused.seq, &[], None);
    rig.deliver(&syn);
    let f = refused.take(&mut rig.wire);
    let s = wire::parse_tcp(&f[0], super::client::CLIENT_IP).expect("RST");
    assert!(s.has(flags::RST));
    // The first two are still served.
    a.send(&mut rig, b"GET /1k.bin HTTP/1.0\r\n\r\n");
    a.pull(&mut rig);
    assert_eq!(split(&a.got).1, file(1024, 1));
    let st = rig.server.stats();
    assert_eq!((st.unavailable, st.refused_full), (1, 1));
}

#[test]
fn reset_mid_response_frees_everything() {
    let mut rig = Rig::new(config());
    let mut c = Client::new(46_000);
    c.connect(&mut rig);
    c.send(&mut rig, b"GET /100k.bin HTTP/1.1\r\nHost: x\r\n\r\n");
    let _ = c.take(&mut rig.wire); // never acknowledged
    assert_eq!(rig.site.live(), 1);
    let rst = c.frame(flags::RST, c.seq, &[], None);
    rig.deliver(&rst);
    assert_eq!(rig.server.open(), 0);
    assert_eq!(rig.site.live(), 0);
    assert_eq!(rig.server.stats().resets, 1);
    // The slot is reused by the next connection.
    let c = get(&mut rig, 46_001, "GET /1k.bin HTTP/1.0\r\n\r\n");
    assert_eq!(split(&c.got).1, file(1024, 1));
}

#[test]
fn stray_segments_get_rst_and_arp_is_answered() {
    let mut rig = Rig::new(config());
    let c = Client::new(47_000);
    let stray = c.frame(flags::ACK, 1, b"x", None);
    rig.deliver(&stray);
    let f = c.take(&mut rig.wire);
    assert!(wire::parse_tcp(&f[0], super::client::CLIENT_IP).is_some_and(|s| s.has(flags::RST)));
    let mut arp = alloc::vec![0xffu8; 6];
    arp.extend_from_slice(&super::client::CLIENT_MAC);
    arp.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1]);
    arp.extend_from_slice(&super::client::CLIENT_MAC);
    arp.extend_from_slice(&super::client::CLIENT_IP);
    arp.extend_from_slice(&[0; 6]);
    arp.extend_from_slice(&super::client::SERVER_IP);
    rig.deliver(&arp);
    let reply = rig.wire.frames.pop_front().expect("ARP reply");
    assert_eq!(&reply[0..6], &super::client::CLIENT_MAC);
    assert_eq!(&reply[20..22], &[0, 2]);
    assert_eq!(rig.server.stats().arp_replies, 1);
}

#[test]
fn idle_and_silent_connections_are_closed_then_reset() {
    let mut rig = Rig::new(config());
    let mut c = Client::new(48_000);
    c.connect(&mut rig);
    c.send(&mut rig, b"GET /1k.bin HTT"); // a slow client that stops
    c.pull(&mut rig);
    rig.advance(30_001);
    c.pull(&mut rig);
    assert!(c.fin, "idle connection closed");
    // It never closes its side: reset later.
    for _ in 0..10 {
        rig.advance(10_000);
    }
    assert_eq!(rig.server.open(), 0);
    assert_eq!(rig.site.live(), 0);
}

#[test]
fn an_unanswered_syn_ack_is_given_up() {
    let mut rig = Rig::new(config());
    let c = Client::new(49_000);
    let syn = c.frame(flags::SYN, c.seq, &[], None);
    rig.deliver(&syn);
    for _ in 0..40 {
        rig.advance(3000);
    }
    assert_eq!(rig.server.open(), 0);
    assert_eq!(rig.server.stats().aborted, 1);
    assert_eq!(rig.server.stats().unanswered, 1);
    // SYN-ACK sent 1 + max_retries times, then RST.
    let frames = c.take(&mut rig.wire);
    assert_eq!(frames.len(), 1 + 6 + 1);
}

#[test]
fn only_the_first_syn_ack_and_answers_to_a_repeated_syn_carry_the_mss() {
    let mut rig = Rig::new(config());
    let c = Client::new(49_100);
    let syn = c.frame(flags::SYN, c.seq, &[], Some(1460));
    rig.deliver(&syn);
    rig.advance(300); // past the first retransmission timeout
    rig.deliver(&syn); // the client sends its SYN again
    let mss: alloc::vec::Vec<_> =
        c.take(&mut rig.wire).iter().map(|f| wire::parse_tcp(f, CLIENT_IP).map(|s| (s.flags, s.mss))).collect();
    let syn_ack = flags::SYN | flags::ACK;
    assert_eq!(mss, [Some((syn_ack, Some(1460))), Some((syn_ack, None)), Some((syn_ack, Some(1460)))]);
}

#[test]
fn pipelined_requests_beyond_the_queue_wait_unacknowledged() {
    let mut rig = Rig::new(config());
    let mut c = Client::new(50_000);
    c.connect(&mut rig);
    let one = "GET /1k.bin HTTP/1.1\r\nHost: x\r\n\r\n";
    let six = one.repeat(6);
    let before = c.seq;
    c.send(&mut rig, six.as_bytes());
    c.pull(&mut rig);
    let text = alloc::string::String::from_utf8_lossy(&c.got).into_owned();
    assert_eq!(text.matches("200 OK").count(), 4, "max_pipeline responses");
    // The server acknowledged exactly four requests: resend the rest.
    let acked = 4 * one.len() as u32;
    c.seq = before + acked;
    c.send(&mut rig, one.repeat(2).as_bytes());
    c.pull(&mut rig);
    let text = alloc::string::String::from_utf8_lossy(&c.got).into_owned();
    assert_eq!(text.matches("200 OK").count(), 6);
}

#[test]
fn one_lost_segment_is_fast_retransmitted_alone() {
    let mut rig = Rig::new(config());
    // Frame 0 is the SYN-ACK; lose the 4th data segment.
    rig.lose = |n, _| n == 4;
    let mut c = Client::new(51_000);
    c.connect(&mut rig);
    c.send(&mut rig, b"GET /100k.bin HTTP/1.0\r\n\r\n");
    for _ in 0..50 {
        c.pull(&mut rig);
        if c.fin {
            break;
        }
        rig.advance(50);
    }
    assert!(c.fin);
    assert_eq!(split(&c.got).1, file(102_400, 3));
    let st = rig.server.stats();
    assert_eq!((st.retransmits, st.timeouts), (1, 0), "{st:?}");
}
