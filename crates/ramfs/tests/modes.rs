//! Permission bits: defaults, `set_mode`, the mode an open creates with.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::*;
use oxok_ramfs::{Fs, FsError, Ino, Kind, OpenFlags};

fn mode(fs: &Fs, ino: Ino) -> u16 {
    fs.stat(ino).unwrap().mode
}

#[test]
fn defaults() {
    let mut fs = Fs::new();
    assert_eq!(mode(&fs, ROOT), 0o755);
    let d = fs.mkdir(ROOT, "d").unwrap();
    let f = fs.create(ROOT, "f", Kind::File).unwrap();
    let g = fs.open(ROOT, "g", CREATE).unwrap();
    let l = fs.symlink(ROOT, "f", "l").unwrap();
    assert_eq!([mode(&fs, d), mode(&fs, f), mode(&fs, g), mode(&fs, l)], [0o755, 0o644, 0o644, 0o777]);
    ok(&fs);
}

#[test]
fn set_mode_masks_and_stamps() {
    let mut fs = Fs::new();
    let d = fs.mkdir(ROOT, "d").unwrap();
    let f = put(&mut fs, "/d/f", b"x");
    fs.set_time(9);
    fs.set_mode(f, 0o600).unwrap();
    let st = fs.stat(f).unwrap();
    assert_eq!((st.mode, st.ctime, st.mtime), (0o600, 9, 0));
    fs.set_mode(f, 0xffff).unwrap();
    assert_eq!(mode(&fs, f), 0o7777);
    fs.set_mode(f, 0o100_644).unwrap(); // type bits are dropped
    assert_eq!(mode(&fs, f), 0o644);
    fs.set_mode(d, 0o1777).unwrap();
    assert_eq!(mode(&fs, d), 0o1777);
    fs.set_mode(ROOT, 0).unwrap();
    assert_eq!(mode(&fs, ROOT), 0);
    // Modes do not restrict anything here.
    assert!(fs.create(ROOT, "d/g", Kind::File).is_ok());
    // Symbolic links keep 0o777; chmod goes to the target.
    let l = fs.symlink(ROOT, "d/f", "l").unwrap();
    assert_eq!(fs.set_mode(l, 0o600), Err(FsError::NotPermitted));
    assert_eq!(mode(&fs, l), 0o777);
    fs.set_mode(fs.lookup(ROOT, "l").unwrap(), 0o640).unwrap();
    assert_eq!(mode(&fs, f), 0o640);
    assert_eq!(fs.set_mode(Ino::from_raw(u64::MAX), 0), Err(FsError::BadInode));
    // A mode belongs to the inode: kept across rename and shared by links.
    fs.rename(ROOT, "d/f", "f2").unwrap();
    fs.link(ROOT, "f2", "f3").unwrap();
    assert_eq!(mode(&fs, fs.lookup(ROOT, "f3").unwrap()), 0o640);
    ok(&fs);
}

#[test]
fn open_creates_with_the_mode_asked() {
    let mut fs = Fs::new();
    let with = |m: u16| OpenFlags { mode: Some(m), ..CREATE };
    let f = fs.open(ROOT, "f", with(0o600)).unwrap();
    assert_eq!(mode(&fs, f), 0o600);
    let g = fs.open(ROOT, "g", OpenFlags { mode: Some(0o104_755), ..EXCL }).unwrap();
    assert_eq!(mode(&fs, g), 0o4755);
    let h = fs.open(ROOT, "h", with(0)).unwrap();
    assert_eq!(mode(&fs, h), 0);
    // An existing file keeps its mode.
    assert_eq!(fs.open(ROOT, "f", OpenFlags { truncate: true, ..with(0o777) }), Ok(f));
    assert_eq!(mode(&fs, f), 0o600);
    // Through a dangling link, the target is made with the mode.
    fs.symlink(ROOT, "t", "l").unwrap();
    let t = fs.open(ROOT, "l", with(0o640)).unwrap();
    assert_eq!(mode(&fs, t), 0o640);
    assert_eq!(mode(&fs, fs.lookup_nofollow(ROOT, "l").unwrap()), 0o777);
    // Directories: mkdir then set_mode.
    let d = fs.mkdir(ROOT, "d").unwrap();
    fs.set_mode(d, 0o700).unwrap();
    assert_eq!(mode(&fs, d), 0o700);
    ok(&fs);
}
