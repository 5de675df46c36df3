//! `Program::reads_only`: it names every read evaluation makes, and a
//! program that reads one word outside the region is refused.

mod common;
use common::{Memory, Rng, RngExt};
use oxok_pred::{Builder, Operand, Size, verify};

/// A region of two words and their neighbours' edges.
const LO: u64 = 0x1008;
const HI: u64 = 0x1018;

fn inside(addr: u64, bytes: u8) -> bool {
    addr >= LO && addr.checked_add(u64::from(bytes)).is_some_and(|end| end <= HI)
}

#[test]
fn every_read_evaluation_makes_is_one_it_names() {
    let mut rng = Rng::new(0x7ead5);
    let (mut within, mut outside) = (0, 0);
    for _ in 0..20_000 {
        let bytes = common::program(&mut rng, 12).build().expect("builds");
        let Ok(p) = verify(bytes.as_bytes()) else { continue };
        let params = rng.params();
        let only = p.reads_only(&params, inside);
        let mut mem = Memory::new(rng.next());
        let _ = p.eval(&params, &mut |a, s| mem.read(a, s));
        if only {
            within += 1;
            for &(a, s) in &mem.reads {
                assert!(inside(a, s), "read {a:#x}/{s} outside, yet reads_only said yes");
            }
        } else {
            outside += 1;
        }
    }
    assert!(within > 100 && outside > 100, "both kinds seen: {within} within, {outside} outside");
}

#[test]
fn one_clause_reading_elsewhere_makes_the_answer_no() {
    let params = [LO, 0, 0, 0, 0, 0, 0, 0];
    let ok = verify(
        Builder::new()
            .load_u64(LO)
            .gt_param(1)
            .or()
            .load_at(Size::U64, 0, 8)
            .eq_imm(3)
            .build()
            .expect("builds")
            .as_bytes(),
    )
    .expect("verifies");
    assert!(ok.reads_only(&params, inside));
    let far = verify(
        Builder::new().load_u64(LO).gt_param(1).or().load_u64(0x2000).eq_imm(3).build().expect("builds").as_bytes(),
    )
    .expect("verifies");
    assert!(!far.reads_only(&params, inside));
    // A parameter moves a read out of the region.
    assert!(!ok.reads_only(&[HI, 0, 0, 0, 0, 0, 0, 0], inside));
    // Reading nothing reads only the region.
    let none =
        verify(Builder::new().load(Operand::Imm(1)).eq_imm(1).build().expect("builds").as_bytes()).expect("verifies");
    assert!(none.reads_only(&params, |_, _| false));
}
