//! Packet filters: `filter_install`, `filter_remove`. The filters
//! themselves (verifier, overlap, trie, demux) are `oxok_dpf`'s.

use super::Cx;
use super::args::CapSlot;
use super::check::{cap_error, cap_in};
use crate::env::EnvId;
use crate::mem::user;
use crate::net;
use oxok_abi::Error;
use oxok_abi::filter::FILTER_BYTES;
use oxok_abi::net::{FILTERS_PER_ENV, TxTemplate};
use oxok_cap::{Cap, Kind, Name, Rights};
use oxok_dpf::{FilterId, InstallError, Scope};

/// Slot value meaning "refines no filter".
pub const NO_FILTER: u64 = u64::MAX;

fn filter_name(id: FilterId) -> Name {
    Name::filter(u64::from(id.index()), u64::from(id.generation()))
}

/// The installed filter the capability in `slot` names, checked for `need`.
fn filter_cap(cx: &mut Cx<'_>, slot: u64, need: Rights) -> Result<FilterId, Error> {
    let cap = cap_in(&mut cx.k.envs, cx.caller, slot)?;
    let comps = cap.name.components();
    if cap.name.kind() != Some(Kind::Filter) || comps.len() != 3 {
        return Err(Error::BadCap);
    }
    let index = u32::try_from(comps[1]).map_err(|_| Error::BadCap)?;
    let generation = u32::try_from(comps[2]).map_err(|_| Error::BadCap)?;
    let id = FilterId::from_u64(u64::from(generation) << 32 | u64::from(index));
    if net::with(|n| Ok(n.filters().get(id).is_some()))? {
        oxok_cap::check(&cap, &filter_name(id), need).map_err(cap_error)?;
        Ok(id)
    } else {
        Err(Error::BadCap)
    }
}

/// Receiving is bound as sending is (`net_send` checks every packet
/// against the sender's transmit template): a filter must accept only
/// what the caller's template could answer — ARP, ICMP to its address,
/// TCP or UDP to its ports ([`oxok_dpf::scope`]) — or anything, for a
/// template with every port (the machine's whole address, as init's).
/// Without a template only a boot program, which may give itself any,
/// installs filters. A parent that narrows a child's template so confines
/// what the child receives too.
fn within_template(scope: Scope, t: Option<&TxTemplate>, boot: bool) -> bool {
    let Some(t) = t else { return boot };
    match scope {
        Scope::Arp => true,
        Scope::Icmp { dst } => dst == t.ip,
        Scope::Ports { lo, hi } => t.port_lo <= lo && hi <= t.port_hi,
        Scope::Any => t.port_lo == 0 && t.port_hi == u16::MAX,
    }
}

/// Installs a filter feeding one of the caller's rings (within its
/// transmit template: [`within_template`], `Denied` otherwise).
pub fn filter_install(cx: &mut Cx<'_>, ring: u64, filter: u64, refines: u64) -> Result<[u64; 2], Error> {
    let caller: EnvId = cx.caller;
    let mut block = [0u8; FILTER_BYTES];
    user::copy_from_user(&cx.env()?.space, filter, &mut block)?;
    let parsed = oxok_dpf::decode(&block).map_err(|_| Error::Invalid)?;
    let refined = if refines == NO_FILTER { None } else { Some(filter_cap(cx, refines, Rights::WRITE)?) };
    // Check, then perform: the capability's slot and the charge first; the
    // install (overlap, refinement, the table's room) is the last check.
    let vacancy = crate::env::cap_vacancy(&mut cx.env()?.caps)?;
    crate::mem::heap::reserve(1024)?;
    // The filter is a record the caller's account pays for until removed.
    let account = cx.env()?.account;
    let cost = crate::account::filter_heap(parsed.atoms().len());
    let charge = crate::account::Charge::amount(account, oxok_account::Amount::heap(cost))?;
    let boot = cx.env()?.parent.is_none();
    let scope = oxok_dpf::scope(&parsed);
    let id = net::with(|n| {
        n.ring(caller, ring)?;
        if !within_template(scope, n.templates.get(&caller), boot) {
            return Err(Error::Denied);
        }
        if n.filters().iter().filter(|f| f.owner.0 == caller).count() >= FILTERS_PER_ENV {
            return Err(Error::NoMemory);
        }
        n.install(parsed, caller, ring, refined).map_err(|e| match e {
            InstallError::Overlap { .. } => Error::Exists,
            InstallError::NoSuchFilter => Error::BadCap,
            InstallError::NotRefinement | InstallError::TooDeep => Error::Invalid,
            InstallError::Full | InstallError::NoMemory => Error::NoMemory,
        })
    })?;
    // Perform: nothing below can fail (the caller runs this call).
    let mut slot = 0;
    if let Some(env) = cx.k.envs.get(caller) {
        slot = env.caps.fill(vacancy, Cap::new(filter_name(id), Rights::ALL));
        env.heap_charged += cost;
    }
    charge.commit();
    crate::env::publish_heap();
    Ok([slot as u64, id.to_u64()])
}

/// Removes the filter named by the capability in `slot` and empties it.
pub fn filter_remove(cx: &mut Cx<'_>, slot: CapSlot) -> Result<[u64; 0], Error> {
    let id = filter_cap(cx, slot.0, Rights::WRITE)?;
    let removed = net::with(|n| {
        let cost = n.filters().get(id).map_or(0, |f| crate::account::filter_heap(f.filter.atoms().len()));
        Ok(n.remove_filter(id).map(|(owner, _)| (owner, cost)))
    })?;
    if let Some((owner, cost)) = removed
        && let Some(env) = cx.k.envs.get(owner)
    {
        // Its owner's account paid for it.
        crate::account::give_back_heap(env, cost);
    }
    let _ = cx.env()?.caps.remove(slot.0);
    crate::env::publish_heap();
    Ok([])
}
