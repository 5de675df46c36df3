//! net-sink: a receiver that never drains its ring (`net-flood-sink`
//! scenario). It binds a one-frame ring (two entries), claims UDP port 9,
//! and sleeps until the kernel has counted 100 drops; then checks that the
//! ring holds exactly its two packets and that the kernel counted every
//! later one as a drop instead of overwriting anything; the counters in
//! the read-only network table agree with the copy in the ring's header and
//! survive the owner scribbling over that copy; the filter table's row for
//! its filter counts every packet the filter accepted (kept or dropped).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::net::{Filter, Ring, filters};
use oxok_libos::{Args, println};
use oxok_tests::Checks;

oxok_libos::main!(main);

/// Drops to wait for.
const DROPS: u64 = 100;

fn main(_args: Args) -> i32 {
    let mut c = Checks::new("net-sink");
    let Ok(ring) = Ring::new(1) else {
        println!("net-sink: FAIL no ring");
        return 1;
    };
    let filter = Filter::install(&ring, &filters::udp(9), None);
    c.check(filter.is_ok(), "UDP 9 filter");
    println!("net-sink: ring of 2 entries bound to UDP 9, never draining");
    while ring.dropped() < DROPS {
        if ring.wait_dropped(DROPS - 1, 0).is_err() {
            c.check(false, "wait");
            break;
        }
    }
    let accepted = || {
        let id = filter.as_ref().ok().map(|f| f.id())?;
        let (head, _) = oxok_libos::exposed::filter_row_at(id as u32 as usize)?;
        (head.id == id).then_some(head.accepted)
    };
    let before = accepted();
    let (produced, dropped) = (ring.produced(), ring.dropped());
    let after = accepted();
    println!("net-sink: filter accepted {before:?}..{after:?}");
    c.check(
        before.is_some_and(|b| b <= produced + dropped) && after.is_some_and(|a| produced + dropped <= a),
        "the filter table counts what the filter accepted (kept + dropped)",
    );
    println!("net-sink: produced {produced}, dropped {dropped}");
    c.expect(produced, 2, "exactly the ring's entries were filled");
    c.check(dropped >= DROPS, "drops counted");
    let (hp, hd) = ring.header_counters();
    c.check(hp == produced && hd >= dropped, "the header frame's copy agrees with the table");
    // The header frame is ours to scribble on; the table is not.
    ring.scribble_header(u64::MAX);
    c.expect(ring.produced(), produced, "the table's count survives a scribbled header");
    let row = oxok_libos::exposed::ring_row(ring.id()).map(|r| r.owner);
    c.expect(row, Some(oxok_libos::exposed::self_id()), "the table names the owner");
    c.finish()
}
