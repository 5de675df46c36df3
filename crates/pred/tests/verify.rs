//! Hostile input for the verifier: every way a program can be malformed,
//! each refused with the right reason and index.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::{bytes_of, encode, model_verify};
use oxok_abi::pred::{INSN_SIZE, MAX_BYTES, MAX_INSNS, RawInsn, kind, op, reject};
use oxok_pred::{Cmp, Insn, Operand, Size, VerifyError, verify};

const LD0: Insn = Insn::Load(Operand::Imm(0));
const EQ0: Insn = Insn::Cmp(Cmp::Eq, Operand::Imm(0));

/// `ld 0; eq 0` with instruction `at` replaced by `raw`.
fn with(at: usize, raw: RawInsn) -> Vec<u8> {
    let mut raws = vec![LD0.encode(), EQ0.encode()];
    raws[at] = raw;
    bytes_of(&raws)
}

fn err(bytes: &[u8]) -> VerifyError {
    let e = verify(bytes).expect_err("must be refused");
    // The reference model agrees on the reason and the place.
    let (code, at) = model_verify(bytes).expect_err("model must refuse too");
    assert_eq!(e.code(), code, "{e}");
    assert_eq!(e.at().unwrap_or(0), at, "{e}");
    e
}

#[test]
fn smallest_program_is_accepted() {
    let p = verify(&encode(&[LD0, EQ0])).unwrap();
    assert_eq!(p.len(), 2);
    assert_eq!(p.insns(), &[LD0, EQ0]);
    assert!(!p.is_empty());
    assert_eq!(p.clauses(), 1);
}

#[test]
fn empty_is_refused() {
    assert_eq!(err(&[]), VerifyError::Empty);
}

#[test]
fn every_truncated_length_is_refused() {
    let full = encode(&[LD0, EQ0].repeat(MAX_INSNS / 2));
    for len in 1..full.len() {
        let n = len / INSN_SIZE;
        if !len.is_multiple_of(INSN_SIZE) {
            assert_eq!(err(&full[..len]), VerifyError::Truncated { len });
        } else if n % 2 == 1 {
            // Whole instructions, cut after a `ld`: the clause dangles.
            assert_eq!(err(&full[..len]), VerifyError::NoComparison { at: n });
        } else {
            // Cut after a comparison: `ld; eq; ld; eq; ...` is one clause.
            assert_eq!(verify(&full[..len]).unwrap().len(), n);
        }
    }
}

#[test]
fn too_long_is_refused_before_decoding() {
    let max = encode(&[LD0, EQ0].repeat(MAX_INSNS / 2));
    assert_eq!(max.len(), MAX_BYTES);
    assert!(verify(&max).is_ok());
    for extra in [1, INSN_SIZE, 4096, 1 << 20] {
        let mut long = max.clone();
        long.resize(MAX_BYTES + extra, 0xff);
        assert_eq!(err(&long), VerifyError::TooLong { len: MAX_BYTES + extra });
    }
}

#[test]
fn every_unknown_opcode_is_refused() {
    let known = [op::LD, op::AND, op::SUB, op::EQ, op::NE, op::LT, op::LE, op::GT, op::GE, op::TEST, op::OR];
    for opc in 0..=255u8 {
        let bytes = with(1, RawInsn { op: opc, ..EQ0.encode() });
        match verify(&bytes) {
            Ok(_) => assert!(known.contains(&opc) && opc != op::OR, "{opc:#x}"),
            Err(VerifyError::BadOpcode { at: 1, op }) => assert!(!known.contains(&op)),
            Err(e) => assert!(known.contains(&opc), "{opc:#x}: {e}"),
        }
        assert_eq!(verify(&bytes).map(|_| ()).map_err(|e| (e.code(), e.at().unwrap_or(0))), model_verify(&bytes));
    }
}

#[test]
fn every_size_is_checked_for_every_kind() {
    for flags in [kind::IMM, kind::PARAM, kind::MEM, kind::MEM_PARAM] {
        for size in 0..=255u8 {
            let raw = RawInsn { op: op::LD, size, flags, param: 0, reserved: 0, imm: 0 };
            let ok = if flags >= kind::MEM { Size::from_bytes(size).is_some() } else { size == 0 };
            match verify(&with(0, raw)) {
                Ok(_) => assert!(ok, "flags {flags} size {size}"),
                Err(e) => {
                    assert!(!ok);
                    assert_eq!(e, VerifyError::BadSize { at: 0, size });
                }
            }
        }
    }
}

#[test]
fn every_unknown_flag_bit_is_refused() {
    for flags in 4..=255u8 {
        let raw = RawInsn { flags, ..EQ0.encode() };
        assert_eq!(err(&with(1, raw)), VerifyError::BadFlags { at: 1, flags });
    }
}

#[test]
fn every_out_of_range_parameter_is_refused() {
    for flags in [kind::PARAM, kind::MEM_PARAM] {
        let size = if flags == kind::MEM_PARAM { 8 } else { 0 };
        for param in 0..=255u8 {
            let raw = RawInsn { op: op::GE, size, flags, param, reserved: 0, imm: 0 };
            match verify(&with(1, raw)) {
                Ok(p) => {
                    assert!(param < 8);
                    assert_eq!(p.insns()[1].operand().unwrap().reads_memory(), flags == kind::MEM_PARAM);
                }
                Err(e) => {
                    assert!(param >= 8);
                    assert_eq!(e, VerifyError::BadParam { at: 1, param });
                }
            }
        }
    }
}

#[test]
fn unused_fields_must_be_zero() {
    // A parameter index on an operand that has no parameter.
    for flags in [kind::IMM, kind::MEM] {
        let size = if flags == kind::MEM { 4 } else { 0 };
        let raw = RawInsn { op: op::LD, size, flags, param: 1, reserved: 0, imm: 0 };
        assert_eq!(err(&with(0, raw)), VerifyError::Reserved { at: 0 });
    }
    // An immediate on a bare parameter.
    let raw = RawInsn { op: op::LD, size: 0, flags: kind::PARAM, param: 1, reserved: 0, imm: 1 };
    assert_eq!(err(&with(0, raw)), VerifyError::Reserved { at: 0 });
    // Any reserved byte.
    for byte in 0..4 {
        let raw = RawInsn { reserved: 1 << (8 * byte), ..EQ0.encode() };
        assert_eq!(err(&with(1, raw)), VerifyError::Reserved { at: 1 });
    }
}

#[test]
fn or_must_have_every_other_field_zero() {
    let or = Insn::Or.encode();
    let bad = [
        RawInsn { size: 8, ..or },
        RawInsn { flags: 1, ..or },
        RawInsn { param: 1, ..or },
        RawInsn { reserved: 1, ..or },
        RawInsn { imm: 1, ..or },
        RawInsn { imm: 1 << 63, ..or },
    ];
    for raw in bad {
        let bytes = bytes_of(&[LD0.encode(), EQ0.encode(), raw, LD0.encode(), EQ0.encode()]);
        assert_eq!(err(&bytes), VerifyError::Reserved { at: 2 });
    }
}

#[test]
fn empty_clauses_are_refused() {
    use Insn::Or;
    assert_eq!(err(&encode(&[Or])), VerifyError::EmptyClause { at: 0 });
    assert_eq!(err(&encode(&[Or, LD0, EQ0])), VerifyError::EmptyClause { at: 0 });
    assert_eq!(err(&encode(&[LD0, EQ0, Or, Or, LD0, EQ0])), VerifyError::EmptyClause { at: 3 });
    assert_eq!(err(&encode(&[LD0, EQ0, Or])), VerifyError::EmptyClause { at: 3 });
}

#[test]
fn the_value_must_be_loaded_in_each_clause() {
    let and = Insn::And(Operand::Imm(1));
    let sub = Insn::Sub(Operand::Param(0));
    for first in [EQ0, and, sub, Insn::Cmp(Cmp::Test, Operand::Imm(1))] {
        assert_eq!(err(&encode(&[first, EQ0])), VerifyError::NoValue { at: 0 });
    }
    // The value does not survive an `or`: a failed clause may stop early.
    assert_eq!(err(&encode(&[LD0, EQ0, Insn::Or, EQ0])), VerifyError::NoValue { at: 3 });
    assert_eq!(err(&encode(&[LD0, EQ0, Insn::Or, and, EQ0])), VerifyError::NoValue { at: 3 });
}

#[test]
fn clauses_must_end_with_a_comparison() {
    let and = Insn::And(Operand::Imm(1));
    assert_eq!(err(&encode(&[LD0])), VerifyError::NoComparison { at: 1 });
    assert_eq!(err(&encode(&[LD0, EQ0, LD0])), VerifyError::NoComparison { at: 3 });
    assert_eq!(err(&encode(&[LD0, EQ0, and])), VerifyError::NoComparison { at: 3 });
    assert_eq!(err(&encode(&[LD0, Insn::Or, LD0, EQ0])), VerifyError::NoComparison { at: 1 });
    assert_eq!(err(&encode(&[LD0, EQ0, LD0, Insn::Or, LD0, EQ0])), VerifyError::NoComparison { at: 3 });
}

#[test]
fn the_first_problem_is_reported() {
    // Instruction 1 has a bad opcode, instruction 3 a bad parameter.
    let bytes = bytes_of(&[
        LD0.encode(),
        RawInsn { op: 0xee, ..EQ0.encode() },
        LD0.encode(),
        RawInsn { op: op::EQ, flags: kind::PARAM, param: 9, ..RawInsn::default() },
    ]);
    assert_eq!(err(&bytes), VerifyError::BadOpcode { at: 1, op: 0xee });
}

#[test]
fn zeroed_memory_is_never_a_program() {
    for n in 1..=MAX_INSNS {
        assert_eq!(err(&vec![0; n * INSN_SIZE]), VerifyError::BadOpcode { at: 0, op: 0 });
    }
}

#[test]
fn error_codes_match_the_abi() {
    let cases = [
        (VerifyError::Empty, reject::EMPTY),
        (VerifyError::TooLong { len: 0 }, reject::TOO_LONG),
        (VerifyError::Truncated { len: 0 }, reject::TRUNCATED),
        (VerifyError::BadOpcode { at: 0, op: 0 }, reject::BAD_OPCODE),
        (VerifyError::BadSize { at: 0, size: 0 }, reject::BAD_SIZE),
        (VerifyError::BadFlags { at: 0, flags: 0 }, reject::BAD_FLAGS),
        (VerifyError::BadParam { at: 0, param: 0 }, reject::BAD_PARAM),
        (VerifyError::Reserved { at: 0 }, reject::RESERVED),
        (VerifyError::NoValue { at: 0 }, reject::NO_VALUE),
        (VerifyError::EmptyClause { at: 0 }, reject::EMPTY_CLAUSE),
        (VerifyError::NoComparison { at: 0 }, reject::NO_COMPARISON),
    ];
    for (e, code) in cases {
        assert_eq!(e.code(), code);
        assert!(!format!("{e}").is_empty());
    }
    assert_eq!(VerifyError::Empty.at(), None);
    assert_eq!(VerifyError::NoValue { at: 5 }.at(), Some(5));
}

#[test]
fn verify_accepts_what_encode_produces_and_round_trips() {
    let mut rng = common::Rng::new(7);
    for _ in 0..2000 {
        let max = 2 + rng.below(MAX_INSNS as u64 - 1) as usize;
        let b = common::program(&mut rng, max);
        let p = verify(b.bytes()).unwrap_or_else(|e| panic!("{e}\n{}", oxok_pred::disassemble(b.bytes())));
        assert_eq!(p.encode().as_bytes(), b.bytes());
        assert_eq!(verify(p.encode().as_bytes()).unwrap(), p);
        assert!(model_verify(b.bytes()).is_ok());
    }
}
