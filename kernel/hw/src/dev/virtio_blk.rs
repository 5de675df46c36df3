//! The virtio-blk disk (PCI, modern interface), driven directly over
//! `virtio-drivers`' transport and [`VirtQueue`] so that every request —
//! read, write and flush — is asynchronous: [`Disk::submit`] posts it and
//! returns; [`Disk::poll`] collects what the device finished (called from
//! the tick, from the XN calls and, when the device has MSI-X, when its
//! completion interrupt on [`DISK_VECTOR`] arrives, so a waiter need not
//! wait for the next tick). Blocks are 4 KiB; flush is the only barrier
//! (virtio-blk has no FUA).
//!
//! **Writes of adjacent blocks go as one request.** A write is held open
//! as a *run*: the next write, if it is of the next block and the next tag,
//! joins it (one more data descriptor of the same request), up to
//! [`RUN_MAX`] blocks; anything else — another write, a read, a flush —
//! posts the run first, so the device sees requests in the order they were
//! submitted. The holder posts the run itself with [`Disk::kick`] (XN does
//! at every tick and before a program sleeps, not at a completion), so a
//! writer's burst of `xn_write`s reaches the device as a few requests of up
//! to 128 KiB instead of one notification, one request and one interrupt
//! per block. Each block keeps its own tag: a run's completion reports
//! every block of it, as if each had been its own request.
//!
//! Every address handed to the device is a kernel-owned frame:
//! request headers and status bytes live in one [`DmaBuf`] of this
//! module, and data frames come from the XN buffer cache (kernel frames);
//! [`KernelHal::share`] checks each in the frame table before the device
//! sees it.

use crate::arch::apic::DISK_VECTOR;
use crate::arch::msix::{self, Msix};
use crate::arch::pci::PortCam;
use crate::mem::PAGE_SIZE;
use crate::mem::addr::PhysAddr;
use crate::mem::dma::{DmaBuf, KernelHal, mmio_ok};
use crate::mem::phys;
use oxok_abi::Error;
use virtio_drivers::queue::VirtQueue;
use virtio_drivers::transport::pci::bus::{BarInfo, Command, DeviceFunction, PciRoot};
use virtio_drivers::transport::pci::{PciTransport, virtio_device_type};
use virtio_drivers::transport::{DeviceType, Transport};

/// Descriptors in the one request queue (QEMU's virtio-blk offers 256).
const QUEUE_SIZE: usize = 256;
/// Requests in flight at once: a writer of many blocks keeps the device
/// busy while it waits for the oldest to finish (16 before 29 Nov 2026).
pub const SLOTS: usize = 40;
/// Blocks one write request carries at most (a run, 128 KiB).
pub const RUN_MAX: usize = 32;
const _: () = assert!(SLOTS * SLOT_BYTES <= PAGE_SIZE as usize && RUN_MAX + 2 <= QUEUE_SIZE);
/// Sectors per 4 KiB block.
const SECTORS: u64 = PAGE_SIZE / 512;
/// Bytes of a request header slot (16-byte header, then the status byte).
const SLOT_BYTES: usize = 32;

bitflags::bitflags! {
    /// The feature bits this driver accepts.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Features: u64 {
        /// The device honours flush requests.
        const FLUSH = 1 << 9;
        /// The modern (1.0) interface.
        const VERSION_1 = 1 << 32;
    }
}

/// What a request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read one block into a frame.
    Read,
    /// Write one block from a frame (adjacent ones as one run).
    Write,
    /// Make every completed write durable.
    Flush,
}

impl Op {
    const fn code(self) -> u32 {
        match self {
            Op::Read => 0,
            Op::Write => 1,
            Op::Flush => 4,
        }
    }
}

/// Where a request stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// A write run still open to the next block: not yet posted.
    Open,
    /// Posted; the device's token.
    Posted(u16),
    /// Finished without the device (a flush on a device without a cache,
    /// `true`), or refused by the queue (`false`): reported at the next poll.
    Done(bool),
}

/// A request in a slot: `n` blocks from the first block's, tagged
/// `tag`, `tag + 1`, …, their frames in the slot's row of [`Disk::frames`].
#[derive(Clone, Copy, Debug)]
struct Pending {
    op: Op,
    /// The caller's tag of the first block, handed back on completion.
    tag: u64,
    /// The first block (for joining a run).
    block: u64,
    /// Blocks carried (0 for a flush).
    n: usize,
    state: State,
}

/// The disk and the requests posted to it.
pub struct Disk {
    transport: PciTransport,
    queue: VirtQueue<KernelHal, QUEUE_SIZE>,
    /// Request headers and status bytes, one [`SLOT_BYTES`] slot each.
    headers: DmaBuf,
    slots: [Option<Pending>; SLOTS],
    /// The data frames of each slot's request, in block order.
    frames: alloc::boxed::Box<[[PhysAddr; RUN_MAX]]>,
    /// The slot of the open write run, if any.
    open: Option<usize>,
    /// 4 KiB blocks on the device.
    blocks: u64,
    /// Whether the device honours flush (else writes are durable at once).
    flush: bool,
    /// The completion interrupt, if the device has MSI-X.
    irq: Option<Msix>,
    /// Write requests handed to the device (a run is one).
    write_requests: u64,
    /// Slots whose request finished without the device ([`State::Done`]).
    done: usize,
}

/// Finds the first virtio-blk device on PCI bus 0 and brings it up;
/// `None` (logged) when there is none or it cannot be used.
pub fn probe() -> Option<Disk> {
    let mut root = PciRoot::new(PortCam);
    let found = root
        .enumerate_bus(0)
        .find(|(_, info)| virtio_device_type(info) == Some(DeviceType::Block))
        .map(|(df, _)| df)?;
    match bring_up(&mut root, found) {
        Ok(d) => Some(d),
        Err(why) => {
            log::warn!("virtio-blk at {found}: {why}; no disk");
            None
        }
    }
}

fn bring_up(root: &mut PciRoot<PortCam>, df: DeviceFunction) -> Result<Disk, &'static str> {
    let bars = root.bars(df).map_err(|_| "cannot read its BARs")?;
    for bar in bars.iter().flatten() {
        if let BarInfo::Memory { address, size, .. } = *bar
            && address != 0
            && !mmio_ok(address, size)
        {
            return Err("registers outside the uncached window");
        }
    }
    let (_, command) = root.get_status_command(df);
    root.set_command(df, command | Command::MEMORY_SPACE | Command::BUS_MASTER);
    let mut transport = PciTransport::new::<KernelHal, _>(root, df).map_err(|_| "not a modern virtio device")?;
    let features = transport.begin_init(Features::FLUSH | Features::VERSION_1);
    let lo: u32 = transport.read_config_space(0).map_err(|_| "cannot read its capacity")?;
    let hi: u32 = transport.read_config_space(4).map_err(|_| "cannot read its capacity")?;
    let sectors = u64::from(lo) | u64::from(hi) << 32;
    let mut queue = VirtQueue::new(&mut transport, 0, false, false).map_err(|_| "queue setup failed")?;
    transport.finish_init();
    let headers = DmaBuf::new().ok_or("no memory for request headers")?;
    let mut frames = alloc::vec::Vec::new();
    frames.try_reserve_exact(SLOTS).map_err(|_| "no memory for request frames")?;
    frames.resize(SLOTS, [PhysAddr::new(0); RUN_MAX]);
    // Completions raise an interrupt when the device can send one; without
    // it they are found at the next tick or call.
    let irq = match msix::enable(root, df, DISK_VECTOR)
        .and_then(|m| msix::virtio_queue_vector(root, df, 0, Some(0)).map(|()| m))
    {
        Ok(m) => {
            log::info!("virtio-blk: completion interrupt on vector {DISK_VECTOR:#x}");
            Some(m)
        }
        Err(why) => {
            log::warn!("virtio-blk: no completion interrupt ({why}); completions are polled each tick");
            None
        }
    };
    queue.set_dev_notify(irq.is_some());
    Ok(Disk {
        transport,
        queue,
        headers,
        slots: [None; SLOTS],
        frames: frames.into_boxed_slice(),
        open: None,
        blocks: sectors / SECTORS,
        flush: features.contains(Features::FLUSH),
        irq,
        write_requests: 0,
        done: 0,
    })
}

impl Disk {
    /// 4 KiB blocks on the device.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Whether a [`poll`](Disk::poll) would find anything: a request the
    /// device finished, or one finished without it. A few loads.
    pub fn finished(&self) -> bool {
        self.done > 0 || self.queue.can_pop()
    }

    /// Whether completions raise an interrupt (else only polls find them).
    pub fn interrupts(&self) -> bool {
        self.irq.is_some()
    }

    /// Free request slots.
    pub fn free_slots(&self) -> usize {
        self.slots.iter().filter(|s| s.is_none()).count()
    }

    /// Write requests handed to the device so far (a run of adjacent
    /// blocks is one).
    pub fn write_requests(&self) -> u64 {
        self.write_requests
    }

    /// Whether a free request slot exists.
    pub fn has_room(&self) -> bool {
        self.slots.iter().any(Option::is_none)
    }

    /// Takes one request: `op` on `block` with the kernel-owned data frame
    /// at `frame` (ignored for a flush). `tag` comes back from
    /// [`poll`](Disk::poll). A write of the block after the open run's last,
    /// tagged one more than its last, joins that run; any other request
    /// first posts the open run. `WouldBlock` when every slot or the
    /// queue's descriptors are taken, `Invalid` for a block past the disk.
    pub fn submit(&mut self, op: Op, block: u64, frame: PhysAddr, tag: u64) -> Result<(), Error> {
        if op != Op::Flush && block >= self.blocks {
            return Err(Error::Invalid);
        }
        if op == Op::Write
            && let Some(slot) = self.open
            && let Some(p) = self.slots[slot].as_mut()
            && p.n < RUN_MAX
            && block == p.block + p.n as u64
            && tag == p.tag + p.n as u64
            // The run's descriptors once posted: header, data, status.
            && self.queue.available_desc() >= p.n + 3
        {
            self.frames[slot][p.n] = frame;
            p.n += 1;
            if p.n == RUN_MAX {
                self.kick();
            }
            return Ok(());
        }
        self.kick();
        let slot = self.slots.iter().position(Option::is_none).ok_or(Error::WouldBlock)?;
        let descriptors = if op == Op::Flush { 2 } else { 3 };
        if self.queue.available_desc() < descriptors {
            return Err(Error::WouldBlock);
        }
        let sector = if op == Op::Flush { 0 } else { block * SECTORS };
        let at = slot * SLOT_BYTES;
        {
            let h = self.headers.bytes();
            h[at..at + 4].copy_from_slice(&op.code().to_le_bytes());
            h[at + 4..at + 8].fill(0);
            h[at + 8..at + 16].copy_from_slice(&sector.to_le_bytes());
            h[at + 16] = 0xff;
        }
        let n = usize::from(op != Op::Flush);
        self.frames[slot][0] = frame;
        self.slots[slot] = Some(Pending { op, tag, block, n, state: State::Open });
        match op {
            Op::Write => self.open = Some(slot),
            Op::Flush if !self.flush => {
                // A device without flush has no volatile write cache: every
                // completed write is already durable, so the flush completes
                // at the next poll.
                self.headers.bytes()[at + 16] = 0;
                self.slots[slot] = Some(Pending { op, tag, block, n, state: State::Done(true) });
                self.done += 1;
            }
            _ => self.post(slot),
        }
        Ok(())
    }

    /// Posts the open write run, if any, to the device.
    pub fn kick(&mut self) {
        if let Some(slot) = self.open.take() {
            self.post(slot);
        }
    }

    /// Hands the request in `slot` to the device and notifies it. The
    /// descriptors were counted when the request was taken and nothing
    /// was added since, so the queue has room; if it refused anyway, the
    /// request fails at the next poll.
    fn post(&mut self, slot: usize) {
        let Some(p) = self.slots[slot] else { return };
        let (head, status) = self.slot_bufs(slot);
        let frames = self.frames[slot];
        let added = match p.op {
            // SAFETY: `head`/`status` are this slot's bytes of the kernel's
            // header frame and the data are kernel-owned cache frames; none
            // is touched until `poll` pops the token with the same buffers.
            Op::Read => unsafe { self.queue.add(&[head], &mut [data_mut(frames[0]), status]) },
            Op::Write => {
                let inputs = write_inputs(head, &frames[..p.n]);
                // SAFETY: as above; the device only reads the data.
                unsafe { self.queue.add(&inputs[..=p.n], &mut [status]) }
            }
            // SAFETY: as above, no data buffer.
            Op::Flush => unsafe { self.queue.add(&[head], &mut [status]) },
        };
        let state = match added {
            Ok(token) => {
                if p.op == Op::Write {
                    self.write_requests += 1;
                }
                if self.queue.should_notify() {
                    self.transport.notify(0);
                }
                State::Posted(token)
            }
            Err(_) => {
                log::error!("virtio-blk: the queue refused a request it had room for; it fails");
                self.done += 1;
                State::Done(false)
            }
        };
        self.slots[slot] = Some(Pending { state, ..p });
    }

    /// Hands finished blocks to `done(tag, op, ok)` — a run's blocks one by
    /// one, a flush once — whole requests only, while the count stays
    /// within `max` (at least [`RUN_MAX`], so any request fits); returns
    /// how many. The rest wait for the next poll.
    pub fn poll(&mut self, max: usize, mut done: impl FnMut(u64, Op, bool)) -> usize {
        let max = max.max(RUN_MAX);
        let mut n = 0;
        let mut report = |p: &Pending, ok: bool| {
            for i in 0..p.n.max(1) as u64 {
                done(p.tag + i, p.op, ok);
            }
            p.n.max(1)
        };
        // Requests finished without the device (rare: look only if any).
        if self.done > 0 {
            for i in 0..SLOTS {
                if let Some(p) = self.slots[i]
                    && let State::Done(ok) = p.state
                    && n + p.n.max(1) <= max
                {
                    self.slots[i] = None;
                    self.done -= 1;
                    n += report(&p, ok);
                }
            }
        }
        for _ in 0..SLOTS {
            let Some(token) = self.queue.peek_used() else { break };
            let Some(slot) = self.slots.iter().position(|s| s.is_some_and(|p| p.state == State::Posted(token))) else {
                log::error!("virtio-blk: unknown token {token}; disk stopped");
                break;
            };
            let Some(p) = self.slots[slot] else { break };
            if n + p.n.max(1) > max {
                break;
            }
            let (head, status) = self.slot_bufs(slot);
            let frames = self.frames[slot];
            let popped = match p.op {
                // SAFETY: the buffers posted under `token` by `post`.
                Op::Read => unsafe { self.queue.pop_used(token, &[head], &mut [data_mut(frames[0]), status]) },
                Op::Write => {
                    let inputs = write_inputs(head, &frames[..p.n]);
                    // SAFETY: the buffers posted under `token` by `post`.
                    unsafe { self.queue.pop_used(token, &inputs[..=p.n], &mut [status]) }
                }
                // SAFETY: the buffers posted under `token` by `post`.
                Op::Flush => unsafe { self.queue.pop_used(token, &[head], &mut [status]) },
            };
            let ok = popped.is_ok() && self.headers.bytes()[slot * SLOT_BYTES + 16] == 0;
            self.slots[slot] = None;
            n += report(&p, ok);
        }
        n
    }

    /// The header and status bytes of request slot `slot`.
    fn slot_bufs(&mut self, slot: usize) -> (&'static [u8], &'static mut [u8]) {
        let base = phys::virt(self.headers.pa()) as *mut u8;
        let at = slot.min(SLOTS - 1) * SLOT_BYTES;
        // The header frame is kernel-owned and held by `self` for the
        // driver's life; only the request posted in a slot uses its bytes.
        // SAFETY: slot `slot`'s 16 header bytes and status byte are
        // disjoint from every other slot's and in the frame (see above).
        unsafe {
            (core::slice::from_raw_parts(base.add(at), 16), core::slice::from_raw_parts_mut(base.add(at + 16), 1))
        }
    }
}

/// A write request's device-readable buffers: its header, then each of
/// its data frames (the first `frames.len() + 1` entries), the same list
/// for posting it and for popping it.
fn write_inputs(head: &'static [u8], frames: &[PhysAddr]) -> [&'static [u8]; RUN_MAX + 1] {
    let mut inputs: [&[u8]; RUN_MAX + 1] = [&[]; RUN_MAX + 1];
    inputs[0] = head;
    for (slot, &f) in inputs[1..].iter_mut().zip(frames) {
        *slot = data(f);
    }
    inputs
}

/// The bytes of the kernel-owned cache frame at `pa`, for the device to read.
fn data(pa: PhysAddr) -> &'static [u8] {
    // SAFETY: callers pass only XN cache frames (kernel-owned, checked again
    // by `KernelHal::share`), which stay allocated while a request on them
    // is posted (XN refuses to free a block with a request in flight).
    unsafe { core::slice::from_raw_parts(phys::virt(pa) as *const u8, PAGE_SIZE as usize) }
}

/// The bytes of the kernel-owned cache frame at `pa`, for the device to fill.
fn data_mut(pa: PhysAddr) -> &'static mut [u8] {
    // SAFETY: as `data`; a frame being read into is not yet in the cache, so
    // nothing else reads or maps it until the request completes.
    unsafe { core::slice::from_raw_parts_mut(phys::virt(pa) as *mut u8, PAGE_SIZE as usize) }
}
