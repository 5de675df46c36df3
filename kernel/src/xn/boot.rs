//! XN at boot: find the disk, read the catalogue, register the file systems
//! it names and rebuild the free map from its roots with `owns`
//! (`Xn::recover`); duplicates are reported. Boot reads are synchronous
//! (the device is polled until each completes, with a time limit).

use super::cache::CacheFrames;
use super::catalog::{self, Catalog};
use super::{XN, XnState, table};
use crate::dev::virtio_blk::{self, Disk, Op};
use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use oxok_abi::xn::{BLOCK_SIZE, CATALOG_BLOCKS, CATALOG_FS_BLOCKS, MAX_BLOCKS, TEMPLATE_HEADER, TemplateHeader};
use oxok_xn::{Frame, Xn};

/// Reads disk block `block` into cache frame `frame`, waiting (at most a
/// few seconds) for the device. Boot only: nothing else is outstanding.
fn read_sync(disk: &mut Disk, block: u64, frame: Frame) -> bool {
    if disk.submit(Op::Read, block, super::cache::addr(frame), 0).is_err() {
        return false;
    }
    let start = crate::arch::cpu::rdtsc();
    let mut hz = 0;
    crate::mem::exposed::update_clock(|c| hz = c.tsc_hz);
    let limit = hz.max(1_000_000) * 10;
    let mut result = None;
    while result.is_none() {
        disk.poll(virtio_blk::RUN_MAX, |_, _, ok| result = Some(ok));
        if crate::arch::cpu::rdtsc().wrapping_sub(start) > limit {
            log::error!("xn: boot read of block {block} timed out");
            return false;
        }
        core::hint::spin_loop();
    }
    result == Some(true)
}

/// Splits a catalogue file system's bytes into its templates.
fn split(bytes: &[u8], count: u32) -> Option<Vec<&[u8]>> {
    let mut out = Vec::new();
    let mut at = 0;
    for _ in 0..count {
        let head: &[u8; TEMPLATE_HEADER] = bytes.get(at..at + TEMPLATE_HEADER)?.try_into().ok()?;
        let h = TemplateHeader::from_bytes(head)?;
        let len = TEMPLATE_HEADER + (usize::from(h.owns) + usize::from(h.acl) + usize::from(h.size)) * 8;
        out.push(bytes.get(at..at + len)?);
        at += len;
    }
    (at == bytes.len()).then_some(out)
}

/// Looks for a disk and brings XN up on it (logged either way).
pub fn init() {
    let Some(mut disk) = virtio_blk::probe() else {
        log::info!("xn: no disk");
        return;
    };
    let blocks = disk.blocks();
    if blocks <= CATALOG_BLOCKS + 1 {
        log::warn!("xn: disk of {blocks} blocks is too small");
        return;
    }
    let nblocks = (blocks - CATALOG_BLOCKS).min(MAX_BLOCKS);
    let mut mem = CacheFrames::default();
    let (Some(header), Some(scratch)) = (mem.alloc_kernel(), mem.alloc_kernel()) else {
        log::warn!("xn: no memory");
        return;
    };
    let Ok(mut xn) = Xn::new(nblocks) else {
        log::warn!("xn: no memory for the free map");
        return;
    };
    let mut cat = Catalog::new(header);
    let mut report = None;
    let mut buf = [0u8; BLOCK_SIZE];
    let found =
        if read_sync(&mut disk, 0, header) && mem.copy_out(header, &mut buf) { catalog::decode(&buf) } else { None };
    match found {
        None => log::info!("xn: disk of {nblocks} blocks, no catalogue: fresh"),
        Some(h) => {
            let mut ok = true;
            for (i, &(count, len)) in h.fss.iter().enumerate() {
                let mut bytes = Vec::new();
                for k in 0..CATALOG_FS_BLOCKS {
                    let b = 1 + (i * CATALOG_FS_BLOCKS + k) as u64;
                    if !read_sync(&mut disk, b, scratch) || !mem.copy_out(scratch, &mut buf) {
                        ok = false;
                    }
                    bytes.extend_from_slice(&buf);
                }
                bytes.truncate(len as usize);
                let registered = split(&bytes, count).and_then(|t| xn.register_fs(&t).ok());
                if registered.is_none() {
                    log::warn!("xn: catalogue file system {i} does not verify");
                    ok = false;
                }
            }
            if ok {
                let mut read = |b: u64, out: &mut [u8; BLOCK_SIZE]| {
                    read_sync(&mut disk, CATALOG_BLOCKS + b, scratch) && mem.copy_out(scratch, out)
                };
                match xn.recover(&h.roots, &mut buf, &mut read) {
                    Ok(r) => {
                        log::info!(
                            "xn: recovered {} blocks from {} roots of {} file systems; {} duplicates, {} unreadable",
                            r.reachable,
                            h.roots.len(),
                            h.fss.len(),
                            r.duplicates.len(),
                            r.unreadable.len()
                        );
                        for d in &r.duplicates {
                            log::warn!("xn: block {} claimed twice (by {:?} and {:?})", d.block, d.first, d.second);
                        }
                        cat.recovered(h.fss.clone(), h.roots.len());
                        report = Some(r);
                    }
                    Err(e) => log::warn!("xn: recovery refused: {e}"),
                }
            }
            if report.is_none() {
                log::warn!("xn: catalogue unusable; the disk is treated as fresh");
                let Ok(fresh) = Xn::new(nblocks) else { return };
                xn = fresh;
            }
        }
    }
    mem.release(scratch);
    if let Err(e) = table::init() {
        log::warn!("xn: no table: {e:?}");
    }
    let (duplicates, recovered) = report.map_or((0, 0), |r| (r.duplicates.len() as u64, r.reachable));
    let mut block = Vec::new();
    if block.try_reserve_exact(BLOCK_SIZE).is_err() {
        log::warn!("xn: no memory for its scratch block");
        return;
    }
    block.resize(BLOCK_SIZE, 0u8);
    let Ok(scratch) = Box::<[u8; BLOCK_SIZE]>::try_from(block.into_boxed_slice()) else { return };
    let mut s = XnState {
        disk,
        xn,
        mem,
        cat,
        reqs: VecDeque::new(),
        seq: 0,
        flushes: 0,
        writes: 0,
        errors: 0,
        duplicates,
        recovered,
        changed: true,
        reaping: false,
        boot_frames: 0,
        interrupted: 0,
        shown: table::Shown::ZERO,
        reads: 0,
        scratch,
    };
    s.boot_frames = s.mem.len();
    // Room for a request in every slot of the device, taken once (else
    // as requests come: `room_to_record`).
    let _ = s.reqs.try_reserve_exact(crate::dev::virtio_blk::SLOTS + 2);
    log::info!("xn: disk of {nblocks} blocks ({} free)", s.xn.free_map().free_count());
    s.publish();
    *XN.lock() = Some(s);
}
