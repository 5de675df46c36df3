//! Permission bits: made with a file or directory, set by `chmod`, kept
//! when the inode moves and across a reboot (a disk of the format before
//! them is refused: `ops.rs`).

use oxok_cffs::host::MemDisk;
use oxok_cffs::layout::{DIR_MODE, FILE_MODE, SYMLINK_MODE};
use oxok_cffs::{Fs, FsError, fsck};

const OWNER: u64 = 7;

fn fresh(n: u64) -> Fs<MemDisk> {
    Fs::mkfs(MemDisk::blank(n, OWNER, 0xa5).unwrap(), OWNER).unwrap()
}

fn mode(fs: &mut Fs<MemDisk>, p: &str) -> u16 {
    fs.stat(p).unwrap().mode
}

/// Syncs, reopens the image as after a reboot and checks it with fsck.
fn reboot(mut fs: Fs<MemDisk>) -> Fs<MemDisk> {
    fs.sync().unwrap();
    let (mut d, _) = MemDisk::open(fs.into_disk().image().to_vec(), OWNER).unwrap();
    assert!(fsck(&mut d).unwrap().clean());
    Fs::mount(d, OWNER).unwrap().0
}

#[test]
fn files_and_directories_keep_the_bits_they_were_made_with_and_given() {
    let mut fs = fresh(256);
    fs.create_mode("/f", 0o600).unwrap();
    fs.mkdir_mode("/d", 0o700).unwrap();
    fs.create("/g").unwrap();
    fs.mkdir("/e").unwrap();
    fs.symlink(b"/f", "/l").unwrap();
    let all = |fs: &mut Fs<MemDisk>| ["/f", "/d", "/g", "/e", "/l", "/"].map(|p| mode(fs, p));
    assert_eq!(all(&mut fs), [0o600, 0o700, FILE_MODE, DIR_MODE, SYMLINK_MODE, DIR_MODE]);
    // chmod: the set-id and sticky bits are kept, nothing past them.
    fs.set_mode("/f", 0o4755).unwrap();
    fs.set_mode("/d", 0o177_777).unwrap();
    fs.set_mode("/", 0o1777).unwrap();
    assert_eq!((mode(&mut fs, "/f"), mode(&mut fs, "/d"), mode(&mut fs, "/")), (0o4755, 0o7777, 0o1777));
    // An embedded file moved to another directory's block, and a file
    // given a second name (its inode moves out of line), keep theirs.
    fs.rename("/f", "/e/f").unwrap();
    fs.link("/g", "/e/h").unwrap();
    fs.set_mode("/e/h", 0o640).unwrap();
    assert_eq!((mode(&mut fs, "/e/f"), mode(&mut fs, "/g")), (0o4755, 0o640));
    // A file whose last name went, while open.
    let ino = fs.detach("/g").unwrap();
    assert_eq!(fs.detach("/e/h"), Ok(ino));
    fs.set_mode_detached(ino, 0o400).unwrap();
    assert_eq!(fs.stat_detached(ino).unwrap().mode, 0o400);
    fs.release(ino).unwrap();
    let mut fs = reboot(fs);
    assert_eq!((mode(&mut fs, "/e/f"), mode(&mut fs, "/d"), mode(&mut fs, "/")), (0o4755, 0o7777, 0o1777));
    assert_eq!(fs.set_mode("/none", 0o644), Err(FsError::NotFound));
}
