//! The thread pointer: `arch_prctl(ARCH_SET_FS)` sets the environment's FS
//! base through the kernel (which keeps it per environment); the
//! personality itself never uses FS, so the upcall path needs no switch.

use crate::errno::{EINVAL, EPERM, Res};
use crate::uaccess;
use core::sync::atomic::{AtomicU64, Ordering};

const ARCH_SET_GS: u64 = 0x1001;
const ARCH_SET_FS: u64 = 0x1002;
const ARCH_GET_FS: u64 = 0x1003;
const ARCH_GET_GS: u64 = 0x1004;

static FS: AtomicU64 = AtomicU64::new(0);
static GS: AtomicU64 = AtomicU64::new(0);

/// Sets the FS (`gs == false`) or GS base of this environment.
fn set_base(gs: bool, base: u64) -> Result<(), i64> {
    let which = if gs { oxok_libos::abi::BASE_GS } else { oxok_libos::abi::BASE_FS };
    oxok_libos::sys::env_set_base(0, which, base).map(|_| ()).map_err(crate::errno::from_kernel)
}

pub fn arch_prctl(code: u64, addr: u64) -> Res {
    match code {
        ARCH_SET_FS | ARCH_SET_GS => {
            // Linux refuses bases outside the canonical lower half.
            if addr >= 0x8000_0000_0000 {
                return Err(EPERM);
            }
            let gs = code == ARCH_SET_GS;
            set_base(gs, addr)?;
            if gs { &GS } else { &FS }.store(addr, Ordering::Relaxed);
            Ok(0)
        }
        ARCH_GET_FS => uaccess::write_u64s(addr, &[FS.load(Ordering::Relaxed)]).map(|()| 0),
        ARCH_GET_GS => uaccess::write_u64s(addr, &[GS.load(Ordering::Relaxed)]).map(|()| 0),
        _ => Err(EINVAL),
    }
}

/// The FS base the program set (its thread pointer).
pub fn fs_base() -> u64 {
    FS.load(Ordering::Relaxed)
}
