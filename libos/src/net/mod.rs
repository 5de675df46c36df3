//! The network, the libOS side: packet rings in this process's own frames,
//! transmit from a frame of its own, the transmit template, and waiting for
//! packets on a wakeup predicate. Protocols live above this (`ether`).
//!
//! Ring memory is a [`Region`] of frames this process owns, mapped here;
//! the kernel copies accepted packets into it (see `oxok_abi::net`).

pub mod ether;
pub mod neigh;
pub mod socket;
pub mod stack;

pub use oxok_dpf::build as filters;

use crate::shm::Region;
use crate::sys;
use core::sync::atomic::Ordering;
use oxok_abi::Error;
use oxok_abi::layout::PAGE_SIZE;
use oxok_abi::net::{ENTRIES_PER_FRAME, ENTRY_BYTES, ENTRY_DATA, PACKET_MAX, TxPiece, TxTemplate};

/// The wakeup-predicate index [`Ring::wait`] uses.
pub const RING_PRED: u64 = 1;

/// The NIC's Ethernet address (`NotFound` without a NIC).
pub fn mac() -> Result<[u8; 6], Error> {
    let [word, _, _] = sys::net_info()?;
    let b = word.to_le_bytes();
    Ok([b[0], b[1], b[2], b[3], b[4], b[5]])
}

/// Sets the transmit template of the environment named by `env_slot`
/// (0: this one).
pub fn set_template(env_slot: u64, t: &TxTemplate) -> Result<(), Error> {
    let mut bytes = [0u8; 16];
    bytes[..6].copy_from_slice(&t.mac);
    bytes[8..12].copy_from_slice(&t.ip);
    bytes[12..14].copy_from_slice(&t.port_lo.to_le_bytes());
    bytes[14..16].copy_from_slice(&t.port_hi.to_le_bytes());
    sys::net_template(env_slot, bytes.as_ptr() as u64).map(|_| ())
}

/// The transmit template of the environment named by `env_slot` (0: this
/// one), if it has one.
pub fn template(env_slot: u64) -> Result<TxTemplate, Error> {
    let [mac, ip, ports] = sys::net_template_get(env_slot)?;
    let (m, i) = (mac.to_le_bytes(), ip.to_le_bytes());
    Ok(TxTemplate {
        mac: [m[0], m[1], m[2], m[3], m[4], m[5]],
        pad: [0; 2],
        ip: [i[0], i[1], i[2], i[3]],
        port_lo: ports as u16,
        port_hi: (ports >> 16) as u16,
    })
}

/// This process's Ethernet and IPv4 address: its template's (a program
/// started by another inherits one), or, for a boot program without one,
/// the NIC's and `default`, set now as its template with no ports (it may
/// send ARP and ICMP, nothing else). `NotFound` without a NIC.
pub fn address_or(default: [u8; 4]) -> Result<([u8; 6], [u8; 4]), Error> {
    let mac = mac()?;
    if let Ok(t) = template(0) {
        return Ok((mac, t.ip));
    }
    set_template(0, &TxTemplate { mac, pad: [0; 2], ip: default, port_lo: 0, port_hi: 0 })?;
    Ok((mac, default))
}

/// Gives the child named by `child_slot` this process's own template, if
/// it has one (`spawn` does this, so programs a shell starts can send).
pub fn pass_template(child_slot: u64) {
    if let Ok(t) = template(0) {
        let _ = set_template(child_slot, &t);
    }
}

/// A bound packet ring.
pub struct Ring {
    region: Region,
    id: u64,
    entries: usize,
    next: usize,
}

impl Ring {
    /// Allocates `1 + data_frames` frames, maps them here and binds them
    /// as a ring. The frames' capabilities are dropped once the ring is
    /// bound (the capability list has 64 slots; a ring holds none of them
    /// after it starts): the kernel frees each frame when the ring is
    /// unbound and the region unmapped.
    pub fn new(data_frames: usize) -> Result<Ring, Error> {
        let mut region = Region::create(1 + data_frames)?;
        let slots = region.frame_slots();
        let [id] = sys::ring_bind(slots.as_ptr() as u64, slots.len() as u64)?;
        region.release_caps();
        Ok(Ring { region, id, entries: data_frames * ENTRIES_PER_FRAME, next: 0 })
    }

    /// The kernel's number for the ring.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Packets the kernel put in the ring so far (from the read-only
    /// network table).
    pub fn produced(&self) -> u64 {
        crate::exposed::ring_row(self.id).map_or(0, |r| r.produced)
    }

    /// Packets dropped because the ring was full.
    pub fn dropped(&self) -> u64 {
        crate::exposed::ring_row(self.id).map_or(0, |r| r.dropped)
    }

    /// The kernel's copy of the counters in the ring's own header frame
    /// (`produced`, `dropped`): the owner may overwrite these, the table
    /// row nobody can.
    pub fn header_counters(&self) -> (u64, u64) {
        let w = self.region.words();
        (w[0].load(Ordering::Acquire), w[1].load(Ordering::Acquire))
    }

    /// Overwrites the ring's header frame (for tests: the owner's own
    /// memory, which the kernel never reads back).
    pub fn scribble_header(&self, value: u64) {
        for w in &self.region.words()[..4] {
            w.store(value, Ordering::Release);
        }
    }

    fn entry_word(&self, i: usize) -> usize {
        let page = 1 + i / ENTRIES_PER_FRAME;
        (page * PAGE_SIZE as usize + (i % ENTRIES_PER_FRAME) * ENTRY_BYTES) / 8
    }

    /// The next entry's owner word (its index) and the length it holds (0:
    /// free, no packet yet).
    fn next_entry(&self) -> (usize, usize) {
        let w = self.entry_word(self.next);
        (w, (self.region.words()[w].load(Ordering::Acquire) & 0xffff_ffff) as usize)
    }

    /// Whether the next entry holds a packet (one load: what [`Ring::recv`]
    /// looks at first).
    pub fn ready(&self) -> bool {
        self.next_entry().1 != 0
    }

    /// Copies the next packet into `buf` (truncated to it) and frees its
    /// entry; returns the packet's length, or `None` if the ring is empty.
    pub fn recv(&mut self, buf: &mut [u8]) -> Option<usize> {
        let (w, len) = self.next_entry();
        if len == 0 {
            return None;
        }
        let words = self.region.words();
        let len = len.min(ENTRY_BYTES - ENTRY_DATA).min(PACKET_MAX);
        let n = len.min(buf.len());
        // The kernel wrote the packet before its length (`Acquire` above)
        // and writes the entry again only after it is freed (`Release`).
        self.region.copy_out(w * 8 + ENTRY_DATA, &mut buf[..n]);
        words[w].store(0, Ordering::Release);
        self.next = (self.next + 1) % self.entries.max(1);
        Some(len)
    }

    /// Sleeps until the kernel has put more than `seen` packets in the
    /// ring (compare [`produced`](Ring::produced)), or the clock's tick
    /// count reaches `until_tick` (0: no limit).
    pub fn wait(&self, seen: u64, until_tick: u64) -> Result<(), Error> {
        self.wait_on(0, seen, until_tick)
    }

    /// Sleeps until more than `seen` packets arrived or the next tick.
    pub fn wait_packet_or_tick(&self, seen: u64) -> Result<(), Error> {
        self.wait(seen, crate::time::ticks() + 1)
    }

    /// Sleeps until more than `seen` packets were dropped (compare
    /// [`dropped`](Ring::dropped)), or the tick count reaches `until_tick`.
    pub fn wait_dropped(&self, seen: u64, until_tick: u64) -> Result<(), Error> {
        self.wait_on(8, seen, until_tick)
    }

    /// One predicate: the word at `offset` in the ring's row of the
    /// read-only network table above parameter 0, or (with a limit) the
    /// clock's ticks at parameter 1.
    fn wait_on(&self, offset: u64, seen: u64, until_tick: u64) -> Result<(), Error> {
        wait_ring(self.id, offset, seen, until_tick)
    }
}

/// Sleeps until the word at `offset` of ring `id`'s row in the network
/// table (0: produced, 8: dropped) exceeds `seen`, or the tick count
/// reaches `until_tick` (0: no limit). For code that keeps the [`Ring`]
/// behind a lock it must not hold while sleeping.
///
/// The predicate is installed once per ring, word and kind of limit
/// ([`crate::pred::install_keyed`]); each later sleep on it sets its two
/// parameters and sleeps (two or three calls, nothing verified again).
pub fn wait_ring(id: u64, offset: u64, seen: u64, until_tick: u64) -> Result<(), Error> {
    match sleep_on_ring(id, offset, seen, until_tick) {
        Err(Error::NotFound) => {
            // The slot was emptied or replaced behind the record's back.
            crate::pred::forget(RING_PRED);
            sleep_on_ring(id, offset, seen, until_tick)
        }
        r => r,
    }
}

fn sleep_on_ring(id: u64, offset: u64, seen: u64, until_tick: u64) -> Result<(), Error> {
    let row = oxok_abi::net::NET_TABLE
        + oxok_abi::net::RING_ROWS
        + (id & 0xff) * core::mem::size_of::<oxok_abi::net::RingRow>() as u64;
    // One key per ring, word and kind of limit; a word past the key's room
    // gets key 0, installed afresh every time.
    let key = match u32::try_from(offset) {
        Ok(o) if o < 0x800 => 0x0100_0000 | ((id & 0xff) as u32) << 12 | o << 1 | u32::from(until_tick != 0),
        _ => 0,
    };
    crate::pred::install_keyed(RING_PRED, key, || {
        let mut b = oxok_pred::Builder::new();
        b.load_u64(row + 16 + offset).gt_param(0);
        if until_tick != 0 {
            let ticks = oxok_abi::layout::CLOCK + core::mem::offset_of!(oxok_abi::layout::Clock, ticks) as u64;
            b.or().load_u64(ticks).ge_param(1);
        }
        b.build().map_err(|_| Error::Invalid)
    })?;
    sys::pred_param(0, RING_PRED, 0, seen)?;
    if until_tick != 0 {
        sys::pred_param(0, RING_PRED, 1, until_tick)?;
    }
    sys::env_sleep(1 << RING_PRED).map(|_| ())
}

impl Drop for Ring {
    fn drop(&mut self) {
        let _ = sys::ring_unbind(self.id);
    }
}

/// How long [`Tx::send_retrying`] keeps trying while the device holds
/// every transmit buffer, in milliseconds (and two timer ticks at least,
/// so that one whole tick passes).
pub const TX_WAIT_MS: u64 = 2;

/// How many times [`Tx::send_waiting`] sleeps (each until a packet or a
/// tick) before it gives a packet up.
pub const TX_SLEEPS: u32 = 2;

/// A frame of this process's own to send packets from.
pub struct Tx {
    region: Region,
}

impl Tx {
    /// Allocates the frame.
    pub fn new() -> Result<Tx, Error> {
        Ok(Tx { region: Region::create(1)? })
    }

    /// The frame's capability slot.
    pub fn frame_slot(&self) -> u64 {
        self.region.frame_slots()[0]
    }

    /// Sends `packet` (a whole Ethernet frame) from the frame.
    pub fn send(&self, packet: &[u8]) -> Result<(), Error> {
        if packet.len() > PACKET_MAX {
            return Err(Error::Invalid);
        }
        // The kernel reads the frame during the call that follows.
        self.region.copy_in(0, packet);
        let piece = TxPiece { frame_slot: self.frame_slot(), offset: 0, len: packet.len() as u32 };
        send_pieces(&[piece])
    }

    /// Sends `packet` as [`send`](Tx::send) does, yielding the CPU and
    /// trying again while every transmit buffer is still with the device
    /// (the kernel reclaims them on each send): at least `tries` times and
    /// until [`TX_WAIT_MS`] have passed, then `WouldBlock`.
    /// Any other error at once. (A yield with nobody else to run returns
    /// at once, and the emulated device may need the host's CPU for longer
    /// than `tries` of them: a packet given up is a retransmission later.)
    pub fn send_retrying(&self, packet: &[u8], tries: u32) -> Result<(), Error> {
        let mut until = None;
        let mut tried = 0u32;
        loop {
            match self.send(packet) {
                Err(Error::WouldBlock) => {
                    tried = tried.saturating_add(1);
                    let now = crate::time::ticks();
                    let deadline =
                        *until.get_or_insert(now.saturating_add(crate::time::ms_to_ticks(TX_WAIT_MS).max(2)));
                    if tried >= tries && now >= deadline {
                        return Err(Error::WouldBlock);
                    }
                    let _ = sys::yield_cpu(0);
                }
                done => return done,
            }
        }
    }

    /// Sends `packet` as [`send_retrying`](Tx::send_retrying) does for
    /// `tries` yields, then sleeps until a packet arrives on `ring` or the
    /// next tick ([`Ring::wait_packet_or_tick`]), and tries again, at most
    /// [`TX_SLEEPS`] times before `WouldBlock`. The peer's acknowledgements
    /// follow what the device has sent, and the device sends while the CPU
    /// is halted; a wait counted in ticks alone waited 4 ms at 250 Hz
    /// (`bench/README.md`, "A budget counted in ticks").
    pub fn send_waiting(&self, packet: &[u8], tries: u32, ring: &Ring) -> Result<(), Error> {
        let mut tried = 0u32;
        let mut slept = 0u32;
        loop {
            let seen = ring.produced();
            match self.send(packet) {
                Err(Error::WouldBlock) if tried < tries => {
                    tried += 1;
                    let _ = sys::yield_cpu(0);
                }
                Err(Error::WouldBlock) if slept < TX_SLEEPS => {
                    slept += 1;
                    ring.wait_packet_or_tick(seen)?;
                }
                done => return done,
            }
        }
    }
}

/// Sends one packet gathered from `pieces`.
pub fn send_pieces(pieces: &[TxPiece]) -> Result<(), Error> {
    let mut raw = [0u8; 16 * oxok_abi::net::TX_PIECES_MAX];
    if pieces.len() > oxok_abi::net::TX_PIECES_MAX {
        return Err(Error::Invalid);
    }
    for (p, rec) in pieces.iter().zip(raw.chunks_mut(16)) {
        rec[..8].copy_from_slice(&p.frame_slot.to_le_bytes());
        rec[8..12].copy_from_slice(&p.offset.to_le_bytes());
        rec[12..16].copy_from_slice(&p.len.to_le_bytes());
    }
    sys::net_send(raw.as_ptr() as u64, pieces.len() as u64).map(|_| ())
}

/// An installed packet filter (its capability slot and number). Dropping
/// it removes the filter.
pub struct Filter {
    slot: u64,
    id: u64,
}

impl Filter {
    /// Installs `filter` (see `oxok_dpf::build`) feeding `ring`;
    /// `refines` is the filter it narrows, if any (its capability is
    /// needed). `Exists` when it overlaps a filter someone installed.
    pub fn install(ring: &Ring, filter: &oxok_dpf::Builder, refines: Option<&Filter>) -> Result<Filter, Error> {
        let block = filter.raw().to_bytes();
        let refines = refines.map_or(u64::MAX, |f| f.slot);
        let [slot, id] = sys::filter_install(ring.id, block.as_ptr() as u64, refines)?;
        Ok(Filter { slot, id })
    }

    /// Its capability slot.
    pub fn slot(&self) -> u64 {
        self.slot
    }

    /// The kernel's number for it.
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for Filter {
    fn drop(&mut self) {
        let _ = sys::filter_remove(self.slot);
    }
}
