//! Fuzzing: mutated, random and structured inputs. The verifier never
//! panics and always agrees with the reference model; every accepted
//! program evaluates within its bound and agrees with the reference
//! evaluator.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::{Memory, Rng, bytes_of, model_eval, model_verify};
use oxok_abi::pred::{INSN_SIZE, MAX_BYTES, MAX_INSNS};
use oxok_pred::{EvalError, disassemble, verify};

/// Verifies `bytes`, compares with the model, and when accepted evaluates
/// it a few times against random memory and parameters, checking the cost
/// bound and the model. Returns whether it was accepted.
fn check(bytes: &[u8], rng: &mut Rng) -> bool {
    let got = verify(bytes);
    let want = model_verify(bytes);
    assert_eq!(
        got.as_ref().map(|_| ()).map_err(|e| (e.code(), e.at().unwrap_or(0))),
        want,
        "verifier and model disagree:\n{}",
        disassemble(bytes)
    );
    // The disassembler copes with anything.
    let text = format!("{}", disassemble(bytes));
    assert!(text.ends_with("; ok\n") == got.is_ok());
    let Ok(program) = got else { return false };
    assert!(program.len() <= MAX_INSNS && program.len() * INSN_SIZE == bytes.len());
    for round in 0..3 {
        let params = rng.params();
        let mut mem = Memory::new(rng.next());
        mem.dirty_high_bits = round == 1;
        if round == 2 {
            mem.refused = common::ADDRS[..rng.below(4) as usize].to_vec();
        }
        let (result, steps) = program.eval_counted(&params, &mut |a, s| mem.read(a, s));
        assert!(steps <= program.len(), "{steps} steps for {} instructions", program.len());
        assert!(steps >= 1);
        assert!(mem.reads.len() <= program.max_reads());
        assert!(mem.reads.iter().all(|&(_, s)| [1, 2, 4, 8].contains(&s)));
        let mut model_mem = Memory { reads: Vec::new(), refused: mem.refused.clone(), ..Memory::new(mem.seed) };
        model_mem.dirty_high_bits = mem.dirty_high_bits;
        let model = model_eval(bytes, &params, &mut |a, s| model_mem.read(a, s));
        assert_eq!(result, model.map_err(EvalError::BadRead), "\n{program}");
        // The same reads, in the same order: short-circuiting matches too.
        assert_eq!(mem.reads, model_mem.reads);
    }
    true
}

#[test]
fn every_byte_of_valid_programs_mutated_to_every_value() {
    let mut rng = Rng::new(0x5eed);
    let mut accepted = 0;
    let mut total = 0;
    for _ in 0..12 {
        let max = 2 + rng.below(10) as usize;
        let seed = common::program(&mut rng, max);
        let original = seed.bytes().to_vec();
        assert!(check(&original, &mut rng));
        for pos in 0..original.len() {
            for value in 0..=255u8 {
                let mut bytes = original.clone();
                bytes[pos] = value;
                total += 1;
                accepted += usize::from(check(&bytes, &mut rng));
            }
        }
    }
    // Both outcomes are exercised heavily.
    assert!(accepted > total / 20 && accepted < total, "{accepted} of {total}");
}

#[test]
fn every_prefix_and_every_removed_instruction() {
    let mut rng = Rng::new(99);
    for _ in 0..200 {
        let max = 2 + rng.below(MAX_INSNS as u64 - 1) as usize;
        let b = common::program(&mut rng, max);
        let bytes = b.bytes();
        for len in 0..=bytes.len() {
            check(&bytes[..len], &mut rng);
        }
        for i in 0..bytes.len() / INSN_SIZE {
            let mut cut = bytes[..i * INSN_SIZE].to_vec();
            cut.extend_from_slice(&bytes[(i + 1) * INSN_SIZE..]);
            check(&cut, &mut rng);
        }
    }
}

#[test]
fn random_raw_instruction_sequences() {
    let mut rng = Rng::new(1234);
    let mut accepted = 0;
    for _ in 0..100_000 {
        let n = 1 + rng.below(MAX_INSNS as u64 + 2) as usize;
        let raws: Vec<_> = (0..n).map(|_| common::raw_insn(&mut rng)).collect();
        accepted += usize::from(check(&bytes_of(&raws), &mut rng));
    }
    assert!(accepted > 0);
}

#[test]
fn random_bytes_of_random_lengths() {
    let mut rng = Rng::new(42);
    for _ in 0..20_000 {
        let len = rng.below(MAX_BYTES as u64 + 80) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| rng.byte()).collect();
        check(&bytes, &mut rng);
    }
}

#[test]
fn structured_programs_agree_with_the_model() {
    let mut rng = Rng::new(2024);
    for _ in 0..20_000 {
        let max = 2 + rng.below(MAX_INSNS as u64 - 1) as usize;
        let b = common::program(&mut rng, max);
        assert!(check(b.bytes(), &mut rng), "\n{}", disassemble(b.bytes()));
    }
}

#[test]
fn random_programs_come_out_every_way() {
    // Guards the other tests against a memory model that makes every
    // predicate true (or false): all three outcomes are common.
    let mut rng = Rng::new(77);
    let mut seen = [0usize; 3];
    for _ in 0..10_000 {
        let max = 2 + rng.below(20) as usize;
        let program = verify(common::program(&mut rng, max).bytes()).unwrap();
        let mut mem = Memory::new(rng.next());
        mem.refused = common::ADDRS[..rng.below(3) as usize].to_vec();
        let r = program.eval(&rng.params(), &mut |a, s| mem.read(a, s));
        seen[match r {
            Ok(true) => 0,
            Ok(false) => 1,
            Err(_) => 2,
        }] += 1;
    }
    assert!(seen.iter().all(|&n| n > 1000), "{seen:?}");
}

#[test]
fn longest_programs_stay_within_the_bound() {
    // 64 instructions that all execute: one clause of loads and true terms.
    let mut rng = Rng::new(5);
    let mut b = oxok_pred::Builder::new();
    for i in 0..MAX_INSNS / 2 {
        b.load_u64(0x1000 + 8 * i as u64).ge_imm(0);
    }
    let program = verify(b.build().unwrap().as_bytes()).unwrap();
    let mut mem = Memory::new(rng.next());
    let (r, steps) = program.eval_counted(&rng.params(), &mut |a, s| mem.read(a, s));
    assert_eq!(r, Ok(true));
    assert_eq!(steps, MAX_INSNS);
    assert_eq!(mem.reads.len(), MAX_INSNS / 2);
}
