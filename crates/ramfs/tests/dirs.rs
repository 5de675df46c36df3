//! Directories: mkdir, rmdir, sorted listings, stream cursors, link counts,
//! parents and paths.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::*;
use oxok_ramfs::{DirEntry, Fs, FsError, Kind};

#[test]
fn readdir_is_sorted_by_bytes() {
    let mut fs = Fs::new();
    for name in ["zeta", "Alpha", "beta", "a", "b.txt", "_", "10", "9"] {
        fs.create(ROOT, name, Kind::File).unwrap();
    }
    fs.mkdir(ROOT, "m").unwrap();
    assert_eq!(ls(&fs, "/"), ["10", "9", "Alpha", "_", "a", "b.txt", "beta", "m", "zeta"]);
    let entries = fs.readdir(ROOT).unwrap();
    let m = entries.iter().find(|e| e.name == b"m").unwrap();
    assert_eq!(m.kind, Kind::Dir);
    assert_eq!(m.ino, fs.lookup(ROOT, "m").unwrap());
    // Non-UTF-8 names are fine and sort by bytes.
    fs.create(ROOT, [0xffu8, 0xfe].as_slice(), Kind::File).unwrap();
    assert_eq!(fs.readdir(ROOT).unwrap().last().unwrap().name, [0xff, 0xfe]);
    ok(&fs);
}

#[test]
fn readdir_cursor_survives_changes() {
    let mut fs = Fs::new();
    let d = fs.mkdir(ROOT, "d").unwrap();
    for i in 0..100 {
        fs.create(d, format!("f{i:03}"), Kind::File).unwrap();
    }
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut cursor: Option<Vec<u8>> = None;
    let mut round = 0;
    loop {
        let batch = fs.readdir_after(d, cursor.as_deref(), 7).unwrap();
        if batch.is_empty() {
            break;
        }
        assert!(batch.len() <= 7);
        cursor = Some(batch.last().unwrap().name.clone());
        seen.extend(batch.into_iter().map(|e| e.name));
        // Between batches: remove an entry already returned, one ahead, and
        // add one behind the cursor and one ahead.
        round += 1;
        let _ = fs.unlink(d, format!("f{:03}", round * 7 - 7));
        let _ = fs.unlink(d, format!("f{:03}", round * 7 + 20));
        fs.create(d, format!("e{round:03}"), Kind::File).unwrap();
        fs.create(d, format!("g{round:03}"), Kind::File).unwrap();
    }
    // Every original entry not removed before the cursor reached it is
    // returned exactly once, in order.
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, seen, "no repeats, in order");
    for i in 0..100 {
        let name = format!("f{i:03}").into_bytes();
        let removed_ahead = i >= 20 && (i - 20) % 7 == 0;
        if !removed_ahead {
            assert!(seen.contains(&name), "f{i:03} skipped");
        }
    }
    assert_eq!(fs.readdir_after(d, Some(b"\xff"), 10).unwrap(), Vec::<DirEntry>::new());
    assert_eq!(fs.readdir_after(d, None, 0).unwrap(), Vec::<DirEntry>::new());
    ok(&fs);
}

#[test]
fn mkdir_rmdir_and_link_counts() {
    let mut fs = Fs::new();
    let a = fs.mkdir(ROOT, "/a").unwrap();
    let b = fs.mkdir(ROOT, "/a/b/").unwrap();
    fs.mkdir(a, "c").unwrap();
    fs.create(a, "file", Kind::File).unwrap();
    assert_eq!(fs.stat(ROOT).unwrap().nlink, 3);
    assert_eq!(fs.stat(a).unwrap().nlink, 4);
    assert_eq!(fs.stat(b).unwrap().nlink, 2);
    assert_eq!(fs.mkdir(ROOT, "a"), Err(FsError::Exists));
    assert_eq!(fs.mkdir(ROOT, "a/file"), Err(FsError::Exists));
    assert_eq!(fs.mkdir(ROOT, "a/file/x"), Err(FsError::NotADirectory));
    assert_eq!(fs.mkdir(ROOT, "nope/x"), Err(FsError::NotFound));
    for p in ["/", ".", "..", "a/.", "a/..", "//"] {
        assert_eq!(fs.mkdir(ROOT, p), Err(FsError::Exists), "{p}");
    }
    assert_eq!(fs.rmdir(ROOT, "a"), Err(FsError::NotEmpty));
    assert_eq!(fs.rmdir(ROOT, "a/file"), Err(FsError::NotADirectory));
    assert_eq!(fs.rmdir(ROOT, "a/nope"), Err(FsError::NotFound));
    assert_eq!(fs.rmdir(ROOT, "/"), Err(FsError::Busy));
    assert_eq!(fs.rmdir(ROOT, "."), Err(FsError::Invalid));
    assert_eq!(fs.rmdir(a, "b/.."), Err(FsError::NotEmpty));
    fs.rmdir(ROOT, "a/b/").unwrap();
    assert_eq!(fs.stat(b), Err(FsError::BadInode));
    assert_eq!(fs.stat(a).unwrap().nlink, 3);
    fs.rmdir(a, "./c").unwrap();
    fs.unlink(a, "file").unwrap();
    fs.rmdir(ROOT, "a").unwrap();
    assert_eq!(fs.stat(ROOT).unwrap().nlink, 2);
    assert_eq!(fs.statfs().inodes, 1);
    ok(&fs);
}

#[test]
fn parents_and_paths() {
    let mut fs = Fs::new();
    assert_eq!(fs.path_of(ROOT).unwrap(), b"/");
    assert_eq!(fs.parent(ROOT), Ok(ROOT));
    let a = fs.mkdir(ROOT, "a").unwrap();
    let b = fs.mkdir(a, "b").unwrap();
    let c = fs.mkdir(b, "c c").unwrap();
    assert_eq!(fs.path_of(c).unwrap(), b"/a/b/c c");
    assert_eq!(fs.parent(c), Ok(b));
    assert_eq!(fs.parent(a), Ok(ROOT));
    fs.rename(ROOT, "a/b", "/bee").unwrap();
    assert_eq!(fs.path_of(c).unwrap(), b"/bee/c c");
    assert_eq!(fs.parent(b), Ok(ROOT));
    assert_eq!(fs.lookup(c, "../../a"), Ok(a));
    // Deep trees: path_of works beyond PATH_MAX.
    let mut at = ROOT;
    for _ in 0..300 {
        at = fs.mkdir(at, "0123456789abcdef").unwrap();
    }
    let path = fs.path_of(at).unwrap();
    assert_eq!(path.len(), 300 * 17);
    assert!(path.len() >= oxok_ramfs::PATH_MAX);
    assert_eq!(fs.lookup(ROOT, &path), Err(FsError::TooLong));
    assert_eq!(fs.lookup(ROOT, &path[..17 * 200]).unwrap(), fs.lookup(at, "../".repeat(100)).unwrap());
    ok(&fs);
}
