//! The network: the kernel's NIC, the rings packets are copied into, the
//! filters that decide whose ring a packet goes to, and the transmit
//! templates every sent packet is checked against. No protocol processing:
//! ARP, IP, UDP and TCP are the libOS's.
//!
//! All of it sits behind one lock, taken only with the kernel lock held
//! (from calls and from the scheduler's tick processing), never from an
//! interrupt handler. The NIC's receive interrupt only sets a flag
//! ([`IRQ`]); the scheduler takes it under the kernel lock and calls
//! [`poll_interrupt`], which takes a batch of at most [`BATCH`] packets
//! (half the largest ring) with the interrupt masked first, and leaves it
//! masked until the program running makes progress (its next call,
//! [`progressed`]) or the CPU would idle ([`idle`]); the tick's [`poll`]
//! takes a batch meanwhile, masked the same way, unless the interrupt's
//! came in the same pass. Receive livelock is avoided as in Mogul and
//! Ramakrishnan's polling — between two receive interrupts either a
//! program runs or nobody wants the CPU — and with their feedback from full
//! queues: while a batch has left a ring short of room for another (for
//! at most [`WAIT_TICKS`] ticks), only its owner's calls unmask and the
//! tick takes no batch, so what its reader is behind on waits in the
//! device instead of being copied to be dropped. An interrupt raised
//! before the mask took effect waits for the unmask ([`OWED`]).

mod pins;
pub mod ring;
mod table;

use crate::dev::virtio_net::{self, Nic};
use crate::env::EnvId;
use crate::mem::access::FrameRef;
use crate::mem::addr::Pfn;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use oxok_abi::Error;
use oxok_abi::net::{FILTER_NONE, FilterRow, NetHeader, RINGS_PER_ENV, RingRow, TxTemplate};
use oxok_dpf::{Dpf, Filter, FilterId, InstallError};
pub use pins::{Pins, pin, unpin};
use ring::Ring;
use spin::Mutex;

/// Most rings bound at once, machine-wide.
pub const MAX_RINGS: usize = oxok_abi::net::RING_ROWS_MAX;
/// Most filters installed at once, machine-wide (the filter table's rows).
pub const MAX_FILTERS: usize = oxok_abi::net::FILTER_ROWS_MAX;
/// The most packets one receive takes from the device (an interrupt's
/// batch, or the tick's): half the largest ring's entries, so that the
/// batch a ring's owner wakes to and a tick's, taken before it has read
/// one, fit together. The rest wait in the device, which holds more than
/// a batch.
pub const BATCH: usize = oxok_abi::net::RING_DATA_FRAMES_MAX * oxok_abi::net::ENTRIES_PER_FRAME / 2;

/// Ticks a ring short of room is waited for (see [`Net::waiting`]): its
/// reader is behind but reading; one that stays behind longer (a stopped
/// or hostile reader) is not, and loses packets while the others are
/// served.
const WAIT_TICKS: u32 = 4;

/// Whether the receive interrupt is masked: [`Net::irq_masked`] as an
/// atomic, for [`progressed`]'s look without the lock.
static MASKED: AtomicBool = AtomicBool::new(false);

/// Whose calls may find room again while a ring's reader is waited for
/// (see [`Net::waiting`]): 0 anyone's (no ring's is), else
/// that ring's owner (its raw id), or [`MANY`] when rings of several
/// owners are. Another program's call cannot make room in a ring it does
/// not read, so it need not look.
static SHORT_OWNER: AtomicU32 = AtomicU32::new(0);
/// [`SHORT_OWNER`] for short rings of more than one owner.
const MANY: u32 = u32::MAX;

/// Packets may be waiting in the device with no interrupt to come for
/// them: an interrupt arrived while masked (raised before the mask took
/// effect) or a receive stopped at [`BATCH`]. The unmask raises the
/// interrupt again ([`unmask`]).
static OWED: AtomicBool = AtomicBool::new(false);

/// Set by the NIC's receive interrupt; taken under the kernel lock.
pub static IRQ: crate::irqflag::IrqFlag = crate::irqflag::IrqFlag::new();

/// The network state.
pub struct Net {
    /// The device, if the machine has one.
    pub nic: Option<Nic>,
    /// Bound rings; a ring's number is `index | generation << 8`.
    rings: Vec<(u32, Option<Ring>)>,
    /// How many of `rings` are bound (kept by [`Net::bind`] and
    /// [`Net::unbind`]: the header shows it after every call).
    bound: u64,
    /// Installed filters; each names the environment and ring it feeds.
    /// Changed only through [`Net::install`] and [`Net::remove_filter`],
    /// which keep the exposed filter table in step.
    filters: Dpf<(EnvId, u64)>,
    /// Per filter-table row: packets its filter accepted, and the
    /// `refines` word the exposed row shows.
    filter_rows: Vec<(u64, u64)>,
    /// Transmit templates by environment.
    pub templates: BTreeMap<EnvId, TxTemplate>,
    /// Packets received, and received with no filter accepting them.
    pub received: u64,
    /// Packets no filter accepted.
    pub unclaimed: u64,
    /// Packets sent.
    pub sent: u64,
    /// Packets refused for their headers.
    pub refused: u64,
    /// Receive interrupts taken.
    pub interrupts: u64,
    /// Whether the receive interrupt is masked (since the last batch, until
    /// the program running calls the kernel with no ring's reader waited
    /// for, or the CPU would idle).
    irq_masked: bool,
    /// Rings (by index) a batch left with less than a batch's room, until
    /// their owners read enough; each counts the ticks since
    /// (`Ring::short`), and is waited for in the first [`WAIT_TICKS`]
    /// ([`Net::waiting`]).
    full: [u64; MAX_RINGS / 64],
}

static NET: Mutex<Option<Net>> = Mutex::new(None);

/// Looks for a NIC and sets up the (possibly device-less) network state.
/// Called once at boot, before any environment exists, so the device's
/// buffers count as the kernel's own share of memory.
pub fn init() {
    let nic = virtio_net::probe();
    match &nic {
        Some(n) => {
            let m = n.mac();
            log::info!("net: virtio-net {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5])
        }
        None => log::info!("net: no NIC"),
    }
    let rings = (0..MAX_RINGS).map(|_| (0, None)).collect();
    if let Err(e) = table::init() {
        log::warn!("net: no network table: {e:?}");
    }
    let filters = Dpf::new(MAX_FILTERS, crate::arch::cpu::rdtsc());
    let net = Net {
        nic,
        rings,
        bound: 0,
        filters,
        filter_rows: Vec::new(),
        templates: BTreeMap::new(),
        received: 0,
        unclaimed: 0,
        sent: 0,
        refused: 0,
        interrupts: 0,
        irq_masked: false,
        full: [0; MAX_RINGS / 64],
    };
    net.publish();
    *NET.lock() = Some(net);
}

/// Runs `f` with the network state locked (`NotFound` before `init`).
pub fn with<R>(f: impl FnOnce(&mut Net) -> Result<R, Error>) -> Result<R, Error> {
    match NET.lock().as_mut() {
        Some(net) => {
            let r = f(net);
            net.publish();
            r
        }
        None => Err(Error::NotFound),
    }
}

/// The tick's poll: a batch taken as a receive interrupt's (and the
/// interrupt masked after it the same way), also when the interrupt is
/// masked already — so a program that computes without calls meets at
/// most one batch a tick, and packets still come in while it does. Not
/// while a ring's reader is waited for ([`Net::waiting`]): it reads first
/// (one that stays behind longer loses packets to the batches that go on
/// serving the others, and calls unmask again).
pub fn poll() {
    let mut guard = NET.lock();
    let Some(net) = guard.as_mut().filter(|n| n.nic.is_some()) else { return };
    if net.tick_waiting() {
        return;
    }
    // The table's header changes only with what arrives.
    if net.take_batch() > 0 {
        net.publish();
    }
}

/// After a receive interrupt: takes the waiting packets (a bounded number)
/// into rings and masks the interrupt until the program running makes
/// progress, the CPU would idle or the tick comes. Returns the number of
/// packets.
pub fn poll_interrupt() -> usize {
    with(|net| {
        net.interrupts += 1;
        if net.irq_masked {
            // Raised before the last one masked it, and nobody ran since:
            // it comes again at the unmask.
            OWED.store(true, Ordering::Relaxed);
            return Ok(0);
        }
        Ok(net.take_batch())
    })
    .unwrap_or(0)
}

/// The running program entered the kernel by a call: it ran since the last
/// receive interrupt, so the next may come — once no ring whose reader is
/// waited for is short of a batch's room (Mogul and Ramakrishnan's
/// feedback from a full queue: packets its reader is behind on wait in the
/// device, not copied to be dropped; [`Net::waiting`]). One atomic load
/// when nothing is masked; while such a ring is short, only its owner's
/// calls look again.
#[inline(always)]
pub fn progressed(caller: Option<EnvId>) {
    if MASKED.load(Ordering::Relaxed) {
        let short = SHORT_OWNER.load(Ordering::Relaxed);
        if short == 0 || short == MANY || caller.is_some_and(|c| c.raw() == short) {
            unmask(false);
        }
    }
}

/// The CPU is about to idle: nobody wants it (a ring's reader too is
/// asleep), so a masked receive interrupt may come at once.
pub fn idle() {
    if MASKED.load(Ordering::Relaxed) {
        unmask(true);
    }
}

/// Lets the receive interrupt come again (unless a ring's reader is
/// waited for and not `anyway`); one owed (see [`OWED`]) is raised at
/// once, as the device raises one held while masked.
#[cold]
fn unmask(anyway: bool) {
    if let Some(net) = NET.lock().as_mut() {
        if !anyway && net.waiting() {
            return;
        }
        net.set_masked(false);
    }
    if OWED.swap(false, Ordering::Relaxed) {
        crate::arch::apic::self_interrupt(crate::arch::apic::NET_VECTOR);
    }
}

fn ring_mut(rings: &mut [(u32, Option<Ring>)], id: u64) -> Option<&mut Ring> {
    let (generation, ring) = rings.get_mut((id & 0xff) as usize)?;
    if u64::from(*generation) != id >> 8 {
        return None;
    }
    ring.as_mut()
}

impl Net {
    /// One batch: the interrupt masked first, so that packets coming
    /// while these are taken stay with the device (its interrupt held
    /// pending), not a second batch right behind this one before any
    /// program ran; a full batch may have left some there, so the unmask
    /// raises the interrupt again.
    fn take_batch(&mut self) -> usize {
        self.set_masked(true);
        let n = self.receive();
        if n == BATCH {
            OWED.store(true, Ordering::Relaxed);
        }
        self.each_short(|_| {});
        n
    }

    /// Whether a ring that became short of room fewer than [`WAIT_TICKS`]
    /// ticks ago still is: its reader is waited for (no unmask at another's
    /// call, no tick's batch). One short longer is not: it loses packets,
    /// the others are served.
    fn waiting(&mut self) -> bool {
        let mut waited = false;
        self.each_short(|ticks| waited |= *ticks < WAIT_TICKS);
        waited
    }

    /// A tick's look at the rings short of room: whether one is waited
    /// for ([`Net::waiting`]); each counts the tick.
    fn tick_waiting(&mut self) -> bool {
        let mut waited = false;
        self.each_short(|ticks| {
            waited |= *ticks < WAIT_TICKS;
            *ticks = ticks.saturating_add(1);
        });
        waited
    }

    /// Runs `f` on the tick count of every ring still short of room: the
    /// rings a batch left short ([`Net::full`]) are looked at again, and
    /// those read since (or gone) leave the set; [`SHORT_OWNER`] is set
    /// from the ones waited for.
    fn each_short(&mut self, mut f: impl FnMut(&mut u32)) {
        let Net { full, rings, .. } = self;
        let mut owner = 0;
        for (w, word) in full.iter_mut().enumerate() {
            let mut bits = *word;
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                match rings.get_mut(w * 64 + i).and_then(|(_, r)| r.as_mut()) {
                    Some(r) if !r.has_room(BATCH) => {
                        let ticks = r.short.get_or_insert(0);
                        f(ticks);
                        if *ticks < WAIT_TICKS {
                            owner = match owner {
                                0 => r.owner.raw(),
                                o if o == r.owner.raw() => o,
                                _ => MANY,
                            };
                        }
                    }
                    Some(r) => {
                        r.short = None;
                        *word &= !(1 << i);
                    }
                    None => *word &= !(1 << i),
                }
            }
        }
        SHORT_OWNER.store(owner, Ordering::Relaxed);
    }

    /// Copies what the NIC received (at most [`BATCH`] packets) into the
    /// rings of the filters that accept it; returns the number of packets.
    fn receive(&mut self) -> usize {
        let Net { nic, rings, filters, filter_rows, received, unclaimed, full, .. } = self;
        let Some(nic) = nic.as_mut() else { return 0 };
        nic.receive(BATCH, |packet| {
            *received += 1;
            match filters.demux(packet).map(|(id, &(_, ring))| (id, ring)) {
                Some((id, ring)) => {
                    if let Some(row) = filter_rows.get_mut(id.index() as usize) {
                        row.0 = row.0.wrapping_add(1);
                        table::set_filter_accepted(id.index() as usize, row.0);
                    }
                    if let Some(r) = ring_mut(rings, ring) {
                        r.push(packet);
                        table::set_ring((ring & 0xff) as usize, &r.row(ring));
                        if r.short.is_none() && !r.has_room(BATCH) {
                            let index = (ring & 0xff) as usize;
                            full[index / 64] |= 1 << (index % 64);
                            r.short = Some(0);
                        }
                    }
                }
                None => *unclaimed += 1,
            }
        })
    }

    /// Masks or unmasks the receive interrupt (a device write only when
    /// that changes).
    fn set_masked(&mut self, masked: bool) {
        if self.irq_masked != masked {
            self.irq_masked = masked;
            MASKED.store(masked, Ordering::Relaxed);
            if let Some(nic) = &self.nic {
                nic.mask_interrupt(masked);
            }
        }
    }

    /// Rewrites the network table's header.
    fn publish(&self) {
        let mac = self.nic.as_ref().map_or(0, |n| {
            let mut w = [0u8; 8];
            w[..6].copy_from_slice(&n.mac());
            u64::from_le_bytes(w)
        });
        table::set_header(&NetHeader {
            mac,
            received: self.received,
            unclaimed: self.unclaimed,
            sent: self.sent,
            refused: self.refused,
            filters: self.filters.len() as u64,
            rings: self.bound,
            interrupts: self.interrupts,
        });
    }

    /// The installed filters (read only: change them with [`Net::install`]
    /// and [`Net::remove_filter`]).
    pub fn filters(&self) -> &Dpf<(EnvId, u64)> {
        &self.filters
    }

    /// Installs `filter` for `owner`'s ring `ring` (see [`Dpf::insert`]) and
    /// shows it in the filter table.
    pub fn install(
        &mut self,
        filter: Filter,
        owner: EnvId,
        ring: u64,
        refines: Option<FilterId>,
    ) -> Result<FilterId, InstallError> {
        if self.filter_rows.is_empty() {
            self.filter_rows.try_reserve_exact(MAX_FILTERS).map_err(|_| InstallError::NoMemory)?;
            self.filter_rows.resize(MAX_FILTERS, (0, FILTER_NONE));
        }
        let id = self.filters.insert(filter, (owner, ring), refines)?;
        let index = id.index() as usize;
        if let Some(f) = self.filters.get(id)
            && let Some(row) = self.filter_rows.get_mut(index)
        {
            let raw = f.filter.to_raw();
            let refines = f.refines.map_or(FILTER_NONE, FilterId::to_u64);
            *row = (0, refines);
            let head = FilterRow {
                owner: u64::from(owner),
                ring,
                id: id.to_u64(),
                refines,
                accepted: 0,
                atoms: f.filter.atoms().len() as u64,
            };
            table::set_filter(index, Some((&head, &raw.to_bytes())));
        }
        Ok(id)
    }

    /// Removes filter `id`; returns its owner and ring.
    pub fn remove_filter(&mut self, id: FilterId) -> Option<(EnvId, u64)> {
        let gone = self.filters.remove(id)?;
        table::set_filter(id.index() as usize, None);
        self.show_refinements();
        Some(gone)
    }

    /// Removes every filter whose owner and ring satisfy `pred`.
    /// One at a time, with no list to allocate (the abort protocol unbinds
    /// rings, and none of its steps allocates): at most `MAX_FILTERS`
    /// passes.
    fn remove_filters_where(&mut self, mut pred: impl FnMut(&(EnvId, u64)) -> bool) {
        loop {
            let next = self.filters.iter().find(|f| pred(f.owner)).map(|f| f.id);
            let Some(id) = next else { return };
            self.remove_filter(id);
        }
    }

    /// What the filters feeding `owner`'s ring `id` were charged
    /// (`account::filter_heap` each).
    pub fn filters_heap(&self, owner: EnvId, id: u64) -> u64 {
        let of_ring = self.filters.iter().filter(|f| *f.owner == (owner, id));
        of_ring.map(|f| crate::account::filter_heap(f.filter.atoms().len())).sum()
    }

    /// Rewrites the `refines` word of every row whose filter now refines
    /// another filter than the row shows (a removed filter's refinements
    /// refine its parent). At most one pass over the table.
    fn show_refinements(&mut self) {
        let Net { filters, filter_rows, .. } = self;
        for f in filters.iter() {
            let refines = f.refines.map_or(FILTER_NONE, FilterId::to_u64);
            if let Some(row) = filter_rows.get_mut(f.id.index() as usize)
                && row.1 != refines
            {
                row.1 = refines;
                table::set_filter_refines(f.id.index() as usize, refines);
            }
        }
    }

    /// Binds a ring over pinned frames; returns its number.
    pub fn bind(&mut self, owner: EnvId, header: FrameRef, data: Vec<FrameRef>) -> Result<u64, Error> {
        if self.rings.iter().filter(|(_, r)| r.as_ref().is_some_and(|r| r.owner == owner)).count() >= RINGS_PER_ENV {
            return Err(Error::NoMemory);
        }
        let (index, entry) =
            self.rings.iter_mut().enumerate().find(|(_, (_, r))| r.is_none()).ok_or(Error::NoMemory)?;
        let ring = Ring::new(owner, header, data);
        let id = index as u64 | u64::from(entry.0) << 8;
        table::set_ring(index, &ring.row(id));
        entry.1 = Some(ring);
        self.bound += 1;
        Ok(id)
    }

    /// The ring numbered `id` if `owner` bound it.
    pub fn ring(&mut self, owner: EnvId, id: u64) -> Result<&mut Ring, Error> {
        match ring_mut(&mut self.rings, id) {
            Some(r) if r.owner == owner => Ok(r),
            Some(_) => Err(Error::Denied),
            None => Err(Error::NotFound),
        }
    }

    /// Unbinds ring `id`; returns the pins on its frames.
    pub fn unbind(&mut self, owner: EnvId, id: u64) -> Result<Pins, Error> {
        let ring = self.take(owner, id)?;
        Ok(Pins::of(ring.map(|r| r.frames().collect()).unwrap_or_default()))
    }

    /// The number of a ring of `owner` that pins frame `pfn`, if one does.
    pub fn ring_pinning(&self, owner: EnvId, pfn: Pfn) -> Option<u64> {
        self.rings.iter().enumerate().find_map(|(i, (g, r))| {
            let pins = r.as_ref().is_some_and(|r| r.owner == owner && r.frames().any(|pa| pa.pfn() == pfn));
            pins.then_some(i as u64 | u64::from(*g) << 8)
        })
    }

    /// Unbinds ring `id` as [`Net::unbind`] does, handing back the ring
    /// itself (its frames still pinned; the caller drops the pins).
    pub fn take(&mut self, owner: EnvId, id: u64) -> Result<Option<Ring>, Error> {
        self.ring(owner, id)?;
        self.remove_filters_where(|&(_, r)| r == id);
        let entry = &mut self.rings[(id & 0xff) as usize];
        entry.0 = entry.0.wrapping_add(1) & 0x00ff_ffff;
        table::set_ring((id & 0xff) as usize, &RingRow::default());
        let ring = entry.1.take();
        self.bound -= u64::from(ring.is_some());
        // A short ring gone: whose calls may unmask is decided again.
        self.each_short(|_| {});
        Ok(ring)
    }

    /// Everything `owner` had: its rings (the pins on their frames
    /// returned) and its template.
    pub fn forget(&mut self, owner: EnvId) -> Pins {
        self.templates.remove(&owner);
        self.remove_filters_where(|&(env, _)| env == owner);
        let ids: Vec<u64> = self
            .rings
            .iter()
            .enumerate()
            .filter(|(_, (_, r))| r.as_ref().is_some_and(|r| r.owner == owner))
            .map(|(i, (g, _))| i as u64 | u64::from(*g) << 8)
            .collect();
        let mut pins = Pins::none();
        for id in ids {
            if let Ok(p) = self.unbind(owner, id) {
                pins.absorb(p);
            }
        }
        pins
    }
}

/// Unbinds `owner`'s ring `id` (its filters removed), drops the pins on
/// its frames (collecting those left unreachable; an orphan is freed) and
/// gives the ring's charge and its filters' back to `owner`'s account
/// (`ring_unbind`, and the abort protocol for a frame the ring pins).
/// Allocates nothing: none of the abort protocol's steps does.
pub fn unbind_ring(envs: &mut crate::env::EnvTable, owner: EnvId, id: u64) -> Result<(), Error> {
    let (ring, filters) = with(|n| {
        let filters = n.filters_heap(owner, id);
        n.take(owner, id).map(|ring| (ring, filters))
    })?;
    for pa in ring.iter().flat_map(Ring::frames) {
        unpin(pa, envs);
    }
    if let Some(env) = envs.get(owner) {
        crate::account::give_back_heap(env, crate::account::RING_HEAP + filters);
    }
    crate::env::publish_heap();
    Ok(())
}

/// Drops everything environment `id` had in the network (it is being
/// destroyed): its rings are unbound and their pins dropped with them.
pub fn forget(id: EnvId) {
    drop(with(|net| Ok(net.forget(id))));
}
