use super::*;

const ROOMY: u64 = 1 << 20;

#[test]
fn consecutive_writes_to_one_file_make_one_run() {
    let mut c = Gatherer::<u8>::default();
    assert!(c.gather(7, 100, &[1; 4096], ROOMY));
    assert!(c.gather(7, 4196, &[2; 4096], ROOMY));
    assert!(c.gather(7, 8292, &[3; 10], ROOMY));
    let g = c.take().unwrap();
    assert_eq!((g.ino, g.off, g.data.len()), (7, 100, 8202));
    assert_eq!((g.data[0], g.data[4096], g.data[8201]), (1, 2, 3));
    assert!(c.take().is_none(), "taken once");
}

#[test]
fn a_write_elsewhere_or_to_another_file_is_not_taken() {
    let mut c = Gatherer::<u8>::default();
    assert!(c.gather(7, 0, &[1; 100], ROOMY));
    assert!(!c.gather(7, 101, &[1; 10], ROOMY), "a gap");
    assert!(!c.gather(7, 99, &[1; 10], ROOMY), "an overlap");
    assert!(!c.gather(8, 100, &[1; 10], ROOMY), "another file");
    // The run is untouched by what was refused.
    let g = c.take().unwrap();
    assert_eq!((g.ino, g.off, g.data.len()), (7, 0, 100));
    // With nothing gathered, any write starts a run.
    assert!(c.gather(8, 5, &[1; 10], ROOMY));
}

#[test]
fn a_run_stops_at_its_limit() {
    let mut c = Gatherer::<u8>::default();
    let page = [0u8; 4096];
    let mut off = 0;
    while c.gather(1, off, &page, ROOMY) {
        off += 4096;
    }
    assert_eq!(off, GATHER_MAX as u64);
    assert_eq!(c.take().unwrap().data.len(), GATHER_MAX);
    assert!(!c.gather(1, 0, &[0; GATHER_MAX + 1], ROOMY), "one write past the limit goes through");
}

#[test]
fn a_disk_with_little_room_gets_its_writes_at_once() {
    let mut c = Gatherer::<u8>::default();
    // Room for the run and the spare: taken; one block less: not.
    assert!(c.gather(1, 0, &[0; 4096], 1 + SPARE_BLOCKS + 1));
    assert!(!c.gather(1, 4096, &[0; 4096], 2 + SPARE_BLOCKS), "the run would leave less than the spare");
    let mut d = Gatherer::<u8>::default();
    assert!(!d.gather(1, 0, &[0; 4096], 1 + SPARE_BLOCKS));
    assert!(!d.gather(1, 0, &[0; 1], 0));
}

#[test]
fn a_failure_is_reported_once_and_only_to_its_file() {
    let mut c = Gatherer::<u8>::default();
    c.fail(3, 9);
    assert_eq!(c.failure(4), None);
    assert_eq!(c.failure(3), Some(9));
    assert_eq!(c.failure(3), None);
}
