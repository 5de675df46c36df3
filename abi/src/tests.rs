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

#[test]
fn guest_status_round_trips() {
    use crate::boot::{EXIT_HALT, EXIT_PANIC, EXIT_STATUS_BASE, EXIT_STATUS_MAX, guest_status, qemu_status};
    assert_eq!(guest_status(qemu_status(EXIT_HALT)), Some(0));
    assert_eq!(guest_status(qemu_status(EXIT_PANIC)), None);
    for n in 1..=EXIT_STATUS_MAX {
        let q = qemu_status(EXIT_STATUS_BASE + n);
        assert!(q <= 255, "a process status is 8 bits");
        assert_eq!(guest_status(q), Some(n as i32));
    }
    assert_eq!(guest_status(1), None);
    assert_eq!(guest_status(0), None);
}

#[test]
fn env_ids_round_trip_and_refuse_out_of_range_parts() {
    use crate::env_id::{MAX_GENERATION, encode, from_parts, generation, make, row};
    use crate::layout::ENV_TABLE_ROWS;
    for (g, r) in [(1, 0), (1, 1), (7, 1023), (MAX_GENERATION, 5), (MAX_GENERATION, ENV_TABLE_ROWS - 1)] {
        let id = make(g, r).expect("in range");
        assert_eq!(id, encode(g, r));
        assert_eq!((generation(id), row(u64::from(id))), (g, r));
        assert_eq!(from_parts(r as u64, u64::from(g)), Some(id));
    }
    assert_eq!(make(1, 1), Some((1 << 10) | 1), "the encoding programs and tests rely on");
    assert_eq!(make(1, ENV_TABLE_ROWS), None);
    assert_eq!(make(MAX_GENERATION + 1, 0), None);
    assert_eq!(from_parts(ENV_TABLE_ROWS as u64, 1), None);
    assert_eq!(from_parts(0, u64::from(MAX_GENERATION) + 1), None);
    assert_eq!(from_parts(0, u64::MAX), None);
}

#[test]
fn env_id_type_decodes_only_ids_an_environment_can_have() {
    use crate::env_id::{EnvId, MAX_GENERATION, make};
    let id = EnvId::of(3, 17);
    assert_eq!((id.generation(), id.row(), id.raw()), (3, 17, make(3, 17).expect("in range")));
    assert_eq!(EnvId::decode(id.word()), Some(id));
    assert_eq!(EnvId::from_parts(17, 3), Some(id));
    assert_eq!(u64::from(id), id.word());
    for bad in [0, 1, 1023, 1 << 32, u64::MAX, (1 << 32) | id.word()] {
        assert_eq!(EnvId::decode(bad), None, "{bad:#x} names no environment");
    }
    assert_eq!(EnvId::decode(u64::from(u32::MAX)).map(EnvId::generation), Some(MAX_GENERATION));
    assert_eq!(EnvId::from_parts(1024, 1), None);
    assert_eq!(EnvId::from_parts(17, 0), None, "generations start at 1");
    assert_eq!(EnvId::of(0, 17), EnvId::of(1, 17), "a generation of 0 is taken as 1");
    assert_eq!(size_of::<Option<EnvId>>(), size_of::<u32>(), "no id is 0: none costs no room");
}

#[test]
fn upcall_kinds_and_vectors_are_distinct() {
    use crate::upcall::*;
    let kinds = [EXCEPTION, PAGE_FAULT, FOREIGN_SYSCALL, SLOT_START, SLOT_END, PCT, REVOCATION, EXCEPTION_STACK];
    assert_eq!(kinds.len(), KINDS);
    for (i, k) in kinds.iter().enumerate() {
        assert_eq!(*k, i as u64, "kinds are dense from 0");
    }
    let vectors = [
        VECTOR_BREAKPOINT,
        VECTOR_INVALID_OPCODE,
        VECTOR_PAGE_FAULT,
        VECTOR_SYSCALL,
        VECTOR_REVOCATION,
        VECTOR_SLOT_START,
        VECTOR_SLOT_END,
    ];
    for (i, a) in vectors.iter().enumerate() {
        assert!(vectors[i + 1..].iter().all(|b| a != b));
    }
}
