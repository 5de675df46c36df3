//! Evaluation semantics, instruction by instruction, and against the
//! reference models.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::{Memory, Rng, model_dnf};
use oxok_pred::{Builder, Cmp, EvalError, Insn, Operand, PARAMS, Program, Size, verify};

const P0: [u64; PARAMS] = [0; PARAMS];

fn build(b: &mut Builder) -> Program {
    let code = b.build().unwrap_or_else(|e| panic!("{e}"));
    verify(code.as_bytes()).unwrap()
}

/// Evaluates with a memory that holds `word` everywhere.
fn eval_with(p: &Program, params: &[u64; PARAMS], word: u64) -> Result<bool, EvalError> {
    p.eval(params, &mut |_, size| Some(word & common::mask(size)))
}

#[test]
fn every_comparison_on_edge_values() {
    let edges = [0, 1, 2, 0x7fff_ffff_ffff_ffff, 0x8000_0000_0000_0000, u64::MAX - 1, u64::MAX];
    for cmp in Cmp::ALL {
        for &v in &edges {
            for &x in &edges {
                let want = match cmp {
                    Cmp::Eq => v == x,
                    Cmp::Ne => v != x,
                    Cmp::Lt => v < x,
                    Cmp::Le => v <= x,
                    Cmp::Gt => v > x,
                    Cmp::Ge => v >= x,
                    Cmp::Test => v & x != 0,
                };
                assert_eq!(cmp.holds(v, x), want);
                // Immediate, parameter and memory operands give the same answer.
                let imm = build(Builder::new().load(Operand::Imm(v)).cmp(cmp, Operand::Imm(x)));
                assert_eq!(eval_with(&imm, &P0, 0), Ok(want), "{cmp:?} {v:#x} {x:#x}");
                let mut params = P0;
                params[3] = x;
                let param = build(Builder::new().load_u64(0x1000).cmp(cmp, Operand::Param(3)));
                assert_eq!(eval_with(&param, &params, v), Ok(want));
                let mem = build(Builder::new().load_param(3).cmp(cmp, Operand::mem(Size::U64, 8)));
                params[3] = v;
                assert_eq!(eval_with(&mem, &params, x), Ok(want));
            }
        }
    }
}

#[test]
fn comparisons_are_unsigned() {
    let p = build(Builder::new().load(Operand::Imm(u64::MAX)).gt_imm(1));
    assert_eq!(eval_with(&p, &P0, 0), Ok(true));
    let p = build(Builder::new().load(Operand::Imm(1)).gt_imm(u64::MAX));
    assert_eq!(eval_with(&p, &P0, 0), Ok(false));
}

#[test]
fn loads_are_zero_extended_to_their_size() {
    for size in Size::ALL {
        let p = build(Builder::new().load(Operand::mem(size, 0x1000)).eq_imm(size.mask()));
        // Memory returns all ones, including bits above the size: the
        // evaluator keeps only `size` bytes.
        assert_eq!(p.eval(&P0, &mut |_, _| Some(u64::MAX)), Ok(true), "{size:?}");
        let mut asked = 0;
        p.eval(&P0, &mut |_, s| {
            asked = s;
            Some(0)
        })
        .unwrap();
        assert_eq!(asked, size.bytes());
    }
}

#[test]
fn and_and_sub() {
    // (word & 0xf0) == 0x30
    let p = build(Builder::new().load_u64(0).and_imm(0xf0).eq_imm(0x30));
    assert_eq!(eval_with(&p, &P0, 0x1234_5639), Ok(true));
    assert_eq!(eval_with(&p, &P0, 0x1234_5649), Ok(false));
    // Free-running ring counters: head - tail >= p0, across wraparound.
    let ring = build(Builder::new().load_u32(0x100).sub(Operand::mem(Size::U32, 0x104)).ge_param(0));
    let mut params = P0;
    params[0] = 16;
    let counters = |head: u64, tail: u64| move |a: u64, _| Some(if a == 0x100 { head } else { tail });
    assert_eq!(ring.eval(&params, &mut counters(116, 100)), Ok(true));
    assert_eq!(ring.eval(&params, &mut counters(115, 100)), Ok(false));
    // The u32 load zero-extends, the subtraction wraps in 64 bits.
    assert_eq!(ring.eval(&params, &mut counters(5, 0xffff_fff0)), Ok(true));
}

#[test]
fn comparisons_keep_the_value() {
    // 5 <= x <= 9
    let p = build(Builder::new().load_u8(0).ge_imm(5).le_imm(9));
    for x in 0..=255u64 {
        assert_eq!(eval_with(&p, &P0, x), Ok((5..=9).contains(&x)), "{x}");
    }
}

#[test]
fn memory_at_parameter_plus_offset_wraps() {
    let p = build(Builder::new().load_at(Size::U16, 7, 0x10).eq_imm(0xbeef));
    let mut params = P0;
    for base in [0u64, 0x1000, u64::MAX - 8, u64::MAX] {
        params[7] = base;
        let mut at = None;
        let r = p.eval(&params, &mut |a, _| {
            at = Some(a);
            Some(0xbeef)
        });
        assert_eq!(r, Ok(true));
        assert_eq!(at, Some(base.wrapping_add(0x10)));
    }
}

#[test]
fn dnf_or_of_ands() {
    // (a == 1 && b == 1) || (c == 1)
    let p = build(Builder::new().load_u8(0xa).eq_imm(1).load_u8(0xb).eq_imm(1).or().load_u8(0xc).eq_imm(1));
    for bits in 0..8u64 {
        let (a, b, c) = (bits & 1, bits >> 1 & 1, bits >> 2 & 1);
        let r = p.eval(&P0, &mut |addr, _| {
            Some(match addr {
                0xa => a,
                0xb => b,
                _ => c,
            })
        });
        assert_eq!(r, Ok((a == 1 && b == 1) || c == 1), "{a}{b}{c}");
    }
}

#[test]
fn short_circuit_skips_the_rest_of_a_failed_clause_and_stops_at_a_true_one() {
    let p = build(
        Builder::new()
            .load_u8(0x1)
            .eq_imm(1) // false: skip to the next clause
            .load_u8(0x2)
            .eq_imm(1)
            .or()
            .load_u8(0x3)
            .eq_imm(0) // true: done
            .or()
            .load_u8(0x4)
            .eq_imm(0),
    );
    let mut reads = Vec::new();
    let (r, steps) = p.eval_counted(&P0, &mut |a, _| {
        reads.push(a);
        Some(0)
    });
    assert_eq!(r, Ok(true));
    assert_eq!(reads, [0x1, 0x3]);
    // ld, eq (fails), ld, eq, or.
    assert_eq!(steps, 5);
}

#[test]
fn last_clause_failing_is_false() {
    // Clause 1 fails at once; clause 2 fails at its last term.
    let p = build(Builder::new().load_u8(1).eq_imm(1).or().load_u8(2).eq_imm(1).load_u8(3).eq_imm(1));
    let (r, steps) = p.eval_counted(&P0, &mut |a, _| Some(u64::from(a == 2)));
    assert_eq!(r, Ok(false));
    // ld, eq (fails), ld, eq, ld, eq (fails): the `or` is skipped over.
    assert_eq!(steps, 6);
    let (r, steps) = p.eval_counted(&P0, &mut |_, _| Some(0));
    assert_eq!((r, steps), (Ok(false), 4));
}

#[test]
fn parameters_change_the_outcome_without_reverifying() {
    // The Erlang fix: test 1 is switched by parameter 1 and compares the
    // word at parameter 2 with parameter 3.
    let p = build(Builder::new().load_param(1).ne_imm(0).load_at(Size::U64, 2, 0).ne_param(3));
    let mut params = P0;
    let mut mem = |a: u64, _| Some(a * 10);
    assert_eq!(p.eval(&params, &mut mem), Ok(false), "switched off");
    params[1] = 1;
    params[2] = 4;
    params[3] = 40;
    assert_eq!(p.eval(&params, &mut mem), Ok(false), "on, word equals the last value seen");
    params[3] = 39;
    assert_eq!(p.eval(&params, &mut mem), Ok(true), "on, word changed");
    params[2] = 5;
    params[3] = 50;
    assert_eq!(p.eval(&params, &mut mem), Ok(false), "pointed at another word");
}

#[test]
fn a_switched_off_test_reads_nothing() {
    let p = build(Builder::new().load_param(0).ne_imm(0).load_u64(0xdead).eq_imm(0));
    let r = p.eval(&P0, &mut |a, _| panic!("read {a:#x} of a dormant test"));
    assert_eq!(r, Ok(false));
}

#[test]
fn agrees_with_the_non_short_circuit_model() {
    let mut rng = Rng::new(31337);
    for _ in 0..20_000 {
        let max = 2 + rng.below(40) as usize;
        let p = verify(common::program(&mut rng, max).bytes()).unwrap();
        let params = rng.params();
        let mem = Memory::new(rng.next());
        let word = |a: u64, _: u8| mem.word(a);
        let want = model_dnf(p.insns(), &params, &word);
        assert_eq!(p.eval(&params, &mut |a, _| Some(mem.word(a))), Ok(want), "\n{p}");
    }
}

#[test]
fn evaluation_executes_each_instruction_at_most_once() {
    let mut rng = Rng::new(8);
    for _ in 0..5_000 {
        let max = 2 + rng.below(63) as usize;
        let p = verify(common::program(&mut rng, max).bytes()).unwrap();
        let mut mem = Memory::new(rng.next());
        let (_, steps) = p.eval_counted(&rng.params(), &mut |a, s| mem.read(a, s));
        assert!(steps <= p.len());
        assert!(mem.reads.len() <= p.max_reads());
        // Reading order follows program order: at most one read per insn.
        let reading = p.insns().iter().filter(|i| i.operand().is_some_and(|o| o.reads_memory())).count();
        assert_eq!(reading, p.max_reads());
    }
}

#[test]
fn program_accessors() {
    let p = build(Builder::new().load_u8(1).eq_imm(1).or().load_param(0).test_imm(4));
    assert_eq!(p.len(), 5);
    assert_eq!(p.clauses(), 2);
    assert_eq!(p.max_reads(), 1);
    assert_eq!(p.insns()[2], Insn::Or);
    assert_eq!(p.insns()[4], Insn::Cmp(Cmp::Test, Operand::Imm(4)));
    assert_eq!(format!("{p:?}").matches("Cmp").count(), 2);
}
