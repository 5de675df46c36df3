//! The builder: exact encodings, refusal of what the verifier would refuse,
//! overflow.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use oxok_abi::pred::{INSN_SIZE, MAX_INSNS, RawInsn, kind, op};
use oxok_pred::{Builder, Cmp, Code, Insn, Operand, Size, VerifyError, verify};

fn raw(bytes: &[u8], i: usize) -> RawInsn {
    RawInsn::from_bytes(bytes[i * INSN_SIZE..][..INSN_SIZE].try_into().unwrap())
}

#[test]
fn encodes_exactly_the_documented_fields() {
    let code = Builder::new()
        .load_u64(0x7f80_8000_0010)
        .ge_param(0)
        .or()
        .load_param(1)
        .ne_imm(0)
        .load_at(Size::U32, 2, 8)
        .test_imm(0x80)
        .build()
        .unwrap();
    let b = code.as_bytes();
    assert_eq!(b.len(), 7 * INSN_SIZE);
    assert_eq!(code.insn_count(), 7);
    let d = RawInsn::default();
    assert_eq!(raw(b, 0), RawInsn { op: op::LD, size: 8, flags: kind::MEM, imm: 0x7f80_8000_0010, ..d });
    assert_eq!(raw(b, 1), RawInsn { op: op::GE, flags: kind::PARAM, param: 0, ..d });
    assert_eq!(raw(b, 2), RawInsn { op: op::OR, ..d });
    assert_eq!(raw(b, 3), RawInsn { op: op::LD, flags: kind::PARAM, param: 1, ..d });
    assert_eq!(raw(b, 4), RawInsn { op: op::NE, flags: kind::IMM, imm: 0, ..d });
    assert_eq!(raw(b, 5), RawInsn { op: op::LD, size: 4, flags: kind::MEM_PARAM, param: 2, imm: 8, ..d });
    assert_eq!(raw(b, 6), RawInsn { op: op::TEST, imm: 0x80, ..d });
    // Little-endian, byte for byte.
    assert_eq!(&b[..16], &[1, 8, 2, 0, 0, 0, 0, 0, 0x10, 0, 0, 0x80, 0x80, 0x7f, 0, 0]);
}

#[test]
fn every_shorthand_emits_its_instruction() {
    let mut b = Builder::new();
    b.load_u8(1).load_u16(2).load_u32(3).load_u64(4);
    b.eq_imm(1).ne_imm(2).lt_imm(3).le_imm(4).gt_imm(5).ge_imm(6).test_imm(7);
    b.eq_param(0).ne_param(1).lt_param(2).le_param(3).gt_param(4).ge_param(5).test_param(6);
    let m = Operand::mem(Size::U8, 9);
    b.eq(m).ne(m).lt(m).le(m).gt(m).ge(m).test(m);
    b.and_imm(0xff).and(Operand::Param(7)).sub(m).eq_imm(0);
    let p = verify(b.build().unwrap().as_bytes()).unwrap();
    let i = p.insns();
    for (k, size) in Size::ALL.into_iter().enumerate() {
        assert_eq!(i[k], Insn::Load(Operand::mem(size, k as u64 + 1)));
    }
    for (k, cmp) in Cmp::ALL.into_iter().enumerate() {
        assert_eq!(i[4 + k], Insn::Cmp(cmp, Operand::Imm(k as u64 + 1)));
        assert_eq!(i[11 + k], Insn::Cmp(cmp, Operand::Param(k as u8)));
        assert_eq!(i[18 + k], Insn::Cmp(cmp, m));
    }
    assert_eq!(i[25], Insn::And(Operand::Imm(0xff)));
    assert_eq!(i[26], Insn::And(Operand::Param(7)));
    assert_eq!(i[27], Insn::Sub(m));
}

#[test]
fn build_refuses_what_verify_refuses() {
    assert_eq!(Builder::new().build(), Err(VerifyError::Empty));
    assert_eq!(Builder::new().eq_imm(0).build(), Err(VerifyError::NoValue { at: 0 }));
    assert_eq!(Builder::new().load_u8(0).build(), Err(VerifyError::NoComparison { at: 1 }));
    assert_eq!(Builder::new().load_u8(0).eq_imm(0).or().build(), Err(VerifyError::EmptyClause { at: 3 }));
    assert_eq!(Builder::new().load_param(8).eq_imm(0).build(), Err(VerifyError::BadParam { at: 0, param: 8 }));
    assert_eq!(
        Builder::new().load_u8(0).eq(Operand::at_param(Size::U8, 255, 0)).build(),
        Err(VerifyError::BadParam { at: 1, param: 255 })
    );
    // The unverified bytes are still there for hostile tests.
    assert_eq!(Builder::new().load_param(8).bytes().len(), INSN_SIZE);
}

#[test]
fn overflow_is_remembered_not_truncated() {
    let mut b = Builder::new();
    for _ in 0..MAX_INSNS / 2 {
        b.load_u8(0).eq_imm(0);
    }
    assert_eq!(b.len(), MAX_INSNS);
    assert!(b.build().is_ok());
    b.load_u8(0);
    b.eq_imm(0);
    assert_eq!(b.len(), MAX_INSNS + 2);
    assert_eq!(b.bytes().len(), MAX_INSNS * INSN_SIZE, "the buffer never grows past the maximum");
    assert_eq!(b.build(), Err(VerifyError::TooLong { len: (MAX_INSNS + 2) * INSN_SIZE }));
    // Thousands more do not panic either.
    for _ in 0..10_000 {
        b.or();
    }
    assert!(matches!(b.build(), Err(VerifyError::TooLong { .. })));
    b.clear();
    assert!(b.is_empty());
    assert_eq!(b.load_u8(0).eq_imm(0).build().unwrap().insn_count(), 2);
}

#[test]
fn builder_in_a_loop_like_select() {
    // One clause per watched descriptor: (switch on) && (head != last seen).
    let mut b = Builder::new();
    for fd in 0..4u8 {
        if fd > 0 {
            b.or();
        }
        b.load_param(fd).ne_imm(0).load_u64(0x1000 + 64 * u64::from(fd)).ne_param(4 + fd);
    }
    let p = verify(b.build().unwrap().as_bytes()).unwrap();
    assert_eq!(p.clauses(), 4);
    let mut params = [0; 8];
    let mut mem = |a: u64, _| Some(a);
    assert_eq!(p.eval(&params, &mut mem), Ok(false));
    params[2] = 1;
    params[6] = 0x1080;
    assert_eq!(p.eval(&params, &mut mem), Ok(false));
    params[6] = 0;
    assert_eq!(p.eval(&params, &mut mem), Ok(true));
}

#[test]
fn code_buffer() {
    let mut c = Code::new();
    assert!(c.as_bytes().is_empty());
    for k in 0..MAX_INSNS {
        assert!(c.push(Insn::Or.encode()), "{k}");
    }
    assert!(!c.push(Insn::Or.encode()));
    assert_eq!(c.insn_count(), MAX_INSNS);
    assert_eq!(Code::default().insn_count(), 0);
    assert!(format!("{c:?}").starts_with("Code"));
}

#[test]
fn encode_of_random_instructions_round_trips_through_decode() {
    let mut rng = common::Rng::new(3);
    for _ in 0..50_000 {
        let insn = match rng.below(5) {
            0 => Insn::Load(common::operand(&mut rng)),
            1 => Insn::And(common::operand(&mut rng)),
            2 => Insn::Sub(common::operand(&mut rng)),
            3 => Insn::Cmp(common::cmp(&mut rng), common::operand(&mut rng)),
            _ => Insn::Or,
        };
        assert_eq!(Insn::decode(insn.encode(), 0), Ok(insn));
    }
}
