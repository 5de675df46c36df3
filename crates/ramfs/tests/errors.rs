//! The error enum: stable codes, Linux errno values, descriptions.

use oxok_ramfs::FsError;

#[test]
fn codes_are_stable() {
    let table = [
        (FsError::NotFound, 1, 2),
        (FsError::NotADirectory, 2, 20),
        (FsError::IsADirectory, 3, 21),
        (FsError::Exists, 4, 17),
        (FsError::NotEmpty, 5, 39),
        (FsError::InvalidName, 6, 22),
        (FsError::TooLong, 7, 36),
        (FsError::Invalid, 8, 22),
        (FsError::BadInode, 9, 9),
        (FsError::NoSpace, 10, 28),
        (FsError::FileTooBig, 11, 27),
        (FsError::Busy, 12, 16),
        (FsError::NotPermitted, 13, 1),
        (FsError::Loop, 14, 40),
    ];
    assert_eq!(table.len(), FsError::ALL.len());
    for (i, (e, code, errno)) in table.into_iter().enumerate() {
        assert_eq!(FsError::ALL[i], e);
        assert_eq!(e.code(), code, "{e:?}");
        assert_eq!(e.errno(), errno, "{e:?}");
    }
}

#[test]
fn from_code_round_trips_and_rejects_the_rest() {
    for e in FsError::ALL {
        assert_eq!(FsError::from_code(e.code()), Some(e));
    }
    assert_eq!(FsError::from_code(0), None);
    for code in FsError::ALL.len() as u16 + 1..=u16::MAX {
        assert_eq!(FsError::from_code(code), None);
    }
}

#[test]
fn descriptions_are_distinct() {
    let mut texts: Vec<String> = FsError::ALL.iter().map(|e| e.to_string()).collect();
    assert!(texts.iter().all(|t| !t.is_empty()));
    texts.sort();
    texts.dedup();
    assert_eq!(texts.len(), FsError::ALL.len());
}
