//! Principals: the identities XN's `acl` functions grant rights to
//! (`oxok_abi::xn`, "Rights"). A program acts as principal `p` while its
//! capability list holds a capability on `/8/p`
//! ([`cap_kind::PRINCIPAL`]), and as every principal with one on `/8`,
//! which the kernel gives the boot programs. A holder of `/8` mints `/8/p`
//! with `cap_narrow` and grants it ([`give`]; init gives the disk file
//! server [`DISK_PRINCIPAL`](oxok_abi::xn::DISK_PRINCIPAL)); a program
//! finds its own with [`mine`]. Nothing passes a principal on by itself:
//! a child acts for none unless its parent gives it one
//! ([`SpawnOptions::principal`](crate::exec::SpawnOptions::principal)).

use crate::sys;
use oxok_abi::{CAP_SLOTS, Error, cap_kind, rights};

/// The principal capabilities in this environment's list: `(slot, number,
/// rights)`, `number` 0 for `/8` itself (every principal) and for a name
/// below a principal (none).
fn held() -> impl Iterator<Item = (u64, u64, u64)> {
    (0..CAP_SLOTS as u64).filter_map(|s| match sys::cap_info(s) {
        Ok([cap_kind::PRINCIPAL, number, r]) => Some((s, number, r)),
        _ => None,
    })
}

/// The principal this environment acts as: the first capability on exactly
/// `/8/p` in its list. `None` when it holds none (a holder of only `/8`
/// acts as every principal but has no one principal of its own).
pub fn mine() -> Option<u64> {
    held().find(|&(_, p, _)| p != 0).map(|(_, p, _)| p)
}

/// Mints a capability on `/8/p` with `r` (rights bits) into this
/// environment's list from a capability it holds on `/8` with grant, and
/// returns its slot. A candidate that turns out to be a name below a
/// principal (whose narrowing is no principal) is tried and left.
///
/// Errors: `Invalid` for principal 0 ([`ANYONE`](oxok_abi::xn::ANYONE)
/// is nobody's to hold); `Denied` when no capability on `/8` with grant is
/// held; the kernel's errors of `cap_narrow` (a full list: `NoMemory`).
pub fn mint(p: u64, r: u64) -> Result<u64, Error> {
    if p == 0 {
        return Err(Error::Invalid);
    }
    for (slot, _, _) in held().filter(|&(_, n, have)| n == 0 && have & rights::GRANT != 0) {
        let [new] = sys::cap_narrow(slot, p, r)?;
        if sys::cap_info(new).is_ok_and(|[k, n, _]| k == cap_kind::PRINCIPAL && n == p) {
            return Ok(new);
        }
        let _ = sys::cap_drop(new);
    }
    Err(Error::Denied)
}

/// Gives the environment named by the capability in `env_slot` principal
/// `p` (read and write; without grant it cannot pass it on): minted with
/// [`mint`], granted, and this environment's minted copy dropped again.
/// Errors: as [`mint`], and `cap_grant`'s.
pub fn give(env_slot: u64, p: u64) -> Result<(), Error> {
    let minted = mint(p, rights::READ | rights::WRITE | rights::GRANT)?;
    let granted = sys::cap_grant(minted, env_slot, rights::READ | rights::WRITE);
    let _ = sys::cap_drop(minted);
    granted.map(|_| ())
}
