//! The XN calls (60–69, 71, 93, 94): a thin layer that copies the caller's arguments
//! in, charges cache frames to the caller's account, turns its
//! capabilities into the principals it acts as ([`xn::Principals`]) and
//! lets `oxok-xn` decide. Every call returns `[refusal, a, b]`: `refusal` 0 with the
//! call's results, or an `oxok_abi::xn::refuse` code with the block
//! concerned (and, for a tainted pointer, the child).

use super::Cx;
use super::args::{Len, UserPtr};
use crate::env::{self, Env};
use crate::mem::paging::AddressSpace;
use crate::mem::{PAGE_SIZE, user};
use crate::xn::{self, XnState};
use alloc::vec::Vec;
use oxok_abi::Error;
use oxok_abi::layout::{APP_AREA, USER_TOP, pte};
use oxok_abi::xn::{
    BLOCK_SIZE, MAX_EXTENT_CALL, MAX_ROOTS, MAX_TEMPLATE_BYTES, MAX_TEMPLATES, REJECTED, TEMPLATE_HEADER,
    TemplateHeader, reject, rights,
};
use oxok_xn::{AclMemo, Extent, Frame, FsId, Refusal, Template};

type Out = Result<[u64; 3], Error>;

/// The refusal as the call's results.
fn refused(r: Refusal) -> [u64; 3] {
    let (block, detail) = match r {
        Refusal::OutOfRange(b)
        | Refusal::NotFree(b)
        | Refusal::NotAllocated(b)
        | Refusal::NotMetadata(b)
        | Refusal::Denied(b)
        | Refusal::OwnsMismatch(b)
        | Refusal::BadOwns(b, _)
        | Refusal::UdfFault(b, _)
        | Refusal::InFlight(b)
        | Refusal::NotEmpty(b)
        | Refusal::AlreadyBound(b)
        | Refusal::NotBound(b)
        | Refusal::MetadataWritable(b)
        | Refusal::Busy(b)
        | Refusal::WillFree(b)
        | Refusal::Tainted(b) => (b, 0),
        Refusal::TaintedPointer { block, child } => (block, child),
        Refusal::NoMemory | Refusal::BadFs => (0, 0),
    };
    log::debug!("xn: refused: {r}");
    [r.code(), block, detail]
}

/// The caller's environment, and the principals it acts as: those its
/// capabilities cover (`/8/p`, or all of them with `/8`), not its
/// environment id, so a file system belongs to whoever holds its
/// principal, in any boot.
fn caller<'a>(cx: &'a mut Cx<'_>) -> Result<(&'a Env, xn::Principals<'a>), Error> {
    let env = &*cx.env()?;
    Ok((env, xn::Principals::of(&env.caps)))
}

/// Copies the 4096 bytes at `ptr` in `space` (the caller's) into XN's
/// scratch block, where the call hands them to XN.
fn content(space: &AddressSpace, ptr: u64, s: &mut XnState) -> Result<(), Error> {
    user::copy_from_user(space, ptr, &mut s.scratch[..])
}

/// Splits `bytes` into `count` templates by their headers.
fn split(bytes: &[u8], count: usize) -> Result<Vec<&[u8]>, u64> {
    let mut out = Vec::new();
    out.try_reserve(count).map_err(|_| 0u64)?;
    let mut at = 0;
    for i in 0..count {
        let head: Option<&[u8; TEMPLATE_HEADER]> = bytes.get(at..at + TEMPLATE_HEADER).and_then(|h| h.try_into().ok());
        let h = head.and_then(TemplateHeader::from_bytes).ok_or(i as u64)?;
        let len = TEMPLATE_HEADER + (usize::from(h.owns) + usize::from(h.acl) + usize::from(h.size)) * 8;
        out.push(bytes.get(at..at + len).ok_or(i as u64)?);
        at += len;
    }
    if at == bytes.len() { Ok(out) } else { Err(count.saturating_sub(1) as u64) }
}

pub fn xn_register(cx: &mut Cx<'_>, templates: u64, len: u64, count: u64) -> Out {
    let count = usize::try_from(count).ok().filter(|c| (1..=MAX_TEMPLATES).contains(c)).ok_or(Error::Invalid)?;
    let len = usize::try_from(len).ok().filter(|&l| l > 0 && l <= MAX_TEMPLATE_BYTES).ok_or(Error::Invalid)?;
    crate::mem::heap::reserve(len * 2)?;
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(len).map_err(|_| Error::NoMemory)?;
    bytes.resize(len, 0);
    user::copy_from_user(&cx.env()?.space, templates, &mut bytes)?;
    let list = match split(&bytes, count) {
        Ok(l) => l,
        Err(i) => return Ok([REJECTED, reject::BAD_TEMPLATE, i]),
    };
    for (i, t) in list.iter().enumerate() {
        if let Err(e) = Template::parse(t) {
            return Ok([REJECTED, e.code(), i as u64]);
        }
    }
    xn::with(|s| {
        if s.free_slots() < MAX_TEMPLATE_BYTES / BLOCK_SIZE {
            return Err(Error::WouldBlock);
        }
        if s.fs_count() >= oxok_abi::xn::MAX_FS {
            return Err(Error::NoMemory);
        }
        let frames = s.catalog_frames(&bytes)?;
        // XN's registration is the last check; the catalogue's frames,
        // taken for it, go back with the guard if it refuses.
        let mut taken = s.mem.taking();
        taken.adopt(&frames);
        let fs = match s.xn.register_fs(&list) {
            Ok(fs) => fs,
            Err(e) => return Ok([REJECTED, e.code(), 0]),
        };
        taken.keep();
        s.catalog_add_fs(count as u32, bytes.len(), frames);
        log::info!("xn: file system {} registered ({count} templates)", fs.0);
        Ok([0, u64::from(fs.0), 0])
    })
}

pub fn xn_root(cx: &mut Cx<'_>, fs: u64, block: u64, ty: u64, ptr: u64) -> Out {
    let (fs, ty) = (u32::try_from(fs).map_err(|_| Error::Invalid)?, u32::try_from(ty).map_err(|_| Error::Invalid)?);
    let env = cx.env()?;
    let (acct, space) = (env.account, &env.space);
    xn::with(|s| {
        content(space, ptr, s)?;
        if s.xn.roots().len() >= MAX_ROOTS {
            return Err(Error::NoMemory);
        }
        // The root's frame is taken first (XN checks and records in one
        // step); the guard gives it back if XN refuses.
        let mut taken = s.mem.taking();
        let frame = taken.alloc(acct)?;
        match s.xn.add_root(taken.mem(), FsId(fs), block, ty, frame, &s.scratch) {
            Ok(()) => {
                taken.keep();
                Ok([0, block, 0])
            }
            Err(r) => Ok(refused(r)),
        }
    })
}

pub fn xn_alloc(cx: &mut Cx<'_>, meta: u64, ptr: u64, start: u64, len: u64, ty: u64) -> Out {
    if !(1..=MAX_EXTENT_CALL).contains(&len) {
        return Err(Error::Invalid);
    }
    let ty = u32::try_from(ty).map_err(|_| Error::Invalid)?;
    let (env, who) = caller(cx)?;
    let (acct, space) = (env.account, &env.space);
    xn::with(|s| {
        content(space, ptr, s)?;
        // A metadata extent's frames are taken first (XN checks and records
        // in one step); the guard gives them all back on any refusal. Data
        // blocks get none: each is cached as zeros when first read, bound
        // or written (`XnState::fill_unwritten`), and a copy's destination
        // never is.
        let mut taken = s.mem.taking();
        if ty != oxok_abi::xn::DATA {
            for _ in 0..len {
                taken.alloc(acct)?;
            }
        }
        if let Err(r) = s.xn.allocate(taken.mem(), &who, meta, &s.scratch, Extent::new(start, len, ty)) {
            return Ok(refused(r));
        }
        // Done: each frame the registry takes stays; one it has no room
        // for goes back with the guard.
        let xn = &mut s.xn;
        taken.keep_each(|i, frame| xn.insert(start + i as u64, frame).is_ok());
        Ok([0, start, 0])
    })
}

pub fn xn_free(cx: &mut Cx<'_>, meta: u64, ptr: u64, start: u64, len: u64) -> Out {
    if !(1..=MAX_EXTENT_CALL).contains(&len) {
        return Err(Error::Invalid);
    }
    let (env, who) = caller(cx)?;
    let space = &env.space;
    xn::with(|s| {
        content(space, ptr, s)?;
        let mut released = [Frame::from_word(0); MAX_EXTENT_CALL as usize];
        let mut n = 0;
        let ext = Extent::new(start, len, 0);
        // The extent's type is what `owns` said; XN compares sets, so look
        // it up from the registry.
        let ty = s.xn.block(start).map_or(0, |v| v.ty);
        let ext = Extent { ty, ..ext };
        let r = s.xn.free(&mut s.mem, &who, meta, &s.scratch, ext, &mut |_, frame| {
            if let Some(slot) = released.get_mut(n) {
                *slot = frame;
                n += 1;
            }
        });
        released[..n].iter().for_each(|&f| s.mem.release(f));
        Ok(match r {
            Ok(()) => [0, start, 0],
            Err(r) => refused(r),
        })
    })
}

pub fn xn_modify(cx: &mut Cx<'_>, meta: u64, ptr: u64) -> Out {
    let (env, who) = caller(cx)?;
    let space = &env.space;
    xn::with(|s| {
        content(space, ptr, s)?;
        Ok(match s.xn.modify(&mut s.mem, &who, meta, &s.scratch) {
            Ok(()) => [0, meta, 0],
            Err(r) => refused(r),
        })
    })
}

pub fn xn_read(cx: &mut Cx<'_>, block: u64) -> Out {
    let acct = cx.env()?.account;
    xn::with(|s| {
        let Some(v) = s.xn.block(block) else { return Ok(refused(Refusal::NotAllocated(block))) };
        if v.will_free {
            return Ok(refused(Refusal::WillFree(block)));
        }
        if v.frame.is_some() || s.fill_unwritten(block, acct)?.is_some() {
            return Ok([0, 0, 0]);
        }
        if v.state == oxok_abi::xn::state::IN_FLIGHT {
            // A copy onto it is being written: the disk has the old bytes.
            return Ok(refused(Refusal::InFlight(block)));
        }
        if let Some(seq) = s.read_pending(block) {
            return Ok([0, seq, 0]);
        }
        if !s.disk.has_room() {
            return Err(Error::WouldBlock);
        }
        let seq = s.submit_read_fresh(block, acct)?;
        Ok([0, seq, 0])
    })
}

pub fn xn_bind(cx: &mut Cx<'_>, block: u64, va: u64, want: u64) -> Out {
    let want = u32::try_from(want).ok().filter(|&w| w != 0 && w & !rights::ALL == 0).ok_or(Error::Invalid)?;
    if !va.is_multiple_of(PAGE_SIZE) || va >= USER_TOP || va == APP_AREA {
        return Err(Error::BadAddress);
    }
    // Whether this call cached the block (as zeros): then a mapping that
    // fails gives the frame back, so a refused bind changes nothing.
    let mut filled = false;
    let bound = {
        let (env, who) = caller(cx)?;
        let acct = env.account;
        xn::with(|s| {
            Ok(match s.xn.bind(&s.mem, &who, block, want) {
                // A block that holds nothing yet is cached as zeros, once the
                // caller passes every other check of the bind.
                Err(Refusal::NotBound(b)) if b == block && s.xn.unwritten(block) => {
                    match s.xn.may_bind(&s.mem, &who, block, want) {
                        Ok(()) => {
                            let frame = s.fill_unwritten(block, acct)?;
                            filled = frame.is_some();
                            frame.ok_or(Refusal::NotBound(block))
                        }
                        Err(r) => Err(r),
                    }
                }
                r => r,
            }
            .map(|cached| s.mem.mappable(cached)))
        })?
    };
    let frame = match bound {
        Ok(Some(frame)) => frame,
        // XN names only frames of its cache pool.
        Ok(None) => return Err(Error::NotFound),
        Err(r) => return Ok(refused(r)),
    };
    let flags = pte::NO_EXECUTE | if want & rights::WRITE != 0 { pte::WRITABLE } else { 0 };
    let me = cx.caller;
    let mapped = cx.k.envs.get(me).ok_or(Error::BadEnv).and_then(|e| env::map_frame(e, va, frame, flags));
    if let Err(e) = mapped {
        if filled {
            xn::with(|s| {
                if let Some(f) = s.xn.unfill(block) {
                    s.mem.release(f);
                }
                Ok(())
            })?;
        }
        return Err(e);
    }
    if want & rights::WRITE != 0 {
        xn::with(|s| {
            s.xn.mark_dirty(block);
            Ok(())
        })?;
    }
    Ok([0, block, 0])
}

pub fn xn_write(cx: &mut Cx<'_>, block: u64) -> Out {
    let acct = cx.env()?.account;
    xn::with(|s| {
        Ok(match write_one(s, acct, block)? {
            Ok(seq) => [0, seq, 0],
            Err(r) => refused(r),
        })
    })
}

/// Checks and submits one `xn_write` of `block` for a caller charged to
/// `acct`: the request's sequence number, or the refusal (nothing
/// changed).
fn write_one(s: &mut XnState, acct: crate::account::AccountId, block: u64) -> Result<Result<u64, Refusal>, Error> {
    if !s.disk.has_room() {
        return Err(Error::WouldBlock);
    }
    let mut checked = s.xn.write_check(&s.mem, block);
    // A block that holds nothing yet is written as the zeros it holds.
    if matches!(checked, Err(Refusal::NotBound(b)) if b == block) && s.fill_unwritten(block, acct)?.is_some() {
        checked = s.xn.write_check(&s.mem, block);
    }
    match checked {
        Ok(plan) => s.submit_write(plan).map(Ok),
        Err(r) => Ok(Err(r)),
    }
}

pub fn xn_write_batch(cx: &mut Cx<'_>, blocks: UserPtr, count: Len) -> Out {
    let step = batch_step(count)?;
    let acct = cx.env()?.account;
    let space = &cx.env()?.space;
    // One walk per page of words, not one per word.
    let mut records = user::RecordReader::new();
    xn::with(|s| batch(step, |i| word_at(&mut records, space, blocks, i).and_then(|block| write_one(s, acct, block))))
}

/// Runs `one` on items `0..step` of a batch in order, each checked and
/// submitted as its single call does: the first that cannot go now ends
/// the batch, and only the first says why (its refusal or error).
/// `[0, done, seq]`: the first `done` went, the last as request `seq`.
fn batch(step: u64, mut one: impl FnMut(u64) -> Result<Result<u64, Refusal>, Error>) -> Out {
    let (mut done, mut last) = (0, 0);
    while done < step {
        match one(done) {
            Ok(Ok(seq)) => {
                last = seq;
                done += 1;
            }
            Ok(Err(r)) if done == 0 => return Ok(refused(r)),
            Err(e) if done == 0 => return Err(e),
            _ => break,
        }
    }
    Ok([0, done, last])
}

pub fn xn_write_from(cx: &mut Cx<'_>, dst: u64, src: u64) -> Out {
    let (_, who) = caller(cx)?;
    xn::with(|s| {
        Ok(match write_from(s, &who, dst, src, &mut AclMemo::new())? {
            Ok(seq) => [0, seq, 0],
            Err(r) => refused(r),
        })
    })
}

/// Checks and submits one `xn_write_from`: the request's sequence
/// number, or the refusal (nothing changed). `memo` keeps the `acl`
/// results of the call's checks (no metadata changes within one call).
fn write_from(
    s: &mut XnState,
    who: &xn::Principals<'_>,
    dst: u64,
    src: u64,
    memo: &mut AclMemo,
) -> Result<Result<u64, Refusal>, Error> {
    if dst == src {
        return Err(Error::Invalid);
    }
    if !s.disk.has_room() {
        return Err(Error::WouldBlock);
    }
    let plan = match s.xn.copy_check_memo(&s.mem, who, dst, src, memo) {
        Ok(plan) => plan,
        Err(r) => return Ok(Err(r)),
    };
    // A read of `dst` in flight would register the old bytes as its
    // cache after the copy.
    if s.read_pending(dst).is_some() {
        return Ok(Err(Refusal::InFlight(dst)));
    }
    // The destination's frame leaves the cache: nobody may still see it
    // as the block (as for `xn_evict`).
    if s.xn.block(dst).and_then(|v| v.frame).is_some_and(|frame| s.mem.mapped(frame)) {
        return Err(Error::Busy);
    }
    s.submit_copy(plan).map(Ok)
}

/// Word `index` of the caller's array at `base`.
fn word_at(records: &mut user::RecordReader, space: &AddressSpace, base: u64, index: u64) -> Result<u64, Error> {
    let at = index.checked_mul(8).and_then(|off| base.checked_add(off)).ok_or(Error::BadAddress)?;
    records.read::<u64>(space, at)
}

/// How many of a batch's `count` items one kernel entry takes (`Invalid`
/// for none).
fn batch_step(count: Len) -> Result<u64, Error> {
    if count == 0 { Err(Error::Invalid) } else { Ok(crate::restart::records().min(count)) }
}

pub fn xn_write_from_batch(cx: &mut Cx<'_>, pairs: UserPtr, count: Len) -> Out {
    let step = batch_step(count)?;
    let (env, who) = caller(cx)?;
    let space = &env.space;
    // One walk per page of pairs, not one per word.
    let mut records = user::RecordReader::new();
    xn::with(|s| {
        // One `acl` run per parent for the whole step: nothing here
        // changes metadata.
        let mut memo = AclMemo::new();
        batch(step, |i| {
            let dst = word_at(&mut records, space, pairs, i * 2)?;
            let src = word_at(&mut records, space, pairs, i * 2 + 1)?;
            write_from(s, &who, dst, src, &mut memo)
        })
    })
}

pub fn xn_flush(_cx: &mut Cx<'_>) -> Out {
    xn::with(|s| s.submit_flush(true).map(|seq| [0, seq, 0]))
}

pub fn xn_evict(_cx: &mut Cx<'_>, block: u64) -> Out {
    xn::with(|s: &mut XnState| {
        Ok(match evict(s, block)? {
            Ok(()) => [0, block, 0],
            Err(r) => refused(r),
        })
    })
}

/// Takes the clean, unmapped `block` out of the cache (its frame goes
/// back), or says why not.
fn evict(s: &mut XnState, block: u64) -> Result<Result<(), Refusal>, Error> {
    let Some(frame) = s.xn.block(block).and_then(|v| v.frame) else {
        return Ok(Err(Refusal::NotBound(block)));
    };
    if s.mem.mapped(frame) {
        return Err(Error::Busy);
    }
    Ok(s.xn.evict(block).map(|frame| s.mem.release(frame)))
}

pub fn xn_evict_batch(cx: &mut Cx<'_>, blocks: UserPtr, count: Len) -> Out {
    let step = batch_step(count)?;
    let space = &cx.env()?.space;
    let mut records = user::RecordReader::new();
    xn::with(|s| {
        let (mut looked, mut evicted) = (0, 0);
        while looked < step {
            match word_at(&mut records, space, blocks, looked) {
                Ok(b) => {
                    if matches!(evict(s, b), Ok(Ok(()))) {
                        evicted += 1;
                    }
                    looked += 1;
                }
                Err(e) if looked == 0 => return Err(e),
                Err(_) => break,
            }
        }
        Ok([0, looked, evicted])
    })
}
