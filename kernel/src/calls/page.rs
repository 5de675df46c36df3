//! `page_map`, `page_unmap`, `page_protect`, `page_batch`: the secure
//! binding of frames into address spaces.

use super::Cx;
use super::args::{CapSlot, EnvCap, FrameCap, Len, PageFlags, UserPage, UserPtr};
use super::check::owned_frame_cap;
use crate::env::{self, EnvId};
use crate::mem::access::{ArchivePage, FrameRef, Mappable};
use crate::mem::addr::PhysAddr;
use crate::mem::{PAGE_SIZE, exposed, user};
use oxok_abi::layout::APP_AREA;
use oxok_abi::layout::pte;
use oxok_abi::{COPY, Error, FRESH, MapEntry, PROTECT, SHARE, SHARE_RUN_MAX, UNMAP};
use oxok_cap::Rights;

fn map_one(cx: &mut Cx<'_>, target: EnvId, frame: FrameCap, va: UserPage, flags: PageFlags) -> Result<(), Error> {
    let need = if flags.writable() { Rights::READ.union(Rights::WRITE) } else { Rights::READ };
    let frame = frame.take(need)?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    env::map_frame(env, va.va(), (&frame).into(), flags.bits())
}

/// Where a share record's frame comes from: a page the caller maps, or a
/// page of the exposed boot archive.
enum ShareSource {
    Mine(UserPage),
    Archive(ArchivePage),
}

impl ShareSource {
    /// `src` as a user page, else as a page of the boot archive's exposed
    /// mapping (`BadAddress` if neither).
    fn new(src: u64) -> Result<ShareSource, Error> {
        match UserPage::new(src) {
            Ok(page) => Ok(ShareSource::Mine(page)),
            Err(e) => exposed::archive_page(src).map(ShareSource::Archive).ok_or(e),
        }
    }
}

/// Passes on the caller's own binding at `src` to `va` in `target`, with
/// no more rights than the caller has there; or maps a page of the boot
/// archive there, read-only (everyone reads it already).
fn share_one(cx: &mut Cx<'_>, target: EnvId, src: ShareSource, va: UserPage, flags: PageFlags) -> Result<(), Error> {
    let frame = source_frame(cx, src, flags)?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    env::map_frame(env, va.va(), frame, flags.bits())
}

/// A share record's run of `pages` pages (2 to `SHARE_RUN_MAX`) from the
/// source page `src` to `va` on in `target`: every source page checked as
/// [`share_one`] checks its one, then all mapped or none
/// ([`env::map_run`]: one summary span, nothing mapped there yet).
fn share_run(
    cx: &mut Cx<'_>,
    target: EnvId,
    src: u64,
    pages: usize,
    va: UserPage,
    flags: PageFlags,
) -> Result<(), Error> {
    if va.va() + pages as u64 * PAGE_SIZE > APP_AREA {
        return Err(Error::BadAddress);
    }
    let first = source_frame(cx, ShareSource::new(src)?, flags)?;
    let mut frames = [first; SHARE_RUN_MAX as usize];
    for (k, frame) in frames.iter_mut().enumerate().take(pages).skip(1) {
        *frame = source_frame(cx, ShareSource::new(src + k as u64 * PAGE_SIZE)?, flags)?;
    }
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    env::map_run(env, va.va(), frames.get(..pages).ok_or(Error::Invalid)?, flags.bits())
}

/// The frame a share passes on from `src` with `flags`: the caller's own
/// binding, or a page of the boot archive (read-only only).
#[inline(always)]
fn source_frame(cx: &mut Cx<'_>, src: ShareSource, flags: PageFlags) -> Result<Mappable, Error> {
    match src {
        ShareSource::Mine(src) => passed_on(cx, src, flags),
        ShareSource::Archive(_) if flags.writable() => Err(Error::Denied),
        ShareSource::Archive(page) => Ok((&page).into()),
    }
}

/// The frame the caller maps at `src`, if it may pass it on with `flags`.
#[inline(always)]
fn passed_on(cx: &mut Cx<'_>, src: UserPage, flags: PageFlags) -> Result<Mappable, Error> {
    let caller = cx.k.envs.get(cx.caller).ok_or(Error::BadEnv)?;
    let mine = caller.space.lookup(src.va()).ok_or(Error::NotFound)?;
    if flags.writable() && mine & pte::WRITABLE == 0 {
        return Err(Error::Denied);
    }
    let pfn = PhysAddr::of_entry(mine).pfn();
    // Only environments' frames travel, and the boot archive's read-only:
    // never the application area or any other kernel frame that happens to
    // be mapped, nor a frame the abort protocol is taking (it removes every
    // mapping and must not meet new ones). A frame outside the frame table
    // is a bad address.
    if let Some(frame) = FrameRef::of_any_env(pfn) {
        return Ok((&frame).into());
    }
    match exposed::archive_frame(pfn) {
        Some(page) if !flags.writable() => Ok((&page).into()),
        _ if crate::mem::frame::with(|f| f.entry(pfn).is_none()) => Err(Error::BadAddress),
        _ => Err(Error::Denied),
    }
}

/// Maps a new frame owned by `target` at `va`, charged to its account
/// (which must lie within the caller's): zeroed (`Exists` if `target`
/// maps something at `va`), or (`copy_of`) a copy of the page the caller
/// reads at that address, replacing whatever `target` maps at `va`.
/// Check, then perform: the source and the accounts are checked, the
/// tables above `va` made (each charged), the page checked, the frame
/// charged (a guard) and, last, taken — any refusal leaves the mapping
/// at `va` as it was; then the entry is written and the replaced mapping
/// released, which cannot fail.
fn fresh_one(
    cx: &mut Cx<'_>,
    target: EnvId,
    va: UserPage,
    flags: PageFlags,
    copy_of: Option<u64>,
) -> Result<(), Error> {
    let caller = cx.env()?;
    let mine = caller.account;
    let src_pa = match copy_of {
        Some(src) if src.is_multiple_of(PAGE_SIZE) => Some(caller.space.readable_page(src).ok_or(Error::BadAddress)?),
        Some(_) => return Err(Error::BadAddress),
        None => None,
    };
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    if !crate::account::within(env.account, mine) {
        return Err(Error::Denied);
    }
    // The walk finds the page's entry (a fresh page must not replace
    // one), then the frame is charged and taken.
    let acct = env.account;
    let mut charge = None;
    let (_, old) = env::map_with(env, va.va(), flags.bits(), |current| {
        if src_pa.is_none() && current.is_some() {
            return Err(Error::Exists);
        }
        charge = Some(crate::account::Charge::owned(acct)?);
        match src_pa {
            Some(src) => FrameRef::alloc_copy(target, src),
            None => FrameRef::alloc(target),
        }
        .ok_or(Error::NoMemory)
    })?;
    // Perform: nothing below can fail. The new frame is on the owner's
    // list already (the allocator put it there).
    if let Some(charge) = charge {
        charge.commit();
    }
    env.publish_frames();
    if let Some(old) = old {
        release(cx, old);
    }
    Ok(())
}

fn unmap_one(cx: &mut Cx<'_>, target: EnvId, va: UserPage) -> Result<(), Error> {
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    let old = env.space.unmap(va.va()).ok_or(Error::NotFound)?;
    release(cx, old);
    Ok(())
}

/// Releases the mapping `old`: one mapping fewer of its frame (collected
/// if that made it unreachable). Never the application area's: page
/// calls cannot name its page ([`UserPage`]).
fn release(cx: &mut Cx<'_>, old: u64) {
    let pa = PhysAddr::of_entry(old);
    if env::release_mapping(pa) {
        cx.k.envs.collect(pa.pfn());
    }
}

fn protect_one(
    cx: &mut Cx<'_>,
    target: EnvId,
    va: UserPage,
    flags: PageFlags,
    frame_slot: CapSlot,
) -> Result<(), Error> {
    let current = cx.k.envs.get(target).ok_or(Error::BadEnv)?.space.lookup(va.va()).ok_or(Error::NotFound)?;
    if flags.writable() && current & pte::WRITABLE == 0 {
        // Adding write is a new binding: present a capability for this
        // frame, or for the environment that owns it. The boot archive's
        // pages are read-only wherever they are mapped, whatever is
        // presented.
        let pfn = PhysAddr::of_entry(current).pfn();
        if exposed::archive_frame(pfn).is_some() {
            return Err(Error::Denied);
        }
        owned_frame_cap(&mut cx.k.envs, cx.caller, frame_slot, pfn, Rights::READ.union(Rights::WRITE))?;
    }
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    env.space.protect(va.va(), flags.bits()).map(|_| ())
}

/// Maps a frame (secure binding: the capability is checked here, once).
pub fn page_map(
    cx: &mut Cx<'_>,
    env_slot: EnvCap,
    frame_slot: FrameCap,
    va: UserPage,
    flags: PageFlags,
) -> Result<[u64; 0], Error> {
    let target = env_slot.with(flags.env_need())?;
    map_one(cx, target, frame_slot, va, flags).map(|()| [])
}

/// Removes a mapping.
pub fn page_unmap(cx: &mut Cx<'_>, env_slot: EnvCap, va: UserPage) -> Result<[u64; 0], Error> {
    let target = env_slot.with(Rights::WRITE)?;
    unmap_one(cx, target, va).map(|()| [])
}

/// Changes a mapping's flags.
pub fn page_protect(
    cx: &mut Cx<'_>,
    env_slot: EnvCap,
    va: UserPage,
    flags: PageFlags,
    frame_slot: CapSlot,
) -> Result<[u64; 0], Error> {
    let target = env_slot.with(flags.env_need())?;
    protect_one(cx, target, va, flags, frame_slot).map(|()| [])
}

/// Applies up to `restart::records()` records (`BATCH_STEP` by default), advancing `entries`/`count` in the
/// caller's registers, and restarts itself while records remain.
pub fn page_batch(cx: &mut Cx<'_>, env_slot: EnvCap, entries: UserPtr, count: Len) -> Result<[u64; 0], Error> {
    let target = env_slot.with(Rights::WRITE)?;
    let exec = env_slot.with(Rights::WRITE.union(Rights::EXECUTE)).is_ok();
    let (mut at, mut left) = (entries, count);
    let mut done = 0;
    let step = crate::restart::records();
    // One walk per page of records, not one per record.
    let mut records = user::RecordReader::new();
    while left > 0 {
        if done >= step {
            cx.restart();
            break;
        }
        let caller = cx.caller;
        let space = &cx.k.envs.get(caller).ok_or(Error::BadEnv)?.space;
        let rec: MapEntry = records.read(space, at)?;
        if rec.frame_slot != UNMAP && rec.flags & pte::NO_EXECUTE == 0 && !exec {
            return Err(Error::Denied);
        }
        // Each record's fields decoded as the single calls decode their
        // arguments, in the order those calls check them.
        match rec.frame_slot {
            UNMAP => {
                // It may unmap the page the records are read from.
                records.forget();
                unmap_one(cx, target, UserPage::new(rec.va)?)?
            }
            PROTECT => {
                let (flags, va) = (PageFlags::new(rec.flags)?, UserPage::new(rec.va)?);
                protect_one(cx, target, va, flags, CapSlot(rec.src))?
            }
            SHARE => {
                let flags = PageFlags::new(rec.flags)?;
                match rec.share_source().ok_or(Error::BadAddress)? {
                    (src, 1) => share_one(cx, target, ShareSource::new(src)?, UserPage::new(rec.va)?, flags)?,
                    (src, pages) => {
                        share_run(cx, target, src, pages as usize, UserPage::new(rec.va)?, flags)?;
                        // A run counts as its pages toward the restart.
                        done += pages - 1;
                    }
                }
            }
            FRESH => fresh_one(cx, target, UserPage::new(rec.va)?, PageFlags::new(rec.flags)?, None)?,
            COPY => {
                // It may replace the page the records are read from.
                records.forget();
                let (flags, va) = (PageFlags::new(rec.flags)?, UserPage::new(rec.va)?);
                fresh_one(cx, target, va, flags, Some(rec.src))?
            }
            slot => {
                let flags = PageFlags::new(rec.flags)?;
                let frame = FrameCap::find(&mut cx.k.envs, cx.caller, CapSlot(slot))?;
                map_one(cx, target, frame, UserPage::new(rec.va)?, flags)?
            }
        }
        at += size_of::<MapEntry>() as u64;
        left -= 1;
        done += 1;
        cx.frame.set_arg(1, at);
        cx.frame.set_arg(2, left);
    }
    Ok([])
}
