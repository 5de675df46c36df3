//! `page_map`, `page_unmap`, `page_protect`, `page_batch`: the secure
//! binding of frames into address spaces.

use super::Cx;
use super::check::{env_cap, frame_cap, owned_frame_cap};
use crate::env::{self, EnvId};
use crate::mem::access::FrameRef;
use crate::mem::{PAGE_SIZE, user};
use oxok_abi::layout::pte;
use oxok_abi::{COPY, Error, FRESH, MapEntry, PROTECT, SHARE, UNMAP};
use oxok_cap::Rights;

const FLAGS_ALLOWED: u64 = pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_BITS;

/// What the environment capability must carry to map or protect with
/// `flags`: write, and execute for an executable mapping (`NO_EXECUTE`
/// clear) — execute permission is a right of its own.
fn env_need(flags: u64) -> Rights {
    if flags & pte::NO_EXECUTE == 0 { Rights::WRITE.union(Rights::EXECUTE) } else { Rights::WRITE }
}

fn flags_ok(flags: u64) -> Result<(), Error> {
    if flags & !FLAGS_ALLOWED != 0 { Err(Error::Invalid) } else { Ok(()) }
}

fn map_one(cx: &mut Cx<'_>, target: EnvId, frame_slot: u64, va: u64, flags: u64) -> Result<(), Error> {
    flags_ok(flags)?;
    let need = if flags & pte::WRITABLE != 0 { Rights::READ.union(Rights::WRITE) } else { Rights::READ };
    let pfn = frame_cap(&mut cx.k.envs, cx.caller, frame_slot, need)?;
    let frame = FrameRef::of_any_env(pfn).ok_or(Error::BadCap)?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    env::map_frame(env, va, (&frame).into(), flags)
}

/// Passes on the caller's own binding at `src` to `va` in `target`, with
/// no more rights than the caller has there.
fn share_one(cx: &mut Cx<'_>, target: EnvId, src: u64, va: u64, flags: u64) -> Result<(), Error> {
    flags_ok(flags)?;
    crate::mem::user_page(src)?;
    let caller = cx.k.envs.get(cx.caller).ok_or(Error::BadEnv)?;
    let mine = caller.space.lookup(src).ok_or(Error::NotFound)?;
    if flags & pte::WRITABLE != 0 && mine & pte::WRITABLE == 0 {
        return Err(Error::Denied);
    }
    let pfn = (mine & pte::ADDRESS_MASK) / PAGE_SIZE;
    if crate::mem::frame::with(|f| f.entry(pfn).is_none()) {
        return Err(Error::BadAddress);
    }
    // Only environments' frames travel: never the application area or any
    // other kernel frame that happens to be mapped, nor a frame the abort
    // protocol is taking (it removes every mapping and must not meet new
    // ones).
    let frame = FrameRef::of_any_env(pfn).ok_or(Error::Denied)?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    env::map_frame(env, va, (&frame).into(), flags)
}

/// Maps a new frame owned by `target` at `va`, charged to its account
/// (which must lie within the caller's): zeroed, or (`copy_of`) a copy of
/// the page the caller reads at that address, replacing whatever `target`
/// maps at `va`.
fn fresh_one(cx: &mut Cx<'_>, target: EnvId, va: u64, flags: u64, copy_of: Option<u64>) -> Result<(), Error> {
    flags_ok(flags)?;
    crate::mem::user_page(va)?;
    let caller = cx.env()?;
    let mine = caller.quota;
    let src_pa = match copy_of {
        Some(src) if src.is_multiple_of(PAGE_SIZE) => {
            Some(caller.space.translate_readable(src).ok_or(Error::BadAddress)?)
        }
        Some(_) => return Err(Error::BadAddress),
        None => None,
    };
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    if !crate::account::within(env.quota, mine) {
        return Err(Error::Denied);
    }
    let replaced = env.space.lookup(va).is_some();
    if replaced && src_pa.is_none() {
        return Err(Error::Exists);
    }
    // The owner's frame set grows by a node now and then.
    crate::mem::heap::reserve(256)?;
    // Given back on every early return below.
    let charge = crate::account::Charge::owned(env.quota)?;
    let frame = match src_pa {
        Some(src) => FrameRef::alloc_copy(target, src),
        None => FrameRef::alloc(target),
    }
    .ok_or(Error::NoMemory)?;
    let pa = frame.pa();
    if replaced {
        // The tables above `va` exist, so the map below needs none.
        if let Err(e) = unmap_one(cx, target, va) {
            crate::mem::frame::with(|f| f.free(pa));
            return Err(e);
        }
    }
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    if let Err(e) = env::map_frame(env, va, (&frame).into(), flags) {
        crate::mem::frame::with(|f| f.free(pa));
        return Err(e);
    }
    if env.owned.insert(pa / PAGE_SIZE) {
        charge.commit();
    }
    env.publish();
    Ok(())
}

fn unmap_one(cx: &mut Cx<'_>, target: EnvId, va: u64) -> Result<(), Error> {
    crate::mem::user_page(va)?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    if va == oxok_abi::layout::APP_AREA
        && env.space.lookup(va).is_some_and(|e| e & pte::ADDRESS_MASK == env.app_area.pa())
    {
        // The application area is the kernel's frame: unmapping it only
        // removes the environment's view, and no count changes.
        env.space.unmap(va);
        return Ok(());
    }
    let old = env.space.unmap(va).ok_or(Error::NotFound)?;
    if env::release_mapping(old & pte::ADDRESS_MASK) {
        cx.k.envs.collect((old & pte::ADDRESS_MASK) / PAGE_SIZE);
    }
    Ok(())
}

fn protect_one(cx: &mut Cx<'_>, target: EnvId, va: u64, flags: u64, frame_slot: u64) -> Result<(), Error> {
    flags_ok(flags)?;
    let current = {
        let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
        crate::mem::user_page(va)?;
        env.space.lookup(va).ok_or(Error::NotFound)?
    };
    if flags & pte::WRITABLE != 0 && current & pte::WRITABLE == 0 {
        // Adding write is a new binding: present a capability for this
        // frame, or for the environment that owns it.
        let pfn = (current & pte::ADDRESS_MASK) / PAGE_SIZE;
        owned_frame_cap(&mut cx.k.envs, cx.caller, frame_slot, pfn, Rights::READ.union(Rights::WRITE))?;
    }
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    env.space.protect(va, flags).map(|_| ())
}

/// Maps a frame (secure binding: the capability is checked here, once).
pub fn page_map(cx: &mut Cx<'_>, env_slot: u64, frame_slot: u64, va: u64, flags: u64) -> Result<[u64; 0], Error> {
    let target = env_cap(&mut cx.k.envs, cx.caller, env_slot, env_need(flags))?;
    map_one(cx, target, frame_slot, va, flags).map(|()| [])
}

/// Removes a mapping.
pub fn page_unmap(cx: &mut Cx<'_>, env_slot: u64, va: u64) -> Result<[u64; 0], Error> {
    let target = env_cap(&mut cx.k.envs, cx.caller, env_slot, Rights::WRITE)?;
    unmap_one(cx, target, va).map(|()| [])
}

/// Changes a mapping's flags.
pub fn page_protect(cx: &mut Cx<'_>, env_slot: u64, va: u64, flags: u64, frame_slot: u64) -> Result<[u64; 0], Error> {
    let target = env_cap(&mut cx.k.envs, cx.caller, env_slot, env_need(flags))?;
    protect_one(cx, target, va, flags, frame_slot).map(|()| [])
}

/// Applies up to `restart::records()` records (`BATCH_STEP` by default), advancing `entries`/`count` in the
/// caller's registers, and restarts itself while records remain.
pub fn page_batch(cx: &mut Cx<'_>, env_slot: u64, entries: u64, count: u64) -> Result<[u64; 0], Error> {
    let target = env_cap(&mut cx.k.envs, cx.caller, env_slot, Rights::WRITE)?;
    let exec = env_cap(&mut cx.k.envs, cx.caller, env_slot, env_need(0)).is_ok();
    let (mut at, mut left) = (entries, count);
    let mut done = 0;
    let step = crate::restart::records();
    // One walk per page of records, not one per record.
    let mut records = user::RecordReader::new();
    while left > 0 {
        if done == step {
            cx.restart();
            break;
        }
        let caller = cx.caller;
        let space = &cx.k.envs.get(caller).ok_or(Error::BadEnv)?.space;
        let rec: MapEntry = records.read(space, at)?;
        if rec.frame_slot != UNMAP && rec.flags & pte::NO_EXECUTE == 0 && !exec {
            return Err(Error::Denied);
        }
        match rec.frame_slot {
            UNMAP => {
                // It may unmap the page the records are read from.
                records.forget();
                unmap_one(cx, target, rec.va)?
            }
            PROTECT => protect_one(cx, target, rec.va, rec.flags, rec.src)?,
            SHARE => share_one(cx, target, rec.src, rec.va, rec.flags)?,
            FRESH => fresh_one(cx, target, rec.va, rec.flags, None)?,
            COPY => {
                // It may replace the page the records are read from.
                records.forget();
                fresh_one(cx, target, rec.va, rec.flags, Some(rec.src))?
            }
            slot => map_one(cx, target, slot, rec.va, rec.flags)?,
        }
        at += size_of::<MapEntry>() as u64;
        left -= 1;
        done += 1;
        cx.frame.set_arg(1, at);
        cx.frame.set_arg(2, left);
    }
    Ok([])
}
