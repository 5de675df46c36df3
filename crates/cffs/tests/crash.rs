//! The crash harness on a bounded subset (the full set: `cargo xtask
//! crashtest`): every single operation, and every pair whose enumeration
//! index falls in one of 8 shards.

use oxok_cffs::crash::workload::{SETUP, setup_full_table};
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
    run_all(&SETUP, 1, 0, 1, &mut t);
    assert_eq!(t.workloads, 27);
    check(&t);
}

#[test]
fn a_shard_of_the_operation_pairs_survives_every_crash_state() {
    let mut t = Totals::default();
    run_all(&SETUP, 2, 3, 8, &mut t);
    check(&t);
}

/// The harness itself: a log in which one write never reached the disk
/// (a broken file system or device) is caught as lost data and as a
/// pointer to a block never written.
#[test]
fn the_harness_catches_a_write_that_never_landed() {
    use oxok_cffs::crash::workload::Op;
    use oxok_cffs::crash::{check, record};
    use oxok_cffs::host::Event;
    let mut r = record(&[Op::Create("/n"), Op::Write("/n", 0, 5000), Op::Fsync("/n")]).unwrap();
    let mut clean = Totals::default();
    check(&r, "intact", &mut clean);
    assert!(clean.ok(), "{:#?}", clean.examples);
    let first = r.events.iter().position(|e| matches!(e, Event::Write { .. })).unwrap();
    // The write is gone; the log keeps its length (an empty allocation).
    r.events[first] = Event::Alloc { start: 0, len: 0 };
    let mut t = Totals::default();
    check(&r, "lost write", &mut t);
    assert!(t.dangling > 0 && t.lost > 0, "{t:?}");
}

/// A directory whose inode needs a new inode table: the name may not
/// reach the disk before the superblock lists the table.
#[test]
fn a_name_in_a_new_inode_table_waits_for_the_superblock() {
    use oxok_cffs::crash::workload::Op;
    use oxok_cffs::crash::{check, record_after};
    // The root is inode 0; 30 more directories fill the first table.
    let mut setup: Vec<Op> = (0..30).map(|i| Op::Mkdir(Box::leak(format!("/d{i}").into_boxed_str()))).collect();
    setup.push(Op::Sync);
    let r = record_after(&setup, &[Op::Mkdir("/x"), Op::Create("/x/f"), Op::Write("/x/f", 0, 100), Op::Fsync("/x/f")])
        .unwrap();
    let mut t = Totals::default();
    check(&r, "new inode table", &mut t);
    assert!(t.ok(), "{:#?}", t.examples);
}

#[test]
fn every_single_operation_survives_with_the_inode_table_full() {
    let mut t = Totals::default();
    run_all(&setup_full_table(), 1, 0, 1, &mut t);
    check(&t);
}

/// Two sequences the full crashtest once caught (full inode table, so the
/// root directory grows a block): a name moved to a new block must wait
/// for its inode, and must not appear twice while an old name with the
/// same text is still on disk.
#[test]
fn regressions_found_by_the_full_crashtest() {
    use oxok_cffs::crash::workload::Op;
    use oxok_cffs::crash::{check, record_after};
    let mut t = Totals::default();
    for ops in [
        vec![Op::Mkdir("/B"), Op::Link("/A/f", "/l"), Op::Rename("/A/f", "/g")],
        vec![Op::Rename("/g", "/A/n"), Op::Create("/n"), Op::Rename("/A/f", "/g")],
    ] {
        let r = record_after(&setup_full_table(), &ops).unwrap();
        check(&r, &format!("{ops:?}"), &mut t);
    }
    assert!(t.ok(), "{:#?}", t.examples);
}
