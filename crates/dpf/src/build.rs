//! Building filters: a small builder over the atoms, and the common filters
//! a libOS network stack installs (Ethernet frames, offsets from the start
//! of the Ethernet header).

use oxok_abi::filter::{MAX_ATOMS, RawAtom, RawFilter};

use crate::filter::Filter;
use crate::verify::{Reject, VerifyError, verify_atoms};

/// Ethernet type of ARP.
pub const ETHERTYPE_ARP: u16 = 0x0806;
/// Ethernet type of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// IPv4 protocol number of ICMP.
pub const PROTO_ICMP: u8 = 1;
/// IPv4 protocol number of TCP.
pub const PROTO_TCP: u8 = 6;
/// IPv4 protocol number of UDP.
pub const PROTO_UDP: u8 = 17;
/// ICMP type of an echo request.
pub const ICMP_ECHO_REQUEST: u8 = 8;
/// ICMP type of an echo reply.
pub const ICMP_ECHO_REPLY: u8 = 0;

/// Offset of the Ethernet type.
const ETH_TYPE: u16 = 12;
/// Offset of the IPv4 header.
const IP: u16 = 14;

/// Accumulates atoms; [`build`](Builder::build) verifies them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Builder {
    atoms: [RawAtom; MAX_ATOMS],
    len: usize,
    overflow: bool,
}

impl Builder {
    /// No atoms yet.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Appends any atom.
    pub fn atom(mut self, a: RawAtom) -> Builder {
        if self.len < MAX_ATOMS {
            self.atoms[self.len] = a;
            self.len += 1;
        } else {
            self.overflow = true;
        }
        self
    }

    /// `(field & mask) == value` on a `size`-byte big-endian field.
    pub fn masked(self, size: u8, offset: u16, mask: u32, value: u32) -> Builder {
        self.atom(RawAtom::eq(size, offset, mask, value))
    }

    /// The byte at `offset` equals `value`.
    pub fn eq8(self, offset: u16, value: u8) -> Builder {
        self.masked(1, offset, 0xff, value as u32)
    }

    /// The big-endian 16-bit field at `offset` equals `value`.
    pub fn eq16(self, offset: u16, value: u16) -> Builder {
        self.masked(2, offset, 0xffff, value as u32)
    }

    /// The big-endian 32-bit field at `offset` equals `value`.
    pub fn eq32(self, offset: u16, value: u32) -> Builder {
        self.masked(4, offset, 0xffff_ffff, value)
    }

    /// Adds `(field & mask) * scale` to the base of the following atoms.
    pub fn shift(self, size: u8, offset: u16, mask: u32, scale: u8) -> Builder {
        self.atom(RawAtom::shift(size, offset, mask, scale))
    }

    /// The atoms in the wire format (unverified), for the install call.
    pub fn raw(&self) -> RawFilter {
        let mut raw = RawFilter::default();
        raw.atoms[..self.len].copy_from_slice(&self.atoms[..self.len]);
        raw
    }

    /// Verifies the atoms.
    pub fn build(&self) -> Result<Filter, VerifyError> {
        if self.overflow {
            return Err(VerifyError { reason: Reject::BadLength, at: MAX_ATOMS });
        }
        verify_atoms(&self.atoms[..self.len])
    }
}

/// Ethernet frames of type ARP.
pub fn arp() -> Builder {
    Builder::new().eq16(ETH_TYPE, ETHERTYPE_ARP)
}

/// IPv4 packets with protocol `proto` (version 4; any header length).
pub fn ipv4(proto: u8) -> Builder {
    Builder::new().eq16(ETH_TYPE, ETHERTYPE_IPV4).masked(1, IP, 0xf0, 0x40).eq8(IP + 9, proto)
}

/// IPv4 packets with protocol `proto` (TCP or UDP) to destination port
/// `port`: not a later fragment (those carry no port), then the IPv4
/// header-length shift (IHL × 4), then the port 2 bytes into the transport
/// header.
pub fn ipv4_port(proto: u8, port: u16) -> Builder {
    ipv4(proto).masked(2, IP + 6, 0x1fff, 0).shift(1, IP, 0x0f, 4).eq16(IP + 2, port)
}

/// UDP to `port` (a bound UDP socket).
pub fn udp(port: u16) -> Builder {
    ipv4_port(PROTO_UDP, port)
}

/// TCP to `port` (a listening socket).
pub fn tcp_listen(port: u16) -> Builder {
    ipv4_port(PROTO_TCP, port)
}

/// ICMP messages of type `ty` to IPv4 address `dst`: not a later
/// fragment, then the header-length shift, then the type, the first byte
/// of the ICMP header. Echo requests to an address and echo replies to it
/// are disjoint, so an answerer and a pinger install theirs side by side.
pub fn icmp(ty: u8, dst: u32) -> Builder {
    ipv4(PROTO_ICMP).eq32(IP + 16, dst).masked(2, IP + 6, 0x1fff, 0).shift(1, IP, 0x0f, 4).eq8(IP, ty)
}

/// One TCP connection: `local` and `remote` are (IPv4 address, port). A
/// strict subset of [`tcp_listen`]`(local.1)`, so the listener may install
/// it as a refinement of its own filter.
pub fn tcp_connection(local: (u32, u16), remote: (u32, u16)) -> Builder {
    ipv4(PROTO_TCP)
        .eq32(IP + 12, remote.0)
        .eq32(IP + 16, local.0)
        .masked(2, IP + 6, 0x1fff, 0)
        .shift(1, IP, 0x0f, 4)
        .eq16(IP, remote.1)
        .eq16(IP + 2, local.1)
}
