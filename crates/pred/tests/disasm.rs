//! Disassembly text: exact for good programs, robust for garbage.

mod common;
use common::Rng;
#[allow(unused_imports)]
use common::RngExt as _;
use oxok_abi::pred::{INSN_SIZE, RawInsn};
use oxok_pred::{Builder, Operand, Size, disassemble, verify};

fn sample() -> Builder {
    let mut b = Builder::new();
    b.load_u64(0x7f80_8000_0010)
        .ge_param(0)
        .or()
        .load_param(1)
        .ne_imm(0)
        .load_at(Size::U16, 2, 8)
        .sub(Operand::mem(Size::U8, 0x2000))
        .and_imm(0xff)
        .test_imm(0x80);
    b
}

#[test]
fn program_text_is_exact() {
    let p = verify(sample().build().unwrap().as_bytes()).unwrap();
    let want = [
        " 0: ld u64 [0x7f8080000010]",
        " 1: ge p0",
        " 2: or",
        " 3: ld p1",
        " 4: ne 0x0",
        " 5: ld u16 [p2+0x8]",
        " 6: sub u8 [0x2000]",
        " 7: and 0xff",
        " 8: test 0x80",
        "",
    ]
    .join("\n");
    assert_eq!(format!("{p}"), want);
    assert_eq!(format!("{}", disassemble(sample().bytes())), format!("{want}; ok\n"));
}

#[test]
fn refused_bytes_are_described() {
    let mut bytes = sample().bytes().to_vec();
    bytes[4 * INSN_SIZE] = 0xee; // opcode of instruction 4
    bytes.extend_from_slice(&[1, 2, 3]);
    let text = format!("{}", disassemble(&bytes));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 9 + 1 + 1);
    assert_eq!(
        lines[4],
        " 4: .bad op=0xee size=0 flags=0x00 param=0 reserved=0x0 imm=0x0 ; insn 4: unknown opcode 0xee"
    );
    assert_eq!(lines[9], " 9: .trunc 3 bytes");
    assert_eq!(lines[10], "; rejected: 147 bytes, not a multiple of 16");
    assert_eq!(format!("{}", disassemble(&[])), "; rejected: empty predicate\n");
}

#[test]
fn structural_problems_show_in_the_verdict() {
    let b = Builder::new().load_u8(0).build().err().unwrap();
    let bytes = Builder::new().load_u8(0).bytes().to_vec();
    let text = format!("{}", disassemble(&bytes));
    assert_eq!(text, format!(" 0: ld u8 [0x0]\n; rejected: {b}\n"));
}

#[test]
fn garbage_never_panics_and_gives_a_line_per_instruction() {
    let mut rng = Rng::new(6);
    for _ in 0..5_000 {
        let len = rng.below(1200) as usize;
        let bytes: Vec<u8> = (0..len).map(|_| rng.byte()).collect();
        let text = format!("{}", disassemble(&bytes));
        let want = len / INSN_SIZE + usize::from(!len.is_multiple_of(INSN_SIZE)) + 1;
        assert_eq!(text.lines().count(), want);
    }
    let raw = RawInsn { op: 0xff, size: 0xff, flags: 0xff, param: 0xff, reserved: u32::MAX, imm: u64::MAX };
    let text = format!("{}", disassemble(&raw.to_bytes()));
    assert!(text.contains(".bad op=0xff"), "{text}");
}
