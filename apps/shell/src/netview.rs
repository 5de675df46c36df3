//! `net`: the network table the kernel exposes read-only — the NIC's
//! address and counters, every bound ring with its owner, packets produced
//! and dropped, the same summed per environment, and the filter table: every
//! installed filter with its owner, ring, the filter it refines, the packets
//! it accepted and its atoms spelled as header fields.

use core::fmt::Write;
use oxok_libos::abi::filter::{RawAtom, op};
use oxok_libos::abi::net::{FILTER_NONE, FILTER_ROWS_MAX, RING_ROWS_MAX, RingRow};
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
        "received {}  unclaimed {}  sent {}  refused {}  filters {}  rings {}  interrupts {}",
        h.received, h.unclaimed, h.sent, h.refused, h.filters, h.rings, h.interrupts
    );
    let rings: alloc::vec::Vec<RingRow> = (0..RING_ROWS_MAX).filter_map(exposed::ring_row_at).collect();
    println!("{:>6} {:>8} {:>10} {:>10}", "RING", "OWNER", "PRODUCED", "DROPPED");
    for row in &rings {
        println!("{:>6} {:>8} {:>10} {:>10}", row.ring, row.owner, row.produced, row.dropped);
    }
    per_env(&rings);
    filters();
}

/// Packets and drops summed over each environment's rings.
fn per_env(rings: &[RingRow]) {
    let mut owners: alloc::vec::Vec<u64> = rings.iter().map(|r| r.owner).collect();
    owners.sort_unstable();
    owners.dedup();
    if owners.is_empty() {
        return;
    }
    println!("{:>8} {:>6} {:>10} {:>10}", "ENV", "RINGS", "PACKETS", "DROPPED");
    for env in owners {
        let mine = rings.iter().filter(|r| r.owner == env);
        let (n, packets, dropped) = mine.fold((0, 0u64, 0u64), |(n, p, d), r| (n + 1, p + r.produced, d + r.dropped));
        println!("{:>8} {:>6} {:>10} {:>10}", env, n, packets, dropped);
    }
}

/// The filter table.
fn filters() {
    let rows: alloc::vec::Vec<_> = (0..FILTER_ROWS_MAX).filter_map(|i| Some((i, exposed::filter_row_at(i)?))).collect();
    if rows.is_empty() {
        return;
    }
    println!("{:>6} {:>8} {:>6} {:>7} {:>9}  ATOMS", "FILTER", "OWNER", "RING", "REFINES", "ACCEPTED");
    for (index, (head, filter)) in rows {
        let refines = if head.refines == FILTER_NONE {
            alloc::string::String::from("-")
        } else {
            alloc::format!("{}", head.refines as u32)
        };
        let atoms = &filter.atoms[..(head.atoms as usize).min(filter.atoms.len())];
        println!(
            "{:>6} {:>8} {:>6} {:>7} {:>9}  {}",
            index,
            head.owner,
            head.ring,
            refines,
            head.accepted,
            describe(atoms)
        );
    }
}

/// A filter's atoms as header fields: `ether.type=0x0800 ip.proto=tcp
/// +ihl tcp.dport=80`; a field this view has no name for is `@OFFSET/SIZE`
/// (`@+OFFSET/SIZE` after a shift), a partial mask `&MASK` (the value then
/// in hex).
pub fn describe(atoms: &[RawAtom]) -> alloc::string::String {
    let mut out = alloc::string::String::new();
    // What the fields tested so far say the packet is (canonical order puts
    // the Ethernet type first and the IP protocol before the shift).
    let (mut l3, mut l4, mut shifted) = ("", "l4", false);
    for a in atoms {
        if !out.is_empty() {
            out.push(' ');
        }
        if a.op == op::SHIFT {
            if (a.size, a.offset, a.mask, a.scale) == (1, 14, 0x0f, 4) && !shifted {
                out.push_str("+ihl");
            } else {
                let _ = write!(out, "+(@{}/{}&{:#x})*{}", a.offset, a.size, a.mask, a.scale);
            }
            shifted = true;
            continue;
        }
        let full = if a.size == 4 { u32::MAX } else { (1u32 << (8 * u32::from(a.size))) - 1 };
        let name = field(shifted, l3, l4, a.size, a.offset);
        match (name, shifted) {
            (Some(name), _) => out.push_str(name),
            (None, true) => {
                let _ = write!(out, "@+{}/{}", a.offset, a.size);
            }
            (None, false) => {
                let _ = write!(out, "@{}/{}", a.offset, a.size);
            }
        }
        let v = a.value;
        let _ = match name {
            _ if a.mask != full => write!(out, "&{:#x}={v:#x}", a.mask),
            Some("ether.type") => {
                l3 = match v {
                    0x0800 => "ip",
                    0x0806 => "arp",
                    _ => "",
                };
                write!(out, "={v:#06x}")
            }
            Some("ip.proto") => {
                l4 = match v {
                    6 => "tcp",
                    17 => "udp",
                    1 => "icmp",
                    _ => "l4",
                };
                match l4 {
                    "l4" => write!(out, "={v}"),
                    p => write!(out, "={p}"),
                }
            }
            Some(n) if n.ends_with(".src") || n.ends_with(".dst") || n.ends_with("pa") => {
                let b = v.to_be_bytes();
                write!(out, "={}.{}.{}.{}", b[0], b[1], b[2], b[3])
            }
            _ => write!(out, "={v}"),
        };
    }
    out
}

/// The name of the `size`-byte field at `offset` (from the packet's start,
/// or after the IPv4 header when `shifted`) in a packet of network protocol
/// `l3` and transport `l4`, for the fields filters use.
fn field(shifted: bool, l3: &str, l4: &str, size: u8, offset: u16) -> Option<&'static str> {
    Some(match (shifted, l3, size, offset) {
        (false, _, 2, 12) => "ether.type",
        (false, "ip", 1, 14) => "ip.version",
        (false, "ip", 2, 20) => "ip.frag",
        (false, "ip", 1, 23) => "ip.proto",
        (false, "ip", 4, 26) => "ip.src",
        (false, "ip", 4, 30) => "ip.dst",
        (false, "arp", 2, 20) => "arp.op",
        (false, "arp", 4, 28) => "arp.spa",
        (false, "arp", 4, 38) => "arp.tpa",
        (true, _, 2, 14) => match l4 {
            "tcp" => "tcp.sport",
            "udp" => "udp.sport",
            _ => "l4.sport",
        },
        (true, _, 2, 16) => match l4 {
            "tcp" => "tcp.dport",
            "udp" => "udp.dport",
            _ => "l4.dport",
        },
        (true, _, 1, 14) if l4 == "icmp" => "icmp.type",
        _ => return None,
    })
}
