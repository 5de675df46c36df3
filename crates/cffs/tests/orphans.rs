//! Files that lose their name while open (`Fs::detach`): reached by inode
//! number until released, freed at the release or by mount after a crash.

use oxok_cffs::host::MemDisk;
use oxok_cffs::{Fs, FsError, fsck};

const OWNER: u64 = 7;

fn fresh() -> Fs<MemDisk> {
    Fs::mkfs(MemDisk::blank(512, OWNER, 0xa5).unwrap(), OWNER).unwrap()
}

/// Blocks allocated once everything is written back (a freed block is
/// free in XN only when no block on disk points to it any more).
fn allocated(fs: &mut Fs<MemDisk>) -> usize {
    fs.sync().unwrap();
    fs.disk().xn().blocks().count()
}

fn read_detached(fs: &mut Fs<MemDisk>, ino: u32) -> Vec<u8> {
    let size = fs.stat_detached(ino).unwrap().size as usize;
    let mut v = vec![0; size];
    assert_eq!(fs.read_detached(ino, 0, size, |at, b| v[at..at + b.len()].copy_from_slice(b)).unwrap(), size);
    v
}

/// The image after a sync, as a reboot finds it.
fn image(fs: &mut Fs<MemDisk>) -> Vec<oxok_cffs::layout::Block> {
    fs.sync().unwrap();
    fs.disk().image().to_vec()
}

#[test]
fn a_detached_file_lives_on_by_number_until_released() {
    let mut fs = fresh();
    fs.mkdir("/d").unwrap();
    let before = allocated(&mut fs);
    fs.create("/d/f").unwrap();
    let data: Vec<u8> = (0..9000u32).map(|i| i as u8).collect();
    fs.write("/d/f", 0, &data).unwrap();
    let ino = fs.detach("/d/f").unwrap();
    assert_eq!(fs.stat("/d/f"), Err(FsError::NotFound), "the name is gone");
    assert!(fs.readdir("/d").unwrap().is_empty());
    assert_eq!(read_detached(&mut fs, ino), data, "its bytes moved with it");
    assert_eq!(fs.stat_detached(ino).unwrap().nlink, 0);
    fs.write_detached(ino, 9000, b"more").unwrap();
    fs.truncate_detached(ino, 9002).unwrap();
    fs.set_mtime_detached(ino, 77).unwrap();
    let st = fs.stat_detached(ino).unwrap();
    assert_eq!((st.size, st.mtime, st.ino), (9002, 77, Some(ino)));
    assert_eq!(read_detached(&mut fs, ino)[9000..], *b"mo");
    // A file made under the old name is another file.
    fs.create("/d/f").unwrap();
    fs.write("/d/f", 0, b"new").unwrap();
    assert_eq!(read_detached(&mut fs, ino).len(), 9002);
    fs.unlink("/d/f").unwrap();
    fs.release(ino).unwrap();
    assert_eq!(allocated(&mut fs), before, "every block it held is free");
    assert_eq!(fs.stat_detached(ino), Err(FsError::NotFound), "released, its number names nothing");
    let (mut d, _) = MemDisk::open(image(&mut fs), OWNER).unwrap();
    let f = fsck(&mut d).unwrap();
    assert!(f.clean(), "{f:?}");
}

#[test]
fn a_crash_before_the_release_leaves_nothing_behind() {
    let mut fs = fresh();
    let before = allocated(&mut fs);
    fs.create("/f").unwrap();
    fs.write("/f", 0, &[3; 20_000]).unwrap();
    let ino = fs.detach("/f").unwrap();
    let (mut d, _) = MemDisk::open(image(&mut fs), OWNER).unwrap();
    assert_eq!(fsck(&mut d).unwrap().orphans, 1, "an inode no name reaches");
    let (mut fs, repairs) = Fs::mount(d, OWNER).unwrap();
    assert_eq!(repairs.orphans, 1);
    assert_eq!(allocated(&mut fs), before, "mount freed it and its blocks");
    assert_eq!(fs.stat_detached(ino), Err(FsError::NotFound));
}

#[test]
fn a_file_with_another_name_keeps_it_and_is_not_freed() {
    let mut fs = fresh();
    fs.create("/a").unwrap();
    fs.write("/a", 0, b"shared").unwrap();
    fs.link("/a", "/b").unwrap();
    let ino = fs.detach("/a").unwrap();
    assert_eq!(fs.stat_detached(ino).unwrap().nlink, 1);
    fs.write_detached(ino, 0, b"SH").unwrap();
    fs.release(ino).unwrap();
    let mut v = [0; 6];
    assert_eq!(fs.read("/b", 0, &mut v).unwrap(), 6);
    assert_eq!(&v, b"SHared", "written by number, read by the other name");
    let (mut d, _) = MemDisk::open(image(&mut fs), OWNER).unwrap();
    assert!(fsck(&mut d).unwrap().clean());
}

#[test]
fn only_files_detach_and_numbers_name_only_files() {
    let mut fs = fresh();
    fs.mkdir("/d").unwrap();
    assert_eq!(fs.detach("/d"), Err(FsError::IsDir));
    assert_eq!(fs.detach("/"), Err(FsError::IsDir));
    assert_eq!(fs.detach("/none"), Err(FsError::NotFound));
    let root = fs.stat("/").unwrap().ino.unwrap();
    assert_eq!(fs.stat_detached(root), Err(FsError::NotFound), "a directory's number");
    assert_eq!(fs.write_detached(root, 0, b"x"), Err(FsError::NotFound));
    assert_eq!(fs.release(9999), Err(FsError::Corrupt("inode number past the tables")));
}
