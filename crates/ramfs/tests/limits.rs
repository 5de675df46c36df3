//! Limits: filling the file system, the per-file size limit, the inode
//! limit.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::*;
use oxok_ramfs::{Fs, FsError, Kind, Limits, PAGE_SIZE};

const P: u64 = PAGE_SIZE as u64;

#[test]
fn fill_to_the_byte_limit() {
    let mut fs = Fs::with_limits(Limits { max_bytes: 10 * P, ..Limits::DEFAULT });
    let a = fs.create(ROOT, "a", Kind::File).unwrap();
    // A write that does not fit is cut short at the limit.
    let data = vec![1u8; 12 * PAGE_SIZE];
    assert_eq!(fs.write(a, 0, &data), Ok(10 * PAGE_SIZE));
    assert_eq!(fs.statfs().used_bytes, 10 * P);
    assert_eq!(fs.write(a, 10 * P, b"x"), Err(FsError::NoSpace));
    // Writes into allocated pages still work; holes can't be filled.
    assert_eq!(fs.write(a, 5, b"over"), Ok(4));
    let b = fs.create(ROOT, "b", Kind::File).unwrap();
    assert_eq!(fs.write(b, 0, b"x"), Err(FsError::NoSpace));
    assert_eq!(fs.stat(b).unwrap().size, 0, "failed write leaves no trace");
    // Truncating up is free (a hole)…
    fs.truncate(b, 100 * P).unwrap();
    assert_eq!(fs.stat(b).unwrap().allocated, 0);
    // …unlink frees space.
    fs.truncate(a, 3 * P + 1).unwrap();
    assert_eq!(fs.statfs().used_bytes, 4 * P);
    assert_eq!(fs.write(b, 0, &data), Ok(6 * PAGE_SIZE));
    fs.unlink(ROOT, "a").unwrap();
    assert_eq!(fs.statfs().used_bytes, 6 * P);
    ok(&fs);
}

#[test]
fn pinned_unlinked_files_hold_their_space() {
    let mut fs = Fs::with_limits(Limits { max_bytes: 4 * P, ..Limits::DEFAULT });
    let a = put(&mut fs, "/a", &[9u8; 4 * PAGE_SIZE]);
    fs.pin(a).unwrap();
    fs.unlink(ROOT, "a").unwrap();
    let b = fs.create(ROOT, "b", Kind::File).unwrap();
    assert_eq!(fs.write(b, 0, b"x"), Err(FsError::NoSpace));
    fs.unpin(a).unwrap();
    assert_eq!(fs.write(b, 0, b"x"), Ok(1));
    ok(&fs);
}

#[test]
fn per_file_size_limit() {
    let mut fs = Fs::with_limits(Limits { max_file_size: 1000, ..Limits::DEFAULT });
    let f = fs.create(ROOT, "f", Kind::File).unwrap();
    assert_eq!(fs.write(f, 990, &[1u8; 50]), Ok(10), "clipped at the limit");
    assert_eq!(fs.stat(f).unwrap().size, 1000);
    assert_eq!(fs.write(f, 1000, b"x"), Err(FsError::FileTooBig));
    assert_eq!(fs.write(f, u64::MAX, b"x"), Err(FsError::FileTooBig));
    assert_eq!(fs.write(f, u64::MAX, b""), Ok(0));
    assert_eq!(fs.truncate(f, 1001), Err(FsError::FileTooBig));
    assert_eq!(fs.truncate(f, u64::MAX), Err(FsError::FileTooBig));
    fs.truncate(f, 1000).unwrap();
    ok(&fs);
}

#[test]
fn huge_offsets_with_no_file_limit() {
    let mut fs = Fs::with_limits(Limits { max_file_size: u64::MAX, max_bytes: 8 * P, max_inodes: 4 });
    let f = fs.create(ROOT, "f", Kind::File).unwrap();
    assert_eq!(fs.write(f, u64::MAX - 3, b"abcdef"), Ok(3));
    assert_eq!(fs.stat(f).unwrap().size, u64::MAX);
    assert_eq!(fs.stat(f).unwrap().allocated, P);
    let mut buf = [0u8; 8];
    assert_eq!(fs.read(f, u64::MAX - 3, &mut buf), Ok(3));
    assert_eq!(&buf[..3], b"abc");
    assert_eq!(fs.read(f, 1 << 62, &mut buf), Ok(8));
    assert_eq!(buf, [0; 8]);
    assert_eq!(fs.write(f, u64::MAX, b"x"), Err(FsError::FileTooBig));
    fs.truncate(f, u64::MAX - 1).unwrap();
    assert_eq!(fs.read(f, u64::MAX - 3, &mut buf), Ok(2));
    fs.truncate(f, 1 << 50).unwrap();
    assert_eq!(fs.stat(f).unwrap().allocated, 0);
    ok(&fs);
}

#[test]
fn inode_limit() {
    let mut fs = Fs::with_limits(Limits { max_inodes: 4, ..Limits::DEFAULT });
    fs.mkdir(ROOT, "d").unwrap();
    fs.create(ROOT, "f", Kind::File).unwrap();
    fs.create(ROOT, "g", Kind::File).unwrap();
    assert_eq!(fs.create(ROOT, "h", Kind::File), Err(FsError::NoSpace));
    assert_eq!(fs.mkdir(ROOT, "e"), Err(FsError::NoSpace));
    assert_eq!(fs.open(ROOT, "h", CREATE), Err(FsError::NoSpace));
    // Existing names still report Exists, links need no inode.
    assert_eq!(fs.create(ROOT, "f", Kind::File), Err(FsError::Exists));
    fs.link(ROOT, "f", "d/f2").unwrap();
    assert_eq!(fs.statfs().inodes, 4);
    assert_eq!(ls(&fs, "/"), ["d", "f", "g"]);
    fs.unlink(ROOT, "g").unwrap();
    fs.create(ROOT, "h", Kind::File).unwrap();
    ok(&fs);
}

#[test]
fn lowering_limits_later() {
    let mut fs = Fs::new();
    let f = put(&mut fs, "/f", &[1u8; 3 * PAGE_SIZE]);
    fs.set_limits(Limits { max_bytes: P, max_file_size: 10, max_inodes: 1 });
    assert_eq!(fs.limits().max_inodes, 1);
    assert_eq!(fs.write(f, 0, b"x"), Ok(1), "existing pages still writable");
    assert_eq!(fs.write(f, 20, b"x"), Err(FsError::FileTooBig));
    assert_eq!(fs.create(ROOT, "g", Kind::File), Err(FsError::NoSpace));
    fs.truncate(f, 5).unwrap();
    assert_eq!(fs.statfs().used_bytes, P);
    ok(&fs);
}
