//! A predicate can never read memory its installer could not: every load
//! goes through the read callback, and a refused read never yields an
//! answer, least of all `Ok(true)`.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::{Memory, Rng};
use oxok_pred::{Builder, EvalError, PARAMS, Size, verify};

#[test]
fn a_refused_read_is_an_error_not_an_answer() {
    // `x != 0 || true-ish`: the refused read comes first and must not be
    // treated as a false term that lets the next clause answer.
    let p = verify(
        Builder::new()
            .load_u64(0xffff_8000_0000_0000)
            .ne_imm(0)
            .or()
            .load_param(0)
            .eq_imm(0)
            .build()
            .unwrap()
            .as_bytes(),
    )
    .unwrap();
    let r = p.eval(&[0; PARAMS], &mut |a, _| if a >= 0xffff_8000_0000_0000 { None } else { Some(0) });
    assert_eq!(r, Err(EvalError::BadRead(0xffff_8000_0000_0000)));
}

#[test]
fn the_address_reported_is_the_one_refused() {
    let p = verify(Builder::new().load_at(Size::U32, 5, 0x24).eq_imm(0).build().unwrap().as_bytes()).unwrap();
    let mut params = [0; PARAMS];
    params[5] = 0x7000;
    assert_eq!(p.eval(&params, &mut |_, _| None), Err(EvalError::BadRead(0x7024)));
    assert_eq!(format!("{}", EvalError::BadRead(0x7024)), "predicate read refused at 0x7024");
}

#[test]
fn a_predicate_reading_a_refused_address_never_returns_true() {
    let mut rng = Rng::new(0xbad);
    let mut refusals = 0;
    for _ in 0..50_000 {
        let max = 2 + rng.below(63) as usize;
        let p = verify(common::program(&mut rng, max).bytes()).unwrap();
        let mut mem = Memory::new(rng.next());
        // Refuse one to all of the addresses, and sometimes everything a
        // parameter may point at.
        let n = 1 + rng.below(common::ADDRS.len() as u64) as usize;
        mem.refused = common::ADDRS[..n].to_vec();
        let params = rng.params();
        mem.refused.extend(params.iter().flat_map(|&b| (0..4).map(move |k| b.wrapping_add(8 * k))));
        let r = p.eval(&params, &mut |a, s| mem.read(a, s));
        let refused: Vec<u64> = mem.reads.iter().map(|&(a, _)| a).filter(|a| mem.refused.contains(a)).collect();
        if refused.is_empty() {
            assert!(r.is_ok());
        } else {
            refusals += 1;
            // The first refusal ends the evaluation: it is the last read,
            // the only refused one, and the error names it.
            assert_eq!(refused.len(), 1);
            assert_eq!(mem.reads.last().map(|&(a, _)| a), Some(refused[0]));
            assert_eq!(r, Err(EvalError::BadRead(refused[0])));
        }
        assert!(refused.is_empty() || r.is_err(), "a refused read must leave no answer");
    }
    assert!(refusals > 10_000, "{refusals}");
}

#[test]
fn memory_is_only_reached_through_the_callback() {
    // Every address a random program names in memory operands (directly
    // or through parameters) is the only kind of address the callback sees.
    let mut rng = Rng::new(4);
    for _ in 0..5_000 {
        let max = 2 + rng.below(63) as usize;
        let p = verify(common::program(&mut rng, max).bytes()).unwrap();
        let params = rng.params();
        let mut allowed = Vec::new();
        for insn in p.insns() {
            match insn.operand() {
                Some(oxok_pred::Operand::Mem { addr, .. }) => allowed.push(addr),
                Some(oxok_pred::Operand::MemParam { param, offset, .. }) => {
                    allowed.push(params[param as usize].wrapping_add(offset))
                }
                _ => {}
            }
        }
        let mut mem = Memory::new(rng.next());
        let _ = p.eval(&params, &mut |a, s| mem.read(a, s));
        assert!(mem.reads.iter().all(|(a, _)| allowed.contains(a)));
    }
}

#[test]
fn a_callback_that_always_refuses_gets_nothing_but_errors_once_it_is_asked() {
    let mut rng = Rng::new(11);
    for _ in 0..5_000 {
        let max = 2 + rng.below(63) as usize;
        let p = verify(common::program(&mut rng, max).bytes()).unwrap();
        let mut asked = false;
        let r = p.eval(&rng.params(), &mut |_, _| {
            asked = true;
            None
        });
        // Either the answer came from parameters and immediates alone, or
        // the first read was refused and there is no answer.
        assert_eq!(asked, r.is_err());
        assert!(asked || p.max_reads() < p.len());
    }
}
