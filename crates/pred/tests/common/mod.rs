//! Shared helpers for the integration tests: a deterministic PRNG, random
//! programs, a memory model, and an independent reference model of the
//! verifier and the evaluator written straight from the format description
//! in `oxok_abi::pred` (it shares no code with the crate).

#![allow(dead_code)]

use oxok_abi::pred::{INSN_SIZE, MAX_BYTES, MAX_INSNS, PARAMS, RawInsn, kind, op, reject};
use oxok_pred::{Builder, Cmp, Insn, Operand, Size};

pub use oxok_testrng::Rng;

/// This crate's distributions on top of the shared generator.
pub trait RngExt {
    fn edgy(&mut self) -> u64;
    fn params(&mut self) -> [u64; PARAMS];
}

impl RngExt for Rng {
    fn edgy(&mut self) -> u64 {
        match self.below(8) {
            0 => 0,
            1 => 1,
            2 => u64::MAX,
            3 => u64::MAX - self.below(4),
            4 => 1 << self.below(64),
            5 => self.below(8),
            _ => self.next(),
        }
    }

    fn params(&mut self) -> [u64; PARAMS] {
        core::array::from_fn(|_| if self.chance(2) { self.below(4) * 8 + 0x1000 } else { self.edgy() })
    }
}

/// Addresses random programs read: a small set, so memory values and
/// refusals are shared between instructions.
pub const ADDRS: [u64; 6] = [0x1000, 0x1008, 0x1010, 0x1018, 0x7f80_8000_0010, u64::MAX - 3];

pub fn size(rng: &mut Rng) -> Size {
    Size::ALL[rng.below(4) as usize]
}

pub fn cmp(rng: &mut Rng) -> Cmp {
    Cmp::ALL[rng.below(7) as usize]
}

/// A random valid operand.
pub fn operand(rng: &mut Rng) -> Operand {
    match rng.below(4) {
        0 => Operand::Imm(rng.edgy()),
        1 => Operand::Param(rng.below(PARAMS as u64) as u8),
        2 => Operand::mem(size(rng), ADDRS[rng.below(ADDRS.len() as u64) as usize]),
        _ => Operand::at_param(size(rng), rng.below(PARAMS as u64) as u8, rng.below(4) * 8),
    }
}

/// A random well-formed program of at most `max` instructions (>= 2), as a
/// builder (so the caller can also look at the bytes).
pub fn program(rng: &mut Rng, max: usize) -> Builder {
    let mut b = Builder::new();
    let mut left = max;
    loop {
        // One clause: ld, then a mix ending in a comparison.
        let body = 1 + rng.below(((left - 1) as u64).min(8)) as usize;
        b.load(operand(rng));
        for i in 0..body {
            let last = i + 1 == body;
            match if last { 3 } else { rng.below(5) } {
                0 => b.and(operand(rng)),
                1 => b.sub(operand(rng)),
                2 => b.load(operand(rng)),
                _ => b.cmp(cmp(rng), operand(rng)),
            };
        }
        left -= 1 + body;
        if left < 3 || rng.chance(3) {
            return b;
        }
        b.or();
        left -= 1;
    }
}

/// Random raw instruction fields, biased towards almost-valid ones.
pub fn raw_insn(rng: &mut Rng) -> RawInsn {
    const OPS: [u8; 11] = [op::LD, op::AND, op::SUB, op::EQ, op::NE, op::LT, op::LE, op::GT, op::GE, op::TEST, op::OR];
    RawInsn {
        op: if rng.chance(8) { rng.byte() } else { OPS[rng.below(11) as usize] },
        size: if rng.chance(8) { rng.byte() } else { [0, 1, 2, 4, 8][rng.below(5) as usize] },
        flags: if rng.chance(8) { rng.byte() } else { rng.below(4) as u8 },
        param: if rng.chance(8) { rng.byte() } else { rng.below(9) as u8 },
        reserved: if rng.chance(16) { rng.next() as u32 } else { 0 },
        imm: if rng.chance(3) { 0 } else { rng.edgy() },
    }
}

/// Memory as the tests see it: a value for every address (a hash), except
/// refused addresses; records every read.
pub struct Memory {
    pub seed: u64,
    /// Addresses the read callback refuses.
    pub refused: Vec<u64>,
    /// Every `(addr, size)` asked for, in order.
    pub reads: Vec<(u64, u8)>,
    /// Whether to return garbage above the requested size.
    pub dirty_high_bits: bool,
}

impl Memory {
    pub fn new(seed: u64) -> Memory {
        Memory { seed, refused: Vec::new(), reads: Vec::new(), dirty_high_bits: false }
    }

    /// The full 64-bit word the model keeps at `addr`: small values often,
    /// so comparisons come out both ways.
    pub fn word(&self, addr: u64) -> u64 {
        let mut h = addr ^ self.seed;
        h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^= h >> 29;
        if h & 3 == 0 { h } else { (h >> 8) % 4 }
    }

    pub fn read(&mut self, addr: u64, size: u8) -> Option<u64> {
        self.reads.push((addr, size));
        if self.refused.contains(&addr) {
            return None;
        }
        let w = self.word(addr);
        if self.dirty_high_bits { Some(w) } else { Some(w & mask(size)) }
    }
}

pub fn mask(size: u8) -> u64 {
    if size >= 8 { u64::MAX } else { (1u64 << (size * 8)) - 1 }
}

/// The reference verifier: the rules of `oxok_abi::pred`, checked in the
/// documented order. Returns the reject code and the instruction index.
pub fn model_verify(bytes: &[u8]) -> Result<(), (u64, usize)> {
    if bytes.is_empty() {
        return Err((reject::EMPTY, 0));
    }
    if bytes.len() > MAX_BYTES {
        return Err((reject::TOO_LONG, 0));
    }
    if !bytes.len().is_multiple_of(INSN_SIZE) {
        return Err((reject::TRUNCATED, 0));
    }
    let n = bytes.len() / INSN_SIZE;
    // Per clause: instructions since the last `or`, whether a value was
    // loaded, whether the last instruction was a comparison.
    let (mut in_clause, mut loaded, mut last_cmp) = (0, false, false);
    for i in 0..n {
        let b = &bytes[i * INSN_SIZE..][..INSN_SIZE];
        let (opc, sz, fl, pa) = (b[0], b[1], b[2], b[3]);
        let reserved = b[4] | b[5] | b[6] | b[7];
        let imm = u64::from_le_bytes(b[8..16].try_into().unwrap());
        let is_cmp = (0x10..=0x16).contains(&opc);
        if opc == op::OR {
            if sz != 0 || fl != 0 || pa != 0 || reserved != 0 || imm != 0 {
                return Err((reject::RESERVED, i));
            }
            if in_clause == 0 {
                return Err((reject::EMPTY_CLAUSE, i));
            }
            if !last_cmp {
                return Err((reject::NO_COMPARISON, i));
            }
            (in_clause, loaded, last_cmp) = (0, false, false);
            continue;
        }
        if !(is_cmp || (1..=3).contains(&opc)) {
            return Err((reject::BAD_OPCODE, i));
        }
        if fl > 3 {
            return Err((reject::BAD_FLAGS, i));
        }
        let memory = fl >= 2;
        let uses_param = fl == 1 || fl == 3;
        if memory != [1, 2, 4, 8].contains(&sz) || (!memory && sz != 0) {
            return Err((reject::BAD_SIZE, i));
        }
        if uses_param && pa >= 8 {
            return Err((reject::BAD_PARAM, i));
        }
        if (!uses_param && pa != 0) || (fl == 1 && imm != 0) || reserved != 0 {
            return Err((reject::RESERVED, i));
        }
        if opc != op::LD && !loaded {
            return Err((reject::NO_VALUE, i));
        }
        loaded = true;
        in_clause += 1;
        last_cmp = is_cmp;
    }
    if in_clause == 0 {
        return Err((reject::EMPTY_CLAUSE, n));
    }
    if !last_cmp {
        return Err((reject::NO_COMPARISON, n));
    }
    Ok(())
}

/// The reference evaluator over verified bytes: clause by clause, term by
/// term, straight from the description. `Err(addr)` for a refused read.
pub fn model_eval(bytes: &[u8], params: &[u64; 8], read: &mut dyn FnMut(u64, u8) -> Option<u64>) -> Result<bool, u64> {
    let insns: Vec<&[u8]> = bytes.chunks(INSN_SIZE).collect();
    for clause in insns.split(|b| b[0] == op::OR) {
        let mut v = 0u64;
        let mut holds = true;
        for b in clause {
            let imm = u64::from_le_bytes(b[8..16].try_into().unwrap());
            let p = params[b[3] as usize % 8];
            let x = match b[2] {
                kind::IMM => imm,
                kind::PARAM => p,
                k => {
                    let addr = if k == kind::MEM { imm } else { p.wrapping_add(imm) };
                    read(addr, b[1]).ok_or(addr)? & mask(b[1])
                }
            };
            let term = match b[0] {
                op::LD => {
                    v = x;
                    true
                }
                op::AND => {
                    v &= x;
                    true
                }
                op::SUB => {
                    v = v.wrapping_sub(x);
                    true
                }
                op::EQ => v == x,
                op::NE => v != x,
                op::LT => v < x,
                op::LE => v <= x,
                op::GT => v > x,
                op::GE => v >= x,
                op::TEST => v & x != 0,
                other => panic!("model_eval on unverified opcode {other}"),
            };
            if !term {
                holds = false;
                break;
            }
        }
        if holds {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The pure boolean value of a verified program when every read succeeds,
/// computed without any short-circuiting (every term of every clause).
pub fn model_dnf(program: &[Insn], params: &[u64; 8], word: &dyn Fn(u64, u8) -> u64) -> bool {
    let mut any = false;
    for clause in program.split(|i| *i == Insn::Or) {
        let mut v = 0u64;
        let mut all = true;
        for insn in clause {
            let x = match insn.operand().unwrap() {
                Operand::Imm(x) => x,
                Operand::Param(p) => params[p as usize],
                Operand::Mem { size, addr } => word(addr, size.bytes()) & size.mask(),
                Operand::MemParam { size, param, offset } => {
                    word(params[param as usize].wrapping_add(offset), size.bytes()) & size.mask()
                }
            };
            match insn {
                Insn::Load(_) => v = x,
                Insn::And(_) => v &= x,
                Insn::Sub(_) => v = v.wrapping_sub(x),
                Insn::Cmp(c, _) => all &= c.holds(v, x),
                Insn::Or => unreachable!(),
            }
        }
        any |= all;
    }
    any
}

/// Bytes of a list of raw instructions.
pub fn bytes_of(raws: &[RawInsn]) -> Vec<u8> {
    raws.iter().flat_map(|r| r.to_bytes()).collect()
}

/// Bytes of a list of instructions.
pub fn encode(insns: &[Insn]) -> Vec<u8> {
    insns.iter().flat_map(|i| i.encode().to_bytes()).collect()
}

/// The most instructions any program has.
pub const MAX: usize = MAX_INSNS;
