//! `net`: the network table the kernel exposes read-only (the NIC's
//! address and counters, and every bound ring with its owner, packets
//! produced and dropped).

use oxok_libos::abi::net::RING_ROWS_MAX;
use oxok_libos::{exposed, println};

/// Prints the network table.
pub fn net() {
    let Some(h) = exposed::net_header() else {
        println!("net: no network table");
        return;
    };
    if h.mac == 0 {
        println!("net: no NIC");
    } else {
        let m = h.mac.to_le_bytes();
        println!("nic {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5]);
    }
    println!(
        "received {}  unclaimed {}  sent {}  refused {}  filters {}  rings {}",
        h.received, h.unclaimed, h.sent, h.refused, h.filters, h.rings
    );
    println!("{:>6} {:>8} {:>10} {:>10}", "RING", "OWNER", "PRODUCED", "DROPPED");
    for i in 0..RING_ROWS_MAX as u64 {
        if let Some(row) = exposed::ring_row_at(i as usize) {
            println!("{:>6} {:>8} {:>10} {:>10}", row.ring, row.owner, row.produced, row.dropped);
        }
    }
}
