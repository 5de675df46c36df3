//! The UDF verifier and interpreter: what is accepted, what is refused and
//! why, and what a run computes.

use oxok_abi::xn::{BLOCK_SIZE, MAX_EXTENTS, MAX_INSNS, MAX_LOOP, MAX_PRINCIPALS, MAX_STEPS, func, op, reject, rights};
use oxok_testrng::Rng;
use oxok_xn::{Asm, Emit, Fault, ReadSet, Template, VerifyError, template, verify};

mod common;

fn run_all(a: &Asm, function: u8, block: &[u8; BLOCK_SIZE]) -> (Result<u64, Fault>, Vec<Emit>) {
    let udf = verify(a.bytes(), function).unwrap();
    let mut out = Vec::new();
    let r = udf.run(block, &mut |e| {
        out.push(e);
        Ok(())
    });
    (r, out)
}

#[test]
fn loops_run_their_constant_count_with_the_index() {
    // for i in 0..3 { for j in 0..2 { ext(i, j + 1, 0) } }
    let a = Asm::new().repeat(0, 3, 3).repeat(1, 2, 2).addi(2, 1, 1).ext(0, 2, 3);
    let (r, out) = run_all(&a, func::OWNS, &[0; BLOCK_SIZE]);
    let got: Vec<_> = out
        .iter()
        .map(|e| match *e {
            Emit::Extent { start, len, .. } => (start, len),
            _ => panic!(),
        })
        .collect();
    assert_eq!(got, [(0, 1), (0, 2), (1, 1), (1, 2), (2, 1), (2, 2)]);
    let worst = verify(a.bytes(), func::OWNS).unwrap().worst_steps();
    assert_eq!(worst, 1 + 3 * (1 + 2 * 2));
    assert_eq!(r, Ok(worst));
}

#[test]
fn loads_are_little_endian_and_jumps_skip_forward() {
    let mut b = [0u8; BLOCK_SIZE];
    b[100..108].copy_from_slice(&0x1122_3344_5566_7788u64.to_le_bytes());
    b[BLOCK_SIZE - 1] = 9;
    let a = Asm::new()
        .ld64(0, 7, 100)
        .ld32(1, 7, 100)
        .ld16(2, 7, 100)
        .ld8(3, 7, BLOCK_SIZE as u32 - 1)
        .jz(6, 1) // r6 == 0: skip the next
        .li(3, 77)
        .jnz(6, 1) // r6 == 0: no skip
        .li(4, 5)
        .size(0)
        .size(1)
        .size(2)
        .size(3)
        .size(4)
        .halt()
        .size(6);
    let (r, out) = run_all(&a, func::SIZE, &b);
    assert!(r.is_ok());
    assert_eq!(
        out,
        [Emit::Size(0x1122_3344_5566_7788), Emit::Size(0x5566_7788), Emit::Size(0x7788), Emit::Size(9), Emit::Size(5)]
    );
}

#[test]
fn a_jump_to_the_end_of_a_body_continues_the_loop() {
    // for i in 0..8 { if (i & 1) == 0 { continue } ext(i, 1, 0) }
    let a = Asm::new().li(2, 1).repeat(0, 8, 3).raw(op::ANDI, 1, 0, 0, 1).jz(1, 1).ext(0, 2, 3);
    let (_, out) = run_all(&a, func::OWNS, &[0; BLOCK_SIZE]);
    let starts: Vec<u64> = out
        .iter()
        .map(|e| match e {
            Emit::Extent { start, .. } => *start,
            _ => u64::MAX,
        })
        .collect();
    assert_eq!(starts, [1, 3, 5, 7]);
}

#[test]
fn a_read_outside_the_block_stops_the_run() {
    // The base comes from the block: 4095 + 8 bytes reaches past the end.
    let mut b = [0u8; BLOCK_SIZE];
    b[0..4].copy_from_slice(&4095u32.to_le_bytes());
    let a = Asm::new().ld32(0, 7, 0).ld64(1, 0, 0).li(2, 1).ext(1, 2, 3);
    let (r, out) = run_all(&a, func::OWNS, &b);
    assert_eq!(r, Err(Fault::OutOfBlock { at: 1, addr: 4095 }));
    assert!(out.is_empty());
    // A huge base wraps nowhere.
    b[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
    let a = Asm::new().ld32(0, 7, 0).muli(0, 0, u32::MAX).ld8(1, 0, 4000);
    assert!(matches!(run_all(&a, func::SIZE, &b).0, Err(Fault::OutOfBlock { at: 2, .. })));
}

#[test]
fn verifier_refusals_each_have_their_code() {
    let long = (0..=MAX_INSNS).fold(Asm::new(), |a, _| a.li(0, 0));
    let cases: Vec<(Asm, u8, VerifyError)> = vec![
        (Asm::new(), func::OWNS, VerifyError::Empty),
        (long, func::OWNS, VerifyError::TooLong { len: (MAX_INSNS + 1) * 8 }),
        (Asm::new().raw(0, 0, 0, 0, 0), func::OWNS, VerifyError::BadOpcode { at: 0, op: 0 }),
        (Asm::new().raw(0xee, 0, 0, 0, 0), func::OWNS, VerifyError::BadOpcode { at: 0, op: 0xee }),
        (Asm::new().li(8, 0), func::OWNS, VerifyError::BadRegister { at: 0, reg: 8 }),
        (Asm::new().li(0, 0).add(1, 2, 200), func::OWNS, VerifyError::BadRegister { at: 1, reg: 200 }),
        (Asm::new().raw(op::LI, 0, 1, 0, 0), func::OWNS, VerifyError::Reserved { at: 0 }),
        (Asm::new().raw(op::ADD, 0, 1, 2, 5), func::OWNS, VerifyError::Reserved { at: 0 }),
        (Asm::new().ld64(0, 7, BLOCK_SIZE as u32 - 7), func::OWNS, VerifyError::OutOfBlock { at: 0 }),
        (Asm::new().ld8(0, 7, u32::MAX), func::OWNS, VerifyError::OutOfBlock { at: 0 }),
        (Asm::new().jz(0, 0), func::OWNS, VerifyError::BadJump { at: 0 }),
        (Asm::new().jz(0, 2).li(0, 0), func::OWNS, VerifyError::BadJump { at: 0 }),
        (Asm::new().jz(0, u32::MAX), func::OWNS, VerifyError::BadJump { at: 0 }),
        // Out of a loop body: past its end.
        (Asm::new().repeat(0, 4, 1).jz(1, 1).li(2, 0), func::OWNS, VerifyError::BadJump { at: 1 }),
        // Into a loop body from before it.
        (Asm::new().jz(1, 2).repeat(0, 4, 2).li(2, 0).li(3, 0), func::OWNS, VerifyError::BadJump { at: 0 }),
        (Asm::new().repeat(0, 0, 1).li(1, 0), func::OWNS, VerifyError::BadLoop { at: 0 }),
        (Asm::new().repeat(0, MAX_LOOP + 1, 1).li(1, 0), func::OWNS, VerifyError::BadLoop { at: 0 }),
        (Asm::new().repeat(0, 2, 0).li(1, 0), func::OWNS, VerifyError::BadLoop { at: 0 }),
        (Asm::new().repeat(0, 2, 2).li(1, 0), func::OWNS, VerifyError::BadLoop { at: 0 }),
        // A body reaching past its enclosing body.
        (Asm::new().repeat(0, 2, 2).repeat(1, 2, 2).li(1, 0).li(2, 0), func::OWNS, VerifyError::BadLoop { at: 1 }),
        (
            Asm::new().repeat(0, 2, 4).repeat(1, 2, 3).repeat(2, 2, 2).repeat(3, 2, 1).li(4, 0),
            func::OWNS,
            VerifyError::TooDeep { at: 3 },
        ),
        (
            Asm::new().repeat(0, MAX_LOOP, 2).repeat(1, MAX_LOOP, 1).li(2, 0),
            func::OWNS,
            VerifyError::TooCostly { steps: 1 + MAX_LOOP as u64 * (1 + MAX_LOOP as u64) },
        ),
        (Asm::new().prin(0, rights::READ), func::OWNS, VerifyError::WrongFunction { at: 0 }),
        (Asm::new().size(0), func::ACL, VerifyError::WrongFunction { at: 0 }),
        (Asm::new().ext(0, 1, 2), func::SIZE, VerifyError::WrongFunction { at: 0 }),
        (Asm::new().prin(0, 4), func::ACL, VerifyError::Reserved { at: 0 }),
        (Asm::new().shl(0, 0, 64), func::OWNS, VerifyError::BadShift { at: 0 }),
    ];
    for (a, f, want) in cases {
        let got = verify(a.bytes(), f);
        assert_eq!(got.as_ref().err(), Some(&want), "{:?}", a.bytes());
        let code = want.code();
        assert!((reject::EMPTY..=reject::NO_MEMORY).contains(&code));
    }
    assert_eq!(verify(&[op::HALT, 0, 0, 0, 0, 0, 0], func::OWNS), Err(VerifyError::Truncated { len: 7 }));
}

#[test]
fn result_bounds_stop_the_run() {
    // MAX_EXTENTS + 1 one-block extents.
    let a = Asm::new().li(1, 1).repeat(0, MAX_EXTENTS as u32 + 1, 1).ext(0, 1, 2);
    let t = Template::parse(&template(&a, &Asm::new().halt(), &Asm::new().halt())).unwrap();
    assert_eq!(t.owns(&[0; BLOCK_SIZE], 1 << 20, 1), Err(oxok_xn::OwnsError::Fault(Fault::TooManyResults)));
    let acl = Asm::new().repeat(0, MAX_PRINCIPALS as u32 + 1, 1).prin(0, rights::READ);
    let t = Template::parse(&template(&Asm::new().halt(), &acl, &Asm::new().halt())).unwrap();
    assert_eq!(t.acl(&[0; BLOCK_SIZE]), Err(Fault::TooManyResults));
}

#[test]
fn templates_must_be_well_formed() {
    let good = template(&Asm::new().halt(), &Asm::new().halt(), &Asm::new().halt());
    assert!(Template::parse(&good).is_ok());
    let mut bad_magic = good.clone();
    bad_magic[0] ^= 1;
    let zero_acl = template(&Asm::new().halt(), &Asm::new(), &Asm::new().halt());
    for bad in
        [&good[..10], &bad_magic[..], &good[..good.len() - 1], &zero_acl[..], &[good.clone(), vec![0; 8]].concat()]
    {
        assert_eq!(Template::parse(bad), Err(VerifyError::BadTemplate));
    }
    // A bad UDF inside: its own error.
    let looping = template(&Asm::new().jz(0, 0), &Asm::new().halt(), &Asm::new().halt());
    assert_eq!(Template::parse(&looping), Err(VerifyError::BadJump { at: 0 }));
}

/// Random programs never make the verifier or the interpreter panic, and
/// every accepted program runs within its worst case and `MAX_STEPS`.
#[test]
fn fuzz_verify_and_run() {
    let mut rng = Rng::new(0x5eed_0f0d);
    let ops = [
        op::LI,
        op::MOV,
        op::ADD,
        op::ADDI,
        op::SUB,
        op::MUL,
        op::MULI,
        op::AND,
        op::ANDI,
        op::OR,
        op::SHL,
        op::SHR,
        op::EQ,
        op::LT,
        op::LD8,
        op::LD16,
        op::LD32,
        op::LD64,
        op::JZ,
        op::JNZ,
        op::LOOP,
        op::HALT,
        op::EXT,
        op::PRIN,
        op::SIZE,
    ];
    let (mut accepted, mut ran) = (0, 0);
    for _ in 0..20_000 {
        let n = 1 + rng.index(12);
        let mut a = Asm::new();
        for _ in 0..n {
            let o = *rng.pick(&ops);
            let small = |r: &mut Rng| if r.chance(20) { r.byte() } else { r.below(8) as u8 };
            let (x, y, z) = (small(&mut rng), small(&mut rng), if rng.chance(2) { 0 } else { small(&mut rng) });
            let imm = match rng.below(4) {
                0 => 0,
                1 => rng.below(8) as u32,
                2 => rng.below(5000) as u32,
                _ => rng.next() as u32,
            };
            a = a.raw(o, x, y, z, imm);
        }
        let f = rng.below(3) as u8;
        let Ok(udf) = verify(a.bytes(), f) else { continue };
        accepted += 1;
        let block: Vec<u8> = rng.bytes(BLOCK_SIZE);
        let block: &[u8; BLOCK_SIZE] = block.as_slice().try_into().unwrap();
        if let Ok(steps) = udf.run(block, &mut |_| Ok(())) {
            ran += 1;
            assert!(steps <= udf.worst_steps() && steps <= MAX_STEPS);
        }
    }
    assert!(accepted > 200 && ran > 100, "accepted {accepted}, ran {ran}");
}

/// The interpreter as first written, step by step from the instructions
/// (the loop's end looked up at every step, a load's width matched at
/// every load): the oracle the faster one is compared with.
fn reference(
    insns: &[oxok_xn::Insn],
    block: &[u8; BLOCK_SIZE],
    out: &mut Vec<Emit>,
    reads: &mut ReadSet,
) -> Result<u64, Fault> {
    use oxok_xn::Insn;
    let (mut regs, mut loops, mut pc, mut steps) = ([0u64; 8], Vec::<(usize, usize, u32, u32, usize)>::new(), 0, 0u64);
    loop {
        while let Some(l) = loops.last_mut().filter(|l| pc == l.1) {
            l.3 += 1;
            if l.3 < l.2 {
                regs[l.4] = u64::from(l.3);
                pc = l.0;
                break;
            }
            loops.pop();
        }
        let Some(&insn) = insns.get(pc) else { return Ok(steps) };
        steps += 1;
        pc += 1;
        let r = |x: u8| usize::from(x) % 8;
        match insn {
            Insn::Li { d, imm } => regs[r(d)] = u64::from(imm),
            Insn::Mov { d, s } => regs[r(d)] = regs[r(s)],
            Insn::Alu { op, d, x, y } => regs[r(d)] = op.apply(regs[r(x)], regs[r(y)]),
            Insn::AluImm { op, d, x, imm } => regs[r(d)] = op.apply(regs[r(x)], imm),
            Insn::Load { bytes, d, base, off } => {
                let addr = regs[r(base)].saturating_add(u64::from(off));
                let n = usize::from(bytes);
                let Some(s) = usize::try_from(addr).ok().and_then(|a| block.get(a..a + n)) else {
                    return Err(Fault::OutOfBlock { at: pc - 1, addr });
                };
                regs[r(d)] = s.iter().rev().fold(0, |v, &b| (v << 8) | u64::from(b));
                reads.mark(addr as usize, bytes);
            }
            Insn::Jump { if_zero, r: t, skip } => {
                if (regs[r(t)] == 0) == if_zero {
                    pc += skip as usize;
                }
            }
            Insn::Loop { idx, count, body } => {
                loops.push((pc, pc + usize::from(body), count, 0, r(idx)));
                regs[r(idx)] = 0;
            }
            Insn::Halt => return Ok(steps),
            Insn::Ext { start, len, ty } => {
                if regs[r(len)] > 0 {
                    out.push(Emit::Extent { start: regs[r(start)], len: regs[r(len)], ty: regs[r(ty)] });
                }
            }
            Insn::Prin { r: p, rights } => out.push(Emit::Grant { principal: regs[r(p)], rights }),
            Insn::Size { r: s } => out.push(Emit::Size(regs[r(s)])),
        }
    }
}

/// The interpreter computes what the reference does — the same result,
/// results emitted and words read — on random verified programs (loops
/// among them) over random blocks.
#[test]
fn the_interpreter_agrees_with_the_reference() {
    let mut rng = Rng::new(0xd1ff);
    let ops = [op::LI, op::ADD, op::ADDI, op::MULI, op::ANDI, op::SHL, op::SHR, op::EQ, op::LT, op::SUB];
    let loads = [op::LD8, op::LD16, op::LD32, op::LD64];
    let (mut compared, mut looped, mut faulted) = (0, 0, 0);
    for _ in 0..60_000 {
        let n = 1 + rng.index(14);
        let mut a = Asm::new();
        for _ in 0..n {
            let reg = |r: &mut Rng| r.below(8) as u8;
            let (x, y, z) = (reg(&mut rng), reg(&mut rng), reg(&mut rng));
            a = match rng.below(12) {
                0..=2 => a.raw(*rng.pick(&ops), x, y, if rng.chance(2) { z } else { 0 }, rng.below(4200) as u32),
                3..=5 => a.raw(*rng.pick(&loads), x, y, 0, rng.below(4100) as u32),
                6 => a.raw(if rng.chance(2) { op::JZ } else { op::JNZ }, 0, y, 0, 1 + rng.below(4) as u32),
                7..=9 => a.raw(op::LOOP, x, 1 + rng.below(5) as u8, 0, 1 + rng.below(40) as u32),
                10 => a.raw(op::EXT, x, y, z, 0),
                _ => a.raw(op::HALT, 0, 0, 0, 0),
            };
        }
        let Ok(udf) = verify(a.bytes(), func::OWNS) else { continue };
        let block: Vec<u8> =
            rng.bytes(BLOCK_SIZE).into_iter().map(|b| if rng.chance(3) { b % 16 } else { b }).collect();
        let block: &[u8; BLOCK_SIZE] = block.as_slice().try_into().unwrap();
        let (mut want, mut want_reads) = (Vec::new(), ReadSet::default());
        let expected = reference(udf.insns(), block, &mut want, &mut want_reads);
        let (mut got, mut got_reads) = (Vec::new(), ReadSet::default());
        let r = udf.run_reading(
            block,
            &mut |e| {
                got.push(e);
                Ok(())
            },
            Some(&mut got_reads),
        );
        assert_eq!((r, &got, got_reads), (expected, &want, want_reads), "{:?}", udf.insns());
        compared += 1;
        looped += usize::from(udf.insns().iter().any(|i| matches!(i, oxok_xn::Insn::Loop { .. })));
        faulted += usize::from(r.is_err());
    }
    assert!(
        compared > 2000 && looped > 500 && faulted > 100,
        "{compared} compared, {looped} with loops, {faulted} faulted"
    );
}
