//! `owns` run again after a change says what a whole run says: on a
//! directory-shaped program, on ones whose registers carry from pass to
//! pass, and on random verified programs over random changes.

use alloc::vec;
use alloc::vec::Vec;

use oxok_abi::xn::{BLOCK_SIZE, op, rights};
use oxok_testrng::Rng;

use super::*;
use crate::{Asm, template};

const NBLOCKS: u64 = 1 << 16;
const TYPES: u32 = 3;

fn parse(owns: &Asm) -> Template {
    let acl = Asm::new().ld64(0, 7, 8).prin(0, rights::ALL);
    let size = Asm::new().li(0, 0).size(0);
    Template::parse(&template(owns, &acl, &size)).expect("verifies")
}

/// As C-FFS's directory `owns`: 31 records of 128 bytes after a 64-byte
/// header, a free record skipped, each record's extents up to the first
/// unused one, written out.
fn directory() -> Asm {
    const EXT_STEPS: u32 = 5;
    let mut a = Asm::new().repeat(0, 31, (3 + 8 * EXT_STEPS) as u8).muli(1, 0, 128).ld8(2, 1, 64).jz(2, 8 * EXT_STEPS);
    for k in 0..8u32 {
        let at = 128 + k * 8;
        a = a
            .ld16(5, 1, at + 4)
            .jz(5, (EXT_STEPS - 2) + (7 - k) * EXT_STEPS)
            .ld32(4, 1, at)
            .ld16(6, 1, at + 6)
            .ext(4, 5, 6);
    }
    a
}

/// Each record's extent starts where the last one ended: a register
/// carried from pass to pass, so the run never meets the old one again
/// after a change to a length.
fn chained() -> Asm {
    Asm::new()
        .li(3, 1000)
        .repeat(0, 31, 5)
        .muli(1, 0, 128)
        .ld8(2, 1, 64)
        .raw(op::ANDI, 2, 2, 0, 3)
        .ext(3, 2, 7)
        .add(3, 3, 2)
}

/// A record of `kind` with `n` extents of one block each at `start`.
fn put_record(b: &mut [u8; BLOCK_SIZE], i: usize, kind: u8, start: u32, n: usize) {
    let o = 64 + 128 * i;
    b[o..o + 128].fill(0);
    b[o] = kind;
    for k in 0..n {
        let e = o + 64 + 8 * k;
        b[e..e + 4].copy_from_slice(&(start + 2 * k as u32).to_le_bytes());
        b[e + 4..e + 6].copy_from_slice(&1u16.to_le_bytes());
        b[e + 6..e + 8].copy_from_slice(&(k as u16 % 2).to_le_bytes());
    }
}

fn directory_block(rng: &mut Rng) -> [u8; BLOCK_SIZE] {
    let mut b = [0u8; BLOCK_SIZE];
    for i in 0..31 {
        if rng.chance(3) {
            continue;
        }
        put_record(&mut b, i, 1, 100 + 20 * i as u32, rng.index(4));
    }
    b
}

/// One change as a file system makes them: a record made, grown, cut or
/// freed, a name or size written (bytes `owns` never reads), or a header
/// word; now and then two at once, or an extent another record holds.
fn change(rng: &mut Rng, b: &mut [u8; BLOCK_SIZE]) {
    for _ in 0..1 + usize::from(rng.chance(5)) {
        let i = rng.index(31);
        match rng.below(6) {
            0 => put_record(b, i, 1, 100 + 20 * i as u32, 1 + rng.index(7)),
            1 => put_record(b, i, 0, 0, 0),
            2 => put_record(b, i, 1, 100 + 20 * rng.index(31) as u32, rng.index(3)),
            3 => b[64 + 128 * i + 8] = rng.byte(),
            4 => b[rng.index(64)] = rng.byte(),
            _ => {
                let at = rng.index(BLOCK_SIZE);
                b[at] = rng.byte();
            }
        }
    }
}

/// Runs `t` over a chain of changes from `first`, keeping one run and
/// comparing each step with a whole run: the same result or refusal, the
/// same results and reads as a fresh run, and a refused step leaving the
/// run as it was. Returns how often the new run met the old one.
fn follow(
    t: &Template,
    first: [u8; BLOCK_SIZE],
    steps: usize,
    rng: &mut Rng,
    mut next: impl FnMut(&mut Rng, &mut [u8; BLOCK_SIZE]),
) -> usize {
    let mut old = first;
    let mut run = match t.owns_run(&old, NBLOCKS, TYPES) {
        Ok((owned, run)) => {
            assert_eq!(Ok(owned), t.owns(&old, NBLOCKS, TYPES));
            run
        }
        Err(e) => {
            assert_eq!(Err(e), t.owns(&old, NBLOCKS, TYPES));
            return 0;
        }
    };
    let mut met = 0;
    for _ in 0..steps {
        let mut new = old;
        next(rng, &mut new);
        let whole = t.owns(&new, NBLOCKS, TYPES);
        let kept = run.clone();
        match t.owns_again(&mut run, &old, &new, NBLOCKS, TYPES) {
            Ok((owned, m)) => {
                assert!(owned_is_none_only_when_unread(&kept, &old, &new, owned.is_none()));
                let said = owned.map_or_else(|| t.owns(&old, NBLOCKS, TYPES), Ok);
                assert_eq!(said, whole);
                met += usize::from(m.is_some());
                let (_, fresh) = t.owns_run(&new, NBLOCKS, TYPES).expect("a whole run agrees");
                assert_eq!(run.results, fresh.results, "results in the order emitted");
                let mut union = run.reads;
                union.add(&fresh.reads);
                assert_eq!(union, run.reads, "every word a fresh run reads");
                assert_eq!(run.marks.len(), fresh.marks.len());
                for (a, b) in run.marks.iter().zip(&fresh.marks) {
                    let live = t.owns.live_at(&b.at).expect("liveness known");
                    assert!(a.at.same_course(&b.at, live), "{a:?} against {b:?}");
                    assert_eq!((a.emitted, a.reads), (b.emitted, b.reads));
                }
                old = new;
            }
            Err(e) => {
                assert_eq!(Err(e), whole);
                assert_eq!(run, kept, "a refused run again changes nothing");
            }
        }
    }
    met
}

/// `None` (the old result stands) exactly when the two blocks agree on
/// every word the run read.
fn owned_is_none_only_when_unread(run: &OwnsRun, old: &[u8; BLOCK_SIZE], new: &[u8; BLOCK_SIZE], none: bool) -> bool {
    none == run.marks.iter().all(|m| m.reads.same_on(old, new))
}

#[test]
fn a_directory_change_runs_again_to_what_a_whole_run_says() {
    let t = parse(&directory());
    let mut rng = Rng::new(17);
    let mut met = 0;
    for _ in 0..60 {
        let b = directory_block(&mut rng);
        met += follow(&t, b, 40, &mut rng, change);
    }
    assert!(met > 500, "the new run met the old one {met} times");
}

#[test]
fn a_register_carried_between_passes_keeps_the_run_going() {
    let t = parse(&chained());
    let mut rng = Rng::new(3);
    for _ in 0..40 {
        let b = directory_block(&mut rng);
        follow(&t, b, 30, &mut rng, change);
    }
}

/// Each pass's extent starts where the record before said: a register
/// written at the end of a pass and read at the start of the next, live
/// only round the loop.
fn left_for_the_next() -> Asm {
    Asm::new().repeat(0, 31, 5).muli(1, 0, 128).ld8(2, 1, 64).raw(op::ANDI, 2, 2, 0, 3).ext(3, 2, 7).ld16(3, 1, 128)
}

#[test]
fn a_value_left_for_the_next_pass_keeps_the_run_going() {
    let t = parse(&left_for_the_next());
    let mut rng = Rng::new(11);
    let mut b = [0u8; BLOCK_SIZE];
    for i in 0..31 {
        put_record(&mut b, i, 1, 100 + 20 * i as u32, 1);
    }
    // A record moved: its start is the next pass's extent.
    let moved = |rng: &mut Rng, b: &mut [u8; BLOCK_SIZE]| {
        let i = rng.index(31);
        put_record(b, i, 1, 1000 + 4 * rng.below(10_000) as u32, 1 + rng.index(2));
    };
    let met = follow(&t, b, 400, &mut rng, moved);
    assert!(met > 100, "the new run met the old one {met} times");
}

#[test]
fn a_change_to_the_first_record_meets_the_old_run_at_the_second() {
    let t = parse(&directory());
    let mut old = [0u8; BLOCK_SIZE];
    for i in 0..31 {
        put_record(&mut old, i, 1, 100 + 20 * i as u32, 1);
    }
    let (_, mut run) = t.owns_run(&old, NBLOCKS, TYPES).unwrap();
    assert_eq!(run.marks.len(), 32, "the start and one mark a pass");
    let mut new = old;
    put_record(&mut new, 0, 1, 100, 3);
    let (owned, met) = t.owns_again(&mut run, &old, &new, NBLOCKS, TYPES).unwrap();
    assert_eq!(met, Some(2));
    assert_eq!(owned.ok_or(()), t.owns(&new, NBLOCKS, TYPES).map_err(|_| ()));
    assert_eq!(run.results.len(), 33);
    assert_eq!(run.marks[2].emitted, 3);
}

#[test]
fn more_passes_than_marks_end_in_one_segment() {
    // 100 passes, one extent each: the marks stop at MAX_MARKS.
    let t = parse(&Asm::new().repeat(0, 100, 3).shl(1, 0, 3).ld8(2, 1, 0).ext(1, 2, 7));
    let mut rng = Rng::new(9);
    let mut b = [0u8; BLOCK_SIZE];
    for i in 0..100 {
        b[i * 8] = (i % 2) as u8;
    }
    let (_, run) = t.owns_run(&b, NBLOCKS, TYPES).unwrap();
    assert_eq!(run.marks.len(), MAX_MARKS);
    follow(&t, b, 200, &mut rng, |rng, b| b[8 * rng.index(100)] = rng.below(2) as u8);
}

/// A random verified program: straight code, forward jumps within its
/// body, loops nested two deep, loads from masked addresses, extents of
/// small lengths and types.
enum Piece {
    Code(Vec<(u8, u8, u8, u8, u32)>),
    Jump(bool, u8, usize),
    Loop(u8, u32, Vec<Piece>),
}

fn code(rng: &mut Rng, idx: Option<u8>) -> Vec<(u8, u8, u8, u8, u32)> {
    let r = |rng: &mut Rng| rng.below(8) as u8;
    match rng.below(9) {
        // A load from the pass's own place, as a record is read.
        8 if idx.is_some() => {
            let (d, t, i) = (r(rng), r(rng), idx.unwrap_or(0));
            vec![(op::MULI, t, i, 0, 8 * (1 + rng.below(4) as u32)), (op::ANDI, t, t, 0, 0x1f8), (op::LD64, d, t, 0, 0)]
        }
        0 => vec![(op::LI, r(rng), 0, 0, rng.below(5) as u32)],
        1 => vec![(op::ADD, r(rng), r(rng), r(rng), 0)],
        2 => vec![(op::MULI, r(rng), r(rng), 0, rng.below(130) as u32)],
        3 => vec![(op::EQ, r(rng), r(rng), r(rng), 0)],
        4 | 5 => {
            let (d, s, t) = (r(rng), r(rng), r(rng));
            let width = *rng.pick(&[op::LD8, op::LD16, op::LD32, op::LD64]);
            vec![(op::ANDI, t, s, 0, 0x1f8), (width, d, t, 0, rng.below(3) as u32 * 8)]
        }
        _ => {
            let (s, l, ty) = (r(rng), r(rng), r(rng));
            vec![(op::ANDI, l, l, 0, 3), (op::ANDI, ty, ty, 0, 3), (op::ANDI, s, s, 0, 0x3ff), (op::EXT, s, l, ty, 0)]
        }
    }
}

fn pieces(rng: &mut Rng, depth: usize, idx: Option<u8>) -> Vec<Piece> {
    let n = 1 + rng.index(6);
    let mut out = Vec::new();
    for i in 0..n {
        match rng.below(6) {
            0 if i + 1 < n => out.push(Piece::Jump(rng.chance(2), rng.below(8) as u8, 1 + rng.index(n - i))),
            1 if depth < 2 => {
                let i = rng.below(8) as u8;
                let mut body = pieces(rng, depth + 1, Some(i));
                // Often, as a file system's records are read: a pass that
                // first sets the registers it uses from its index.
                if rng.chance(3) {
                    let set = (0..8).filter(|&r| r != i).map(|r| (op::MULI, r, i, 0, 8 * (r as u32 + 1))).collect();
                    body.insert(0, Piece::Code(set));
                }
                out.push(Piece::Loop(i, 2 + rng.below(30) as u32, body));
            }
            _ => out.push(Piece::Code(code(rng, idx))),
        }
    }
    out
}

fn flat_len(p: &Piece) -> usize {
    match p {
        Piece::Code(c) => c.len(),
        Piece::Jump(..) => 1,
        Piece::Loop(_, _, body) => 1 + body.iter().map(flat_len).sum::<usize>(),
    }
}

fn assemble(mut a: Asm, ps: &[Piece]) -> Asm {
    for (i, p) in ps.iter().enumerate() {
        a = match p {
            Piece::Code(c) => c.iter().fold(a, |a, &(o, x, y, z, imm)| a.raw(o, x, y, z, imm)),
            // Over the next `k` pieces (or to the end of the body).
            Piece::Jump(zero, reg, k) => {
                let skip = ps.iter().skip(i + 1).take(*k).map(flat_len).sum::<usize>() as u32;
                if *zero { a.jz(*reg, skip) } else { a.jnz(*reg, skip) }
            }
            Piece::Loop(idx, count, body) => {
                let len = body.iter().map(flat_len).sum::<usize>() as u8;
                assemble(a.repeat(*idx, *count, len), body)
            }
        };
    }
    a
}

#[test]
fn random_programs_run_again_to_what_a_whole_run_says() {
    let mut rng = Rng::new(2026);
    let (mut programs, mut met) = (0, 0);
    while programs < 400 {
        let ps = pieces(&mut rng, 0, None);
        let Ok(t) = Template::parse(&template(
            &assemble(Asm::new(), &ps),
            &Asm::new().ld64(0, 7, 8).prin(0, rights::ALL),
            &Asm::new().size(0),
        )) else {
            continue;
        };
        programs += 1;
        let b: [u8; BLOCK_SIZE] = core::array::from_fn(|i| if i % 8 == 0 { rng.byte() & 7 } else { rng.byte() & 3 });
        met += follow(&t, b, 25, &mut rng, |rng, b| {
            // Where the loads reach, mostly.
            for _ in 0..1 + rng.index(3) {
                let reach = if rng.chance(8) { BLOCK_SIZE } else { 0x220 };
                let at = rng.index(reach);
                b[at] = rng.byte() & 7;
            }
        });
    }
    assert!(met > 150, "the new run met the old one {met} times");
}
