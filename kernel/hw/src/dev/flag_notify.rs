//! A virtio transport that offers the driver every feature of the device
//! but `VIRTIO_F_EVENT_IDX`, so that the queues suppress notifications
//! with the ring's flags (`VRING_USED_F_NO_NOTIFY`) instead of event
//! indices.
//!
//! Why: `virtio-drivers` 0.13 decides whether to notify after adding a
//! buffer with `avail_idx >= avail_event + 1`, not with the ring's
//! wrapping "did we cross the event" test, and QEMU's virtio-net sets
//! `avail_event` to the current index every time it takes a receive
//! buffer. So under event indices every receive buffer posted again after
//! a packet notified the device: an exit to QEMU that wakes its I/O
//! thread, about 5 µs of a TCP echo's round trip (`bench/README.md`, "A
//! receive buffer posted again in silence"). Under flags, QEMU asks for no
//! notification while it still has receive buffers, and a transmit still
//! notifies whenever the device's transmit handler is idle.

use virtio_drivers::transport::{DeviceStatus, DeviceType, InterruptStatus, Transport};
use virtio_drivers::{PhysAddr, Result};
use zerocopy::{FromBytes, Immutable, IntoBytes};

/// `VIRTIO_F_EVENT_IDX` (virtio 1.2, 6 "Reserved Feature Bits").
const EVENT_IDX: u64 = 1 << 29;

/// `T` with `VIRTIO_F_EVENT_IDX` hidden from the driver.
pub struct FlagNotify<T>(pub T);

impl<T: Transport> Transport for FlagNotify<T> {
    fn device_type(&self) -> DeviceType {
        self.0.device_type()
    }

    fn read_device_features(&mut self) -> u64 {
        self.0.read_device_features() & !EVENT_IDX
    }

    fn write_driver_features(&mut self, driver_features: u64) {
        self.0.write_driver_features(driver_features & !EVENT_IDX)
    }

    fn max_queue_size(&mut self, queue: u16) -> u32 {
        self.0.max_queue_size(queue)
    }

    fn notify(&mut self, queue: u16) {
        self.0.notify(queue)
    }

    fn get_status(&self) -> DeviceStatus {
        self.0.get_status()
    }

    fn set_status(&mut self, status: DeviceStatus) {
        self.0.set_status(status)
    }

    fn set_guest_page_size(&mut self, guest_page_size: u32) {
        self.0.set_guest_page_size(guest_page_size)
    }

    fn requires_legacy_layout(&self) -> bool {
        self.0.requires_legacy_layout()
    }

    fn queue_set(
        &mut self,
        queue: u16,
        size: u32,
        descriptors: PhysAddr,
        driver_area: PhysAddr,
        device_area: PhysAddr,
    ) {
        self.0.queue_set(queue, size, descriptors, driver_area, device_area)
    }

    fn queue_unset(&mut self, queue: u16) {
        self.0.queue_unset(queue)
    }

    fn queue_used(&mut self, queue: u16) -> bool {
        self.0.queue_used(queue)
    }

    fn ack_interrupt(&mut self) -> InterruptStatus {
        self.0.ack_interrupt()
    }

    fn read_config_generation(&self) -> u32 {
        self.0.read_config_generation()
    }

    fn read_config_space<V: FromBytes + IntoBytes>(&self, offset: usize) -> Result<V> {
        self.0.read_config_space(offset)
    }

    fn write_config_space<V: IntoBytes + Immutable>(&mut self, offset: usize, value: V) -> Result<()> {
        self.0.write_config_space(offset, value)
    }
}
