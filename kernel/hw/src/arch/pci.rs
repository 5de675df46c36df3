//! PCI configuration space through the legacy ports 0xCF8 (address) and
//! 0xCFC (data), as `virtio-drivers`' [`ConfigurationAccess`]. The kernel
//! only touches the configuration of devices it drives.

use super::cpu::{inl, outl};
use virtio_drivers::transport::pci::bus::{ConfigurationAccess, DeviceFunction};

const ADDRESS_PORT: u16 = 0xCF8;
const DATA_PORT: u16 = 0xCFC;

/// Configuration access by port I/O (mechanism #1). Every access is one
/// address write then one data read or write, with interrupts off (the
/// kernel runs with them off), so two accesses never interleave.
pub struct PortCam;

fn address(df: DeviceFunction, offset: u8) -> u32 {
    (1 << 31)
        | (u32::from(df.bus) << 16)
        | (u32::from(df.device & 0x1f) << 11)
        | (u32::from(df.function & 7) << 8)
        | u32::from(offset & 0xfc)
}

impl ConfigurationAccess for PortCam {
    fn read_word(&self, df: DeviceFunction, offset: u8) -> u32 {
        outl(ADDRESS_PORT, address(df, offset));
        inl(DATA_PORT)
    }

    fn write_word(&mut self, df: DeviceFunction, offset: u8, data: u32) {
        outl(ADDRESS_PORT, address(df, offset));
        outl(DATA_PORT, data);
    }

    unsafe fn unsafe_clone(&self) -> Self {
        PortCam
    }
}
