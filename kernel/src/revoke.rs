//! Visible revocation and the abort protocol (Aegis §3.3).
//!
//! `frame_revoke` records a request (frames owed, TSC deadline). The next
//! time the environment enters the kernel or is given the CPU, the kernel
//! delivers the revocation upcall (if one is registered) once. Freeing
//! frames pays the debt. If the deadline passes with frames still owed, the
//! abort protocol takes them: first the frames the environment lists in its
//! repossession vector (application area), then unmapped frames it owns,
//! then mapped ones (highest frame number first). Frames another
//! environment also maps are never taken (that would break the other
//! environment). Each taken frame is unmapped, freed (capabilities naming it
//! go stale) and recorded — frame number and page address — in the
//! application area, where the environment reads what it lost.

use crate::arch::cpu;
use crate::arch::trapframe::TrapFrame;
use crate::env::{Env, EnvId};
use crate::mem::{PAGE_SIZE, frame, phys, user};
use crate::state::Kernel;
use crate::upcall::{self, Event};
use alloc::vec::Vec;
use core::mem::offset_of;
use oxok_abi::layout::{AppArea, REPOSSESS_SLOTS, REPOSSESSED_SLOTS, pte};
use oxok_abi::upcall as kinds;

/// Checks `id`'s pending revocation at a kernel entry: delivers the upcall
/// once, and runs the abort protocol once the deadline has passed.
pub fn enforce(k: &mut Kernel, id: EnvId, frame: &mut TrapFrame) {
    let Some(env) = k.envs.get(id) else { return };
    let Some(mut r) = env.revoke else { return };
    if r.owed == 0 {
        env.revoke = None;
        env.publish();
        return;
    }
    if !r.notified {
        r.notified = true;
        env.revoke = Some(r);
        let ev = Event { kind: kinds::REVOCATION, vector: kinds::VECTOR_REVOCATION, error: r.owed, addr: r.deadline };
        if upcall::deliver(env, frame, &ev).is_err() {
            log::debug!("env {id}: no revocation handler; the deadline still holds");
        }
        return;
    }
    if cpu::rdtsc() >= r.deadline {
        let taken = abort(env, r.owed);
        log::info!(
            "env {id} ({}): revocation deadline passed; abort protocol took {taken} of {} frames",
            env.name,
            r.owed
        );
        env.revoke = None;
        env.publish();
    }
}

/// Takes up to `owed` frames from `env`; returns how many it took.
fn abort(env: &mut Env, owed: u64) -> u64 {
    let area: AppArea = phys::read(env.app_area);
    // This environment's own mappings of each frame it owns.
    let mut mapped: Vec<(u64, u64)> = Vec::new(); // (pfn, va)
    env.space.for_each_page(|va, entry| {
        let pfn = (entry & pte::ADDRESS_MASK) / PAGE_SIZE;
        if env.owned.contains(&pfn) {
            mapped.push((pfn, va));
        }
    });
    let own_maps = |pfn: u64| mapped.iter().filter(|&&(p, _)| p == pfn).count() as u32;
    let takeable = |pfn: u64| {
        env.owned.contains(&pfn)
            && frame::with(|f| f.entry(pfn).is_some_and(|e| e.owner == env.id && e.maps == own_maps(pfn)))
    };
    let mut victims: Vec<u64> = Vec::new();
    let listed = (area.repossess_count as usize).min(REPOSSESS_SLOTS);
    for &pfn in &area.repossess[..listed] {
        if (victims.len() as u64) < owed && takeable(pfn) && !victims.contains(&pfn) {
            victims.push(pfn);
        }
    }
    let unmapped = env.owned.iter().copied().filter(|&p| own_maps(p) == 0);
    let mapped_desc = env.owned.iter().rev().copied().filter(|&p| own_maps(p) > 0);
    for pfn in unmapped.chain(mapped_desc) {
        if victims.len() as u64 >= owed {
            break;
        }
        if takeable(pfn) && !victims.contains(&pfn) {
            victims.push(pfn);
        }
    }

    let mut recorded = area.repossessed_count as usize;
    for &pfn in &victims {
        let mut first_va = 0;
        for &(_, va) in mapped.iter().filter(|&&(p, _)| p == pfn) {
            if first_va == 0 {
                first_va = va;
            }
            env.space.unmap(va);
        }
        frame::with(|f| {
            if let Some(e) = f.entry_mut(pfn) {
                e.maps = 0;
            }
            f.free(pfn * PAGE_SIZE);
        });
        if env.owned.remove(&pfn) {
            crate::account::uncharge(env.quota, 1, 0);
        }
        env.caps.remove_where(|c| {
            let comps = c.name.components();
            comps.len() == 3 && comps[0] == oxok_cap::Kind::Frame.number() && comps[1] == pfn
        });
        if recorded < REPOSSESSED_SLOTS {
            let off = offset_of!(AppArea, repossessed) + recorded * 16;
            user::write_frame(env.app_area, off, &pfn.to_le_bytes());
            user::write_frame(env.app_area, off + 8, &first_va.to_le_bytes());
        }
        recorded += 1;
    }
    let count_off = offset_of!(AppArea, repossessed_count);
    user::write_frame(env.app_area, count_off, &(recorded as u64).to_le_bytes());
    env.repossessed = env.repossessed.saturating_add(victims.len() as u32);
    victims.len() as u64
}
