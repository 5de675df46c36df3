//! This environment's wakeup-predicate slots (the kernel keeps
//! [`PREDICATES`] per environment; Xok §5.1) and what each holds, so that a
//! waiter that sleeps on the same condition again only sets its parameters
//! (`pred_param`): no program built, copied and verified again per sleep.
//!
//! Every install of the libOS and the Linux personality goes through
//! [`install`] or [`install_keyed`]; a slot's record names the environment
//! that installed it (threads that share this memory are environments of
//! their own) and the key of the program, and any other install through
//! this module forgets it. Code that installs into its own slots with the
//! bare system call, or a state import of this environment, can leave a
//! record that is wrong; a keyed waiter that is then told the slot is
//! empty (`NotFound`) installs again ([`forget`]).

use crate::sys;
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::{Error, PREDICATES};

/// Per slot: the installing environment's id (high 32 bits) and the
/// program's key (low 32 bits, never 0) — or 0, nothing known.
static HELD: [AtomicU64; PREDICATES] = [const { AtomicU64::new(0) }; PREDICATES];

fn record(index: u64) -> Result<&'static AtomicU64, Error> {
    usize::try_from(index).ok().and_then(|i| HELD.get(i)).ok_or(Error::Invalid)
}

fn tag(key: u32) -> u64 {
    (crate::exposed::self_id() << 32) | u64::from(key)
}

/// Installs `code` as this environment's predicate `index` (parameters
/// zero); the slot's record is forgotten.
pub fn install(index: u64, code: &[u8]) -> Result<(), Error> {
    record(index)?.store(0, Ordering::Relaxed);
    sys::pred_install(0, index, code.as_ptr() as u64, code.len() as u64).map(|_| ())
}

/// Makes predicate `index` the program named `key` (non-zero; one key, one
/// program, by the caller's convention), building and installing it with
/// `build` only if the slot does not hold it already. True if it was
/// installed now (its parameters are then zero); false if it was there,
/// with the parameters last set.
pub fn install_keyed(
    index: u64,
    key: u32,
    build: impl FnOnce() -> Result<oxok_pred::Code, Error>,
) -> Result<bool, Error> {
    let held = record(index)?;
    let want = tag(key);
    if key != 0 && held.load(Ordering::Relaxed) == want {
        return Ok(false);
    }
    install(index, build()?.as_bytes())?;
    if key != 0 {
        held.store(want, Ordering::Relaxed);
    }
    Ok(true)
}

/// Forgets what slot `index` holds (the kernel said it holds nothing).
pub fn forget(index: u64) {
    if let Ok(held) = record(index) {
        held.store(0, Ordering::Relaxed);
    }
}
