//! Deterministic mutation fuzzing: no input makes the parser panic, and
//! whatever it accepts satisfies the documented guarantees.

use crate::builder::*;
use oxok_elf::Elf;

/// xorshift64: a tiny deterministic PRNG (also `shebang.rs`'s).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// An "interesting" 64-bit value: small, near a boundary, or random.
    fn value(&mut self) -> u64 {
        match self.below(6) {
            0 => self.next() % 0x4000,
            1 => u64::MAX - self.next() % 0x4000,
            2 => 0x400000 + self.next() % 0x4000,
            3 => LIMIT - self.next() % 0x4000,
            4 => 1 << self.below(64),
            _ => self.next(),
        }
    }
}

/// Parses `f` and, if accepted, checks every promise the API makes.
fn check(f: &[u8], limit: u64) {
    let Ok(elf) = Elf::parse(f, limit) else {
        return;
    };
    let mut executable_entry = false;
    let mut count = 0;
    for s in elf.segments() {
        count += 1;
        let end = s.vaddr.checked_add(s.mem_size).expect("no overflow");
        assert!(end <= limit);
        assert!(s.data.len() as u64 <= s.mem_size);
        executable_entry |= s.flags.exec && s.vaddr <= elf.entry() && elf.entry() < end;
    }
    assert!((1..=oxok_elf::MAX_SEGMENTS).contains(&count));
    assert!(executable_entry);
    assert!(count <= usize::from(elf.phnum()));
    if let Some(tls) = elf.tls() {
        assert!(tls.data.len() as u64 <= tls.mem_size);
    }
}

#[test]
fn mutated_images_never_panic() {
    let seeds = [typical(), {
        let mut f = typical();
        // Put a PT_TLS and a PT_PHDR in the mix.
        set32(&mut f, ph_at(2) + phdr::TYPE, PT_TLS);
        f
    }];
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for round in 0..6000 {
        let mut f = seeds[round % seeds.len()].clone();
        for _ in 0..1 + rng.below(6) {
            if rng.below(2) == 0 {
                // A random byte anywhere in the headers or data.
                let i = rng.below(f.len());
                f[i] = rng.next() as u8;
            } else {
                // An interesting value in a program-header or header field.
                let i = rng.below(64 + 56 * 3 - 8);
                let v = rng.value();
                set64(&mut f, i, v);
            }
        }
        if rng.below(8) == 0 {
            set32(&mut f, ph_at(rng.below(3)) + phdr::TYPE, PT_PHDR);
        }
        let cut = if rng.below(5) == 0 { rng.below(f.len() + 1) } else { f.len() };
        let limit = if rng.below(4) == 0 { rng.value() } else { LIMIT };
        check(&f[..cut], limit);
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(7);
    for _ in 0..2000 {
        let len = rng.below(400);
        let mut f: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        if len >= 64 && rng.below(2) == 0 {
            f[..64].copy_from_slice(&typical()[..64]);
        }
        check(&f, LIMIT);
    }
}
