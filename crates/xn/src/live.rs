//! Which registers a run may still read before it writes them: the live
//! registers before each instruction of a verified UDF.
//!
//! Two runs of one program that stand at the same instruction with the
//! same open loops and agree on the live registers take the same steps over
//! the same block: a register that is not live is written before any step
//! reads it. [`rerun`](crate::rerun) relies on that to take over the rest
//! of an earlier run when a change did not touch it.
//!
//! A verified program jumps only forward, never into a loop body nor past
//! the end of the innermost one it is in, so the loops open before an
//! instruction are the ones whose body contains it. Arriving at the end of
//! a body either goes round (the loop's index register written, then the
//! body's first instruction) or leaves the loop (and perhaps the one around
//! it, when that ends at the same place). Liveness is the usual backward
//! fixed point over those edges, taken as a may-read set: a superset of
//! what any run reads, which is the safe side.

use alloc::vec::Vec;

use oxok_abi::xn::REGS;

use crate::op::Op;

/// A loop of the program: its body `start..end` and index register.
#[derive(Clone, Copy)]
struct Body {
    start: usize,
    end: usize,
    idx: u8,
}

fn bit(r: u8) -> u8 {
    1 << (usize::from(r) % REGS)
}

/// The registers `op` reads and writes (its control flow aside).
fn uses_defs(op: Op) -> (u8, u8) {
    match op {
        Op::Li(d, _) => (0, bit(d)),
        Op::Mov(d, s)
        | Op::AddI(d, s, _)
        | Op::MulI(d, s, _)
        | Op::AndI(d, s, _)
        | Op::Shl(d, s, _)
        | Op::Shr(d, s, _)
        | Op::Load(_, d, s, _)
        | Op::Ld8(d, s, _)
        | Op::Ld16(d, s, _)
        | Op::Ld32(d, s, _)
        | Op::Ld64(d, s, _) => (bit(s), bit(d)),
        Op::Add(d, x, y)
        | Op::Sub(d, x, y)
        | Op::Mul(d, x, y)
        | Op::And(d, x, y)
        | Op::Or(d, x, y)
        | Op::Eq(d, x, y)
        | Op::Lt(d, x, y) => (bit(x) | bit(y), bit(d)),
        Op::Jz(r, _) | Op::Jnz(r, _) | Op::Prin(r, _) | Op::Size(r) => (bit(r), 0),
        Op::Ext(s, l, t) => (bit(s) | bit(l) | bit(t), 0),
        Op::Loop(idx, _, _) => (0, bit(idx)),
        Op::Halt => (0, 0),
    }
}

/// The live registers before each instruction of `ops` (bit `r` for
/// register `r`; one entry per instruction and one for the end), or
/// `None` without memory or for a loop with an empty body (which no
/// assembler writes; its runs are simply never taken over).
pub(crate) fn live(ops: &[Op]) -> Option<Vec<u8>> {
    let n = ops.len();
    let mut bodies: Vec<Body> = Vec::new();
    for (at, op) in ops.iter().enumerate() {
        if let Op::Loop(idx, _, end) = *op {
            let b = Body { start: at + 1, end: usize::from(end), idx };
            if b.start >= b.end {
                return None;
            }
            bodies.try_reserve(1).ok()?;
            bodies.push(b);
        }
    }
    let mut at = Vec::new();
    at.try_reserve_exact(n + 1).ok()?;
    at.resize(n + 1, 0u8);
    // Each round adds at least one register somewhere or ends: at most
    // 8 × (n + 1) rounds, in practice two or three.
    loop {
        let mut changed = false;
        for p in (0..n).rev() {
            let v = match ops[p] {
                Op::Halt => 0,
                Op::Jz(r, to) | Op::Jnz(r, to) => {
                    bit(r) | arrive(&at, &bodies, p, p + 1) | arrive(&at, &bodies, p, to as usize)
                }
                Op::Loop(idx, _, _) => at.get(p + 1).copied().unwrap_or(0) & !bit(idx),
                op => {
                    let (uses, defs) = uses_defs(op);
                    uses | (arrive(&at, &bodies, p, p + 1) & !defs)
                }
            };
            if at[p] | v != at[p] {
                at[p] |= v;
                changed = true;
            }
        }
        if !changed {
            return Some(at);
        }
    }
}

/// The live registers on arriving at `q` from the instruction at `from`:
/// past the end of each innermost open body that ends at `q`, either its
/// next pass or what follows it.
fn arrive(at: &[u8], bodies: &[Body], from: usize, q: usize) -> u8 {
    // A may-read set, so a union: what follows the outermost of them, and
    // each one's next pass (its index written first).
    let mut live = at.get(q).copied().unwrap_or(0);
    for b in bodies.iter().filter(|b| b.start <= from && from < b.end && b.end == q) {
        live |= at.get(b.start).copied().unwrap_or(0) & !bit(b.idx);
    }
    live
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_register_written_first_in_a_pass_is_not_live_at_its_start() {
        // loop r0 × 4 { r1 = r0 * 8; r2 = ld8 [r1]; jz r2 → end; ext r1 r2 r3 }; size r4
        let ops = [Op::Loop(0, 4, 5), Op::MulI(1, 0, 8), Op::Ld8(2, 1, 0), Op::Jz(2, 5), Op::Ext(1, 2, 3), Op::Size(4)];
        let l = live(&ops).unwrap();
        // At the body's start: r0 (the index), r3 and r4 (read later,
        // never written); not r1 or r2.
        assert_eq!(l[1], 0b1_1001);
        // Before the loop: r3 and r4 only (it writes r0).
        assert_eq!(l[0], 0b1_1000);
        assert_eq!(l[6], 0);
    }

    #[test]
    fn an_accumulator_stays_live_round_the_loop() {
        // loop r0 × 3 { r2 = ld8 [r0]; r3 = r3 + r2 }; size r3
        let ops = [Op::Loop(0, 3, 3), Op::Ld8(2, 0, 0), Op::Add(3, 3, 2), Op::Size(3)];
        let l = live(&ops).unwrap();
        assert_eq!(l[1], 0b1001);
    }

    #[test]
    fn an_empty_body_has_no_liveness() {
        assert_eq!(live(&[Op::Loop(0, 3, 1), Op::Halt]), None);
    }
}
