//! hostile-caps: tries every way around the capability checks of the
//! memory calls — mapping without a capability (empty, out-of-range and
//! wrong-kind slots), widening rights on grant, passing on a capability
//! without the grant right, mapping writable with a read-only capability,
//! acting on an environment through a read-only capability, dropping its own
//! capability, using a stale capability after the frame was freed, and
//! mapping over kernel addresses, the exposed areas and unaligned addresses,
//! and making a page of the boot archive writable (shared from the archive
//! or from another mapping of it, protected with every capability it holds,
//! one page or a range), and share runs that are checked whole (a hole in
//! the source, a page taken at the destination, a read-only source asked
//! writable, a run across a block or into the application area, bad run
//! bits): each maps nothing.
//! Every attempt must fail with its documented error and change nothing; the
//! program keeps running and ends with `hostile-caps: ok`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::layout::{
    APP_AREA, CLOCK, ENV_TABLE, EXPOSED_BASE, FRAME_TABLE, PAGE_SIZE, PROGRAM_BASE, USER_TOP, UVPT, pte,
};
use oxok_libos::abi::{ANY_FRAME, CAP_SLOTS, Error, MapEntry, SHARE_RUN_MAX, cap_kind, rights};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

/// Where this program maps its frames.
const VA: u64 = 0x1100_0000_0000;
const R: u64 = rights::READ;
const W: u64 = rights::WRITE;
const G: u64 = rights::GRANT;

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("hostile-caps");
    let owned_at_start = exposed::owned_frames();
    let Ok([frame, pfn]) = sys::frame_alloc(ANY_FRAME) else {
        println!("hostile-caps: FAIL frame_alloc refused");
        return 1;
    };
    no_capability(&mut t);
    rights_on_grant(&mut t, frame, pfn);
    read_only_frame(&mut t, frame);
    read_only_env(&mut t, frame);
    bad_addresses(&mut t, frame);
    forbidden_flags(&mut t, frame, pfn);
    stale_after_free(&mut t, frame, pfn);
    archive_pages(&mut t);
    share_runs(&mut t);
    t.expect(exposed::pte(VA), None, "nothing left mapped");
    t.expect(exposed::owned_frames(), owned_at_start, "no frame leaked");
    t.finish()
}

/// The highest empty slot of the caller's list.
fn empty_slot() -> u64 {
    (1..CAP_SLOTS as u64).rev().find(|&s| sys::cap_info(s) == Err(Error::BadCap)).unwrap_or(CAP_SLOTS as u64 - 1)
}

/// Mapping with no frame capability at all.
fn no_capability(t: &mut Checks) {
    let empty = empty_slot();
    for (slot, what) in [
        (empty, "map with an empty slot"),
        (CAP_SLOTS as u64, "map with slot CAP_SLOTS"),
        (u64::MAX, "map with slot u64::MAX"),
        (1 << 32, "map with slot 2^32"),
        (0, "map with slot 0 (an environment, not a frame)"),
    ] {
        t.expect(sys::page_map(0, slot, VA, 0), Err(Error::BadCap), what);
    }
    for (slot, what) in [(empty, "cap_grant of an empty slot"), (u64::MAX, "cap_grant of slot u64::MAX")] {
        t.expect(sys::cap_grant(slot, 0, R), Err(Error::BadCap), what);
    }
    t.expect(sys::cap_info(u64::MAX), Err(Error::BadCap), "cap_info of slot u64::MAX");
    t.expect(sys::cap_drop(empty), Err(Error::BadCap), "cap_drop of an empty slot");
    t.expect(sys::cap_drop(u64::MAX), Err(Error::BadCap), "cap_drop of slot u64::MAX");
    t.expect(sys::cap_drop(0), Err(Error::Invalid), "cap_drop of slot 0");
    t.check(
        sys::cap_info(0).is_ok_and(|[k, id, _]| k == cap_kind::ENV && id == oxok_libos::process::env_id()),
        "slot 0 still names self",
    );
    t.expect(exposed::pte(VA), None, "nothing mapped by the refused calls");
}

/// Rights can only shrink, and only a capability with grant passes on.
fn rights_on_grant(t: &mut Checks, frame: u64, pfn: u64) {
    t.expect(sys::cap_grant(frame, 0, R | W | G | 8), Err(Error::Invalid), "grant with unknown rights bits");
    t.expect(sys::cap_grant(frame, 0, u64::MAX), Err(Error::Invalid), "grant with rights u64::MAX");
    let Ok([read_only]) = sys::cap_grant(frame, 0, R) else {
        t.check(false, "grant a read-only copy to self");
        return;
    };
    t.expect(sys::cap_info(read_only), Ok([cap_kind::FRAME, pfn, R]), "the copy is read-only");
    t.expect(sys::cap_grant(read_only, 0, R), Err(Error::Denied), "pass on without grant right");
    let Ok([rg]) = sys::cap_grant(frame, 0, R | G) else {
        t.check(false, "grant a read+grant copy");
        return;
    };
    t.expect(sys::cap_grant(rg, 0, R | W), Err(Error::Denied), "widen read+grant to read+write");
    t.expect(sys::cap_grant(rg, 0, R | W | G), Err(Error::Denied), "widen read+grant to all");
    match sys::cap_grant(rg, 0, R) {
        Ok([narrower]) => {
            t.expect(sys::cap_info(narrower), Ok([cap_kind::FRAME, pfn, R]), "narrowing works");
            t.expect(sys::cap_drop(narrower), Ok([]), "drop the narrowed copy");
        }
        Err(_) => t.check(false, "narrowing grant"),
    }
    // The environment capability in slot 0 must carry write to be granted
    // into; a read-only copy of it must not accept grants.
    if let Ok([env_read]) = sys::cap_grant(0, 0, R) {
        t.expect(sys::cap_grant(frame, env_read, R), Err(Error::Denied), "grant into a read-only env cap");
        t.expect(sys::cap_grant(env_read, 0, R | W), Err(Error::Denied), "widen a read-only env cap");
        t.expect(sys::cap_drop(env_read), Ok([]), "drop the env copy");
    } else {
        t.check(false, "grant a read-only copy of slot 0");
    }
    // The copies must not free the frame: only one with all rights can.
    t.expect(sys::frame_free(read_only), Err(Error::Denied), "free with a read-only capability");
    t.expect(sys::frame_free(rg), Err(Error::Denied), "free with a read+grant capability");
    t.expect(sys::cap_drop(read_only), Ok([]), "drop the read-only copy");
    t.expect(sys::cap_drop(rg), Ok([]), "drop the read+grant copy");
}

/// A read-only frame capability maps read-only and nothing more.
fn read_only_frame(t: &mut Checks, frame: u64) {
    let Ok([ro]) = sys::cap_grant(frame, 0, R) else {
        t.check(false, "grant a read-only copy");
        return;
    };
    t.expect(sys::page_map(0, ro, VA, pte::WRITABLE), Err(Error::Denied), "map writable with a read-only cap");
    t.expect(exposed::pte(VA), None, "the refused map left nothing");
    t.expect(sys::page_map(0, ro, VA, pte::NO_EXECUTE), Ok([]), "map read-only with a read-only cap");
    let entry = exposed::pte(VA).unwrap_or(0);
    t.check(entry & pte::PRESENT != 0 && entry & pte::WRITABLE == 0, "mapping is read-only");
    t.expect(
        sys::page_protect(0, VA, pte::WRITABLE | pte::NO_EXECUTE, ro),
        Err(Error::Denied),
        "add write with a read-only cap",
    );
    t.expect(
        sys::page_protect(0, VA, pte::WRITABLE | pte::NO_EXECUTE, u64::MAX),
        Err(Error::BadCap),
        "add write with no cap",
    );
    t.check(exposed::pte(VA).is_some_and(|e| e & pte::WRITABLE == 0), "still read-only");
    t.expect(sys::page_protect(0, VA, pte::NO_EXECUTE | pte::LIBOS_SPARE, u64::MAX), Ok([]), "libOS bits need no cap");
    t.check(
        exposed::pte(VA).is_some_and(|e| e & pte::LIBOS_SPARE != 0 && e & pte::WRITABLE == 0),
        "libOS bit set, still read-only",
    );
    // Write on another frame does not give write on this one.
    if let Ok([other, _]) = sys::frame_alloc(ANY_FRAME) {
        t.expect(
            sys::page_protect(0, VA, pte::WRITABLE | pte::NO_EXECUTE, other),
            Err(Error::BadCap),
            "add write with another frame's cap",
        );
        let _ = sys::frame_free(other);
    }
    t.check(exposed::pte(VA).is_some_and(|e| e & pte::WRITABLE == 0), "still read-only after that");
    t.expect(sys::page_unmap(0, VA), Ok([]), "unmap");
    t.expect(sys::cap_drop(ro), Ok([]), "drop the copy");
}

/// Page-table bits a user must not set: physical address bits (which would
/// name another frame), global, cache control, large page, protection keys.
fn forbidden_flags(t: &mut Checks, frame: u64, pfn: u64) {
    let bits: &[(u64, &str)] = &[
        (1 << 12, "flags with a physical address bit"),
        (0x000f_ffff_ffff_f000, "flags with every physical address bit"),
        (1 << 8, "global bit"),
        (1 << 3, "write-through bit"),
        (1 << 4, "cache-disable bit"),
        (pte::HUGE, "large-page bit"),
        (0xf << 59, "protection-key bits"),
        (1 << 52, "bit 52"),
        (u64::MAX, "every bit"),
    ];
    for &(bit, what) in bits {
        t.expect(sys::page_map(0, frame, VA, pte::NO_EXECUTE | bit), Err(Error::Invalid), what);
        t.expect(exposed::pte(VA), None, "nothing mapped");
    }
    t.expect(sys::page_map(0, frame, VA, pte::NO_EXECUTE), Ok([]), "map plainly");
    for &(bit, what) in bits {
        t.expect(sys::page_protect(0, VA, pte::NO_EXECUTE | bit, frame), Err(Error::Invalid), what);
    }
    let entry = exposed::pte(VA).unwrap_or(0);
    t.expect((entry & pte::ADDRESS_MASK) >> 12, pfn, "still maps its own frame");
    t.expect(entry & ((1 << 8) | (1 << 3) | (1 << 4) | pte::HUGE), 0, "no global, cache or large-page bit");
    t.expect(sys::page_unmap(0, VA), Ok([]), "unmap");
}

/// A read-only capability on an environment (here: itself) allows no
/// changes to it.
fn read_only_env(t: &mut Checks, frame: u64) {
    let Ok([env_read]) = sys::cap_grant(0, 0, R) else {
        t.check(false, "grant a read-only copy of slot 0");
        return;
    };
    t.expect(sys::page_map(env_read, frame, VA, 0), Err(Error::Denied), "map through a read-only env cap");
    t.expect(sys::page_map(frame, frame, VA, 0), Err(Error::BadCap), "map with a frame cap as env cap");
    t.expect(sys::page_map(u64::MAX, frame, VA, 0), Err(Error::BadCap), "map with env slot u64::MAX");
    t.expect(sys::page_map(0, frame, VA, 0), Ok([]), "map through slot 0");
    t.expect(sys::page_unmap(env_read, VA), Err(Error::Denied), "unmap through a read-only env cap");
    t.expect(
        sys::page_protect(env_read, VA, pte::NO_EXECUTE, u64::MAX),
        Err(Error::Denied),
        "protect through a read-only env cap",
    );
    t.expect(sys::upcall_register(env_read, 0, 0), Err(Error::Denied), "upcall_register through a read-only env cap");
    t.expect(sys::env_run(env_read), Err(Error::Denied), "env_run through a read-only env cap");
    t.expect(sys::frame_revoke(env_read, 1, 1000), Err(Error::Denied), "frame_revoke through a read-only env cap");
    t.expect(sys::env_destroy(env_read), Err(Error::Denied), "destroy self through a read-only env cap");
    t.expect(sys::env_destroy(frame), Err(Error::BadCap), "destroy with a frame cap");
    t.expect(sys::page_unmap(0, VA), Ok([]), "unmap through slot 0");
    t.expect(sys::cap_drop(env_read), Ok([]), "drop the env copy");
}

/// Addresses that are not the user's to map.
fn bad_addresses(t: &mut Checks, frame: u64) {
    let bad: &[(u64, &str)] = &[
        (0xffff_ffff_8000_0000, "kernel text"),
        (0xffff_8000_0000_0000, "direct map"),
        (0x0000_8000_0000_0000, "non-canonical"),
        (!(PAGE_SIZE - 1), "top page"),
        (UVPT, "UVPT"),
        (UVPT + 0x1234_5000, "inside UVPT"),
        (EXPOSED_BASE, "exposed base"),
        (FRAME_TABLE + PAGE_SIZE, "frame table"),
        (ENV_TABLE, "env table"),
        (CLOCK, "clock page"),
        (USER_TOP, "USER_TOP"),
        (VA + 1, "unaligned"),
        (VA + PAGE_SIZE / 2, "half-page aligned"),
    ];
    for &(va, what) in bad {
        t.expect(sys::page_map(0, frame, va, 0), Err(Error::BadAddress), what);
        t.expect(sys::page_unmap(0, va), Err(Error::BadAddress), what);
    }
    // An already-mapped user page: the program text.
    t.expect(sys::page_map(0, frame, PROGRAM_BASE, 0), Err(Error::Exists), "map over the program text");
    // The application area's page is the kernel's, made or not: no page
    // call maps, unmaps, shares or copies it.
    let rw = pte::WRITABLE;
    t.expect(sys::page_map(0, frame, APP_AREA, rw), Err(Error::BadAddress), "map at the application area");
    let made = sys::app_area_make();
    t.check(matches!(made, Ok(_) | Err(Error::Exists)), "make the application area");
    t.expect(sys::app_area_make(), Err(Error::Exists), "make the application area twice");
    t.expect(sys::page_map(0, frame, APP_AREA, rw), Err(Error::BadAddress), "map over the application area");
    t.expect(sys::page_unmap(0, APP_AREA), Err(Error::BadAddress), "unmap the application area");
    for (record, what) in [
        (MapEntry::share(VA, APP_AREA, rw), "share the application area's frame"),
        (MapEntry::copy(APP_AREA, PROGRAM_BASE, rw), "copy over the application area"),
        (MapEntry::fresh(APP_AREA, rw), "fresh frame at the application area"),
    ] {
        t.expect(batch(record), Err(Error::BadAddress), what);
    }
    // Nor protects it: made writable and executable, or read-only for
    // good (write cannot come back without a capability for a kernel
    // frame), alone or as the end of a range.
    for (va, pages, flags, what) in [
        (APP_AREA, 1, rw, "protect the application area writable and executable"),
        (APP_AREA, 1, pte::NO_EXECUTE, "protect the application area read-only"),
        (APP_AREA - PAGE_SIZE, 2, pte::NO_EXECUTE, "protect a range ending at the application area"),
    ] {
        t.expect(sys::page_protect_range(0, va, pages, flags, 0), Err(Error::BadAddress), what);
    }
    t.check(exposed::app_area().is_some(), "application area still readable");
    t.check(exposed::set_critical(false).is_ok(), "application area still writable");
    t.check(exposed::clock().is_some_and(|c| c.tsc_hz != 0), "clock page still readable");
}

/// Once the frame is freed, every other capability for it is stale.
fn stale_after_free(t: &mut Checks, frame: u64, pfn: u64) {
    let Ok([copy]) = sys::cap_grant(frame, 0, R | W | G) else {
        t.check(false, "grant a full copy");
        return;
    };
    t.expect(sys::frame_free(frame), Ok([]), "free through the original");
    t.expect(sys::page_map(0, copy, VA, 0), Err(Error::BadCap), "map through a stale copy");
    t.expect(sys::frame_free(copy), Err(Error::BadCap), "free through a stale copy");
    // Someone else — here the program itself — gets the frame next: the
    // stale copy must not name the new incarnation.
    if let Ok([again, p]) = sys::frame_alloc(pfn) {
        t.expect(p, pfn, "frame allocated again");
        t.expect(sys::page_map(0, copy, VA, 0), Err(Error::BadCap), "stale copy vs the new incarnation");
        t.expect(sys::frame_free(again), Ok([]), "free the new incarnation");
    } else {
        t.check(false, "re-allocate the freed frame");
    }
    let _ = sys::cap_drop(copy);
}

/// Applies one `page_batch` record to this environment.
fn batch(r: MapEntry) -> Result<(), Error> {
    sys::page_batch(0, &r as *const MapEntry as u64, 1).map(|_| ())
}

/// The boot archive's pages map anywhere, read-only only: a share from the
/// archive or from a mapping of it never writable, no protect adds write
/// (with the environment's own capability, a frame's or over a range), a
/// copy gives a private frame; the archive's bytes are unchanged and its
/// frames' mapping counts come back.
fn archive_pages(t: &mut Checks) {
    let Some(archive) = exposed::boot_archive() else {
        t.check(false, "the boot archive is exposed");
        return;
    };
    let start = archive.as_ptr() as u64;
    let src = start.next_multiple_of(PAGE_SIZE);
    let end = (start + archive.len() as u64).next_multiple_of(PAGE_SIZE);
    if src + PAGE_SIZE > end {
        t.check(false, "the boot archive holds a whole page");
        return;
    }
    let (va2, va3) = (VA + PAGE_SIZE, VA + 2 * PAGE_SIZE);
    let ro = pte::NO_EXECUTE;
    let rw = pte::WRITABLE | pte::NO_EXECUTE;
    let word = exposed::read_word(src);
    let pfn = exposed::frame_of(src);
    let maps_before = pfn.and_then(exposed::frame_entry).map(|f| f.maps);
    t.expect(batch(MapEntry::share(VA, src, rw)), Err(Error::Denied), "share an archive page writable");
    // (A share's low 6 source bits are its run length: bit 11 is neither a
    // page nor a length.)
    let unaligned = MapEntry::share(VA, src + 0x800, ro);
    t.expect(batch(unaligned), Err(Error::BadAddress), "share from an unaligned archive address");
    t.expect(batch(MapEntry::share(VA, end, ro)), Err(Error::BadAddress), "share from past the archive");
    t.expect(batch(MapEntry::share(VA, FRAME_TABLE, ro)), Err(Error::BadAddress), "share from the frame table");
    t.expect(batch(MapEntry::share(VA, src, ro)), Ok(()), "share an archive page read-only");
    t.expect(exposed::read_word(VA), word, "the archive's bytes where it is mapped");
    t.expect(exposed::frame_of(VA), pfn, "the archive's own frame");
    t.expect(batch(MapEntry::share(va2, VA, rw)), Err(Error::Denied), "pass the archive page on writable");
    t.expect(batch(MapEntry::share(va2, VA, ro)), Ok(()), "pass the archive page on read-only");
    t.expect(sys::page_protect(0, VA, rw, 0).map(|_| ()), Err(Error::Denied), "protect it writable (own capability)");
    if let Ok([mine, _]) = sys::frame_alloc(ANY_FRAME) {
        t.expect(sys::page_protect(0, VA, rw, mine).map(|_| ()), Err(Error::Denied), "protect it writable (a frame's)");
        let _ = sys::frame_free(mine);
    }
    let r = sys::page_protect_range(0, VA, 2, rw, 0).map(|_| ());
    t.expect(r, Err(Error::Denied), "protect a range of them writable");
    t.check(!exposed::writable(VA) && !exposed::writable(va2), "both mappings still read-only");
    let owned = exposed::owned_frames();
    t.expect(batch(MapEntry::copy(va3, VA, rw)), Ok(()), "copy the archive page");
    t.check(exposed::writable(va3) && exposed::frame_of(va3) != pfn, "the copy is a writable frame of its own");
    t.expect(exposed::read_word(va3), word, "the copy holds the archive's bytes");
    t.expect(exposed::owned_frames(), owned.map(|n| n + 1), "the copy is charged as an owned frame");
    for va in [VA, va2, va3] {
        t.expect(sys::page_unmap(0, va), Ok([]), "unmap");
    }
    t.expect(exposed::read_word(src), word, "the archive unchanged");
    t.expect(pfn.and_then(exposed::frame_entry).map(|f| f.maps), maps_before, "the archive frame's mappings back");
}

/// Share records naming runs of pages are checked whole before any page is
/// mapped: every refusal leaves the whole destination unmapped, and the
/// source frame's mapping count as it was.
fn share_runs(t: &mut Checks) {
    const BLOCK: u64 = SHARE_RUN_MAX * PAGE_SIZE;
    let src = (VA + 4 * BLOCK) & !(BLOCK - 1);
    let dst = src + 2 * BLOCK;
    let rw = pte::WRITABLE | pte::NO_EXECUTE;
    let ro = pte::NO_EXECUTE;
    let Ok([frame, pfn]) = sys::frame_alloc(ANY_FRAME) else {
        t.check(false, "frame for the runs");
        return;
    };
    for k in 0..4 {
        t.expect(sys::page_map(0, frame, src + k * PAGE_SIZE, rw), Ok([]), "map a source page");
    }
    let maps = || exposed::frame_entry(pfn).map(|f| f.maps);
    let before = maps();
    let none_mapped = |at: u64, n: u64| (0..n).all(|k| exposed::pte(at + k * PAGE_SIZE).is_none());
    t.expect(batch(MapEntry::share_run(dst, src, rw, 4)), Ok(()), "share a run of 4 pages");
    t.check((0..4).all(|k| exposed::frame_of(dst + k * PAGE_SIZE) == Some(pfn)), "each page of the run mapped");
    for k in 0..4 {
        let _ = sys::page_unmap(0, dst + k * PAGE_SIZE);
    }
    let _ = sys::page_unmap(0, src + 2 * PAGE_SIZE);
    t.expect(batch(MapEntry::share_run(dst, src, rw, 4)), Err(Error::NotFound), "a run with a hole in its source");
    t.check(none_mapped(dst, 4), "nothing mapped by the run with a hole");
    let _ = sys::page_map(0, frame, src + 2 * PAGE_SIZE, rw);
    let _ = sys::page_map(0, frame, dst + 2 * PAGE_SIZE, rw);
    t.expect(batch(MapEntry::share_run(dst, src, rw, 4)), Err(Error::Exists), "a run over a mapped page");
    t.check(none_mapped(dst, 2) && none_mapped(dst + 3 * PAGE_SIZE, 1), "nothing mapped by the run over a page");
    let _ = sys::page_unmap(0, dst + 2 * PAGE_SIZE);
    let _ = sys::page_protect(0, src + PAGE_SIZE, ro, 0);
    t.expect(batch(MapEntry::share_run(dst, src, rw, 4)), Err(Error::Denied), "a writable run from a read-only page");
    t.check(none_mapped(dst, 4), "nothing mapped by the writable run");
    let _ = sys::page_protect(0, src + PAGE_SIZE, rw, 0);
    let across = dst + BLOCK - 2 * PAGE_SIZE;
    t.expect(batch(MapEntry::share_run(across, src, rw, 4)), Err(Error::Invalid), "a run across a block");
    t.check(none_mapped(across, 4), "nothing mapped by the run across a block");
    let top = APP_AREA - 2 * PAGE_SIZE;
    t.expect(batch(MapEntry::share_run(top, src, rw, 4)), Err(Error::BadAddress), "a run into the application area");
    let bad_bits = MapEntry { src: src | 0x800, ..MapEntry::share(dst, src, rw) };
    t.expect(batch(bad_bits), Err(Error::BadAddress), "a share with stray source bits");
    t.expect(batch(MapEntry::share_run(dst, src, rw, SHARE_RUN_MAX + 1)), Err(Error::BadAddress), "a run too long");
    t.expect(batch(MapEntry::share_run(dst, src, rw, 0)), Err(Error::BadAddress), "a run of no page");
    t.check(none_mapped(dst, SHARE_RUN_MAX), "nothing left at the destination");
    t.expect(maps(), before, "the source frame's mappings as before");
    if let Some(archive) = exposed::boot_archive() {
        let from = (archive.as_ptr() as u64).next_multiple_of(PAGE_SIZE);
        t.expect(batch(MapEntry::share_run(dst, from, rw, 4)), Err(Error::Denied), "a writable run from the archive");
        t.expect(batch(MapEntry::share_run(dst, from, ro, 4)), Ok(()), "a read-only run from the archive");
        let same = (0..4).all(|k| exposed::frame_of(dst + k * PAGE_SIZE) == exposed::frame_of(from + k * PAGE_SIZE));
        t.check(same, "the run maps the archive's own pages");
        for k in 0..4 {
            let _ = sys::page_unmap(0, dst + k * PAGE_SIZE);
        }
    }
    for k in 0..4 {
        let _ = sys::page_unmap(0, src + k * PAGE_SIZE);
    }
    t.expect(sys::frame_free(frame), Ok([]), "free the runs' frame");
}
