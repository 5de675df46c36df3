//! Symbolic links (`Fs::symlink`, `Fs::readlink`): embedded in their
//! directory as small files are, their target their data; C-FFS never
//! follows one itself — a path through one is `Symlink`, for its user to
//! follow.

use oxok_cffs::host::MemDisk;
use oxok_cffs::layout::SYMLINK_MAX;
use oxok_cffs::{Fs, FsError, Kind, fsck};

const OWNER: u64 = 7;

fn fresh() -> Fs<MemDisk> {
    Fs::mkfs(MemDisk::blank(512, OWNER, 0xa5).unwrap(), OWNER).unwrap()
}

fn reboot(mut fs: Fs<MemDisk>) -> Fs<MemDisk> {
    fs.sync().unwrap();
    let (mut d, _) = MemDisk::open(fs.into_disk().image().to_vec(), OWNER).unwrap();
    let f = fsck(&mut d).unwrap();
    assert!(f.clean(), "{f:?}");
    Fs::mount(d, OWNER).unwrap().0
}

#[test]
fn a_link_keeps_its_target_and_is_listed_as_a_link() {
    let mut fs = fresh();
    fs.mkdir("/d").unwrap();
    fs.create("/d/f").unwrap();
    fs.symlink(b"/d/f", "/abs").unwrap();
    fs.symlink(b"../d/./f", "/d/rel").unwrap();
    let long = vec![b'x'; SYMLINK_MAX];
    fs.symlink(&long, "/long").unwrap();
    assert_eq!(fs.symlink(b"/x", "/abs"), Err(FsError::Exists));
    assert_eq!(fs.symlink(b"", "/empty"), Err(FsError::InvalidArg));
    assert_eq!(fs.symlink(&[b'x'; SYMLINK_MAX + 1], "/big"), Err(FsError::InvalidArg));
    let st = fs.stat("/abs").unwrap();
    assert_eq!((st.kind, st.size, st.nlink), (Kind::Symlink, 4, 1));
    let mut fs = reboot(fs);
    assert_eq!(fs.readlink("/abs").unwrap(), b"/d/f");
    assert_eq!(fs.readlink("/d/rel").unwrap(), b"../d/./f", "the target as it was given");
    assert_eq!(fs.readlink("/long").unwrap(), long);
    assert_eq!(fs.readlink("/d/f"), Err(FsError::InvalidArg), "a file is no link");
    assert_eq!(fs.readlink("/none"), Err(FsError::NotFound));
    let mut names = fs.readdir("/").unwrap();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(names, [("abs".into(), Kind::Symlink), ("d".into(), Kind::Dir), ("long".into(), Kind::Symlink)]);
}

#[test]
fn a_path_through_a_link_is_left_to_its_user() {
    let mut fs = fresh();
    fs.mkdir("/d").unwrap();
    fs.create("/d/f").unwrap();
    fs.symlink(b"/d", "/ld").unwrap();
    fs.symlink(b"/d/f", "/lf").unwrap();
    // Through a link: the caller follows it and asks again.
    assert_eq!(fs.stat("/ld/f"), Err(FsError::Symlink));
    assert_eq!(fs.create("/ld/g"), Err(FsError::Symlink));
    assert_eq!(fs.readdir("/ld"), Err(FsError::Symlink));
    // The link itself is not a file, nor a second name's inode.
    assert_eq!(fs.write("/lf", 0, b"x"), Err(FsError::Symlink));
    assert_eq!(fs.link("/lf", "/lf2"), Err(FsError::Symlink));
    assert_eq!(fs.detach("/lf"), Err(FsError::Symlink));
    // Renamed and removed as a name is; its block freed with it.
    fs.rename("/lf", "/d/moved").unwrap();
    assert_eq!(fs.readlink("/d/moved").unwrap(), b"/d/f");
    fs.unlink("/d/moved").unwrap();
    fs.unlink("/ld").unwrap();
    assert_eq!(fs.stat("/ld"), Err(FsError::NotFound));
    let fs = reboot(fs);
    assert_eq!(fs.disk().xn().blocks().count(), {
        let mut clean = fresh();
        clean.mkdir("/d").unwrap();
        clean.create("/d/f").unwrap();
        clean.sync().unwrap();
        clean.disk().xn().blocks().count()
    });
}

#[test]
fn a_name_taken_by_a_link_is_known_to_a_directory_read_whole() {
    // A directory whose names the cache holds all (`create` then looks
    // for no name): a link's name is one of them.
    let mut fs = fresh();
    fs.mkdir("/d").unwrap();
    for i in 0..20 {
        fs.create(&format!("/d/f{i}")).unwrap();
    }
    fs.symlink(b"x", "/d/l").unwrap();
    let _ = fs.readdir("/d").unwrap();
    for i in 0..20 {
        fs.stat(&format!("/d/f{i}")).unwrap();
    }
    assert_eq!(fs.create("/d/l"), Err(FsError::Exists));
    assert_eq!(fs.mkdir("/d/l"), Err(FsError::Exists));
}

#[test]
fn copying_a_tree_copies_its_links_as_links() {
    let mut fs = fresh();
    fs.mkdir("/t").unwrap();
    fs.create("/t/f").unwrap();
    fs.write("/t/f", 0, b"data").unwrap();
    fs.symlink(b"f", "/t/l").unwrap();
    // A copy's sources must be durable (XN copies only written blocks).
    fs.sync().unwrap();
    fs.copy_tree("/t", "/u").unwrap();
    assert_eq!(fs.readlink("/u/l").unwrap(), b"f");
    assert_eq!(fs.stat("/u/l").unwrap().kind, Kind::Symlink);
    reboot(fs);
}
