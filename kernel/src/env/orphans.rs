//! Orphaned frames stay charged. A frame whose owner ended while another
//! environment still maps it lives on as an orphan (`OWNER_ORPHAN`) until
//! its last mapping goes. It stays charged — one frame,
//! [`account::owned`] — to the account of the owner that ended,
//! which stays alive until then: a program cannot hand frames to an
//! accomplice by ending and so hold more than its account allows (each
//! round of "allocate, share, die" keeps costing the account until the
//! accomplice lets go).

use crate::account::{self, AccountId};
use crate::mem::addr::Pfn;
use alloc::collections::BTreeMap;
use spin::Mutex;

/// Orphaned frame number → the account charged for it.
static ORPHANS: Mutex<BTreeMap<Pfn, AccountId>> = Mutex::new(BTreeMap::new());

/// Frame `pfn`, owned by an environment of account `acct` that ended, is
/// an orphan now: it stays charged to `acct`. False if the kernel heap has
/// no room for the record: the caller then gives the charge back (the
/// frame is still freed by its last unmapping).
pub fn adopt(pfn: Pfn, acct: AccountId) -> bool {
    if !crate::mem::heap::has_room(64) {
        log::warn!("frame {pfn:#x}: no kernel heap to record it as an orphan; its charge goes back");
        return false;
    }
    ORPHANS.lock().insert(pfn, acct);
    account::with(|a| {
        let _ = a.attach(acct);
    });
    true
}

/// Orphan `pfn` was freed (its last mapping went): its charge goes back.
pub fn freed(pfn: Pfn) {
    let Some(acct) = ORPHANS.lock().remove(&pfn) else { return };
    account::uncharge_frames(acct, 1);
    account::with(|a| a.detach(acct));
}

/// Orphans still charged (for the leak check: none once every
/// environment is gone).
pub fn count() -> usize {
    ORPHANS.lock().len()
}
