//! The encodings round-trip and stay within their fields.

use super::*;

#[test]
fn request_words_round_trip() {
    for (o, len, arg) in [(op::OPEN, 5, flags::READ), (op::READ, 64, 0), (op::PATH, 255, 1), (op::SEEK, 0, 2 | STAGED)]
    {
        let w = request(o, len, arg);
        assert_eq!((op_of(w), len_of(w), arg_of(w)), (o, len, arg));
    }
    // The length field is 8 bits: a longer length cannot spill into arg.
    let w = request(op::WRITE, 0x1ff, 7);
    assert_eq!((len_of(w), arg_of(w)), (0xff, 7));
}

#[test]
fn reply_words_carry_status_and_count() {
    for code in 0..15u64 {
        let s = Status::of(code);
        assert_eq!(s as u64, code, "every code names its own status");
        let w = reply(s, 48);
        assert_eq!((Status::of(w), len_of(w)), (s, 48));
    }
    assert_eq!(Status::of(15), Status::Invalid, "unknown codes read as Invalid");
    assert_eq!(Status::of(0xff), Status::Invalid);
}

#[test]
fn readdir_words_split_back() {
    for (present, kind, len) in [(true, KIND_DIR, 0), (false, 0, 0), (true, KIND_FILE, 4095), (true, 0xff, 0xffff)] {
        assert_eq!(split_readdir_word(readdir_word(present, kind, len)), (present, kind, len));
    }
}

#[test]
fn bytes_pack_into_words_and_back() {
    let data: [u8; 64] = core::array::from_fn(|i| (i * 7 + 1) as u8);
    for n in [0, 1, 7, 8, 9, 55, 56, 63, 64] {
        let mut words = [0xdead_beef_u64; 8];
        assert_eq!(put_bytes(&mut words, &data[..n]), n);
        let mut out = [0u8; 64];
        assert_eq!(get_bytes(&words, &mut out[..n]), n);
        assert_eq!(&out[..n], &data[..n]);
        // The rest of the words is zeroed, not left over.
        let mut all = [0u8; 64];
        get_bytes(&words, &mut all);
        assert!(all[n..].iter().all(|&b| b == 0));
    }
}

#[test]
fn packing_never_overruns_either_side() {
    let data = [9u8; 100];
    let mut words = [0u64; 7];
    assert_eq!(put_bytes(&mut words, &data), WRITE_MAX, "seven words hold a WRITE's bytes");
    let mut out = [0u8; 100];
    assert_eq!(get_bytes(&words, &mut out), WRITE_MAX);
    assert!(out[WRITE_MAX..].iter().all(|&b| b == 0));
    assert_eq!(get_bytes(&words[..6], &mut out[..NAME_CHUNK]), NAME_CHUNK);
}

#[test]
fn stat_fills_seven_words_and_round_trips() {
    let mut w = [0u64; WORDS];
    let st =
        WireStat { kind: KIND_FILE, size: 10, ino: 3, nlink: 1, mtime: 1_764_000_000, mode: None, allocated: None };
    st.put(&mut w[1..]);
    assert_eq!(&w[..8], &[0, KIND_FILE, 10, 3, 1, 1_764_000_000, 0, 0]);
    for allocated in [0, 4096, u64::MAX - 1] {
        let st = WireStat { allocated: Some(allocated), ..st };
        st.put(&mut w[1..]);
        assert_eq!(WireStat::of(&w[1..]), st, "an allocation of 0 is known, not absent");
    }
    st.put(&mut w[1..]);
    assert_eq!(WireStat::of(&w[1..]), st);
    // Mode 0 is a mode kept, not "no mode"; bits past 0o7777 are dropped.
    for mode in [0, 0o4755, 0o7777] {
        let st = WireStat { kind: KIND_LINK, mode: Some(mode), ..st };
        st.put(&mut w[1..]);
        assert_eq!(WireStat::of(&w[1..]), st);
    }
    WireStat { mode: Some(0o170_777), ..st }.put(&mut w[1..]);
    assert_eq!(WireStat::of(&w[1..]).mode, Some(0o777));
    assert_eq!(WireStat::of(&[]), WireStat::default(), "missing words read 0");
}

#[test]
fn creation_mode_rides_in_the_arg() {
    let arg = with_mode(flags::CREATE | flags::WRITE, 0o100_644);
    assert_eq!(mode_of(arg), Some(0o644));
    assert_eq!(arg & flags::ALL, flags::CREATE | flags::WRITE, "the flags are untouched");
    assert!(arg & STAGED == 0, "the mode stays below STAGED");
    assert_eq!(mode_of(with_mode(0, 0)), Some(0), "mode 0 is given, not absent");
    assert_eq!(mode_of(flags::ALL), None);
    assert_eq!(Status::of(Status::Loop as u64), Status::Loop);
    assert_eq!(Status::of(Status::TooLong as u64), Status::TooLong);
}

// The limits fit the message (checked when the tests compile).
const _: () = {
    assert!(INLINE <= (WORDS - 1) * 8);
    assert!(WRITE_MAX <= (WORDS - 2) * 8);
    assert!(NAME_CHUNK <= (WORDS - 3) * 8);
    assert!(LINK_CHUNK <= (WORDS - 2) * 8);
    assert!(flags::MODE_GIVEN < STAGED && flags::ALL < 1 << flags::MODE_SHIFT);
    assert!(STAGED > 0xffff_ffff, "STAGED sits above any inline argument");
    assert!(BUFFER_PAGE >= 64 * INLINE, "a buffer page moves many times a message's bytes");
    assert!(BUFFER_GRANT < WORDS, "a grant's slots fit one reply");
};

#[test]
fn op_numbers_are_distinct() {
    let ops = [
        op::PATH,
        op::OPEN,
        op::CLOSE,
        op::READ,
        op::WRITE,
        op::SEEK,
        op::FSTAT,
        op::STAT,
        op::MKDIR,
        op::UNLINK,
        op::RMDIR,
        op::RENAME,
        op::READDIR,
        op::DUP,
        op::TRUNCATE,
        op::INFO,
        op::STOP,
        op::BUFFER,
        op::READ_BUF,
        op::WRITE_BUF,
        op::COPY,
        op::FSYNC,
        op::SYNC,
        op::SET_TIMES,
        op::LINK,
        op::SYMLINK,
        op::READLINK,
        op::SET_MODE,
        op::WRITE_BACK,
        op::GENERATION,
        op::BEHIND_PAGE,
        op::SETTLE,
    ];
    for (i, a) in ops.iter().enumerate() {
        assert!(ops[i + 1..].iter().all(|b| a != b), "op {a} twice");
    }
}

#[test]
fn reply_positions_round_trip_and_keep_status_and_count() {
    let w0 = reply(Status::Ok, 64);
    for pos in [0, 1, 4096, POS_LIMIT - 1] {
        let w = with_pos(w0, pos);
        assert_eq!((Status::of(w), len_of(w), pos_of(w)), (Status::Ok, 64, Some(pos)));
    }
    assert_eq!(pos_of(with_pos(w0, POS_LIMIT)), None);
    assert_eq!(pos_of(with_pos(w0, u64::MAX)), None);
    assert_eq!(pos_of(w0), None);
}

#[test]
fn a_record_word_round_trips_and_nothing_else_parses() {
    for (handle, len) in [(0, 1), (1, 1024), (63, behind::MAX), ((1 << 40) - 1, 17)] {
        let w = behind::word(handle, len).expect("a record");
        assert_ne!(w, 0);
        assert_eq!(behind::parse(w), Some((handle, len)));
    }
    assert_eq!(behind::word(1, 0), None, "no bytes");
    assert_eq!(behind::word(1, behind::MAX + 1), None, "past the room");
    assert_eq!(behind::word(1 << 40, 1), None, "a handle past 40 bits");
    assert_eq!(behind::parse(0), None, "nothing waits");
    // Untagged words, and tagged ones with a length of 0 or past the room.
    for w in
        [1, 1024 << 40 | 3, u64::MAX >> 1, 1 << 63, 1 << 63 | 5, u64::MAX, 1 << 63 | ((behind::MAX as u64 + 1) << 40)]
    {
        assert_eq!(behind::parse(w), None, "{w:#x}");
    }
    // The record's word and bytes fill the page, apart.
    assert_eq!(behind::WORD_AT + 8, behind::DATA_AT);
    assert_eq!(behind::DATA_AT + behind::MAX, BUFFER_PAGE);
}
