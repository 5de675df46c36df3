//! Files: create, read, write at offsets, sparse holes, truncate, stat,
//! open flags, timestamps.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::*;
use oxok_ramfs::{Fs, FsError, Kind, OpenFlags, PAGE_SIZE};

#[test]
fn write_then_read_back() {
    let mut fs = Fs::new();
    let f = fs.create(ROOT, "/f", Kind::File).unwrap();
    assert_eq!(fs.write(f, 0, b"hello world").unwrap(), 11);
    let mut buf = [0u8; 5];
    assert_eq!(fs.read(f, 6, &mut buf).unwrap(), 5);
    assert_eq!(&buf, b"world");
    // Overwrite the middle ("seek" is just an offset).
    assert_eq!(fs.write(f, 4, b"O W").unwrap(), 3);
    assert_eq!(contents(&fs, f), b"hellO World");
    // Reads at and past the end.
    assert_eq!(fs.read(f, 11, &mut buf).unwrap(), 0);
    assert_eq!(fs.read(f, u64::MAX, &mut buf).unwrap(), 0);
    assert_eq!(fs.read(f, 9, &mut buf).unwrap(), 2);
    // Empty writes change nothing, even far away.
    assert_eq!(fs.write(f, 1 << 40, b"").unwrap(), 0);
    assert_eq!(fs.stat(f).unwrap().size, 11);
    ok(&fs);
}

#[test]
fn writes_across_page_boundaries() {
    let mut fs = Fs::new();
    let f = fs.create(ROOT, "big", Kind::File).unwrap();
    let mut rng = Rng::new(3);
    let data = rng.bytes(3 * PAGE_SIZE + 123);
    assert_eq!(fs.write(f, 100, &data).unwrap(), data.len());
    let mut expect = vec![0u8; 100];
    expect.extend_from_slice(&data);
    assert_eq!(contents(&fs, f), expect);
    // Unaligned reads spanning pages.
    for (off, len) in [(0, 1), (4090, 20), (4096, 4096), (8000, 5000), (100, 3 * PAGE_SIZE + 123)] {
        let mut buf = vec![0u8; len];
        let n = fs.read(f, off as u64, &mut buf).unwrap();
        let end = (off + len).min(expect.len());
        assert_eq!(&buf[..n], &expect[off..end]);
    }
    assert_eq!(fs.stat(f).unwrap().allocated, 4 * PAGE_SIZE as u64);
    ok(&fs);
}

#[test]
fn sparse_writes_leave_zero_holes() {
    let mut fs = Fs::new();
    let f = fs.create(ROOT, "sparse", Kind::File).unwrap();
    fs.write(f, 3, b"ab").unwrap();
    assert_eq!(contents(&fs, f), b"\0\0\0ab");
    let far = 10 * PAGE_SIZE as u64 + 5;
    fs.write(f, far, b"z").unwrap();
    let st = fs.stat(f).unwrap();
    assert_eq!(st.size, far + 1);
    assert_eq!(st.allocated, 2 * PAGE_SIZE as u64, "the hole costs nothing");
    let c = contents(&fs, f);
    assert_eq!(&c[..5], b"\0\0\0ab");
    assert!(c[5..c.len() - 1].iter().all(|&b| b == 0));
    assert_eq!(c[c.len() - 1], b'z');
    assert_eq!(fs.statfs().used_bytes, 2 * PAGE_SIZE as u64);
    ok(&fs);
}

#[test]
fn truncate_shrinks_grows_and_zeroes() {
    let mut fs = Fs::new();
    let f = put(&mut fs, "/t", &[7u8; 3 * PAGE_SIZE]);
    fs.truncate(f, 10).unwrap();
    assert_eq!(contents(&fs, f), [7u8; 10]);
    assert_eq!(fs.stat(f).unwrap().allocated, PAGE_SIZE as u64);
    // Growing again exposes zeros, not the old sevens.
    fs.truncate(f, 2 * PAGE_SIZE as u64).unwrap();
    let c = contents(&fs, f);
    assert_eq!(&c[..10], &[7u8; 10]);
    assert!(c[10..].iter().all(|&b| b == 0));
    assert_eq!(fs.stat(f).unwrap().allocated, PAGE_SIZE as u64);
    // Write past a truncated tail inside the same page.
    fs.truncate(f, 5).unwrap();
    fs.write(f, 8, b"x").unwrap();
    assert_eq!(contents(&fs, f), b"\x07\x07\x07\x07\x07\0\0\0x");
    fs.truncate(f, 0).unwrap();
    assert_eq!(fs.stat(f).unwrap().allocated, 0);
    assert_eq!(fs.statfs().used_bytes, 0);
    ok(&fs);
}

#[test]
fn file_operations_refuse_directories() {
    let mut fs = Fs::new();
    let d = fs.mkdir(ROOT, "d").unwrap();
    let mut buf = [0u8; 4];
    assert_eq!(fs.read(d, 0, &mut buf), Err(FsError::IsADirectory));
    assert_eq!(fs.write(d, 0, b"x"), Err(FsError::IsADirectory));
    assert_eq!(fs.write(d, 0, b""), Err(FsError::IsADirectory));
    assert_eq!(fs.truncate(d, 0), Err(FsError::IsADirectory));
    let f = fs.create(ROOT, "f", Kind::File).unwrap();
    assert_eq!(fs.readdir(f), Err(FsError::NotADirectory));
    assert_eq!(fs.parent(f), Err(FsError::NotADirectory));
    assert_eq!(fs.path_of(f), Err(FsError::NotADirectory));
}

#[test]
fn open_flags() {
    let mut fs = Fs::new();
    // Without create: must exist.
    assert_eq!(fs.open(ROOT, "f", READ), Err(FsError::NotFound));
    let f = fs.open(ROOT, "f", CREATE).unwrap();
    fs.write(f, 0, b"data").unwrap();
    // create without exclusive opens the existing file, untouched.
    assert_eq!(fs.open(ROOT, "f", CREATE), Ok(f));
    assert_eq!(contents(&fs, f), b"data");
    assert_eq!(fs.open(ROOT, "f", EXCL), Err(FsError::Exists));
    assert_eq!(fs.create(ROOT, "f", Kind::File), Err(FsError::Exists));
    assert_eq!(fs.create(ROOT, "f", Kind::Dir), Err(FsError::Exists));
    // truncate.
    assert_eq!(fs.open(ROOT, "/f", TRUNC), Ok(f));
    assert_eq!(fs.stat(f).unwrap().size, 0);
    // directory flag.
    assert_eq!(fs.open(ROOT, "f", DIRECTORY), Err(FsError::NotADirectory));
    let d = fs.mkdir(ROOT, "d").unwrap();
    assert_eq!(fs.open(ROOT, "d", DIRECTORY), Ok(d));
    assert_eq!(fs.open(ROOT, "d", READ), Ok(d));
    assert_eq!(fs.open(ROOT, "/", DIRECTORY), Ok(ROOT));
    // Directories can't be opened for writing, truncated, or created over.
    assert_eq!(fs.open(ROOT, "d", OpenFlags { write: true, ..READ }), Err(FsError::IsADirectory));
    assert_eq!(fs.open(ROOT, "d", TRUNC), Err(FsError::IsADirectory));
    assert_eq!(fs.open(ROOT, "d", CREATE), Err(FsError::IsADirectory));
    assert_eq!(fs.open(ROOT, "d", EXCL), Err(FsError::Exists));
    for p in ["/", ".", "..", "d/.", "d/.."] {
        assert_eq!(fs.open(ROOT, p, CREATE), Err(FsError::IsADirectory), "{p}");
        assert_eq!(fs.open(ROOT, p, EXCL), Err(FsError::Exists), "{p}");
    }
    // create with a trailing slash names a directory.
    assert_eq!(fs.open(ROOT, "new/", CREATE), Err(FsError::IsADirectory));
    assert_eq!(fs.open(ROOT, "f/", CREATE), Err(FsError::IsADirectory));
    assert_eq!(fs.lookup(ROOT, "new"), Err(FsError::NotFound));
    // create + directory is contradictory.
    assert_eq!(fs.open(ROOT, "g", OpenFlags { directory: true, ..CREATE }), Err(FsError::Invalid));
    // Missing parent.
    assert_eq!(fs.open(ROOT, "nope/g", CREATE), Err(FsError::NotFound));
    assert_eq!(fs.open(ROOT, "f/g", CREATE), Err(FsError::NotADirectory));
    ok(&fs);
}

#[test]
fn stat_and_timestamps() {
    let mut fs = Fs::new();
    fs.set_time(10);
    let d = fs.mkdir(ROOT, "d").unwrap();
    let st = fs.stat(d).unwrap();
    assert_eq!((st.kind, st.nlink, st.size, st.mtime, st.ctime, st.atime), (Kind::Dir, 2, 0, 10, 10, 10));
    assert_eq!(fs.stat(ROOT).unwrap().nlink, 3);
    assert_eq!(fs.stat(ROOT).unwrap().mtime, 10);
    fs.set_time(20);
    let f = fs.create(d, "f", Kind::File).unwrap();
    assert_eq!(fs.stat(d).unwrap().mtime, 20);
    assert_eq!(fs.stat(d).unwrap().size, 1);
    fs.set_time(30);
    fs.write(f, 0, b"abc").unwrap();
    let st = fs.stat(f).unwrap();
    assert_eq!((st.kind, st.nlink, st.size, st.mtime, st.ctime, st.atime), (Kind::File, 1, 3, 30, 30, 20));
    // Reads leave times alone.
    fs.set_time(40);
    fs.read(f, 0, &mut [0; 3]).unwrap();
    assert_eq!(fs.stat(f).unwrap().atime, 20);
    fs.set_times(f, Some(5), None).unwrap();
    let st = fs.stat(f).unwrap();
    assert_eq!((st.atime, st.mtime, st.ctime), (5, 30, 40));
    fs.set_time(50);
    fs.set_times(f, None, Some(6)).unwrap();
    let st = fs.stat(f).unwrap();
    assert_eq!((st.atime, st.mtime, st.ctime), (5, 6, 50));
    assert_eq!(fs.time(), 50);
    // Inode numbers: the root is 1, others distinct.
    assert_eq!(ROOT.number(), 1);
    assert_ne!(d.number(), f.number());
    assert_eq!(oxok_ramfs::Ino::from_raw(f.to_raw()), f);
}
