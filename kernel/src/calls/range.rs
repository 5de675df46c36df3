//! `page_protect_range`: one entry for the protection of many pages
//! (Appel–Li's protN / unprotN).

use super::Cx;
use super::args::{CapSlot, EnvCap, FrameCap, Len, PageFlags, Word};
use crate::env::EnvId;
use crate::mem::addr::Pfn;
use crate::mem::{PAGE_SIZE, frame};
use oxok_abi::Error;
use oxok_abi::layout::APP_AREA;
use oxok_cap::{Kind, Rights};

/// What the capability presented for adding write covers.
enum Cover {
    /// The frames environment `.0` owns.
    Owner(EnvId),
    /// Frame `.0` only.
    Frame(Pfn),
}

/// Changes the flags of the present pages in a range (see the call table).
pub fn page_protect_range(
    cx: &mut Cx<'_>,
    env_slot: EnvCap,
    va: Word,
    pages: Len,
    flags: PageFlags,
    frame_slot: CapSlot,
) -> Result<[u64; 0], Error> {
    let target = env_slot.with(flags.env_need())?;
    let end = pages.checked_mul(PAGE_SIZE).and_then(|b| va.checked_add(b)).ok_or(Error::BadAddress)?;
    // The application area's page, user space's last, is the kernel's:
    // no page call changes it.
    if !va.is_multiple_of(PAGE_SIZE) || end > APP_AREA {
        return Err(Error::BadAddress);
    }
    // The capability for adding write, resolved once; its error counts
    // only if some page needs it.
    let rw = Rights::READ.union(Rights::WRITE);
    let cover = if !flags.writable() {
        Err(Error::Denied)
    } else {
        let envs = &mut cx.k.envs;
        match frame_slot.cap(envs, cx.caller).map(|c| c.name.kind()) {
            Ok(Some(Kind::Env)) => EnvCap::find(envs, cx.caller, frame_slot).and_then(|c| c.with(rw)).map(Cover::Owner),
            Ok(_) => FrameCap::find(envs, cx.caller, frame_slot).and_then(|c| c.with(rw)).map(Cover::Frame),
            Err(e) => Err(e),
        }
    };
    // Pages one kernel entry changes before the call restarts itself.
    let step = pages.min(crate::restart::pages());
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    let (done, result) = frame::with(|f| {
        // The boot archive's pages stay read-only (`page_batch`'s share):
        // `Denied` whatever the cover. Its frames are the kernel's, so an
        // owner's cover never holds one, and is asked only on refusal.
        let archive = |pfn| crate::mem::exposed::archive_frame(pfn).is_some();
        env.space.protect_range(va, step, flags.bits(), |pfn| match &cover {
            Ok(Cover::Owner(owner)) => match f.entry(pfn) {
                Some(e) if e.owner == owner.raw() => Ok(()),
                _ if archive(pfn) => Err(Error::Denied),
                _ => Err(Error::BadCap),
            },
            _ if archive(pfn) => Err(Error::Denied),
            Ok(Cover::Frame(p)) if *p == pfn => Ok(()),
            Ok(Cover::Frame(_)) => Err(Error::BadCap),
            Err(e) => Err(*e),
        })
    });
    cx.frame.set_arg(1, va + done * PAGE_SIZE);
    cx.frame.set_arg(2, pages - done);
    result?;
    if done < pages {
        cx.restart();
    }
    Ok([])
}
