//! hostile-ptcharge: page tables are charged to the account whose mappings
//! made them. The program creates a child, puts it in an account of 48
//! frames, allocates one frame for it and maps that frame into the child
//! at up to 30,000 addresses 1 GiB apart — each needing new page-table
//! frames. The kernel must refuse with `NoMemory` once the tables exhaust
//! the 48 frames, with `account_info` and the child's table row counting
//! them and free frames falling by no more than the limit. (Once, free
//! frames fell by 60,059 while the account said 45 of 48.)
#![no_std]
#![no_main]

use oxok_libos::abi::{ANY_FRAME, Error};
use oxok_libos::process;
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

const BASE: u64 = 0x4000_0000_0000;
const GIB: u64 = 1 << 30;
const TRIES: u64 = 30_000;

fn main(_args: Args) -> i32 {
    let mut c = Checks::new("hostile-ptcharge");
    let limit = 48;
    let Ok([child, cid]) = sys::env_create() else {
        println!("hostile-ptcharge: FAIL env_create");
        return 1;
    };
    c.expect(process::limit(child, limit, 1), Ok(()), "limit the child to 48 frames");
    let free0 = exposed::free_frames().unwrap_or(0);
    let Ok([slot, _]) = sys::frame_alloc_for(child, ANY_FRAME) else {
        println!("hostile-ptcharge: FAIL frame_alloc_for");
        return 1;
    };
    let mut mapped = 0u64;
    let mut refusal = None;
    for i in 0..TRIES {
        match sys::page_map(child, slot, BASE + i * GIB, 0) {
            Ok(_) => mapped += 1,
            Err(e) => {
                refusal = Some(e);
                break;
            }
        }
    }
    let used = process::usage(child);
    let free1 = exposed::free_frames().unwrap_or(0);
    let row = exposed::env_entry(cid);
    println!(
        "hostile-ptcharge: {mapped} mappings 1 GiB apart, then {refusal:?}; account {:?} of {limit}; free frames fell by {}",
        used.map(|u| u.frames),
        free0.saturating_sub(free1)
    );
    c.expect(refusal, Some(Error::NoMemory), "refused with NoMemory");
    c.check(mapped < TRIES, "refused before 30,000");
    c.check(used.is_ok_and(|u| u.frames <= limit), "the account stays within its limit");
    c.check(used.is_ok_and(|u| u.frames >= limit - 2), "page tables are counted in the account");
    // Frames an environment is charged for itself: 1, or more with a kernel
    // stack per environment (the process execution model).
    let env_frames = exposed::sysinfo().map_or(1, |i| i.env_frames);
    c.check(
        used.is_ok_and(|u| row.is_some_and(|r| u64::from(r.frames) + u64::from(r.tables) + env_frames == u.frames)),
        "the table row counts them too",
    );
    // The machine-wide count also moves with the victim's and this
    // program's own few frames; the unbounded case fell by tens of
    // thousands.
    c.check(free0.saturating_sub(free1) <= limit + 32, "free frames fell by no more than the limit");
    c.expect(sys::env_destroy(child), Ok([]), "destroy the child");
    c.finish()
}
