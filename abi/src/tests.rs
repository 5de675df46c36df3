use crate::{CALL_BASE, Call, Error, boot, layout};

#[test]
fn call_numbers_round_trip() {
    // Indices are in order; ranges reserved for calls being built on other
    // branches may be missing (and are unknown numbers).
    for pair in Call::ALL.windows(2) {
        assert!((pair[0] as u64) < (pair[1] as u64), "table indices in order");
    }
    for &c in Call::ALL {
        assert_eq!(Call::from_number(c.number()), Some(c));
    }
    let end = Call::ALL.last().map_or(0, |&c| c as u64 + 1);
    for i in 0..=end {
        let known = Call::ALL.iter().any(|&c| c as u64 == i);
        assert_eq!(Call::from_number(CALL_BASE + i).is_some(), known, "index {i}");
    }
    assert_eq!(Call::from_number(CALL_BASE + end), None);
    // Linux numbers are never Oxok calls: they go to the foreign-call upcall.
    for linux_nr in [0u64, 1, 39, 60, 231, 435] {
        assert_eq!(Call::from_number(linux_nr), None);
    }
}

#[test]
fn arg_and_result_counts_fit_registers() {
    for &c in Call::ALL {
        assert!(c.args() <= crate::MAX_ARGS, "{}", c.name());
        assert!(c.results() <= crate::MAX_RESULTS, "{}", c.name());
    }
    assert_eq!(Call::console_write.args(), 2);
    assert_eq!(Call::mem_info.results(), 3);
}

#[test]
fn error_codes_are_stable_and_distinct() {
    for &e in Error::ALL {
        assert_ne!(e.code(), 0, "0 means success");
        assert_eq!(Error::from_code(e.code()), Some(e));
    }
    assert_eq!(Error::BadCall.code(), 1);
    assert_eq!(Error::BadAddress.code(), 2);
    assert_eq!(Error::from_code(0), None);
}

#[test]
fn user_ranges() {
    assert!(layout::user_range_ok(layout::PROGRAM_BASE, 4096));
    assert!(layout::user_range_ok(layout::USER_TOP - 1, 1));
    assert!(!layout::user_range_ok(layout::USER_TOP - 1, 2));
    assert!(!layout::user_range_ok(u64::MAX - 3, 8));
    assert!(!layout::user_range_ok(0xffff_8000_0000_0000, 1));
}

#[test]
fn qemu_status_is_never_plain_failure() {
    assert_eq!(boot::qemu_status(boot::EXIT_HALT), 33);
    assert_eq!(boot::qemu_status(boot::EXIT_PANIC), 35);
}
