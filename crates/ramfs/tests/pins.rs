//! Unlink, pins (open files), hard links, removed working directories and
//! stale handles.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::*;
use oxok_ramfs::{Fs, FsError, Kind};

#[test]
fn unlinked_but_pinned_files_live_on() {
    let mut fs = Fs::new();
    let f = put(&mut fs, "/f", b"still here");
    fs.pin(f).unwrap();
    fs.pin(f).unwrap(); // two descriptors
    fs.unlink(ROOT, "f").unwrap();
    assert_eq!(fs.lookup(ROOT, "f"), Err(FsError::NotFound));
    let st = fs.stat(f).unwrap();
    assert_eq!((st.nlink, st.pins), (0, 2));
    // Readable and writable through the handle.
    fs.write(f, 10, b"!").unwrap();
    assert_eq!(contents(&fs, f), b"still here!");
    // A new file of the same name is a different inode.
    let g = fs.create(ROOT, "f", Kind::File).unwrap();
    assert_ne!(g, f);
    assert!(fs.statfs().used_bytes > 0);
    ok(&fs);
    fs.unpin(f).unwrap();
    assert!(fs.is_live(f));
    fs.unpin(f).unwrap();
    assert!(!fs.is_live(f));
    assert_eq!(fs.read(f, 0, &mut [0; 4]), Err(FsError::BadInode));
    assert_eq!(fs.write(f, 0, b"x"), Err(FsError::BadInode));
    assert_eq!(fs.pin(f), Err(FsError::BadInode));
    assert_eq!(fs.unpin(f), Err(FsError::BadInode));
    assert_eq!(fs.statfs().used_bytes, 0);
    ok(&fs);
}

#[test]
fn pins_keep_linked_files_and_unpin_must_balance() {
    let mut fs = Fs::new();
    let f = fs.create(ROOT, "f", Kind::File).unwrap();
    assert_eq!(fs.unpin(f), Err(FsError::Invalid));
    fs.pin(f).unwrap();
    fs.unpin(f).unwrap();
    assert!(fs.is_live(f), "still linked");
    assert_eq!(fs.unpin(f), Err(FsError::Invalid));
    assert_eq!(fs.unpin(ROOT), Err(FsError::Invalid));
    fs.pin(ROOT).unwrap();
    fs.unpin(ROOT).unwrap();
    assert!(fs.is_live(ROOT));
    ok(&fs);
}

#[test]
fn unlink_rules() {
    let mut fs = Fs::new();
    fs.mkdir(ROOT, "d").unwrap();
    assert_eq!(fs.unlink(ROOT, "d"), Err(FsError::IsADirectory));
    assert_eq!(fs.unlink(ROOT, "/"), Err(FsError::IsADirectory));
    assert_eq!(fs.unlink(ROOT, "."), Err(FsError::IsADirectory));
    assert_eq!(fs.unlink(ROOT, "d/.."), Err(FsError::IsADirectory));
    assert_eq!(fs.unlink(ROOT, "nope"), Err(FsError::NotFound));
    assert_eq!(fs.unlink(ROOT, "nope/x"), Err(FsError::NotFound));
    fs.create(ROOT, "d/f", Kind::File).unwrap();
    assert_eq!(fs.unlink(ROOT, "d/f/x"), Err(FsError::NotADirectory));
    fs.unlink(ROOT, "d/f").unwrap();
    assert_eq!(fs.unlink(ROOT, "d/f"), Err(FsError::NotFound));
    ok(&fs);
}

#[test]
fn hard_links() {
    let mut fs = Fs::new();
    let d = fs.mkdir(ROOT, "d").unwrap();
    let f = put(&mut fs, "/f", b"shared");
    fs.link(ROOT, "f", "d/g").unwrap();
    fs.link_at(d, "g", ROOT, "h").unwrap();
    assert_eq!(fs.stat(f).unwrap().nlink, 3);
    assert_eq!(fs.lookup(ROOT, "d/g"), Ok(f));
    fs.write(fs.lookup(ROOT, "h").unwrap(), 0, b"S").unwrap();
    assert_eq!(contents(&fs, f), b"Shared");
    assert_eq!(fs.link(ROOT, "f", "h"), Err(FsError::Exists));
    assert_eq!(fs.link(ROOT, "f", "."), Err(FsError::Exists));
    assert_eq!(fs.link(ROOT, "f", "/"), Err(FsError::Exists));
    assert_eq!(fs.link(ROOT, "f", "new/"), Err(FsError::NotFound));
    assert_eq!(fs.link(ROOT, "f/", "new"), Err(FsError::NotADirectory));
    assert_eq!(fs.link(ROOT, "d", "d2"), Err(FsError::NotPermitted));
    assert_eq!(fs.link(ROOT, "nope", "x"), Err(FsError::NotFound));
    assert_eq!(fs.link(ROOT, "f", "nope/x"), Err(FsError::NotFound));
    fs.unlink(ROOT, "f").unwrap();
    fs.unlink(ROOT, "d/g").unwrap();
    assert_eq!(fs.stat(f).unwrap().nlink, 1);
    fs.unlink(ROOT, "h").unwrap();
    assert!(!fs.is_live(f));
    ok(&fs);
}

#[test]
fn removed_working_directory() {
    let mut fs = Fs::new();
    let a = fs.mkdir(ROOT, "a").unwrap();
    let cwd = fs.mkdir(a, "cwd").unwrap();
    fs.pin(cwd).unwrap();
    fs.rmdir(ROOT, "a/cwd").unwrap();
    let st = fs.stat(cwd).unwrap();
    assert_eq!((st.kind, st.nlink, st.size), (Kind::Dir, 0, 0));
    // "." still works; names and ".." do not; nothing can be created in it.
    assert_eq!(fs.lookup(cwd, "."), Ok(cwd));
    assert_eq!(fs.lookup(cwd, ".."), Err(FsError::NotFound));
    assert_eq!(fs.lookup(cwd, "x"), Err(FsError::NotFound));
    assert_eq!(fs.create(cwd, "x", Kind::File), Err(FsError::NotFound));
    assert_eq!(fs.open(cwd, "x", CREATE), Err(FsError::NotFound));
    assert_eq!(fs.mkdir(cwd, "x"), Err(FsError::NotFound));
    assert_eq!(fs.link(ROOT, "/a", "x"), Err(FsError::NotPermitted));
    fs.create(ROOT, "f", Kind::File).unwrap();
    assert_eq!(fs.link_at(ROOT, "f", cwd, "x"), Err(FsError::NotFound));
    assert_eq!(fs.rename_at(ROOT, "f", cwd, "x"), Err(FsError::NotFound));
    assert_eq!(fs.rename_at(ROOT, "a", cwd, "x"), Err(FsError::NotFound));
    assert_eq!(fs.parent(cwd), Err(FsError::NotFound));
    assert_eq!(fs.path_of(cwd), Err(FsError::NotFound));
    assert_eq!(fs.readdir(cwd).unwrap(), vec![]);
    assert_eq!(fs.rmdir(cwd, "."), Err(FsError::Invalid));
    // Absolute paths still work from it.
    assert_eq!(fs.lookup(cwd, "/a"), Ok(a));
    ok(&fs);
    fs.unpin(cwd).unwrap();
    assert!(!fs.is_live(cwd));
    // The parent can go now too.
    fs.rmdir(ROOT, "a").unwrap();
    ok(&fs);
}

#[test]
fn pinned_directory_replaced_by_rename() {
    let mut fs = Fs::new();
    let victim = fs.mkdir(ROOT, "victim").unwrap();
    fs.mkdir(ROOT, "src").unwrap();
    fs.pin(victim).unwrap();
    fs.rename(ROOT, "src", "victim").unwrap();
    assert_eq!(fs.stat(victim).unwrap().nlink, 0);
    assert_eq!(fs.path_of(victim), Err(FsError::NotFound));
    ok(&fs);
    fs.unpin(victim).unwrap();
    assert!(!fs.is_live(victim));
    ok(&fs);
}

#[test]
fn stale_handles_never_name_new_inodes() {
    let mut fs = Fs::new();
    let mut old = Vec::new();
    for round in 0..50 {
        let f = fs.create(ROOT, format!("f{round}"), Kind::File).unwrap();
        for &o in &old {
            assert_ne!(o, f);
            assert_eq!(fs.stat(o), Err(FsError::BadInode));
        }
        fs.unlink(ROOT, format!("f{round}")).unwrap();
        old.push(f);
    }
    assert!(old.iter().all(|o| o.number() == old[0].number()), "one slot reused throughout");
    ok(&fs);
}
