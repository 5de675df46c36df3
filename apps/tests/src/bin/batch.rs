//! batch: `page_batch`'s precise progress (Fluke). A 100-record batch (more
//! than `BATCH_STEP`, so the kernel restarts it at least once on the way)
//! maps everything; a batch with a bad record in the middle applies exactly
//! the records before it and returns with `rsi` at the bad record and `rdx`
//! the records left, so that fixing the record and issuing the same call
//! again finishes the job; a bad record past the restart point behaves the
//! same; a batch whose record pointer is bad fails with `BadAddress` and
//! changes nothing; a read-only environment capability changes nothing.
//! A copy record copies only a page the caller may read itself: a source
//! in the kernel's half (direct map, kernel text), unmapped or misaligned
//! is `BadAddress` with nothing mapped and no frame taken.
//! `page_protect_range` protects a range past its 512-page step in one
//! call, skips absent pages, and adds write only with the owner's
//! environment capability: an empty slot or another frame's capability is
//! refused at the first page, with `rsi`/`rdx` there and nothing changed.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::fmt::Debug;
use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::abi::{ANY_FRAME, Call, Error, MapEntry, rights};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::{Checks, mem};

oxok_libos::main!(main);

/// Where the batches map.
const BASE: u64 = 0x1200_0000_0000;
/// A scratch page for records placed at a page end.
const SCRATCH: u64 = 0x1201_0000_0000;
/// Frames used; each is mapped at several addresses.
const FRAMES: usize = 10;
/// Records in the big batch.
const BIG: usize = 100;
const RW: u64 = pte::WRITABLE | pte::NO_EXECUTE;
const RECORD: u64 = core::mem::size_of::<MapEntry>() as u64;
/// A capability slot the test never fills.
const EMPTY_SLOT: u64 = 63;

/// What a raw `page_batch` left: status, `rsi`, `rdx`.
#[derive(Debug, PartialEq, Eq)]
struct Left {
    status: u64,
    entries: u64,
    count: u64,
}

fn batch_raw(env: u64, entries: u64, count: u64) -> Left {
    let r = sys::raw(Call::page_batch.number(), [env, entries, count, 0, 0, 0]);
    Left { status: r.status, entries: r.values[1], count: r.values[2] }
}

fn batch(env: u64, records: &[MapEntry]) -> Left {
    batch_raw(env, records.as_ptr() as u64, records.len() as u64)
}

/// `count` records of `records` starting at record `from`.
fn batch_from(env: u64, records: &[MapEntry], from: usize, count: usize) -> Left {
    batch_raw(env, records[from..].as_ptr() as u64, count as u64)
}

fn page(i: usize) -> u64 {
    BASE + i as u64 * PAGE_SIZE
}

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("batch");
    let owned_at_start = exposed::owned_frames();
    let mut slots = [0u64; FRAMES];
    let mut pfns = [0u64; FRAMES];
    for i in 0..FRAMES {
        match sys::frame_alloc(ANY_FRAME) {
            Ok([s, p]) => (slots[i], pfns[i]) = (s, p),
            Err(e) => {
                println!("batch: FAIL frame_alloc: {e}");
                return 1;
            }
        }
    }
    big_batch(&mut t, &slots, &pfns);
    bad_record(&mut t, &slots, 4, 10);
    bad_record(&mut t, &slots, (exposed::restart_records() as usize + 16).min(BIG - 1), BIG);
    bad_pointer(&mut t, &slots);
    page_end(&mut t, &slots);
    protect(&mut t, &slots);
    read_only_env(&mut t, &slots);
    protect_range(&mut t, &slots);
    copy_sources(&mut t, &slots);
    for (i, &s) in slots.iter().enumerate() {
        t.expect(exposed::frame_entry(pfns[i]).map(|e| e.maps), Some(0), "frame unmapped at the end");
        t.expect(sys::frame_free(s), Ok([]), "free");
    }
    t.expect(exposed::owned_frames(), owned_at_start, "no frame leaked");
    t.finish()
}

fn map_records(slots: &[u64; FRAMES], n: usize) -> [MapEntry; BIG] {
    let mut r = [MapEntry::default(); BIG];
    for (i, e) in r.iter_mut().enumerate().take(n) {
        *e = MapEntry::map(page(i), slots[i % FRAMES], RW);
    }
    r
}

fn unmap_records(n: usize) -> [MapEntry; BIG] {
    let mut r = [MapEntry::default(); BIG];
    for (i, e) in r.iter_mut().enumerate().take(n) {
        *e = MapEntry::unmap(page(i));
    }
    r
}

/// How many of the first `n` pages are mapped, and whether they are exactly
/// a prefix.
fn mapped_prefix(n: usize) -> (usize, bool) {
    let mapped: usize = (0..n).filter(|&i| exposed::pte(page(i)).is_some()).count();
    let prefix = (0..n).all(|i| exposed::pte(page(i)).is_some() == (i < mapped));
    (mapped, prefix)
}

/// Unmaps whatever of the first `n` pages is mapped (one call each).
fn clear(n: usize) {
    for i in 0..n {
        if exposed::pte(page(i)).is_some() {
            let _ = sys::page_unmap(0, page(i));
        }
    }
}

fn big_batch(t: &mut Checks, slots: &[u64; FRAMES], pfns: &[u64; FRAMES]) {
    let records = map_records(slots, BIG);
    let left = batch(0, &records);
    let end = records.as_ptr() as u64 + BIG as u64 * RECORD;
    t.expect(left, Left { status: 0, entries: end, count: 0 }, "100-record batch: status, rsi, rdx");
    let right = (0..BIG).all(|i| exposed::frame_of(page(i)) == Some(pfns[i % FRAMES]));
    t.check(right, "all 100 pages map the right frames");
    t.check(
        (0..BIG).all(|i| exposed::pte(page(i)).is_some_and(|e| e & RW == RW)),
        "all 100 pages writable, no-execute",
    );
    for (i, &p) in pfns.iter().enumerate() {
        let maps = exposed::frame_entry(p).map(|e| e.maps);
        if maps != Some((BIG / FRAMES) as u32) {
            println!("batch: frame {i} maps {maps:?}");
        }
    }
    t.check(
        pfns.iter().all(|&p| exposed::frame_entry(p).is_some_and(|e| e.maps == (BIG / FRAMES) as u32)),
        "each frame mapped 10 times",
    );
    // Aliases see each other's writes.
    if exposed::writable(page(0)) && exposed::readable(page(FRAMES)) {
        mem::write(page(0), 0x5151_5151);
        t.expect(mem::read(page(FRAMES)), 0x5151_5151, "alias sees the write");
    }
    let unmap = unmap_records(BIG);
    t.expect(batch(0, &unmap).status, 0, "100-record unmap batch");
    t.expect(mapped_prefix(BIG).0, 0, "all 100 pages unmapped");
}

/// A batch of `n` records whose record `bad` names an empty slot.
fn bad_record(t: &mut Checks, slots: &[u64; FRAMES], bad: usize, n: usize) {
    let mut records = map_records(slots, n);
    records[bad].frame_slot = 63;
    if sys::cap_info(63).is_ok() {
        records[bad].frame_slot = u64::MAX - 2;
    }
    let start = records.as_ptr() as u64;
    let left = batch_from(0, &records, 0, n);
    t.expect(
        left,
        Left { status: Error::BadCap.code(), entries: start + bad as u64 * RECORD, count: (n - bad) as u64 },
        "bad record: status, rsi at it, rdx records left",
    );
    t.expect(mapped_prefix(n), (bad, true), "exactly the records before the bad one applied");
    // Fix the record and continue from where the kernel stopped.
    records[bad].frame_slot = slots[0];
    let again = batch_from(0, &records, bad, n - bad);
    t.expect(again.status, 0, "continuing after the fix");
    t.expect(again.count, 0, "continuation finishes");
    t.expect(mapped_prefix(n), (n, true), "all records applied after the fix");
    // A misaligned address is a bad record too, and so is an address
    // already mapped (Exists).
    clear(n);
    records = map_records(slots, n);
    records[bad].va += 8;
    let left = batch_from(0, &records, 0, n);
    t.expect((left.status, left.count), (Error::BadAddress.code(), (n - bad) as u64), "misaligned record");
    t.expect(mapped_prefix(n), (bad, true), "records before the misaligned one applied");
    records[bad].va -= 8;
    let again = batch_from(0, &records, 0, n);
    t.expect((again.status, again.count), (Error::Exists.code(), n as u64), "re-running from the start: Exists");
    clear(n);
}

/// Record pointers the kernel must refuse before applying anything.
fn bad_pointer(t: &mut Checks, slots: &[u64; FRAMES]) {
    let _ = slots;
    for (ptr, what) in [
        (0u64, "null records"),
        (0xffff_ffff_8000_0000, "records in the kernel"),
        (0xffff_8000_0000_0000, "records in the direct map"),
        (0x0000_8000_0000_0000, "non-canonical records"),
        (0x3000_0000_0000, "unmapped records"),
        (u64::MAX - 8, "wrapping records"),
    ] {
        let left = batch_raw(0, ptr, 10);
        t.expect(left, Left { status: Error::BadAddress.code(), entries: ptr, count: 10 }, what);
    }
    let huge = batch_raw(0, 0x3000_0000_0000, u64::MAX);
    t.expect(huge.status, Error::BadAddress.code(), "unmapped records, count u64::MAX");
    let empty = batch_raw(0, 0, 0);
    t.expect(empty.status, 0, "zero records at null");
    t.expect(mapped_prefix(BIG).0, 0, "nothing mapped by bad pointers");
}

/// Records running off the end of the mapped memory: the readable ones are
/// applied (or none, if the kernel checks the whole array first) and
/// `rsi`/`rdx` say exactly which.
fn page_end(t: &mut Checks, slots: &[u64; FRAMES]) {
    let Ok([s, _]) = sys::frame_alloc(ANY_FRAME) else {
        t.check(false, "frame for the record page");
        return;
    };
    if sys::page_map(0, s, SCRATCH, RW) != Ok([]) {
        t.check(false, "map the record page");
        let _ = sys::frame_free(s);
        return;
    }
    let at = SCRATCH + PAGE_SIZE - 3 * RECORD;
    for (i, r) in map_records(slots, 3).iter().take(3).enumerate() {
        let a = at + i as u64 * RECORD;
        mem::write(a, r.va);
        mem::write(a + 8, r.frame_slot);
        mem::write(a + 16, r.flags);
    }
    let left = batch_raw(0, at, 5);
    let done = (left.entries.wrapping_sub(at) / RECORD) as usize;
    t.expect(left.status, Error::BadAddress.code(), "records running off the page");
    t.check(done == 0 || done == 3, "stopped at the start or at the unreadable record");
    t.expect(left.count, 5 - done as u64, "rdx agrees with rsi");
    t.expect(mapped_prefix(BIG), (done, true), "exactly the records before rsi applied");
    clear(3);
    let _ = sys::page_unmap(0, SCRATCH);
    let _ = sys::frame_free(s);
}

/// PROTECT records remove rights; they add write only with a capability
/// (for the frame, or for the environment that owns it) in `src`.
fn protect(t: &mut Checks, slots: &[u64; FRAMES]) {
    let n = 12;
    let records = map_records(slots, n);
    t.expect(batch(0, &records[..n]).status, 0, "map 12");
    let mut prot = [MapEntry::default(); 12];
    for (i, p) in prot.iter_mut().enumerate() {
        *p = MapEntry::protect(page(i), pte::NO_EXECUTE | pte::LIBOS_COW);
    }
    t.expect(batch(0, &prot).status, 0, "protect 12 read-only + COW bit");
    t.check(
        (0..n).all(|i| exposed::pte(page(i)).is_some_and(|e| e & pte::WRITABLE == 0 && e & pte::LIBOS_COW != 0)),
        "all 12 read-only with the COW bit",
    );
    let mut up = prot;
    for p in up.iter_mut() {
        *p = MapEntry::protect_with(p.va, RW, EMPTY_SLOT);
    }
    let left = batch(0, &up);
    t.check(
        left.status == Error::BadCap.code() && left.count == n as u64,
        "PROTECT cannot add write without a capability",
    );
    up[0].src = slots[1];
    let left = batch(0, &up[..1]);
    t.check(left.status == Error::BadCap.code(), "nor with another frame's capability");
    t.check((0..n).all(|i| exposed::pte(page(i)).is_some_and(|e| e & pte::WRITABLE == 0)), "still read-only");
    // Mixed: unmap 6, remap 3 of them writable, in one batch.
    let mut mixed = [MapEntry::default(); 9];
    for (i, m) in mixed.iter_mut().enumerate().take(6) {
        *m = MapEntry::unmap(page(i));
    }
    for (j, m) in mixed.iter_mut().skip(6).enumerate() {
        *m = MapEntry::map(page(j), slots[j], RW);
    }
    t.expect(batch(0, &mixed).status, 0, "mixed unmap and map batch");
    let writable: [bool; 12] = core::array::from_fn(|i| exposed::writable(page(i)));
    let present: [bool; 12] = core::array::from_fn(|i| exposed::pte(page(i)).is_some());
    t.check(writable[..3].iter().all(|&w| w), "remapped pages writable");
    t.check(present[3..6].iter().all(|&p| !p), "unmapped pages gone");
    t.check(present[6..].iter().all(|&p| p) && writable[6..].iter().all(|&w| !w), "others untouched");
    // The owner's environment capability (slot 0) covers its own frames.
    let own = [MapEntry::protect_with(page(11), RW, 0)];
    t.expect(batch(0, &own).status, 0, "PROTECT adds write with the owner's environment capability");
    t.check(exposed::writable(page(11)), "writable again");
    clear(n);
}

/// A read-only environment capability: the batch changes nothing.
fn read_only_env(t: &mut Checks, slots: &[u64; FRAMES]) {
    let Ok([ro]) = sys::cap_grant(0, 0, rights::READ) else {
        t.check(false, "read-only copy of slot 0");
        return;
    };
    let records = map_records(slots, 8);
    let left = batch(ro, &records[..8]);
    t.expect((left.status, left.count), (Error::Denied.code(), 8), "batch through a read-only env cap");
    t.expect(mapped_prefix(8).0, 0, "nothing mapped");
    let _ = sys::cap_drop(ro);
}

/// What a raw `page_protect_range` left: status, `rsi` (va), `rdx` (pages).
fn range_raw(env: u64, va: u64, pages: u64, flags: u64, slot: u64) -> Left {
    let r = sys::raw(Call::page_protect_range.number(), [env, va, pages, flags, slot, 0]);
    Left { status: r.status, entries: r.values[1], count: r.values[2] }
}

/// `page_protect_range` over 12 mapped pages inside a 600-page range.
fn protect_range(t: &mut Checks, slots: &[u64; FRAMES]) {
    let n = 12;
    let records = map_records(slots, n);
    t.expect(batch(0, &records[..n]).status, 0, "range: map 12");
    let ro = range_raw(0, page(0), 600, pte::NO_EXECUTE, 0);
    t.expect(ro, Left { status: 0, entries: page(600), count: 0 }, "range: 600 pages read-only in one call");
    t.check((0..n).all(|i| exposed::pte(page(i)).is_some_and(|e| e & pte::WRITABLE == 0)), "range: all read-only");
    t.expect(mapped_prefix(BIG).0, n, "range: absent pages stay absent");
    let empty = range_raw(0, page(0), n as u64, RW, EMPTY_SLOT);
    t.expect(
        empty,
        Left { status: Error::BadCap.code(), entries: page(0), count: n as u64 },
        "range: no write without a capability",
    );
    let other = range_raw(0, page(0), n as u64, RW, slots[1]);
    t.expect(
        other,
        Left { status: Error::BadCap.code(), entries: page(0), count: n as u64 },
        "range: nor with another frame's capability",
    );
    t.check((0..n).all(|i| !exposed::writable(page(i))), "range: still read-only after the refusals");
    t.expect(range_raw(0, page(0) + 8, 1, pte::NO_EXECUTE, 0).status, Error::BadAddress.code(), "range: misaligned");
    t.expect(
        range_raw(0, page(0), u64::MAX / 2, pte::NO_EXECUTE, 0).status,
        Error::BadAddress.code(),
        "range: past user space",
    );
    t.expect(range_raw(0, page(0), 1, 1 << 40, 0).status, Error::Invalid.code(), "range: unknown flag bit");
    if let Ok([ro_env]) = sys::cap_grant(0, 0, rights::READ) {
        t.expect(range_raw(ro_env, page(0), n as u64, RW, 0).status, Error::Denied.code(), "range: read-only env cap");
        let _ = sys::cap_drop(ro_env);
    }
    t.check((0..n).all(|i| !exposed::writable(page(i))), "range: nothing changed by a read-only env cap");
    let up = range_raw(0, page(0), n as u64, RW, 0);
    t.expect(up.status, 0, "range: write back with the owner's environment capability");
    t.check((0..n).all(|i| exposed::writable(page(i))), "range: all writable again");
    clear(n);
}

/// Copy records: the copy holds the source page's bytes; sources the caller
/// could not read itself are refused whole.
fn copy_sources(t: &mut Checks, slots: &[u64; FRAMES]) {
    let records = map_records(slots, 1);
    t.expect(batch(0, &records[..1]).status, 0, "copy: map the source");
    mem::write(page(0), 0xC0C0_C0C0);
    let owned = exposed::owned_frames();
    let refused = [
        (0xFFFF_8000_0000_0000 + 0x20_0000, "the direct map (kernel image)"),
        (0xFFFF_FFFF_8020_0000, "kernel text"),
        (page(40), "an unmapped page"),
        (page(0) + 8, "a misaligned source"),
    ];
    for (src, what) in refused {
        let left = batch(0, &[MapEntry::copy(page(1), src, RW)]);
        t.expect((left.status, left.count), (Error::BadAddress.code(), 1), what);
        t.check(exposed::pte(page(1)).is_none(), "copy: nothing mapped after a refusal");
    }
    t.expect(exposed::owned_frames(), owned, "copy: no frame taken by the refusals");
    t.expect(batch(0, &[MapEntry::copy(page(1), page(0), RW)]).status, 0, "copy: own readable page");
    t.expect(mem::read(page(1)), 0xC0C0_C0C0, "copy: holds the source's bytes");
    mem::write(page(1), 1);
    t.expect(mem::read(page(0)), 0xC0C0_C0C0, "copy: a frame of its own");
    clear(2);
}
