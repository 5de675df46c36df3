//! Directed probes: each scales one resource to its limit under a small
//! account, where random calls would take millions of tries to get. Each
//! returns a one-line figure, or why it failed. They run in a process of
//! their own (`fuzz probe NAME SCALE`) that limits itself first.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use oxok_libos::abi::layout::{CLOCK, PAGE_SIZE, pte};
use oxok_libos::abi::{ANY_FRAME, Error, MapEntry, PREDICATES, rights};
use oxok_libos::{exposed, process, sys};
use oxok_pred::Builder;

/// Where `map_many` maps its frame (4 GiB of address space for 2²⁰ pages).
const MANY_BASE: u64 = 0x6000_0000_0000;

/// A probe: scale in, a figure or why it failed out.
pub type Probe = fn(u64) -> Result<String, String>;

/// The probes by name, in the order the driver runs them.
pub const PROBES: &[(&str, Probe)] =
    &[("map-many", map_many), ("create-destroy", create_destroy), ("preds", preds), ("grant-chain", grant_chain)];

/// Limits the caller to what it uses now plus `frames` frames and `envs`
/// environments (itself included).
fn limit_self(frames: u64, envs: u64) -> Result<process::Usage, String> {
    let u = process::usage(0).map_err(|e| format!("account_info: {e}"))?;
    process::limit(0, u.frames + frames, envs).map_err(|e| format!("env_limit: {e}"))?;
    process::usage(0).map_err(|e| format!("account_info: {e}"))
}

/// Waits (yielding, at most ~20 s) until `done` holds.
fn settle(mut done: impl FnMut() -> bool) -> bool {
    let hz = exposed::clock().map_or(1_000_000_000, |c| c.tsc_hz);
    let end = exposed::rdtsc().saturating_add(hz.saturating_mul(20));
    while !done() {
        if exposed::rdtsc() > end {
            return false;
        }
        let _ = sys::yield_cpu(0);
    }
    true
}

/// One frame mapped up to `scale` times (until the account refuses page
/// tables), then taken back by revocation with the deadline already
/// passed: the abort protocol must remove every mapping, the kernel must
/// stay up, and the frame must come back.
pub fn map_many(scale: u64) -> Result<String, String> {
    limit_self(2048, 1)?;
    let [slot, pfn] = sys::frame_alloc(ANY_FRAME).map_err(|e| format!("frame_alloc: {e}"))?;
    let mut recs: Vec<MapEntry> = Vec::with_capacity(512);
    let mut mapped = 0u64;
    let mut refused = None;
    while mapped < scale && refused.is_none() {
        recs.clear();
        let n = (scale - mapped).min(512);
        for i in 0..n {
            recs.push(MapEntry::map(MANY_BASE + (mapped + i) * PAGE_SIZE, slot, pte::NO_EXECUTE));
        }
        match sys::page_batch(0, recs.as_ptr() as u64, n) {
            Ok(_) => mapped += n,
            Err(e) => {
                refused = Some(e);
                mapped += (0..n).filter(|&i| exposed::readable(MANY_BASE + (mapped + i) * PAGE_SIZE)).count() as u64;
            }
        }
    }
    if let Some(e) = refused.filter(|&e| e != Error::NoMemory) {
        return Err(format!("page_batch refused with {e}, not NoMemory"));
    }
    exposed::set_repossess(&[pfn]).map_err(|e| format!("set_repossess: {e}"))?;
    sys::frame_revoke(0, 1, 0).map_err(|e| format!("frame_revoke: {e}"))?;
    let taken = settle(|| {
        let _ = sys::null();
        exposed::repossessed_count() > 0
            && !exposed::readable(MANY_BASE)
            && !exposed::readable(MANY_BASE + mapped / 2 * PAGE_SIZE)
            && !exposed::readable(MANY_BASE + (mapped - 1) * PAGE_SIZE)
    });
    if !taken {
        return Err(format!("{mapped} mappings of frame {pfn}: not taken back"));
    }
    if exposed::repossessed_count() == 0 {
        return Err("the abort protocol recorded nothing".into());
    }
    let owner = exposed::frame_entry(pfn).map_or(u32::MAX, |f| f.owner);
    let why = refused.map_or(String::from("scale reached"), |e| format!("then {e}"));
    Ok(format!("frame {pfn} mapped {mapped} times ({why}), revoked: all unmapped, owner now {owner}"))
}

/// `scale / 10` cycles of `env_create`/`env_destroy` in an account of 3
/// environments and 64 frames: every create must eventually succeed, and
/// the account and the machine's free frames must come back.
pub fn create_destroy(scale: u64) -> Result<String, String> {
    let scale = (scale / 10).max(1);
    let before = limit_self(64, 3)?;
    let free_before = exposed::free_frames().unwrap_or(0);
    let (mut retries, mut cycles) = (0u64, 0u64);
    while cycles < scale {
        match sys::env_create() {
            Ok([slot, _]) => {
                sys::env_destroy(slot).map_err(|e| format!("env_destroy: {e}"))?;
                cycles += 1;
            }
            Err(Error::NoMemory) if retries < scale.max(1000) * 4 => {
                retries += 1;
                let _ = sys::yield_cpu(0);
            }
            Err(e) => return Err(format!("env_create after {cycles} cycles, {retries} retries: {e}")),
        }
    }
    let back = settle(|| {
        process::usage(0).is_ok_and(|u| u.frames == before.frames && u.envs == before.envs)
            && exposed::free_frames().is_some_and(|f| f >= free_before)
    });
    if !back {
        let u = process::usage(0).map_or(0, |u| u.frames);
        let f = exposed::free_frames().unwrap_or(0);
        return Err(format!(
            "after {cycles} cycles: account {u} frames (was {}), free {f} (was {free_before})",
            before.frames
        ));
    }
    Ok(format!("{cycles} cycles, {retries} NoMemory retries; account and free frames back"))
}

/// `scale / 10` predicate installs (replacing each other) and parameter changes
/// on itself and on a child, with a sleep woken by the next tick every 64,
/// then the child destroyed: the account comes back.
pub fn preds(scale: u64) -> Result<String, String> {
    let scale = (scale / 10).max(1);
    let before = limit_self(64, 2)?;
    let [child, _] = sys::env_create().map_err(|e| format!("env_create: {e}"))?;
    let ticks = CLOCK + core::mem::offset_of!(oxok_libos::abi::layout::Clock, ticks) as u64;
    let mut b = Builder::new();
    b.load_u64(ticks).ge_param(0).or().load_u64(ticks).eq_param(1);
    let code = b.bytes();
    let (mut installs, mut sleeps) = (0u64, 0u64);
    for i in 0..scale {
        let target = if i % 2 == 0 { 0 } else { child };
        let index = (i / 2) % PREDICATES as u64;
        sys::pred_install(target, index, code.as_ptr() as u64, code.len() as u64)
            .map_err(|e| format!("pred_install {i}: {e}"))?;
        sys::pred_param(target, index, 1, u64::MAX).map_err(|e| format!("pred_param: {e}"))?;
        installs += 1;
        if i % 64 == 0 && sleeps < 256 {
            let now = exposed::clock().map_or(0, |c| c.ticks);
            sys::pred_param(0, index, 0, now + 1).map_err(|e| format!("pred_param: {e}"))?;
            sys::env_sleep(1 << index).map_err(|e| format!("env_sleep: {e}"))?;
            sleeps += 1;
        }
    }
    sys::env_destroy(child).map_err(|e| format!("env_destroy: {e}"))?;
    if !settle(|| process::usage(0).is_ok_and(|u| u.frames == before.frames && u.envs == before.envs)) {
        return Err("the child's charges did not come back".into());
    }
    Ok(format!("{installs} installs, {sleeps} sleeps woken by the clock"))
}

/// Capability trees to their limits, `scale / 100` times (at most 2000):
/// a chain of grants from one frame capability into its own list until the
/// kernel refuses (the derivation depth), the child's whole list filled
/// with copies, then `cap_revoke` of the root: it must remove exactly the
/// chain and the copies, in both lists, and the chain's tip must no longer
/// map the frame.
pub fn grant_chain(scale: u64) -> Result<String, String> {
    limit_self(64, 2)?;
    let [root, pfn] = sys::frame_alloc(ANY_FRAME).map_err(|e| format!("frame_alloc: {e}"))?;
    let [child, _] = sys::env_create().map_err(|e| format!("env_create: {e}"))?;
    let all = rights::READ | rights::WRITE | rights::GRANT;
    let (mut deepest, mut removed_total, mut given_total) = (0u64, 0u64, 0u64);
    let rounds = (scale / 100).clamp(1, 2000);
    for round in 0..rounds {
        let (mut tip, mut depth) = (root, 0u64);
        let refused = loop {
            match sys::cap_grant(tip, 0, all) {
                Ok([next]) => (tip, depth) = (next, depth + 1),
                Err(e) => break e,
            }
            if depth > 64 {
                return Err("a grant chain longer than the capability list".into());
            }
        };
        if refused != Error::Invalid && refused != Error::NoMemory {
            return Err(format!("grant chain refused with {refused}"));
        }
        deepest = deepest.max(depth);
        let mut given = 0u64;
        let full = loop {
            match sys::cap_grant(root, child, rights::READ) {
                Ok(_) => given += 1,
                Err(e) => break e,
            }
            if given > 64 {
                return Err("the child's list never filled".into());
            }
        };
        if full != Error::NoMemory {
            return Err(format!("filling the child's list: {full}"));
        }
        let [removed] = sys::cap_revoke(root).map_err(|e| format!("cap_revoke: {e}"))?;
        if removed != depth + given {
            return Err(format!("round {round}: cap_revoke removed {removed}, want {depth} + {given}"));
        }
        if depth > 0 && (sys::cap_info(tip).is_ok() || sys::page_map(0, tip, MANY_BASE, pte::NO_EXECUTE).is_ok()) {
            return Err(format!("round {round}: the revoked tip (slot {tip}) still works"));
        }
        removed_total += removed;
        given_total += given;
    }
    sys::frame_free(root).map_err(|e| format!("frame_free of the root: {e}"))?;
    sys::env_destroy(child).map_err(|e| format!("env_destroy: {e}"))?;
    if exposed::frame_entry(pfn).is_some_and(|f| u64::from(f.owner) == exposed::self_id()) {
        return Err(format!("frame {pfn} still owned after frame_free"));
    }
    Ok(format!(
        "{rounds} rounds: chains {deepest} deep, {given_total} copies in a child's list, {removed_total} revoked"
    ))
}
