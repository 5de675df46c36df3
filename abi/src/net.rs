//! The network: packet rings, transmit templates and gather lists — the
//! structures `ring_bind`, `net_send` and `net_template` exchange.
//!
//! # Packet rings
//!
//! A ring is `1 + n` frames the owner supplies (`1 <= n <=`
//! [`RING_DATA_FRAMES_MAX`]): the **header frame** first, then `n` **entry
//! frames** of [`ENTRIES_PER_FRAME`] entries of [`ENTRY_BYTES`] each. The
//! kernel fills entries in order, wrapping around. An entry's first `u32`
//! is its **owner word**: 0 means free (the owner's); otherwise the kernel
//! copied a packet of that many bytes to [`ENTRY_DATA`] in the entry and it
//! is the owner's to read and then set back to 0. When the next entry is
//! not free the packet is dropped and counted.
//!
//! The kernel keeps the ring's counters itself and writes a copy into the
//! header frame after every packet ([`RingHeader`]); a wakeup predicate
//! comparing `produced` with a parameter waits for the next packet without
//! reinstalling (`ld u64 [header]; gt p0`). The owner may scribble on its own
//! header: the kernel never reads it back.

/// The network table, read-only in every address space (one page): a
/// [`NetHeader`] at offset 0, then [`RING_ROWS_MAX`] [`RingRow`]s at
/// [`RING_ROWS`], row `ring & 0xff` for ring number `ring`. A predicate that
/// waits for packets loads the row's `produced` and compares it with a
/// parameter; unlike the copy in the ring's own header frame, nobody but the
/// kernel can write it.
pub const NET_TABLE: u64 = crate::layout::EXPOSED_BASE + 0x9000_0000;
/// Offset of the first ring row in the network table.
pub const RING_ROWS: u64 = 64;
/// Rows (rings bound at once, machine-wide).
pub const RING_ROWS_MAX: usize = 64;

/// The network table's header.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetHeader {
    /// The NIC's Ethernet address in bytes 0–5 (0: no NIC).
    pub mac: u64,
    /// Packets received since boot.
    pub received: u64,
    /// Packets no filter accepted.
    pub unclaimed: u64,
    /// Packets sent.
    pub sent: u64,
    /// Packets `net_send` refused for their headers (template).
    pub refused: u64,
    /// Filters installed now.
    pub filters: u64,
    /// Rings bound now.
    pub rings: u64,
    /// Receive interrupts the kernel took since boot. Each takes a batch
    /// and masks the next until a program calls the kernel (while a ring a
    /// batch left full is waited for, only its owner) or the CPU would
    /// idle; meanwhile the tick takes a batch, so a program computing
    /// without calls meets at most one a tick.
    pub interrupts: u64,
}

/// One ring as the network table shows it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingRow {
    /// The environment that bound it (0: the row is free).
    pub owner: u64,
    /// The ring's number.
    pub ring: u64,
    /// Packets copied into it.
    pub produced: u64,
    /// Packets dropped because it was full.
    pub dropped: u64,
}

const _: () = assert!(RING_ROWS as usize + RING_ROWS_MAX * core::mem::size_of::<RingRow>() <= 4096);

/// The filter table, read-only in every address space: the pages that
/// follow the network table's first page, [`FILTER_ROWS_PER_PAGE`]
/// [`FilterRow`]s of [`FILTER_ROW_BYTES`] each per page (a row never crosses
/// a page), row `i` for the installed filter whose id has index `i`
/// ([`filter_row_va`]). A row whose `owner` is 0 is free. The kernel
/// rewrites a row when its filter is installed or removed, when the filter
/// it refines changes (a removed parent hands its refinements to its own
/// parent), and bumps `accepted` for every packet the filter takes.
pub const FILTER_TABLE: u64 = NET_TABLE + 0x1000;
/// Most filters installed at once, machine-wide (rows of the filter table).
pub const FILTER_ROWS_MAX: usize = 256;
/// Bytes per filter row: a [`FilterRow`] head, then the filter's atoms in
/// the install call's encoding ([`FILTER_BYTES`](crate::filter::FILTER_BYTES)),
/// in the canonical form the kernel keeps (the verifier's order and
/// merging, so two installs of one filter show the same bytes).
pub const FILTER_ROW_BYTES: usize = core::mem::size_of::<FilterRow>() + crate::filter::FILTER_BYTES;
/// Filter rows per page of the filter table.
pub const FILTER_ROWS_PER_PAGE: usize = 4096 / FILTER_ROW_BYTES;
/// Pages of the filter table.
pub const FILTER_TABLE_PAGES: usize = FILTER_ROWS_MAX.div_ceil(FILTER_ROWS_PER_PAGE);
/// `refines` of a filter that refines none.
pub const FILTER_NONE: u64 = u64::MAX;

/// One installed filter's head in the filter table; its atoms follow.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FilterRow {
    /// The environment that installed it (0: the row is free).
    pub owner: u64,
    /// The ring its packets go to.
    pub ring: u64,
    /// Its id (`generation << 32 | index`, the name its capability carries).
    pub id: u64,
    /// The id of the filter it refines, or [`FILTER_NONE`].
    pub refines: u64,
    /// Packets it accepted since it was installed (given to its ring, or
    /// dropped there when the ring was full).
    pub accepted: u64,
    /// Its number of atoms.
    pub atoms: u64,
}

/// Where row `index` of the filter table starts.
pub const fn filter_row_va(index: usize) -> u64 {
    FILTER_TABLE + (index / FILTER_ROWS_PER_PAGE * 4096 + index % FILTER_ROWS_PER_PAGE * FILTER_ROW_BYTES) as u64
}

const _: () = assert!(FILTER_ROWS_PER_PAGE >= 1);
const _: () = assert!(FILTER_TABLE + (FILTER_TABLE_PAGES as u64) * 4096 <= NET_TABLE + 0x10_0000);

const _: () = assert!(core::mem::size_of::<NetHeader>() <= RING_ROWS as usize);

/// Largest Ethernet frame (no FCS) the network carries: 14-byte header plus
/// a 1500-byte payload.
pub const PACKET_MAX: usize = 1514;
/// Smallest frame `net_send` accepts: an Ethernet header.
pub const PACKET_MIN: usize = 14;
/// Bytes per ring entry.
pub const ENTRY_BYTES: usize = 2048;
/// Offset of the packet inside an entry (after the owner word and padding).
pub const ENTRY_DATA: usize = 8;
/// Ring entries per entry frame.
pub const ENTRIES_PER_FRAME: usize = 4096 / ENTRY_BYTES;
/// Most entry frames one ring may have.
pub const RING_DATA_FRAMES_MAX: usize = 31;
/// Most rings one environment may have bound at once.
pub const RINGS_PER_ENV: usize = 4;
/// Most filters one environment may have installed at once (so no one
/// fills the machine's filter table).
pub const FILTERS_PER_ENV: usize = 32;

/// The ring's counters, as the kernel writes them at the start of the
/// header frame.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingHeader {
    /// Packets copied into the ring since it was bound.
    pub produced: u64,
    /// Packets the ring's filters accepted but the ring had no free entry for.
    pub dropped: u64,
    /// Entries in the ring.
    pub entries: u64,
    /// The entry the kernel fills next.
    pub next: u64,
}

/// One piece of a `net_send` gather list: `len` bytes at `offset` in the
/// frame named by capability slot `frame_slot` (read right needed). A piece
/// stays within its frame.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxPiece {
    /// Capability slot of the frame.
    pub frame_slot: u64,
    /// Byte offset in the frame.
    pub offset: u32,
    /// Bytes.
    pub len: u32,
}

/// Most pieces in one `net_send`.
pub const TX_PIECES_MAX: usize = 8;

/// What an environment may put in the headers it sends (`net_template`).
/// Every packet must carry `mac` as its Ethernet source and be IPv4 or ARP:
/// IPv4 with source address `ip` (and, for UDP and TCP, a source port in
/// `port_lo..=port_hi`), ARP with sender `mac` and `ip`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxTemplate {
    /// Ethernet source address.
    pub mac: [u8; 6],
    /// Zero.
    pub pad: [u8; 2],
    /// IPv4 source address.
    pub ip: [u8; 4],
    /// Lowest UDP/TCP source port.
    pub port_lo: u16,
    /// Highest UDP/TCP source port.
    pub port_hi: u16,
}

impl TxTemplate {
    /// True if every packet `self` allows, `outer` allows too.
    pub fn within(&self, outer: &TxTemplate) -> bool {
        self.mac == outer.mac
            && self.ip == outer.ip
            && self.port_lo <= self.port_hi
            && outer.port_lo <= self.port_lo
            && self.port_hi <= outer.port_hi
    }
}

/// Ethernet type of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// Ethernet type of ARP.
pub const ETHERTYPE_ARP: u16 = 0x0806;
/// IPv4 protocol number of UDP.
pub const IP_UDP: u8 = 17;
/// IPv4 protocol number of TCP.
pub const IP_TCP: u8 = 6;
/// IPv4 protocol number of ICMP.
pub const IP_ICMP: u8 = 1;

/// Why a packet's headers do not fit a template (`None`: they fit).
pub fn template_violation(t: &TxTemplate, p: &[u8]) -> Option<&'static str> {
    if p.len() < PACKET_MIN || p.len() > PACKET_MAX {
        return Some("length");
    }
    if p[6..12] != t.mac {
        return Some("ethernet source");
    }
    match u16::from_be_bytes([p[12], p[13]]) {
        ETHERTYPE_ARP => {
            // htype, ptype, hlen, plen, op, sha, spa, tha, tpa.
            if p.len() < 14 + 28 {
                return Some("short ARP");
            }
            let a = &p[14..];
            if a[4] != 6 || a[5] != 4 || a[8..14] != t.mac || a[14..18] != t.ip {
                return Some("ARP sender");
            }
            None
        }
        ETHERTYPE_IPV4 => {
            let ip = &p[14..];
            if ip.len() < 20 || ip[0] >> 4 != 4 {
                return Some("IPv4 header");
            }
            let ihl = usize::from(ip[0] & 0xf) * 4;
            if ihl < 20 || ip.len() < ihl || ip[12..16] != t.ip {
                return Some("IPv4 source");
            }
            let fragment = u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff;
            match ip[9] {
                IP_UDP | IP_TCP if fragment == 0 => {
                    if ip.len() < ihl + 2 {
                        return Some("short transport header");
                    }
                    let port = u16::from_be_bytes([ip[ihl], ip[ihl + 1]]);
                    if port < t.port_lo || port > t.port_hi {
                        return Some("source port");
                    }
                    None
                }
                // Later fragments carry no ports; the first one was checked.
                IP_UDP | IP_TCP => None,
                IP_ICMP => None,
                _ => Some("IPv4 protocol"),
            }
        }
        _ => Some("ethernet type"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: TxTemplate =
        TxTemplate { mac: [2, 0, 0, 0, 0, 1], pad: [0; 2], ip: [10, 0, 2, 15], port_lo: 7, port_hi: 9 };

    fn udp(mac: [u8; 6], ip: [u8; 4], port: u16) -> [u8; 42] {
        let mut p = [0u8; 42];
        p[6..12].copy_from_slice(&mac);
        p[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        p[14] = 0x45;
        p[14 + 9] = IP_UDP;
        p[26..30].copy_from_slice(&ip);
        p[34..36].copy_from_slice(&port.to_be_bytes());
        p
    }

    #[test]
    fn template_checks_source_fields() {
        assert_eq!(template_violation(&T, &udp(T.mac, T.ip, 7)), None);
        assert_eq!(template_violation(&T, &udp(T.mac, T.ip, 9)), None);
        assert_eq!(template_violation(&T, &udp(T.mac, T.ip, 10)), Some("source port"));
        assert_eq!(template_violation(&T, &udp(T.mac, [10, 0, 2, 16], 7)), Some("IPv4 source"));
        assert_eq!(template_violation(&T, &udp([2, 0, 0, 0, 0, 2], T.ip, 7)), Some("ethernet source"));
        assert_eq!(template_violation(&T, &udp(T.mac, T.ip, 7)[..13]), Some("length"));
        let mut odd = udp(T.mac, T.ip, 7);
        odd[12] = 0x86;
        odd[13] = 0xdd;
        assert_eq!(template_violation(&T, &odd), Some("ethernet type"));
    }

    #[test]
    fn template_nesting() {
        let inner = TxTemplate { port_lo: 8, port_hi: 8, ..T };
        assert!(inner.within(&T));
        assert!(!T.within(&inner));
        assert!(!TxTemplate { ip: [1, 2, 3, 4], ..inner }.within(&T));
    }
}
