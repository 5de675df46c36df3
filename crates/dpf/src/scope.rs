//! What a filter can accept, said in a transmit template's terms, so the
//! kernel can bind receiving as it binds sending: a filter is within an
//! environment's template when every packet it can accept is one the
//! template's owner could have been sent as an answer — ARP, ICMP to its
//! address, TCP or UDP to one of its ports.
//!
//! [`scope`] proves the narrowest of these a filter implies, from atoms
//! alone. A conjunction only narrows, so one atom that pins a field is
//! proof enough, whatever else the filter tests; a filter proving none of
//! them is [`Scope::Any`]. For a port the proof needs the whole chain a
//! libOS's port filter has ([`build::ipv4_port`](crate::build::ipv4_port)):
//! IPv4, TCP or UDP, not a later fragment (whose payload would sit where
//! the port is), the header-length shift exactly, then the destination
//! port two bytes into the transport header.

use crate::build::{ETHERTYPE_ARP, ETHERTYPE_IPV4, PROTO_ICMP, PROTO_TCP, PROTO_UDP};
use crate::filter::{Atom, Field, Filter};

/// The narrowest class of packets a filter is proven to accept only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// ARP frames.
    Arp,
    /// IPv4 ICMP to address `dst`.
    Icmp {
        /// The destination address the filter pins.
        dst: [u8; 4],
    },
    /// IPv4 TCP or UDP, first fragments, to a destination port in
    /// `lo..=hi`.
    Ports {
        /// Lowest port accepted.
        lo: u16,
        /// Highest port accepted.
        hi: u16,
    },
    /// Nothing narrower proven.
    Any,
}

const ETH_TYPE: Field = Field { offset: 12, size: 2, mask: 0xffff };
const IP_PROTO: Field = Field { offset: 23, size: 1, mask: 0xff };
const IP_DST: Field = Field { offset: 30, size: 4, mask: 0xffff_ffff };
/// The fragment offset: 0 on a first fragment.
const FRAGMENT: Field = Field { offset: 20, size: 2, mask: 0x1fff };
/// IPv4's header length, in words.
const IHL: Field = Field { offset: 14, size: 1, mask: 0x0f };
/// The destination port, from the base the IHL shift made (14 + IHL × 4).
const DST_PORT: u16 = 16;

/// What `f` is proven to accept only (see the module documentation).
pub fn scope(f: &Filter) -> Scope {
    let atoms = f.atoms();
    let first_shift = atoms.iter().position(|a| matches!(a, Atom::Shift { .. })).unwrap_or(atoms.len());
    let (before, after) = atoms.split_at(first_shift);
    let pins = |field: Field, value: u32| before.contains(&Atom::Eq { field, value });
    let pinned = |field: Field| {
        before.iter().find_map(|a| match *a {
            Atom::Eq { field: f, value } if f == field => Some(value),
            _ => None,
        })
    };
    if pins(ETH_TYPE, u32::from(ETHERTYPE_ARP)) {
        return Scope::Arp;
    }
    if !pins(ETH_TYPE, u32::from(ETHERTYPE_IPV4)) {
        return Scope::Any;
    }
    if pins(IP_PROTO, u32::from(PROTO_ICMP)) {
        return match pinned(IP_DST) {
            Some(dst) => Scope::Icmp { dst: dst.to_be_bytes() },
            None => Scope::Any,
        };
    }
    let transport = pins(IP_PROTO, u32::from(PROTO_TCP)) || pins(IP_PROTO, u32::from(PROTO_UDP));
    let ihl_shift = matches!(after.first(), Some(&Atom::Shift { field, scale: 4 }) if field == IHL);
    if !transport || !pins(FRAGMENT, 0) || !ihl_shift {
        return Scope::Any;
    }
    // The stretch after the IHL shift, up to the next shift.
    let stretch = after[1..].iter().take_while(|a| matches!(a, Atom::Eq { .. }));
    let ports = stretch.filter_map(|a| match *a {
        Atom::Eq { field: Field { offset: DST_PORT, size: 2, mask }, value } => {
            // Every x with x & mask == value: from value up, with every
            // bit outside the mask set at the top.
            let (lo, hi) = (value as u16, (value | (!mask & 0xffff)) as u16);
            Some((lo, hi))
        }
        _ => None,
    });
    match ports.min_by_key(|&(lo, hi)| hi - lo) {
        Some((lo, hi)) => Scope::Ports { lo, hi },
        None => Scope::Any,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{self, Builder};

    fn of(b: Builder) -> Scope {
        scope(&b.build().expect("a valid filter"))
    }

    #[test]
    fn the_libos_filters_have_their_narrow_scope() {
        assert_eq!(of(build::arp()), Scope::Arp);
        assert_eq!(of(build::udp(53)), Scope::Ports { lo: 53, hi: 53 });
        assert_eq!(of(build::tcp_listen(80)), Scope::Ports { lo: 80, hi: 80 });
        let conn = build::tcp_connection((0x0a00_020f, 8080), (0x0a00_0202, 5555));
        assert_eq!(of(conn), Scope::Ports { lo: 8080, hi: 8080 });
        assert_eq!(of(build::icmp(build::ICMP_ECHO_REQUEST, 0x0a00_020f)), Scope::Icmp { dst: [10, 0, 2, 15] });
    }

    #[test]
    fn a_masked_port_is_the_range_it_admits() {
        let b = build::ipv4(PROTO_UDP).masked(2, 20, 0x1fff, 0).shift(1, 14, 0x0f, 4).masked(2, 16, 0xff00, 0x1300);
        assert_eq!(of(b), Scope::Ports { lo: 0x1300, hi: 0x13ff });
    }

    #[test]
    fn anything_short_of_the_whole_proof_is_any() {
        // All IPv4, all TCP, all ICMP.
        assert_eq!(of(Builder::new().eq16(12, ETHERTYPE_IPV4)), Scope::Any);
        assert_eq!(of(build::ipv4(PROTO_TCP)), Scope::Any);
        assert_eq!(of(build::ipv4(PROTO_ICMP)), Scope::Any);
        // A port without the fragment test: later fragments' payload.
        let no_frag = build::ipv4(PROTO_UDP).shift(1, 14, 0x0f, 4).eq16(16, 53);
        assert_eq!(of(no_frag), Scope::Any);
        // Another shift than IHL × 4 puts "the port" anywhere.
        let odd_shift = build::ipv4(PROTO_UDP).masked(2, 20, 0x1fff, 0).shift(1, 14, 0x0f, 2).eq16(16, 53);
        assert_eq!(of(odd_shift), Scope::Any);
        // The source port, not the destination.
        let src = build::ipv4(PROTO_UDP).masked(2, 20, 0x1fff, 0).shift(1, 14, 0x0f, 4).eq16(14, 53);
        assert_eq!(of(src), Scope::Any);
        // A half-masked Ethernet type proves nothing.
        assert_eq!(of(Builder::new().masked(2, 12, 0xff00, 0x0800)), Scope::Any);
    }

    #[test]
    fn extra_atoms_only_narrow() {
        let b = build::udp(7).eq32(26, 0x0a00_0202);
        assert_eq!(of(b), Scope::Ports { lo: 7, hi: 7 });
    }
}
