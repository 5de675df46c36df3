//! What a user-level checkpointer needs from the kernel (Fluke §4: every
//! environment's state exportable by an ordinary program holding the
//! right capabilities): `env_stop` holds an environment still,
//! `env_mappings` and `env_peek` read its address space, `cap_peek` its
//! capability list, `cap_copy` takes what it holds. Each is checked against the caller's capability for
//! the environment, like every other call on another environment.

use super::Cx;
use super::args::{CapSlot, EnvCap};
use super::check::cap_error;
use crate::mem::access::FrameRef;
use crate::mem::addr::PhysAddr;
use crate::mem::user;
use oxok_abi::layout::{APP_AREA, PAGE_SIZE, USER_TOP, pte};
use oxok_abi::{Error, MAPPINGS_MAX, Mapping};
use oxok_cap::Rights;

/// Page tables `env_mappings` examines per call at most.
const TABLES_PER_CALL: usize = 16;

/// Stops or continues another environment.
pub fn env_stop(cx: &mut Cx<'_>, env_slot: EnvCap, on: u64) -> Result<[u64; 0], Error> {
    let target = env_slot.with(Rights::WRITE)?;
    if target == cx.caller || on > 1 {
        return Err(Error::Invalid);
    }
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    env.stopped = on == 1;
    Ok([])
}

/// Lists another environment's mappings from `va` on.
pub fn env_mappings(cx: &mut Cx<'_>, env_slot: EnvCap, va: u64, buf: u64, count: u64) -> Result<[u64; 2], Error> {
    let target = env_slot.with(Rights::READ)?;
    if !va.is_multiple_of(PAGE_SIZE) || va >= USER_TOP {
        return Err(Error::BadAddress);
    }
    if count == 0 || count > MAPPINGS_MAX {
        return Err(Error::Invalid);
    }
    let mut records = [Mapping::default(); MAPPINGS_MAX as usize];
    let mut found = 0usize;
    let mut overflow = None;
    let mut cursor = va & !((1 << 21) - 1);
    let mut budget = TABLES_PER_CALL;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    let done = env.space.sweep_step(&mut cursor, &mut budget, |page, entry| {
        if page < va || page == APP_AREA {
            return false;
        }
        if found < count as usize {
            records[found] =
                Mapping { va: page, flags: entry & !pte::ADDRESS_MASK, frame: PhysAddr::of_entry(entry).pfn().raw() };
            found += 1;
        } else if overflow.is_none() {
            overflow = Some(page);
        }
        false
    });
    let next = overflow.unwrap_or(if done { USER_TOP } else { cursor.min(USER_TOP) });
    // Every record in one checked copy: a buffer that is not writable to
    // its end gets nothing written (`BadAddress`).
    user::write_slice(&cx.env()?.space, buf, &records[..found])?;
    Ok([found as u64, next])
}

/// Copies one page of another environment's memory to the caller.
pub fn env_peek(cx: &mut Cx<'_>, env_slot: EnvCap, va: u64, buf: u64) -> Result<[u64; 1], Error> {
    let target = env_slot.with(Rights::READ)?;
    if !va.is_multiple_of(PAGE_SIZE) || va >= USER_TOP || va == APP_AREA {
        return Err(Error::BadAddress);
    }
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    let entry = env.space.lookup(va).ok_or(Error::NotFound)?;
    // An environment's frame, or a page of the boot archive (a program's
    // text, mapped from it read-only), which anyone may read.
    let pfn = PhysAddr::of_entry(entry).pfn();
    let frame = match FrameRef::of_any_env(pfn) {
        Some(frame) => Source::Frame(frame),
        None => Source::Archive(crate::mem::exposed::archive_frame(pfn).ok_or(Error::NotFound)?),
    };
    let space = &cx.env()?.space;
    // The whole destination first, so a bad buffer changes nothing.
    if !oxok_abi::layout::user_range_ok(buf, PAGE_SIZE) {
        return Err(Error::BadAddress);
    }
    for page in [buf, buf + PAGE_SIZE - 1] {
        space.translate_user(page, true).ok_or(Error::BadAddress)?;
    }
    let mut chunk = [0u8; 512];
    for off in (0..PAGE_SIZE as usize).step_by(chunk.len()) {
        match &frame {
            Source::Frame(f) => f.read(off, &mut chunk),
            Source::Archive(p) => p.read(off, &mut chunk),
        };
        user::copy_to_user(space, buf + off as u64, &chunk)?;
    }
    Ok([entry & !pte::ADDRESS_MASK])
}

/// What `env_peek` copies from.
enum Source {
    Frame(FrameRef),
    Archive(crate::mem::access::ArchivePage),
}

/// Describes a capability in another environment's list.
pub fn cap_peek(cx: &mut Cx<'_>, env_slot: EnvCap, slot: CapSlot) -> Result<[u64; 3], Error> {
    let target = env_slot.with(Rights::READ)?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    let cap = env.cap_at(slot.0).map_err(cap_error)?;
    Ok(super::cap::describe(&cap))
}

/// Copies a capability out of another environment's list into the
/// caller's, derived from it.
pub fn cap_copy(cx: &mut Cx<'_>, env_slot: EnvCap, slot: CapSlot, rights: Rights) -> Result<[u64; 1], Error> {
    let target = env_slot.with(Rights::WRITE)?;
    let source = cx.k.envs.get(target).ok_or(Error::BadEnv)?.cap_at(slot.0).map_err(cap_error)?;
    if !source.rights.contains(Rights::GRANT) {
        return Err(Error::Denied);
    }
    source.derive(&[], rights).map_err(cap_error)?;
    // Check, then perform (as `cap_grant`): the caller's free slot first;
    // the derivation's depth limit is the last refusal.
    let vacancy = crate::env::cap_vacancy_derived(&mut cx.env()?.caps)?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    let (copy, lineage) = super::cap::derive_in(env, slot, None, rights)?;
    // Perform: nothing below can fail.
    let mut new = 0;
    if let Some(me) = cx.k.envs.get(cx.caller) {
        new = me.caps.fill_derived(vacancy, copy, lineage);
        crate::env::count_frame_ref(&copy, 1);
    }
    Ok([new as u64])
}
