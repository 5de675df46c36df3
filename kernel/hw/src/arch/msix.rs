//! MSI-X: a PCI function's interrupts as messages to the local APIC. The
//! kernel uses one table entry per device, sent to the boot CPU as a fixed,
//! edge-triggered interrupt on a vector of its choosing; masking the entry
//! holds the interrupt pending in the device (delivered on unmasking), which
//! is how a flood is kept to a bounded number of entries per tick.
//!
//! Also here, because it is a device register write: pointing a virtio-pci
//! queue at an MSI-X entry (`queue_msix_vector` of the common configuration).

use super::pci::PortCam;
use crate::mem::addr::PhysAddr;
use crate::mem::dma::mmio_ok;
use crate::mem::phys;
use virtio_drivers::transport::pci::bus::{BarInfo, ConfigurationAccess, DeviceFunction, PciRoot};

const CAP_MSIX: u8 = 0x11;
const CAP_VENDOR: u8 = 0x09;
/// `VIRTIO_PCI_CAP_COMMON_CFG`.
const VIRTIO_COMMON_CFG: u8 = 1;
/// Offsets in `virtio_pci_common_cfg`.
const COMMON_QUEUE_SELECT: u64 = 0x16;
const COMMON_QUEUE_MSIX_VECTOR: u64 = 0x1a;
/// Message control: MSI-X enable, function mask.
const CTRL_ENABLE: u32 = 1 << 15;
const CTRL_FUNCTION_MASK: u32 = 1 << 14;
/// Where interrupt messages go: the local APIC of CPU 0.
const MSG_ADDRESS: u32 = 0xFEE0_0000;
/// Vector control: entry masked.
const ENTRY_MASKED: u32 = 1;

/// One programmed MSI-X table entry (entry 0 of the function).
pub struct Msix {
    /// Physical address of the entry (16 bytes, in the uncached window).
    entry: u64,
}

fn write32(pa: u64, value: u32) {
    // SAFETY: every caller checked `[pa, pa + 4)` with `mmio_ok`: device
    // registers in the uncached part of the direct map, naturally aligned.
    unsafe { (phys::virt(PhysAddr::new(pa)) as *mut u32).write_volatile(value) }
}

fn write16(pa: u64, value: u16) {
    // SAFETY: as in `write32`, for `[pa, pa + 2)`.
    unsafe { (phys::virt(PhysAddr::new(pa)) as *mut u16).write_volatile(value) }
}

fn bar_address(root: &mut PciRoot<PortCam>, df: DeviceFunction, bar: u8) -> Option<u64> {
    match root.bar_info(df, bar).ok()?? {
        BarInfo::Memory { address, .. } if address != 0 => Some(address),
        _ => None,
    }
}

/// Programs entry 0 of `df`'s MSI-X table to raise `vector` on CPU 0 and
/// enables MSI-X for the function (which turns its legacy INTx off).
pub fn enable(root: &mut PciRoot<PortCam>, df: DeviceFunction, vector: u8) -> Result<Msix, &'static str> {
    let cap = root.capabilities(df).find(|c| c.id == CAP_MSIX).ok_or("no MSI-X capability")?;
    let cam = PortCam;
    let table = cam.read_word(df, cap.offset + 4);
    let base = bar_address(root, df, (table & 7) as u8).ok_or("MSI-X table BAR unusable")?;
    let entry = base.checked_add(u64::from(table & !7)).ok_or("MSI-X table address overflows")?;
    if entry % 16 != 0 || !mmio_ok(entry, 16) {
        return Err("MSI-X table outside the uncached window");
    }
    write32(entry + 12, ENTRY_MASKED);
    write32(entry, MSG_ADDRESS);
    write32(entry + 4, 0);
    write32(entry + 8, u32::from(vector));
    let mut cam = PortCam;
    let word = cam.read_word(df, cap.offset);
    let control = ((word >> 16) | CTRL_ENABLE) & !CTRL_FUNCTION_MASK;
    cam.write_word(df, cap.offset, (word & 0xffff) | (control << 16));
    let msix = Msix { entry };
    msix.set_masked(false);
    Ok(msix)
}

impl Msix {
    /// Masks or unmasks the entry; an interrupt raised while masked is
    /// delivered when it is unmasked.
    pub fn set_masked(&self, masked: bool) {
        write32(self.entry + 12, if masked { ENTRY_MASKED } else { 0 });
    }
}

/// Sends the interrupts of virtio queue `queue` of `df` to MSI-X entry
/// `entry` (`None`: no interrupts).
pub fn virtio_queue_vector(
    root: &mut PciRoot<PortCam>,
    df: DeviceFunction,
    queue: u16,
    entry: Option<u16>,
) -> Result<(), &'static str> {
    let cam = PortCam;
    let cap = root
        .capabilities(df)
        .find(|c| c.id == CAP_VENDOR && (c.private_header >> 8) as u8 == VIRTIO_COMMON_CFG)
        .ok_or("no virtio common configuration")?;
    let bar = cam.read_word(df, cap.offset + 4) as u8;
    let offset = cam.read_word(df, cap.offset + 8);
    let base = bar_address(root, df, bar).ok_or("common configuration BAR unusable")?;
    let common = base.checked_add(u64::from(offset)).ok_or("common configuration address overflows")?;
    if common % 4 != 0 || !mmio_ok(common, 0x20) {
        return Err("common configuration outside the uncached window");
    }
    write16(common + COMMON_QUEUE_SELECT, queue);
    write16(common + COMMON_QUEUE_MSIX_VECTOR, entry.unwrap_or(0xffff));
    Ok(())
}
