//! Rename: files, directories, replacement, the POSIX rules and cycles.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::*;
use oxok_ramfs::{Fs, FsError, Ino, Kind};

#[test]
fn rename_file_within_and_across_directories() {
    let mut fs = Fs::new();
    let d = fs.mkdir(ROOT, "d").unwrap();
    let f = put(&mut fs, "/f", b"x");
    fs.rename(ROOT, "f", "g").unwrap();
    assert_eq!(fs.lookup(ROOT, "f"), Err(FsError::NotFound));
    assert_eq!(fs.lookup(ROOT, "g"), Ok(f));
    fs.rename(ROOT, "g", "d/h").unwrap();
    assert_eq!(fs.lookup(d, "h"), Ok(f));
    assert_eq!(ls(&fs, "/"), ["d"]);
    fs.rename_at(d, "h", ROOT, "back").unwrap();
    assert_eq!(fs.lookup(ROOT, "back"), Ok(f));
    assert_eq!(fs.stat(f).unwrap().nlink, 1);
    assert_eq!(contents(&fs, f), b"x");
    ok(&fs);
}

#[test]
fn replacing_a_file_is_atomic_and_frees_the_old_one() {
    let mut fs = Fs::new();
    let old = put(&mut fs, "/target", b"old");
    let new = put(&mut fs, "/new", b"new");
    let used = fs.statfs().used_bytes;
    fs.rename(ROOT, "new", "target").unwrap();
    assert_eq!(fs.lookup(ROOT, "target"), Ok(new));
    assert_eq!(fs.stat(old), Err(FsError::BadInode));
    assert!(fs.statfs().used_bytes < used);
    // A pinned target survives being replaced.
    let keep = put(&mut fs, "/keep", b"kept");
    fs.pin(keep).unwrap();
    fs.rename(ROOT, "target", "keep").unwrap();
    assert_eq!(fs.stat(keep).unwrap().nlink, 0);
    assert_eq!(contents(&fs, keep), b"kept");
    ok(&fs);
    fs.unpin(keep).unwrap();
    assert_eq!(fs.stat(keep), Err(FsError::BadInode));
    assert_eq!(ls(&fs, "/"), ["keep"]);
    ok(&fs);
}

#[test]
fn directory_rules() {
    let mut fs = Fs::new();
    let a = fs.mkdir(ROOT, "a").unwrap();
    let b = fs.mkdir(ROOT, "a/b").unwrap();
    fs.mkdir(ROOT, "a/b/c").unwrap();
    fs.mkdir(ROOT, "empty").unwrap();
    fs.mkdir(ROOT, "full").unwrap();
    fs.create(ROOT, "full/x", Kind::File).unwrap();
    fs.create(ROOT, "file", Kind::File).unwrap();
    // Into its own subtree.
    assert_eq!(fs.rename(ROOT, "a", "a/b/c/a"), Err(FsError::Invalid));
    assert_eq!(fs.rename(ROOT, "a", "a/z"), Err(FsError::Invalid));
    assert_eq!(fs.rename(ROOT, "a", "a/b"), Err(FsError::Invalid));
    assert_eq!(fs.rename(a, "b", "b/c/d"), Err(FsError::Invalid));
    // Onto an ancestor: the ancestor is not empty.
    assert_eq!(fs.rename(ROOT, "a/b", "a"), Err(FsError::NotEmpty));
    assert_eq!(fs.rename(ROOT, "a/b/c", "a"), Err(FsError::NotEmpty));
    // Kind mismatches and non-empty targets.
    assert_eq!(fs.rename(ROOT, "a", "file"), Err(FsError::NotADirectory));
    assert_eq!(fs.rename(ROOT, "file", "empty"), Err(FsError::IsADirectory));
    assert_eq!(fs.rename(ROOT, "a", "full"), Err(FsError::NotEmpty));
    // Dots, root.
    assert_eq!(fs.rename(ROOT, "/", "x"), Err(FsError::Busy));
    assert_eq!(fs.rename(ROOT, "a", "/"), Err(FsError::Busy));
    assert_eq!(fs.rename(ROOT, "a/.", "x"), Err(FsError::Busy));
    assert_eq!(fs.rename(ROOT, "a/b/..", "x"), Err(FsError::Busy));
    assert_eq!(fs.rename(ROOT, "a", "empty/."), Err(FsError::Busy));
    // Missing things.
    assert_eq!(fs.rename(ROOT, "nope", "x"), Err(FsError::NotFound));
    assert_eq!(fs.rename(ROOT, "a", "nope/x"), Err(FsError::NotFound));
    assert_eq!(fs.rename(ROOT, "file/x", "y"), Err(FsError::NotADirectory));
    // Trailing slashes: fine on directories, not on files.
    assert_eq!(fs.rename(ROOT, "file/", "f2"), Err(FsError::NotADirectory));
    assert_eq!(fs.rename(ROOT, "file", "f2/"), Err(FsError::NotADirectory));
    ok(&fs);
    // Nothing changed.
    assert_eq!(ls(&fs, "/"), ["a", "empty", "file", "full"]);
    // A directory replaces an empty directory.
    let empty = fs.lookup(ROOT, "empty").unwrap();
    fs.rename(ROOT, "a/b/", "empty/").unwrap();
    assert_eq!(fs.lookup(ROOT, "empty"), Ok(b));
    assert_eq!(fs.stat(empty), Err(FsError::BadInode));
    assert_eq!(fs.lookup(ROOT, "empty/c/.."), Ok(b));
    assert_eq!(fs.path_of(fs.lookup(ROOT, "empty/c").unwrap()).unwrap(), b"/empty/c");
    assert_eq!(fs.stat(a).unwrap().nlink, 2);
    assert_eq!(fs.stat(ROOT).unwrap().nlink, 5);
    ok(&fs);
}

#[test]
fn same_inode_is_a_no_op() {
    let mut fs = Fs::new();
    let f = put(&mut fs, "/f", b"1");
    fs.rename(ROOT, "f", "f").unwrap();
    fs.rename(ROOT, "f", "./f").unwrap();
    fs.link(ROOT, "f", "g").unwrap();
    fs.rename(ROOT, "f", "g").unwrap();
    assert_eq!(fs.lookup(ROOT, "f"), Ok(f));
    assert_eq!(fs.lookup(ROOT, "g"), Ok(f));
    assert_eq!(fs.stat(f).unwrap().nlink, 2);
    let d = fs.mkdir(ROOT, "d").unwrap();
    fs.rename(ROOT, "d", "/d/").unwrap();
    assert_eq!(fs.lookup(ROOT, "d"), Ok(d));
    ok(&fs);
}

#[test]
fn random_directory_renames_never_make_cycles() {
    let mut rng = Rng::new(77);
    let mut fs = Fs::new();
    let mut dirs: Vec<Ino> = vec![ROOT];
    for i in 0..60 {
        let parent = *rng.pick(&dirs);
        dirs.push(fs.mkdir(parent, format!("d{i}")).unwrap());
    }
    let (mut moved, mut refused) = (0, 0);
    for _ in 0..5000 {
        let src = *rng.pick(&dirs[1..]);
        let dst_dir = *rng.pick(&dirs);
        let from = fs.path_of(src).unwrap();
        let name = format!("n{}", rng.below(8));
        let mut to = fs.path_of(dst_dir).unwrap();
        if to != b"/" {
            to.push(b'/');
        }
        to.extend_from_slice(name.as_bytes());
        let within = fs.path_of(dst_dir).unwrap().starts_with(&from)
            && matches!(fs.path_of(dst_dir).unwrap().get(from.len()), None | Some(b'/'));
        match fs.rename(ROOT, &from, &to) {
            Ok(()) => {
                assert!(!within);
                moved += 1;
                if fs.lookup(ROOT, &to).unwrap() == src {
                    assert_eq!(fs.path_of(src).unwrap(), to);
                }
            }
            Err(FsError::Invalid) => {
                assert!(within);
                refused += 1;
            }
            Err(FsError::NotEmpty) => {}
            Err(e) => panic!("{e:?}"),
        }
        // Replaced empty directories die; drop them from the pool.
        dirs.retain(|&d| fs.is_live(d));
        ok(&fs);
    }
    assert!(moved > 500 && refused > 100, "moved {moved} refused {refused}");
}
