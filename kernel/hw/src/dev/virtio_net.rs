//! The virtio-net NIC (PCI, modern interface), driven through
//! `virtio-drivers`' `VirtIONetRaw`. Only the kernel writes descriptors:
//! every buffer posted to the device is a kernel-owned [`DmaBuf`] that this
//! module keeps until the device returns it, and [`KernelHal::share`]
//! checks each one in the frame table. The receive queue interrupts through
//! MSI-X entry 0 (vector [`NET_VECTOR`]) when the device has one; receive is
//! also polled each tick. Transmitted buffers are reclaimed on the next send
//! (the transmit queue has no interrupt).

use super::flag_notify::FlagNotify;
use crate::arch::apic::NET_VECTOR;
use crate::arch::msix::{self, Msix};
use crate::arch::pci::PortCam;
use crate::mem::dma::{DmaBuf, KernelHal, mmio_ok};
use alloc::vec::Vec;
use oxok_abi::Error;
use virtio_drivers::device::net::VirtIONetRaw;
use virtio_drivers::transport::DeviceType;
use virtio_drivers::transport::pci::bus::{BarInfo, Command, DeviceFunction, PciRoot};
use virtio_drivers::transport::pci::{PciTransport, virtio_device_type};

/// Descriptors per queue, and buffers per direction (and the most packets
/// one call of [`Nic::receive`] takes).
pub const QUEUE: usize = 64;
/// The device's receive queue.
const RECEIVE_QUEUE: u16 = 0;

/// The NIC and the buffers posted to it.
pub struct Nic {
    raw: VirtIONetRaw<KernelHal, FlagNotify<PciTransport>, QUEUE>,
    /// Receive buffers the device holds, by descriptor token.
    rx: [Option<DmaBuf>; QUEUE],
    /// Transmit buffers the device holds (and the bytes posted), by
    /// descriptor token.
    tx: [Option<(DmaBuf, usize)>; QUEUE],
    /// Transmit buffers free for the next send.
    tx_free: Vec<DmaBuf>,
    /// The receive interrupt, if the device could be given one.
    irq: Option<Msix>,
}

/// Finds the first virtio-net device on PCI bus 0 and brings it up with
/// every receive buffer posted; `None` (logged) when there is none or it
/// cannot be used.
pub fn probe() -> Option<Nic> {
    let mut root = PciRoot::new(PortCam);
    let found = root
        .enumerate_bus(0)
        .find(|(_, info)| virtio_device_type(info) == Some(DeviceType::Network))
        .map(|(df, _)| df)?;
    match bring_up(&mut root, found) {
        Ok(nic) => Some(nic),
        Err(why) => {
            log::warn!("virtio-net at {found}: {why}; no network");
            None
        }
    }
}

fn bring_up(root: &mut PciRoot<PortCam>, df: DeviceFunction) -> Result<Nic, &'static str> {
    let bars = root.bars(df).map_err(|_| "cannot read its BARs")?;
    for bar in bars.iter().flatten() {
        if let BarInfo::Memory { address, size, .. } = *bar
            && address != 0
            && !mmio_ok(address, size)
        {
            log::warn!("virtio-net BAR at {address:#x} (+{size:#x}) is outside the uncached window");
            return Err("registers outside the uncached window");
        }
    }
    let (_, command) = root.get_status_command(df);
    root.set_command(df, command | Command::MEMORY_SPACE | Command::BUS_MASTER);
    let transport = PciTransport::new::<KernelHal, _>(root, df).map_err(|_| "not a modern virtio device")?;
    // Event indices off: see `FlagNotify` (a receive buffer posted again
    // would notify the device after every packet).
    let raw = VirtIONetRaw::<KernelHal, FlagNotify<PciTransport>, QUEUE>::new(FlagNotify(transport))
        .map_err(|_| "device setup failed")?;
    let mut nic = Nic {
        raw,
        rx: core::array::from_fn(|_| None),
        tx: core::array::from_fn(|_| None),
        tx_free: Vec::new(),
        irq: None,
    };
    nic.raw.disable_interrupts();
    for _ in 0..QUEUE {
        let buf = DmaBuf::new().ok_or("no memory for buffers")?;
        nic.tx_free.try_reserve(1).map_err(|_| "no memory")?;
        nic.tx_free.push(buf);
        let buf = DmaBuf::new().ok_or("no memory for buffers")?;
        nic.post_rx(buf)?;
    }
    match msix::enable(root, df, NET_VECTOR)
        .and_then(|m| msix::virtio_queue_vector(root, df, RECEIVE_QUEUE, Some(0)).map(|()| m))
    {
        Ok(m) => {
            // Only the receive queue has a vector; the transmit queue's
            // notifications go nowhere.
            nic.raw.enable_interrupts();
            nic.irq = Some(m);
            log::info!("virtio-net: receive interrupt on vector {NET_VECTOR:#x}");
        }
        Err(why) => log::warn!("virtio-net: no receive interrupt ({why}); receive is polled each tick"),
    }
    Ok(nic)
}

impl Nic {
    /// The device's Ethernet address.
    pub fn mac(&self) -> [u8; 6] {
        self.raw.mac_address()
    }

    /// Masks (holds pending) or unmasks the receive interrupt.
    pub fn mask_interrupt(&self, masked: bool) {
        if let Some(m) = &self.irq {
            m.set_masked(masked);
        }
    }

    fn post_rx(&mut self, mut buf: DmaBuf) -> Result<(), &'static str> {
        // SAFETY: `buf` is a kernel frame that moves into `self.rx` below and
        // is neither read nor freed until `receive_complete` returns it.
        let token = unsafe { self.raw.receive_begin(buf.bytes()) }.map_err(|_| "receive queue full")?;
        match self.rx.get_mut(usize::from(token)) {
            Some(slot) => {
                *slot = Some(buf);
                Ok(())
            }
            None => Err("bad token"),
        }
    }

    /// Hands each packet the device has received to `deliver` (at most
    /// `max`, and one queue's worth, per call) and posts its buffer again;
    /// the rest stay with the device for the next call. Returns the number
    /// of packets.
    pub fn receive(&mut self, max: usize, mut deliver: impl FnMut(&[u8])) -> usize {
        let mut n = 0;
        while n < max.min(QUEUE) {
            let Some(token) = self.raw.poll_receive() else { break };
            let Some(mut buf) = self.rx.get_mut(usize::from(token)).and_then(Option::take) else { break };
            // SAFETY: `buf` is the buffer posted under `token`; the device
            // is done with it (it is on the used ring).
            match unsafe { self.raw.receive_complete(token, buf.bytes()) } {
                Ok((hdr, len)) => {
                    if let Some(packet) = buf.bytes().get(hdr..hdr + len) {
                        deliver(packet);
                    }
                }
                Err(e) => log::debug!("virtio-net receive: {e:?}"),
            }
            n += 1;
            if let Err(why) = self.post_rx(buf) {
                log::error!("virtio-net: cannot re-post a receive buffer: {why}");
            }
        }
        n
    }

    /// Takes back the transmit buffers the device has finished with.
    fn reclaim(&mut self) {
        for _ in 0..QUEUE {
            let Some(token) = self.raw.poll_transmit() else { break };
            let Some((mut buf, len)) = self.tx.get_mut(usize::from(token)).and_then(Option::take) else { break };
            // SAFETY: `buf[..len]` is the buffer posted under `token`, now used.
            let _ = unsafe { self.raw.transmit_complete(token, &buf.bytes()[..len]) };
            self.tx_free.push(buf);
        }
    }

    /// Sends one packet that `fill` writes into the buffer it is given (the
    /// bytes after the virtio header) and whose length it returns; an error
    /// from `fill` sends nothing (the buffer goes back) and is returned.
    /// `WouldBlock` when every buffer is still with the device.
    pub fn send(&mut self, fill: impl FnOnce(&mut [u8]) -> Result<usize, Error>) -> Result<(), Error> {
        self.reclaim();
        let mut buf = self.tx_free.pop().ok_or(Error::WouldBlock)?;
        let hdr = match self.raw.fill_buffer_header(buf.bytes()) {
            Ok(h) => h,
            Err(_) => {
                self.tx_free.push(buf);
                return Err(Error::Invalid);
            }
        };
        let len = match fill(&mut buf.bytes()[hdr..]) {
            Ok(len) => len,
            Err(e) => {
                self.tx_free.push(buf);
                return Err(e);
            }
        };
        let total = hdr + len;
        // SAFETY: the first `total` bytes of `buf` (a kernel frame) are the
        // packet; `buf` moves into `self.tx` and stays untouched until
        // `transmit_complete` gives it back.
        let token = match unsafe { self.raw.transmit_begin(&buf.bytes()[..total]) } {
            Ok(t) => t,
            Err(_) => {
                self.tx_free.push(buf);
                return Err(Error::WouldBlock);
            }
        };
        match self.tx.get_mut(usize::from(token)) {
            Some(slot) => *slot = Some((buf, total)),
            None => log::error!("virtio-net: transmit token {token} out of range"),
        }
        Ok(())
    }
}
