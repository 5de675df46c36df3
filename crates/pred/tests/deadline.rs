//! `Program::deadline`: pure deadlines recognised, everything else not,
//! and a recognised deadline agrees with evaluation at every tick.

use oxok_pred::{Builder, verify};

const WORD: u64 = 0x7f80_0000_1010;

fn program(b: &mut Builder) -> oxok_pred::Program {
    verify(b.build().expect("builds").as_bytes()).expect("verifies")
}

#[test]
fn deadlines_are_recognised_and_agree_with_evaluation() {
    let params = [0, 500, 0, 0, 0, 0, 0, 0];
    let cases = [
        (program(Builder::new().load_u64(WORD).ge_imm(300)), Some(300)),
        (program(Builder::new().load_u64(WORD).gt_imm(300)), Some(301)),
        (program(Builder::new().load_u64(WORD).ge_param(1)), Some(500)),
        (program(Builder::new().load_u64(WORD).ge_imm(700).or().load_u64(WORD).ge_param(1)), Some(500)),
    ];
    for (p, want) in cases {
        let got = p.deadline(&params, WORD);
        assert_eq!(got, want);
        let t = got.expect("a deadline");
        for now in [0, t.saturating_sub(1), t, t + 1, t + 1000] {
            let mut read = |a: u64, _: u8| (a == WORD).then_some(now);
            assert_eq!(p.eval(&params, &mut read), Ok(now >= t), "at {now}");
        }
    }
}

#[test]
fn anything_else_is_not_a_deadline() {
    let params = [0; 8];
    let others = [
        program(Builder::new().load_u64(WORD + 8).ge_imm(3)),
        program(Builder::new().load_u32(WORD).ge_imm(3)),
        program(Builder::new().load_u64(WORD).eq_imm(3)),
        program(Builder::new().load_u64(WORD).lt_imm(3)),
        program(Builder::new().load_u64(WORD).ge_imm(3).or().load_u8(0x2000).eq_imm(0)),
        program(Builder::new().load_u64(WORD).ge_imm(3).load_u64(WORD).le_imm(9)),
        program(Builder::new().load_u64(WORD).gt_imm(u64::MAX)),
    ];
    for p in others {
        assert_eq!(p.deadline(&params, WORD), None);
    }
}
