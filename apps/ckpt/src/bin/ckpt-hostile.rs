//! ckpt-hostile — the checkpointer's protection, asserted:
//!
//! 1. Without the capabilities, nothing: with only the call capability
//!    every child holds for its parent, or with a read-only or call-only
//!    capability derived from a full one, a process cannot be stopped,
//!    read, listed or have its capabilities copied (`Denied`); a slot
//!    naming nothing is `BadCap`. The victim keeps running.
//!    With every right, the kernel's application-area page is still not
//!    readable, and bad pages, buffers and counts are refused.
//! 2. Forged and truncated images are refused with a clear error —
//!    truncated, bad magic, unknown version, checksum mismatch, a mapping
//!    at a kernel address, a call served for a caller outside the tree, a
//!    non-canonical `rip` the kernel itself refuses
//!    half-way through the build — and nothing is left behind: the
//!    account's environments and frames are back where they were, and no
//!    child of this process is alive but the victim.
//! 3. and 4. Open files and capabilities outside the tree: see
//!    `../hostile/files.rs`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use core::mem::offset_of;
use oxok_ckpt::image::{Image, ImageError};
use oxok_ckpt::restore::restore;
use oxok_ckpt::{CkptError, save, transfer};
use oxok_libos::abi::layout::{ENV_TABLE_ROWS, PAGE_SIZE};
use oxok_libos::abi::{ENV_FREE, ENV_ZOMBIE, EnvState, Error, Mapping, Regs, cap_kind, rights};
use oxok_libos::exec::{self, Child};
use oxok_libos::{Args, exposed, process, sys, time};
use oxok_tests::Checks;

#[path = "../hostile/files.rs"]
mod files;

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    if args.get(1) == Some("probe") {
        return probe();
    }
    let mut t = Checks::new("ckpt-hostile");
    let victim = match exec::spawn("ckpt-counter", &["ckpt-counter", "100000", "5"]) {
        Ok(c) => c,
        Err(_) => {
            t.check(false, "spawn the victim");
            return t.finish();
        }
    };
    let _ = time::sleep_ms(50);
    without_caps(&mut t, &victim);
    forged(&mut t, &victim);
    let _ = sys::env_destroy(victim.slot);
    files::files(&mut t);
    files::capabilities(&mut t);
    t.finish()
}

/// In a child: every call on the parent through the call capability
/// `spawn` handed over.
fn probe() -> i32 {
    let mut t = Checks::new("ckpt-hostile probe");
    let parent = exposed::env_entry(exposed::self_id()).map(|r| u64::from(r.parent)).unwrap_or(0);
    let slot = (1..64u64).find(|&s| sys::cap_info(s).is_ok_and(|[k, n, _]| k == cap_kind::ENV && n == parent));
    match slot {
        Some(s) => refused(&mut t, s, Error::Denied, "a call capability for the parent"),
        None => t.check(false, "a call capability for the parent"),
    }
    t.finish()
}

/// Every checkpointer call on `slot`, each expected to fail with `want`.
fn refused(t: &mut Checks, slot: u64, want: Error, what: &str) {
    let mut page = alloc::vec![0u8; PAGE_SIZE as usize];
    let mut maps = [Mapping::default(); 4];
    t.expect(sys::env_stop(slot, 1).err(), Some(want), &alloc::format!("env_stop with {what}"));
    t.expect(
        sys::env_peek(slot, 0x40_0000, page.as_mut_ptr() as u64).err(),
        Some(want),
        &alloc::format!("env_peek with {what}"),
    );
    t.expect(
        sys::env_mappings(slot, 0, maps.as_mut_ptr() as u64, 4).err(),
        Some(want),
        &alloc::format!("env_mappings with {what}"),
    );
    t.expect(sys::cap_peek(slot, 0).err(), Some(want), &alloc::format!("cap_peek with {what}"));
    t.expect(sys::cap_copy(slot, 0, rights::READ).err(), Some(want), &alloc::format!("cap_copy with {what}"));
}

fn without_caps(t: &mut Checks, victim: &Child) {
    // A child of this process holds only the call capability `spawn` gives
    // it for its parent: it probes this process with it.
    match exec::spawn("ckpt-hostile", &["ckpt-hostile", "probe"]).map(exec::wait) {
        Ok(Ok(st)) => t.expect(st.code(), 0, "a child with a call capability for its parent is refused everything"),
        _ => t.check(false, "spawn the probe"),
    }
    // Derived from the full capability for the victim: read-only can read
    // but not stop or copy out; call-only can do none of it.
    match sys::cap_derive(victim.slot, rights::CALL) {
        Ok([s]) => {
            refused(t, s, Error::Denied, "a call-only capability");
            let _ = sys::cap_drop(s);
        }
        Err(_) => t.check(false, "derive a call-only capability"),
    }
    match sys::cap_derive(victim.slot, rights::READ) {
        Ok([s]) => {
            t.expect(sys::env_stop(s, 1).err(), Some(Error::Denied), "env_stop with read only");
            t.expect(sys::cap_copy(s, 1, rights::READ).err(), Some(Error::Denied), "cap_copy with read only");
            let _ = sys::cap_drop(s);
        }
        Err(_) => t.check(false, "derive a read-only capability"),
    }
    // A free slot names nothing.
    let free = (1..64u64).find(|&s| sys::cap_info(s).is_err()).unwrap_or(63);
    refused(t, free, Error::BadCap, "an empty slot");
    // Full rights still do not reach the kernel's page of the victim, and
    // the listing is bounded.
    let mut page = alloc::vec![0u8; PAGE_SIZE as usize];
    let app_area = oxok_libos::abi::layout::APP_AREA;
    t.expect(
        sys::env_peek(victim.slot, app_area, page.as_mut_ptr() as u64).err(),
        Some(Error::BadAddress),
        "env_peek of the application area",
    );
    t.expect(
        sys::env_peek(victim.slot, 0x1234_5000, page.as_mut_ptr() as u64).err(),
        Some(Error::NotFound),
        "env_peek of an unmapped page",
    );
    t.expect(
        sys::env_peek(victim.slot, 0x40_0000, 0xffff_8000_0000_0000).err(),
        Some(Error::BadAddress),
        "env_peek into kernel memory",
    );
    let mut maps = [Mapping::default(); 4];
    t.expect(
        sys::env_mappings(victim.slot, 0, maps.as_mut_ptr() as u64, 0).err(),
        Some(Error::Invalid),
        "env_mappings of 0 records",
    );
    t.expect(
        sys::env_mappings(victim.slot, 0, maps.as_mut_ptr() as u64, 65).err(),
        Some(Error::Invalid),
        "env_mappings of 65 records",
    );
    t.expect(sys::env_stop(victim.slot, 2).err(), Some(Error::Invalid), "env_stop with on = 2");
    // Stopping oneself is refused.
    t.expect(sys::env_stop(0, 1).err(), Some(Error::Invalid), "env_stop of oneself");
    let runs = exposed::env_entry(victim.id).map(|r| r.runs).unwrap_or(0);
    let _ = time::sleep_ms(30);
    let later = exposed::env_entry(victim.id).map(|r| r.runs).unwrap_or(0);
    t.check(later > runs, "the victim keeps running");
}

/// Children of this process that are alive (not zombies).
fn live_children() -> usize {
    let me = exposed::self_id();
    (0..ENV_TABLE_ROWS)
        .filter_map(exposed::env_row)
        .filter(|r| u64::from(r.parent) == me && r.status != ENV_FREE && r.status != ENV_ZOMBIE)
        .count()
}

/// The account's environments, and its frames not owned or used for page
/// tables by this process itself (whose heap grows with the images it
/// holds), once teardowns are finished.
fn usage() -> (u64, u64) {
    let me = exposed::env_entry(exposed::self_id()).map(|r| u64::from(r.frames) + u64::from(r.tables)).unwrap_or(0);
    process::usage(0).map(|u| (u.envs, u.frames.saturating_sub(me))).unwrap_or((0, 0))
}

fn settled(want: (u64, u64)) -> (u64, u64) {
    let mut got = (0, 0);
    for _ in 0..20_000 {
        got = usage();
        if got == want {
            break;
        }
        let _ = sys::yield_cpu(0);
    }
    got
}

fn forged(t: &mut Checks, victim: &Child) {
    let (tree, img) = match save::checkpoint(victim.slot, false) {
        Ok(x) => x,
        Err(e) => {
            t.check(false, &alloc::format!("checkpoint the victim: {e}"));
            return;
        }
    };
    tree.continue_all();
    let good = img.encode();
    // Warm the heap up to what a decode and a restore attempt need.
    let _ = Image::decode(&good);
    t.expect(Image::decode(&good).as_ref().map(|i| i.envs.len()).ok(), Some(img.envs.len()), "the real image decodes");
    let before = usage();
    let children = live_children();

    let mut cases: alloc::vec::Vec<(&str, alloc::vec::Vec<u8>, CkptError)> = alloc::vec::Vec::new();
    cases.push(("truncated", good[..good.len() / 2].to_vec(), CkptError::Image(ImageError::Truncated)));
    cases.push(("header only", good[..40].to_vec(), CkptError::Image(ImageError::Truncated)));
    let mut b = good.clone();
    b[0] ^= 0xff;
    cases.push(("bad magic", b, CkptError::Image(ImageError::BadMagic)));
    let mut b = good.clone();
    b[8] = 99;
    cases.push(("bad version", b, CkptError::Image(ImageError::BadVersion(99))));
    let mut b = good.clone();
    let mid = b.len() - 100;
    b[mid] ^= 0x5a;
    cases.push(("one byte changed", b, CkptError::Image(ImageError::BadChecksum)));
    let mut f = img.clone();
    if let Some(m) = f.envs[0].maps.last_mut() {
        m.va = 0xffff_8000_0000_0000;
    }
    cases.push(("a mapping at a kernel address", f.encode(), CkptError::Image(ImageError::Invalid("mapping address"))));
    // A member serving a call for a caller outside the tree: refused once
    // the environments exist, which are destroyed again.
    let mut f = img.clone();
    if let Some(e) = f.envs.last_mut() {
        e.state[transfer::SERVING] = 1;
        e.state[transfer::CALLER] = 0x7777;
    }
    let outside = ImageError::Invalid("a transfer served for a caller outside the tree");
    cases.push(("a transfer for a caller outside the tree", f.encode(), CkptError::Image(outside)));
    for (what, bytes, want) in cases {
        let got = Image::decode(&bytes).map_err(CkptError::Image).and_then(|i| restore(&i).map(|_| ()));
        t.expect(got.err(), Some(want), what);
    }
    // Well-formed but refused by the kernel once half the tree is built:
    // the last member's rip is non-canonical.
    let mut f = img.clone();
    let rip = (offset_of!(EnvState, regs) + offset_of!(Regs, rip)) / 8;
    if let Some(e) = f.envs.last_mut() {
        e.state[rip] = 0x8000_0000_0000;
    }
    let got = Image::decode(&f.encode()).map_err(CkptError::Image).and_then(|i| restore(&i).map(|_| ()));
    t.expect(got.err(), Some(CkptError::Call("env_set_state", Error::Invalid)), "a non-canonical rip");
    t.expect(settled(before), before, "environments and frames back where they were");
    t.expect(live_children(), children, "no restored child left alive");
}
