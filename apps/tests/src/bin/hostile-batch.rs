//! hostile-batch: `page_batch`'s FRESH and COPY records run out of budget
//! in the middle of a batch. The program gives a child two pages (one a
//! copy of its own bytes), puts the child in an account with room for two
//! frames more, and then sends it batches that need more: six FRESH
//! records (two apply, the third is refused with `NoMemory` and `rsi`/`rdx`
//! left at it), a COPY record replacing a mapped page (refused: the old
//! page stays mapped with its bytes), and a FRESH record 1 GiB away whose
//! page tables do not fit (refused: nothing mapped, no table made). After
//! each refusal the account stays at its limit, the child's table row
//! counts exactly the frames and tables of what was applied, and the page
//! refused is not mapped: nothing leaked, nothing half-mapped. Once two
//! pages are unmapped, the refused copy and a refused fresh record apply
//! and are charged once each (the replaced frame goes back).
#![no_std]
#![no_main]

use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::abi::{Call, Error, MapEntry};
use oxok_libos::{Args, exposed, println, process, sys};
use oxok_tests::{Checks, mem};

oxok_libos::main!(main);

/// Where the child's pages go.
const BASE: u64 = 0x1300_0000_0000;
/// The caller's source pages for copies.
const SRC: u64 = 0x1301_0000_0000;
const RW: u64 = pte::WRITABLE | pte::NO_EXECUTE;
const RECORD: u64 = core::mem::size_of::<MapEntry>() as u64;
const PATTERN: u64 = 0x0B5E_55ED_C0FF_EE00;

fn page(i: u64) -> u64 {
    BASE + i * PAGE_SIZE
}

/// Status, `rsi` and `rdx` after a raw `page_batch`.
fn batch(env: u64, records: &[MapEntry]) -> (u64, u64, u64) {
    let r = sys::raw(Call::page_batch.number(), [env, records.as_ptr() as u64, records.len() as u64, 0, 0, 0]);
    (r.status, r.values[1], r.values[2])
}

/// The first word of the child's page at `va`, or the refusal.
fn peek(child: u64, va: u64) -> Result<u64, Error> {
    let mut buf = [0u64; 512];
    sys::env_peek(child, va, buf.as_mut_ptr() as u64)?;
    Ok(buf[0])
}

/// The child's account (frames charged) and its row's frames and tables.
fn counts(child: u64, cid: u64) -> (u64, u32, u32) {
    let used = process::usage(child).map_or(u64::MAX, |u| u.frames);
    let row = exposed::env_entry(cid);
    (used, row.map_or(0, |r| r.frames), row.map_or(0, |r| r.tables))
}

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("hostile-batch");
    let Ok([child, cid]) = sys::env_create() else {
        println!("hostile-batch: FAIL env_create");
        return 1;
    };
    // An account of its own, so that its figures are the child's alone.
    t.expect(process::limit(child, 64, 1), Ok(()), "put the child in an account of its own");
    // Two source pages of the caller's own, with different bytes.
    let own = [MapEntry::fresh(SRC, RW), MapEntry::fresh(SRC + PAGE_SIZE, RW)];
    t.expect(batch(0, &own).0, 0, "map the caller's source pages");
    mem::write(SRC, PATTERN);
    mem::write(SRC + PAGE_SIZE, !PATTERN);
    let first = [MapEntry::fresh(page(0), RW), MapEntry::copy(page(1), SRC, RW)];
    t.expect(batch(child, &first).0, 0, "give the child a fresh page and a copy");
    t.expect(peek(child, page(1)), Ok(PATTERN), "the copy holds the source's bytes");
    let (used, frames, tables) = counts(child, cid);
    t.expect(process::limit(child, used + 2, 1), Ok(()), "limit the child to two frames more");

    // Six fresh pages, room for two: the third record is refused.
    let fresh: [MapEntry; 6] = core::array::from_fn(|i| MapEntry::fresh(page(2 + i as u64), RW));
    let (status, at, left) = batch(child, &fresh);
    println!("hostile-batch: six fresh records with room for two: status {status}, {left} left");
    t.expect((status, left), (Error::NoMemory.code(), 4), "refused at the third record");
    t.expect(at, fresh.as_ptr() as u64 + 2 * RECORD, "rsi at the refused record");
    t.check(peek(child, page(2)).is_ok() && peek(child, page(3)).is_ok(), "the two records before it applied");
    t.expect(peek(child, page(4)), Err(Error::NotFound), "the refused page is not mapped");
    t.expect(counts(child, cid), (used + 2, frames + 2, tables), "account and row count the two frames only");

    // A copy replacing a mapped page, with the account full: the old page
    // stays, bytes and all.
    let (status, _, left) = batch(child, &[MapEntry::copy(page(1), SRC + PAGE_SIZE, RW)]);
    t.expect((status, left), (Error::NoMemory.code(), 1), "a copy over a mapped page refused");
    t.expect(peek(child, page(1)), Ok(PATTERN), "the replaced page keeps its frame and bytes");
    t.expect(counts(child, cid), (used + 2, frames + 2, tables), "nothing charged for the refused copy");

    // A fresh page 1 GiB away: its page tables do not fit either.
    let far = BASE + (1 << 30);
    let (status, _, left) = batch(child, &[MapEntry::fresh(far, RW)]);
    t.expect((status, left), (Error::NoMemory.code(), 1), "a page needing new tables refused");
    t.expect(peek(child, far), Err(Error::NotFound), "nothing mapped there");
    t.expect(counts(child, cid), (used + 2, frames + 2, tables), "no table made or charged");

    // Once frames go back, the refused records apply.
    let unmap = [MapEntry::unmap(page(2)), MapEntry::unmap(page(3))];
    t.expect(batch(child, &unmap).0, 0, "unmap the two pages applied");
    t.expect(counts(child, cid), (used, frames, tables), "their frames went back");
    t.expect(batch(child, &[MapEntry::copy(page(1), SRC + PAGE_SIZE, RW)]).0, 0, "the refused copy applies");
    t.expect(peek(child, page(1)), Ok(!PATTERN), "the copy replaced the page");
    t.expect(counts(child, cid), (used, frames, tables), "the replaced frame went back");
    t.expect(batch(child, &fresh[2..3]).0, 0, "the refused fresh record applies");
    t.expect(counts(child, cid), (used + 1, frames + 1, tables), "charged once");
    t.expect(sys::env_destroy(child), Ok([]), "destroy the child");
    t.finish()
}
