//! Attacks the runtime's vouching for pages by address (`oxok_rt::page`,
//! `oxok_rt::guest`): a program's own memory — a static in its image, a
//! heap allocation, its main stack — must never be handed out as a mapped
//! page or written by a guest copy; an unmapped, read-only or unaligned
//! page never; a page claimed writable never twice, nor read while it is;
//! a fixed page (checked once, then trusted) not before it is mapped.
//! Every refusal is checked, and that the memory aimed at is unchanged;
//! copies into a real page stop at its end. The program ends normally and
//! gives back every frame it took.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::boxed::Box;
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::layout::{PAGE_SIZE, SYSINFO, pte};
use oxok_libos::abi::{ANY_FRAME, Error};
use oxok_libos::rt::page::{FixedPage, PageRef, SharedPage, SharedRegion};
use oxok_libos::{Args, exposed, guest, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

/// Where this program maps its two test pages (unused by the libOS).
const VA: u64 = 0x5700_0000_0000;

#[repr(C, align(4096))]
struct Target([u8; 4096]);
static TARGET: Target = Target([0x5a; 4096]);
static WORD: AtomicU64 = AtomicU64::new(7);

fn main(_: Args) -> i32 {
    let mut t = Checks::new("hostile-rtpages");
    let heap = Box::new([0x33u8; 8192]);
    let stack = [0x44u8; 64];
    let own = [
        ("a static in the image", (&raw const TARGET) as u64),
        ("the heap", (heap.as_ptr() as u64).next_multiple_of(PAGE_SIZE)),
        ("the main stack", (stack.as_ptr() as u64) & !(PAGE_SIZE - 1)),
        ("the program's code", (main as *const () as u64) & !(PAGE_SIZE - 1)),
    ];
    for (what, va) in own {
        t.check(SharedPage::writable(va).is_none(), &alloc::format!("{what}: no writable shared page"));
        t.check(SharedPage::readable(va).is_none(), &alloc::format!("{what}: no readable shared page"));
        t.check(SharedRegion::readable(va, 1).is_none(), &alloc::format!("{what}: no shared region"));
        t.expect(PageRef::claim(va, true).err(), Some(Error::BadAddress), &alloc::format!("{what}: no writable claim"));
        t.expect(PageRef::claim(va, false).err(), Some(Error::BadAddress), &alloc::format!("{what}: no claim"));
        t.expect(guest::copy_out(va, &[0xee; 16]), Err(Error::BadAddress), &alloc::format!("{what}: no guest write"));
        let mut buf = [0u8; 16];
        t.expect(guest::copy_in(va, &mut buf), Err(Error::BadAddress), &alloc::format!("{what}: no guest read"));
        t.expect(guest::zero(va, 16), Err(Error::BadAddress), &alloc::format!("{what}: no guest zeroing"));
        t.check(FixedPage::at(va).words().is_none(), &alloc::format!("{what}: no fixed page"));
    }
    // A range that only ends in the image is refused too.
    let word = (&raw const WORD) as u64;
    t.expect(guest::copy_out(word - 8, &[0xee; 16]), Err(Error::BadAddress), "a range running into a static");
    t.check(TARGET.0.iter().all(|&b| b == 0x5a), "the static is unchanged");
    t.expect(WORD.load(Ordering::Relaxed), 7, "the word is unchanged");
    t.check(heap.iter().all(|&b| b == 0x33) && stack.iter().all(|&b| b == 0x44), "heap and stack unchanged");
    // Exposed tables are read-only; unmapped and unaligned pages are none.
    t.check(SharedPage::writable(SYSINFO).is_none(), "the read-only sysinfo page is not writable");
    t.check(SharedPage::writable(VA).is_none() && SharedPage::readable(VA).is_none(), "an unmapped page is none");
    t.expect(PageRef::claim(VA, false).err(), Some(Error::BadAddress), "an unmapped page cannot be claimed");
    // A fixed page is trusted only once it was found mapped: asked before,
    // it is none (and stays unchecked); asked after the mapping below, it
    // is the page.
    static FIXED: FixedPage = FixedPage::at(VA);
    t.check(FIXED.words().is_none(), "an unmapped fixed page is none");

    // Real pages (the first two for shared pages, all for claims).
    let mut slots = [0u64; 10];
    for (i, slot) in slots.iter_mut().enumerate() {
        let Ok([s, _]) = sys::frame_alloc(ANY_FRAME) else {
            t.check(false, "frame_alloc");
            return t.finish();
        };
        *slot = s;
        let mapped = sys::page_map(0, s, VA + i as u64 * PAGE_SIZE, pte::WRITABLE | pte::NO_EXECUTE);
        t.check(mapped.is_ok(), "page_map");
    }
    t.check(SharedPage::writable(VA + 8).is_none(), "an unaligned address is none");
    t.check(FixedPage::at(VA + 8).words().is_none(), "an unaligned fixed page is none");
    t.check(FIXED.words().is_some_and(|w| w.as_ptr() as u64 == VA), "the fixed page once mapped");
    match (SharedPage::writable(VA), SharedPage::writable(VA + PAGE_SIZE)) {
        (Some(first), Some(second)) => {
            // Copies are clipped at the page's end: the next page stays 0.
            first.copy_in(4090, &[0xab; 100]);
            let mut tail = [0u8; 6];
            first.copy_out(4090, &mut tail);
            t.expect(tail, [0xab; 6], "a copy in writes up to the page's end");
            let mut next = [0xffu8; 16];
            second.copy_out(0, &mut next);
            t.expect(next, [0; 16], "and not a byte beyond");
            let mut far = [0x11u8; 8];
            first.copy_out(usize::MAX, &mut far);
            t.expect(far, [0x11; 8], "a copy out from past the end copies nothing");
            first.words()[0].store(42, Ordering::Relaxed);
            t.expect(second.words()[0].load(Ordering::Relaxed), 0, "words stay in their page");
        }
        _ => t.check(false, "the mapped pages are shared pages"),
    }
    // Claims behave like borrows.
    match PageRef::claim(VA, true) {
        Ok(mut w) => {
            t.expect(PageRef::claim(VA, true).err(), Some(Error::Busy), "a second writable claim is refused");
            t.expect(
                PageRef::claim(VA, false).err(),
                Some(Error::Busy),
                "a read claim beside a writable one is refused",
            );
            if let Some(b) = w.bytes_mut() {
                b[0] = 9;
            }
            drop(w);
            let (r1, r2) = (PageRef::claim(VA, false), PageRef::claim(VA, false));
            t.check(r1.is_ok() && r2.is_ok(), "read claims share");
            t.expect(r1.as_ref().map(|r| r.bytes()[0]).ok(), Some(9), "the write is seen");
            t.expect(PageRef::claim(VA, true).err(), Some(Error::Busy), "no writable claim while read");
            t.check(r1.is_ok_and(|mut r| r.bytes_mut().is_none()), "a read claim gives no bytes to write");
            drop(r2);
            t.check(PageRef::claim(VA, true).is_ok(), "claims end with their values");
        }
        Err(e) => t.check(false, &alloc::format!("claim of a mapped page: {e:?}")),
    }
    // More claims at once than the runtime's small table holds: each still
    // counts, and each ends with its value.
    let pages = slots.len() as u64;
    let reads: alloc::vec::Vec<_> = (0..pages).map(|i| PageRef::claim(VA + i * PAGE_SIZE, false)).collect();
    t.check(reads.iter().all(Result::is_ok), "ten read claims at once");
    for i in [0, pages - 1] {
        let busy = PageRef::claim(VA + i * PAGE_SIZE, true).err();
        t.expect(busy, Some(Error::Busy), &alloc::format!("page {i} of ten read-claimed: no writable claim"));
    }
    drop(reads);
    let writes: alloc::vec::Vec<_> = (0..pages).map(|i| PageRef::claim(VA + i * PAGE_SIZE, true)).collect();
    t.check(writes.iter().all(Result::is_ok), "every read claim ended: ten writable claims");
    t.expect(PageRef::claim(VA + (pages - 1) * PAGE_SIZE, false).err(), Some(Error::Busy), "and they exclude readers");
    drop(writes);
    // Read-only now: no writable page, no writable claim, no guest write.
    let _ = sys::page_protect(0, VA, pte::NO_EXECUTE, oxok_libos::abi::PROTECT);
    t.check(SharedPage::writable(VA).is_none(), "a read-only page is not a writable shared page");
    t.expect(PageRef::claim(VA, true).err(), Some(Error::BadAddress), "nor claimed writable");
    t.expect(guest::copy_out(VA, &[1]), Err(Error::BadAddress), "nor written as guest memory");
    // A range is readable only if every page of it is: a hole in the
    // middle of an aligned run of eight, or at the end, makes it not.
    let end = VA + pages * PAGE_SIZE;
    t.check(exposed::all_readable(VA, end), "ten mapped pages are all readable");
    t.check(!exposed::all_readable(VA, end + PAGE_SIZE), "nor with the unmapped page after them");
    let _ = sys::page_unmap(0, VA + 3 * PAGE_SIZE);
    t.check(!exposed::all_readable(VA, end), "a hole in an aligned run of eight: not all readable");
    t.check(
        exposed::all_readable(VA, VA + 3 * PAGE_SIZE) && exposed::all_readable(VA + 4 * PAGE_SIZE, end),
        "the pages on either side of the hole are",
    );
    for (i, &s) in slots.iter().enumerate() {
        let _ = sys::page_unmap(0, VA + i as u64 * PAGE_SIZE);
        t.check(sys::frame_free(s).is_ok(), "frame_free");
    }
    println!("hostile-rtpages: the runtime refused every page of the program's own memory");
    t.finish()
}
