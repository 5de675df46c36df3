//! The crash harness on a bounded subset (the full set: `cargo xtask
//! crashtest`): every single operation, and every pair whose enumeration
//! index falls in one of 8 shards.

use oxok_cffs::crash::{Totals, run_all};

fn check(t: &Totals) {
    println!(
        "{} workloads, {} crash states, {} lost, {} dangling, {} fsck, {} model",
        t.workloads, t.states, t.lost, t.dangling, t.fsck, t.model
    );
    assert!(t.ok(), "{:#?}", t.examples);
    assert!(t.states > t.workloads, "every workload has crash states");
}

#[test]
fn every_single_operation_survives_every_crash_state() {
    let mut t = Totals::default();
    run_all(1, 0, 1, &mut t);
    assert_eq!(t.workloads, 23);
    check(&t);
}

#[test]
fn a_shard_of_the_operation_pairs_survives_every_crash_state() {
    let mut t = Totals::default();
    run_all(2, 3, 8, &mut t);
    check(&t);
}
