//! Kernel self tests, run when the command line says `ktest`. Each prints
//! `ktest: NAME ... ok` or `... FAILED: why`, then a summary line.

use crate::kprintln;
use crate::mem::access::{KernelFrame, Mappable};
use crate::mem::addr::Pfn;
use crate::mem::paging::AddressSpace;
use crate::mem::{frame, user};
use oxok_abi::Error;
use oxok_abi::frames::{OWNER_FREE, OWNER_KERNEL};
use oxok_abi::layout::{USER_TOP, pte};

type TestResult = Result<(), &'static str>;
type Test = (&'static str, fn() -> TestResult);

fn check(cond: bool, why: &'static str) -> TestResult {
    if cond { Ok(()) } else { Err(why) }
}

/// Runs every test; returns (passed, failed).
pub fn run() -> (usize, usize) {
    let tests: &[Test] = &[
        ("frame_alloc_free_restores_count", frame_alloc_free),
        ("frame_alloc_specific", frame_alloc_specific),
        ("frame_generation_advances", frame_generation),
        ("map_translate_unmap", map_translate_unmap),
        ("map_refuses_kernel_and_unaligned", map_refuses),
        ("user_copy_checks_every_page", user_copy_checks),
        ("write_hint_follows_every_change", write_hint),
        ("read_hint_follows_every_change", read_hint),
        ("address_space_teardown_frees_tables", teardown_frees),
        ("teardown_finds_every_page_by_the_summaries", teardown_finds_every_page),
        ("rtc_dates_to_unix_time", rtc_dates),
        ("heap_class_lists_keep_a_bounded_amount", heap_lists_bounded),
        ("every_stack_has_an_unmapped_guard_below_it", stack_guards),
    ];
    let (mut passed, mut failed) = (0, 0);
    for (name, test) in tests {
        match test() {
            Ok(()) => {
                passed += 1;
                kprintln!("ktest: {name} ... ok");
            }
            Err(why) => {
                failed += 1;
                kprintln!("ktest: {name} ... FAILED: {why}");
            }
        }
    }
    kprintln!("ktest: {passed} passed, {failed} failed");
    (passed, failed)
}

fn free_count() -> usize {
    frame::with(|f| f.free_count())
}

fn frame_alloc_free() -> TestResult {
    let before = free_count();
    let a = frame::with(|f| f.alloc(OWNER_KERNEL)).ok_or("alloc failed")?;
    let b = frame::with(|f| f.alloc(OWNER_KERNEL)).ok_or("alloc failed")?;
    check(a != b, "same frame twice")?;
    check(free_count() == before - 2, "free count did not drop by 2")?;
    frame::with(|f| {
        f.free(a);
        f.free(b);
    });
    check(free_count() == before, "free count not restored")
}

fn frame_alloc_specific() -> TestResult {
    let a = frame::with(|f| f.alloc(OWNER_KERNEL)).ok_or("alloc failed")?;
    let pfn = a.pfn();
    check(frame::with(|f| f.alloc_at(pfn, OWNER_KERNEL)) == Err(Error::Busy), "taken frame handed out again")?;
    frame::with(|f| f.free(a));
    let again = frame::with(|f| f.alloc_at(pfn, OWNER_KERNEL)).map_err(|_| "specific frame refused")?;
    check(again == a, "wrong frame")?;
    check(
        frame::with(|f| f.alloc_at(Pfn::from_word(u64::MAX), OWNER_KERNEL)) == Err(Error::Invalid),
        "absurd frame number accepted",
    )?;
    check(frame::with(|f| f.alloc_at(Pfn::from_word(0), OWNER_KERNEL)).is_err(), "frame 0 (firmware) handed out")?;
    frame::with(|f| f.free(again));
    Ok(())
}

fn frame_generation() -> TestResult {
    let a = frame::with(|f| f.alloc(OWNER_KERNEL)).ok_or("alloc failed")?;
    let pfn = a.pfn();
    let g0 = frame::with(|f| f.entry(pfn).map(|e| e.generation)).ok_or("no entry")?;
    frame::with(|f| f.free(a));
    let (g1, owner) = frame::with(|f| f.entry(pfn).map(|e| (e.generation, e.owner))).ok_or("no entry")?;
    check(g1 == g0.wrapping_add(1), "generation did not advance")?;
    check(owner == OWNER_FREE, "freed frame still owned")
}

fn map_translate_unmap() -> TestResult {
    let mut space = AddressSpace::new().map_err(|_| "no space")?;
    let kf = KernelFrame::alloc().ok_or("alloc failed")?;
    let (pa, m) = (kf.pa(), Mappable::from(&kf));
    let va = 0x1234_5000;
    space.map(va, m, pte::WRITABLE).map_err(|_| "map failed")?;
    check(space.translate_user(va + 8, true) == Some(pa.offset(8)), "translation wrong")?;
    check(space.map(va, m, 0) == Err(Error::Exists), "double map accepted")?;
    check(space.unmap(va).is_some(), "unmap found nothing")?;
    check(space.translate_user(va, false).is_none(), "still mapped after unmap")?;
    space.map(va, m, 0).map_err(|_| "remap failed")?;
    check(space.translate_user(va, true).is_none(), "read-only page writable")?;
    check(space.translate_user(va, false) == Some(pa), "read-only page unreadable")?;
    space.destroy(|_, _| {});
    drop(kf);
    Ok(())
}

/// The remembered writable page (`AddressSpace::translate_hinted`) never
/// outlives a change: remapped to another frame, made read-only, unmapped,
/// or with another space's tables unlinked meanwhile.
fn write_hint() -> TestResult {
    let mut space = AddressSpace::new().map_err(|_| "no space")?;
    let (a, b) = (KernelFrame::alloc().ok_or("alloc failed")?, KernelFrame::alloc().ok_or("alloc failed")?);
    let va = 0x7000_0000;
    space.map(va, Mappable::from(&a), pte::WRITABLE).map_err(|_| "map failed")?;
    check(space.translate_hinted(va + 16) == Some(a.pa().offset(16)), "first translation wrong")?;
    check(space.translate_hinted(va + 24) == Some(a.pa().offset(24)), "hinted translation wrong")?;
    space.protect(va, 0).map_err(|_| "protect failed")?;
    check(space.translate_hinted(va).is_none(), "read-only page still writable")?;
    space.protect(va, pte::WRITABLE).map_err(|_| "protect failed")?;
    check(space.translate_hinted(va) == Some(a.pa()), "writable again not found")?;
    check(space.unmap(va).is_some(), "unmap found nothing")?;
    check(space.translate_hinted(va).is_none(), "unmapped page still writable")?;
    space.map(va, Mappable::from(&b), pte::WRITABLE).map_err(|_| "remap failed")?;
    check(space.translate_hinted(va) == Some(b.pa()), "remapped page names the old frame")?;
    let mut other = AddressSpace::new().map_err(|_| "no space")?;
    other.map(va, Mappable::from(&a), pte::WRITABLE).map_err(|_| "map failed")?;
    other.destroy(|_, _| {});
    check(space.translate_hinted(va + 8) == Some(b.pa().offset(8)), "wrong after another space's teardown")?;
    let (done, result) = space.protect_range(va, 1, 0, |_| Ok(()));
    check(done == 1 && result.is_ok(), "range protect failed")?;
    check(space.translate_hinted(va).is_none(), "range-protected page still writable")?;
    space.destroy(|_, _| {});
    drop((a, b));
    Ok(())
}

/// A wakeup predicate's remembered readable page
/// (`user::read_word_hinted`) reads what a full walk would, across an
/// unmapping, a remapping to another frame, a protection change and
/// another space's teardown.
fn read_hint() -> TestResult {
    use crate::mem::paging::PageHint;
    use crate::mem::user::{read_word, read_word_hinted};
    let mut space = AddressSpace::new().map_err(|_| "no space")?;
    let (a, b) = (KernelFrame::alloc().ok_or("alloc failed")?, KernelFrame::alloc().ok_or("alloc failed")?);
    a.write(16, &41u64.to_le_bytes());
    b.write(16, &7u64.to_le_bytes());
    let hint = core::cell::Cell::new(PageHint::NONE);
    let va = 0x7000_0000;
    let read = |space: &AddressSpace| {
        let hinted = read_word_hinted(space, &hint, va + 16, 8);
        (hinted == read_word(space, va + 16, 8)).then_some(hinted)
    };
    check(read(&space) == Some(None), "read before the map")?;
    space.map(va, Mappable::from(&a), 0).map_err(|_| "map failed")?;
    check(read(&space) == Some(Some(41)), "first read wrong")?;
    a.write(16, &42u64.to_le_bytes());
    check(read(&space) == Some(Some(42)), "hinted read missed a store")?;
    check(read_word_hinted(&space, &hint, va + 17, 8).is_none(), "unaligned read through the hint")?;
    space.protect(va, pte::WRITABLE).map_err(|_| "protect failed")?;
    check(read(&space) == Some(Some(42)), "wrong after a protection change")?;
    check(space.unmap(va).is_some(), "unmap found nothing")?;
    check(read(&space) == Some(None), "unmapped page still read")?;
    space.map(va, Mappable::from(&b), 0).map_err(|_| "remap failed")?;
    check(read(&space) == Some(Some(7)), "remapped page read from the old frame")?;
    let mut other = AddressSpace::new().map_err(|_| "no space")?;
    other.map(va, Mappable::from(&a), 0).map_err(|_| "map failed")?;
    other.destroy(|_, _| {});
    check(read(&space) == Some(Some(7)), "wrong after another space's teardown")?;
    space.destroy(|_, _| {});
    drop((a, b));
    Ok(())
}

fn map_refuses() -> TestResult {
    let mut space = AddressSpace::new().map_err(|_| "no space")?;
    let kf = KernelFrame::alloc().ok_or("alloc failed")?;
    let m = Mappable::from(&kf);
    check(space.map(USER_TOP, m, 0) == Err(Error::BadAddress), "mapped at USER_TOP")?;
    check(space.map(0xffff_8000_0000_0000, m, 0) == Err(Error::BadAddress), "mapped over the direct map")?;
    check(space.map(0xffff_ffff_8000_0000, m, 0) == Err(Error::BadAddress), "mapped over the kernel")?;
    check(space.map(0x1001, m, 0) == Err(Error::BadAddress), "unaligned accepted")?;
    // Kernel addresses are never user-translatable.
    check(space.translate_user(0xffff_ffff_8020_0000, false).is_none(), "kernel readable as user")?;
    space.destroy(|_, _| {});
    drop(kf);
    Ok(())
}

fn user_copy_checks() -> TestResult {
    let mut space = AddressSpace::new().map_err(|_| "no space")?;
    let kf = KernelFrame::alloc().ok_or("alloc failed")?;
    let m = Mappable::from(&kf);
    let va = 0x50_0000;
    space.map(va, m, pte::WRITABLE).map_err(|_| "map failed")?;
    user::copy_to_user(&space, va + 4093, b"abcdef").err().ok_or("write across into unmapped page accepted")?;
    let mut buf = [0u8; 4];
    user::copy_from_user(&space, va, &mut buf).map_err(|_| "read of mapped page failed")?;
    user::copy_to_user(&space, va, b"oxok").map_err(|_| "write of mapped page failed")?;
    user::copy_from_user(&space, va, &mut buf).map_err(|_| "read back failed")?;
    check(&buf == b"oxok", "data not copied")?;
    check(user::copy_from_user(&space, u64::MAX - 2, &mut buf).is_err(), "wrapping range accepted")?;
    space.destroy(|_, _| {});
    drop(kf);
    Ok(())
}

fn teardown_frees() -> TestResult {
    let before = free_count();
    let mut space = AddressSpace::new().map_err(|_| "no space")?;
    let kf = KernelFrame::alloc().ok_or("alloc failed")?;
    let m = Mappable::from(&kf);
    for i in 0..8u64 {
        space.map(0x4000_0000 + i * (1 << 21), m, 0).map_err(|_| "map failed")?;
    }
    let mut leaves = 0;
    space.destroy(|_, _| leaves += 1);
    drop(kf);
    check(leaves == 8, "teardown missed pages")?;
    check(free_count() == before, "page-table frames leaked")
}

/// Pages scattered over the user half (every summary span of every
/// level, some unmapped again): the teardown, which looks only where the
/// upper entries' summaries say, meets exactly the pages still mapped.
fn teardown_finds_every_page() -> TestResult {
    const PAGES: usize = 96;
    let mut space = AddressSpace::new().map_err(|_| "no space")?;
    let kf = KernelFrame::alloc().ok_or("alloc failed")?;
    let m = Mappable::from(&kf);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut vas = [0u64; PAGES];
    for (n, va) in vas.iter_mut().enumerate() {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        // Index n picks the span at each level, the seed the rest.
        let (i4, i3, i2, i1) = ((seed >> 20) % 200, (seed >> 30) % 512, (seed >> 40) % 512, (n as u64 * 5) % 512);
        *va = (i4 << 39) | (i3 << 30) | (i2 << 21) | (i1 << 12);
        if space.lookup(*va).is_some() {
            *va = 0;
            continue;
        }
        space.map(*va, m, 0).map_err(|_| "map failed")?;
    }
    // Every third page unmapped again: its span's bit stays set, harmlessly.
    for va in vas.iter_mut().step_by(3) {
        if *va != 0 {
            space.unmap(*va).ok_or("unmap found nothing")?;
            *va = 0;
        }
    }
    let mut met = 0;
    let mut stray = false;
    space.destroy(|va, _| {
        met += 1;
        stray |= !vas.contains(&va) || va == 0;
    });
    drop(kf);
    check(!stray, "teardown met a page that is not mapped")?;
    check(met == vas.iter().filter(|&&va| va != 0).count(), "teardown missed pages")
}

fn rtc_dates() -> TestResult {
    use crate::arch::rtc::{DateTime, decode, unix_seconds};
    let at =
        |year, month, day, hour, minute, second| unix_seconds(&DateTime { year, month, day, hour, minute, second });
    check(at(1970, 1, 1, 0, 0, 0) == 0, "epoch")?;
    check(at(1971, 1, 1, 0, 0, 0) == 365 * 86_400, "1971")?;
    check(at(2000, 3, 1, 0, 0, 0) == 951_868_800, "2000-03-01 (a leap century)")?;
    check(at(2026, 11, 24, 5, 13, 16) == 1_795_497_196, "2026-11-24 05:13:16")?;
    // BCD, 24-hour: 2026-11-24 17:05:09; the same in binary; 12-hour 5 PM.
    let bcd = decode([0x09, 0x05, 0x17, 0x24, 0x11, 0x26, 0x20], 0x02);
    check(bcd == Some(DateTime { year: 2026, month: 11, day: 24, hour: 17, minute: 5, second: 9 }), "BCD")?;
    check(decode([9, 5, 17, 24, 11, 26, 20], 0x06) == bcd, "binary")?;
    check(decode([0x09, 0x05, 0x85, 0x24, 0x11, 0x26, 0x20], 0x00) == bcd, "12-hour PM")?;
    check(decode([0, 0, 0, 0x32, 0x13, 0x26, 0x20], 0x02).is_none(), "month 13 refused")
}

/// Objects of one size made and freed, then of the next size, through
/// every class: what the class lists keep afterwards stays within their
/// bound, so the heap below has its room back (without the bound each
/// size's blocks would stay in its class: 8 MiB here).
fn heap_lists_bounded() -> TestResult {
    use crate::mem::heap;
    use alloc::vec::Vec;
    let before = heap::free_below();
    for size in (oxok_sizeclass::ALIGN..=oxok_sizeclass::MAX_SIZE).step_by(oxok_sizeclass::ALIGN) {
        let n = 128 * 1024 / size;
        check(heap::has_room(n * (size + 24)), "no room for the test")?;
        let objects: Vec<Vec<u8>> = (0..n).map(|_| Vec::with_capacity(size)).collect();
        drop(objects);
    }
    let kept = before.saturating_sub(heap::free_below());
    check(kept <= heap::LISTS_MAX, "the class lists kept more than their bound")
}

/// The kernel stack and each IST stack: the page below it unmapped, its
/// lowest and highest pages mapped, and the IST's tops where the stacks are.
fn stack_guards() -> TestResult {
    use crate::arch::stack::{GUARD_SIZE, IST_STACK_SIZE, KERNEL_STACK_SIZE, guard_of, guards, ist_tops};
    use crate::mem::paging::kernel_maps;
    for (i, (guard, name)) in guards().into_iter().enumerate() {
        let size = if i == 0 { KERNEL_STACK_SIZE } else { IST_STACK_SIZE } as u64;
        let bottom = guard + GUARD_SIZE as u64;
        check(!kernel_maps(guard) && !kernel_maps(bottom - 1), "a guard page is mapped")?;
        check(kernel_maps(bottom) && kernel_maps(bottom + size - 1), "a stack page is not mapped")?;
        check(guard_of(guard) == Some(name) && guard_of(bottom).is_none(), "a guard is named wrong")?;
        if i > 0 {
            check(ist_tops()[i - 1] == bottom + size, "an IST top is not its stack's top")?;
        }
    }
    Ok(())
}
