//! Hard links (`link(2)`): to files and to symbolic links, link counts,
//! shared contents, and which component is followed.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::*;
use oxok_ramfs::{Fs, FsError, Kind};

#[test]
fn hard_link_to_a_file() {
    let mut fs = Fs::new();
    let d = fs.mkdir(ROOT, "d").unwrap();
    let f = put(&mut fs, "/f", b"one");
    fs.set_time(5);
    fs.link(ROOT, "f", "d/g").unwrap();
    let st = fs.stat(f).unwrap();
    assert_eq!((st.nlink, st.ctime), (2, 5));
    assert_eq!(fs.lookup(d, "g"), Ok(f));
    let e = fs.readdir(d).unwrap().pop().unwrap();
    assert_eq!((e.ino, e.kind), (f, Kind::File));
    // Both names read the same data; a write through one shows in the other.
    let g = fs.open(ROOT, "d/g", TRUNC).unwrap();
    fs.write(g, 0, b"two").unwrap();
    assert_eq!(contents(&fs, fs.lookup(ROOT, "f").unwrap()), b"two");
    // Unlinking one name keeps the other, and the data.
    fs.unlink(ROOT, "f").unwrap();
    assert_eq!(fs.stat(f).unwrap().nlink, 1);
    assert_eq!(contents(&fs, fs.lookup(ROOT, "d/g").unwrap()), b"two");
    ok(&fs);
    fs.unlink(ROOT, "d/g").unwrap();
    assert!(!fs.is_live(f));
    assert_eq!(fs.statfs().used_bytes, 0);
    ok(&fs);
}

#[test]
fn hard_link_to_a_symlink_links_the_symlink() {
    let mut fs = Fs::new();
    let d = fs.mkdir(ROOT, "d").unwrap();
    let f = put(&mut fs, "/f", b"x");
    let l = fs.symlink(ROOT, "f", "l").unwrap();
    // link(2) does not follow the existing path's last component.
    fs.link(ROOT, "l", "l2").unwrap();
    assert_eq!(fs.lookup_nofollow(ROOT, "l2"), Ok(l));
    assert_eq!(fs.stat(l).unwrap().nlink, 2);
    assert_eq!(fs.stat(f).unwrap().nlink, 1);
    let e = fs.readdir(ROOT).unwrap().into_iter().find(|e| e.name == b"l2").unwrap();
    assert_eq!(e.kind, Kind::Symlink);
    assert_eq!(target(&fs, "l2"), "f");
    assert_eq!(fs.lookup(ROOT, "l2"), Ok(f));
    ok(&fs);
    // The same link in another directory: its relative target now resolves
    // from there.
    fs.link(ROOT, "l", "d/l3").unwrap();
    assert_eq!(fs.lookup(d, "l3"), Err(FsError::NotFound));
    assert_eq!(fs.stat(l).unwrap().nlink, 3);
    fs.unlink(ROOT, "l").unwrap();
    fs.unlink(ROOT, "d/l3").unwrap();
    assert_eq!(fs.lookup(ROOT, "l2"), Ok(f));
    assert_eq!(fs.stat(l).unwrap().nlink, 1);
    ok(&fs);
    // Dangling links and links to directories are linked too (only a
    // directory itself is refused).
    fs.symlink(ROOT, "nowhere", "dangling").unwrap();
    fs.link(ROOT, "dangling", "dangling2").unwrap();
    fs.symlink(ROOT, "d", "ld").unwrap();
    fs.link(ROOT, "ld", "ld2").unwrap();
    assert_eq!(fs.lookup(ROOT, "ld2"), Ok(d));
    assert_eq!(fs.link(ROOT, "ld/", "x"), Err(FsError::NotPermitted));
    assert_eq!(fs.link(ROOT, "ld/.", "x"), Err(FsError::NotPermitted));
    assert_eq!(fs.link(ROOT, "d", "x"), Err(FsError::NotPermitted));
    // Links before the last component are followed, on both sides.
    fs.link(ROOT, "ld/../f", "ld/f").unwrap();
    assert_eq!(fs.lookup(d, "f"), Ok(f));
    assert_eq!(fs.stat(f).unwrap().nlink, 2);
    assert_eq!(fs.link(ROOT, "f", "ld"), Err(FsError::Exists));
    assert_eq!(fs.link(ROOT, "f", "dangling/x"), Err(FsError::NotFound));
    ok(&fs);
    // Renaming one hard link of a symlink onto another: nothing happens.
    fs.rename(ROOT, "ld", "ld2").unwrap();
    assert_eq!(ls(&fs, "/"), ["d", "dangling", "dangling2", "f", "l2", "ld", "ld2"]);
    ok(&fs);
}
