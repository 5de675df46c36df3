//! [`IrqFlag`]: a device interrupt noted in interrupt context and taken
//! by the scheduler under the kernel lock (the NIC's receive, the disk's
//! completions): the handler only raises it, so it needs no lock.

use core::sync::atomic::{AtomicBool, Ordering};

/// Whether a device's interrupt arrived since the scheduler last looked.
pub struct IrqFlag(AtomicBool);

impl IrqFlag {
    /// Not raised.
    pub const fn new() -> IrqFlag {
        IrqFlag(AtomicBool::new(false))
    }

    /// The interrupt arrived (interrupt context).
    pub fn raise(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether it arrived since the last call; lowers it.
    pub fn take(&self) -> bool {
        self.0.swap(false, Ordering::Acquire)
    }
}
