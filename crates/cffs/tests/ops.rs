//! The file-system operations through the real XN checks (host disk).

use oxok_cffs::host::{Event, MemDisk};
use oxok_cffs::{Cursor, Fs, FsError, Kind, Whence, fsck};

const OWNER: u64 = 7;

fn fresh(n: u64) -> Fs<MemDisk> {
    Fs::mkfs(MemDisk::blank(n, OWNER, 0xa5).unwrap(), OWNER).unwrap()
}

fn read_all(fs: &mut Fs<MemDisk>, p: &str) -> Vec<u8> {
    let size = fs.stat(p).unwrap().size as usize;
    let mut v = vec![0; size];
    assert_eq!(fs.read(p, 0, &mut v).unwrap(), size);
    v
}

/// Syncs, reopens the image as after a reboot (XN recovery + mount) and
/// checks it with fsck.
fn reboot(fs: Fs<MemDisk>) -> Fs<MemDisk> {
    let mut fs = fs;
    fs.sync().unwrap();
    let image = fs.into_disk().image().to_vec();
    let (mut d, report) = MemDisk::open(image, OWNER).unwrap();
    assert!(report.duplicates.is_empty() && report.unreadable.is_empty(), "{report:?}");
    let f = fsck(&mut d).unwrap();
    assert!(f.clean(), "{f:?}");
    let (fs, repairs) = Fs::mount(d, OWNER).unwrap();
    assert_eq!(repairs, Default::default());
    fs
}

#[test]
fn create_write_read_survive_a_reboot() {
    let mut fs = fresh(256);
    fs.mkdir("/a").unwrap();
    fs.create("/a/f").unwrap();
    let data: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
    assert_eq!(fs.write("/a/f", 0, &data).unwrap(), data.len());
    assert_eq!(fs.stat("/a/f").unwrap().size, 10_000);
    let mut fs = reboot(fs);
    assert_eq!(read_all(&mut fs, "/a/f"), data);
    assert_eq!(fs.readdir("/").unwrap(), [("a".to_string(), Kind::Dir)]);
    assert_eq!(fs.readdir("/a").unwrap(), [("f".to_string(), Kind::File)]);
    let s = fs.stat("/a/f").unwrap();
    assert_eq!((s.kind, s.nlink, s.blocks, s.ino), (Kind::File, 1, 3, None));
}

#[test]
fn files_carry_the_time_they_were_made_written_truncated_or_given() {
    let mut fs = fresh(256);
    fs.set_time(1_000);
    fs.mkdir("/d").unwrap();
    fs.create("/d/f").unwrap();
    fs.create("/d/g").unwrap();
    let mtime = |fs: &mut Fs<MemDisk>, p: &str| fs.stat(p).unwrap().mtime;
    assert_eq!((mtime(&mut fs, "/d"), mtime(&mut fs, "/d/f")), (1_000, 1_000));
    fs.set_time(2_000);
    fs.write("/d/f", 0, &[1; 5000]).unwrap();
    assert_eq!((mtime(&mut fs, "/d/f"), mtime(&mut fs, "/d/g")), (2_000, 1_000), "a write that grows");
    fs.set_time(3_000);
    fs.write("/d/f", 10, b"in place").unwrap();
    assert_eq!(mtime(&mut fs, "/d/f"), 3_000, "a write inside the file");
    fs.set_time(4_000);
    fs.truncate("/d/g", 0).unwrap();
    assert_eq!(mtime(&mut fs, "/d/g"), 4_000, "a truncate");
    // A name moved to another block, or a second name (the inode moves
    // out of line), keeps the file's time.
    fs.set_time(5_000);
    fs.rename("/d/f", "/f").unwrap();
    fs.link("/d/g", "/d/h").unwrap();
    assert_eq!((mtime(&mut fs, "/f"), mtime(&mut fs, "/d/g"), mtime(&mut fs, "/d/h")), (3_000, 4_000, 4_000));
    // A directory's time is its last name added or taken away.
    assert_eq!((mtime(&mut fs, "/"), mtime(&mut fs, "/d")), (5_000, 5_000), "the rename's and the link's");
    fs.set_time(6_000);
    fs.mkdir("/e").unwrap();
    assert_eq!((mtime(&mut fs, "/"), mtime(&mut fs, "/e")), (6_000, 6_000), "a mkdir");
    fs.set_mtime("/e", 1).unwrap();
    fs.create("/e/x").unwrap();
    assert_eq!(mtime(&mut fs, "/e"), 6_000, "a create in the second after set_mtime");
    fs.set_time(7_000);
    fs.unlink("/e/x").unwrap();
    assert_eq!(mtime(&mut fs, "/e"), 7_000, "an unlink");
    fs.set_time(8_000);
    let ino = fs.detach("/d/h").unwrap();
    fs.release(ino).unwrap();
    assert_eq!(mtime(&mut fs, "/d"), 8_000, "a name taken from an open file");
    fs.unlink("/e").unwrap();
    fs.set_mtime("/f", 123).unwrap();
    fs.set_mtime("/d", 456).unwrap();
    fs.set_mtime("/", 789).unwrap();
    assert_eq!(fs.set_mtime("/none", 1), Err(FsError::NotFound));
    let mut fs = reboot(fs);
    assert_eq!([mtime(&mut fs, "/f"), mtime(&mut fs, "/d"), mtime(&mut fs, "/")], [123, 456, 789]);
    assert_eq!(read_all(&mut fs, "/f")[10..18], *b"in place");
    // A clock past 2106 stays at the format's last second.
    fs.set_time(u64::MAX);
    fs.create("/late").unwrap();
    assert_eq!(mtime(&mut fs, "/late"), u64::from(u32::MAX));
}

#[test]
fn a_disk_of_an_earlier_format_is_refused_with_its_reason() {
    for (magic, lacks) in [("CFS1", "times"), ("CFS2", "permission bits")] {
        let fs = fresh(64);
        let mut image = fs.into_disk().image().to_vec();
        image[0][..4].copy_from_slice(magic.as_bytes());
        let (mut d, _) = MemDisk::open(image, OWNER).unwrap();
        let Err(FsError::Corrupt(why)) = fsck(&mut d) else { panic!("fsck passed a {magic} disk") };
        assert!(why.contains(magic) && why.contains(lacks), "{why}");
        let Err(FsError::Corrupt(why)) = Fs::mount(d, OWNER) else { panic!("a {magic} disk mounted") };
        assert!(why.contains(magic), "{why}");
    }
}

#[test]
fn small_files_of_a_directory_sit_together_after_it() {
    let mut fs = fresh(512);
    fs.mkdir("/d").unwrap();
    for i in 0..5 {
        let p = format!("/d/{i}");
        fs.create(&p).unwrap();
        fs.write(&p, 0, b"x").unwrap();
    }
    let blocks: Vec<u64> = (0..5).map(|i| fs.stat(&format!("/d/{i}")).unwrap().blocks).collect();
    assert_eq!(blocks, [1; 5]);
    fs.sync().unwrap();
    // The data blocks are contiguous and follow the directory block.
    let xn = fs.disk().xn();
    let mut data: Vec<(u64, Option<u64>)> =
        xn.blocks().filter(|(_, v)| v.ty == 0).map(|(b, v)| (b, v.parent)).collect();
    data.sort();
    let parent = data[0].1.unwrap();
    assert!(data.iter().all(|&(_, p)| p == Some(parent)));
    let first = data[0].0;
    assert_eq!(first, parent + 1);
    assert_eq!(data.iter().map(|d| d.0).collect::<Vec<_>>(), (first..first + 5).collect::<Vec<_>>());
    // After a reboot, reading one small file brings its siblings in with it.
    let mut fs = reboot(fs);
    let cached = |fs: &Fs<MemDisk>, b: u64| fs.disk().xn().block(b).is_some_and(|v| v.frame.is_some());
    assert!(!cached(&fs, first + 4));
    assert_eq!(fs.read("/d/0", 0, &mut [0; 4]).unwrap(), 1);
    assert!((first..first + 5).all(|b| cached(&fs, b)));
}

#[test]
fn truncate_seek_and_holes() {
    let mut fs = fresh(256);
    fs.create("/f").unwrap();
    let mut c = Cursor::new("/f");
    c.write(&mut fs, &[1; 5000]).unwrap();
    assert_eq!(c.seek(&mut fs, Whence::End(-1000)).unwrap(), 4000);
    let mut buf = [0; 2000];
    assert_eq!(c.read(&mut fs, &mut buf).unwrap(), 1000);
    fs.truncate("/f", 100).unwrap();
    assert_eq!(fs.stat("/f").unwrap().blocks, 1);
    fs.truncate("/f", 9000).unwrap();
    let v = read_all(&mut fs, "/f");
    assert!(v[..100].iter().all(|&b| b == 1) && v[100..].iter().all(|&b| b == 0), "growth reads zeros");
    fs.write("/f", 20_000, b"end").unwrap();
    assert_eq!(fs.stat("/f").unwrap().size, 20_003);
    let mut fs = reboot(fs);
    let v = read_all(&mut fs, "/f");
    assert!(v[9000..20_000].iter().all(|&b| b == 0));
    assert_eq!(&v[20_000..], b"end");
    assert_eq!(c.seek(&mut fs, Whence::Cur(-6000)), Err(FsError::InvalidArg));
}

#[test]
fn unlink_file_removes_files_and_refuses_directories() {
    let mut fs = fresh(256);
    fs.mkdir("/d").unwrap();
    fs.create("/d/f").unwrap();
    fs.write("/d/f", 0, b"x").unwrap();
    assert_eq!(fs.unlink_file("/d"), Err(FsError::IsDir));
    assert_eq!(fs.stat("/d").unwrap().kind, Kind::Dir);
    fs.mkdir("/e").unwrap();
    assert_eq!(fs.unlink_file("/e"), Err(FsError::IsDir), "an empty directory too");
    assert_eq!(fs.unlink_file("/d/f"), Ok(()));
    assert_eq!(fs.stat("/d/f"), Err(FsError::NotFound));
    assert_eq!(fs.unlink_file("/d/f"), Err(FsError::NotFound));
    let mut fs = reboot(fs);
    assert_eq!(fs.stat("/e").unwrap().kind, Kind::Dir);
    assert_eq!(fs.unlink("/e"), Ok(()));
}

#[test]
fn rename_link_unlink() {
    let mut fs = fresh(256);
    fs.mkdir("/a").unwrap();
    fs.mkdir("/b").unwrap();
    fs.create("/a/f").unwrap();
    fs.write("/a/f", 0, b"hello").unwrap();
    fs.rename("/a/f", "/a/g").unwrap();
    fs.rename("/a/g", "/b/g").unwrap();
    assert_eq!(fs.stat("/a/g"), Err(FsError::NotFound));
    assert_eq!(read_all(&mut fs, "/b/g"), b"hello");
    fs.link("/b/g", "/a/h").unwrap();
    assert_eq!(fs.stat("/a/h").unwrap().nlink, 2);
    fs.write("/a/h", 5, b" world").unwrap();
    assert_eq!(read_all(&mut fs, "/b/g"), b"hello world");
    fs.link("/a/h", "/l").unwrap();
    assert_eq!(fs.stat("/b/g").unwrap().nlink, 3);
    let mut fs = reboot(fs);
    fs.unlink("/b/g").unwrap();
    fs.unlink("/a/h").unwrap();
    assert_eq!(fs.stat("/l").unwrap().nlink, 1);
    assert_eq!(fs.unlink("/a"), Ok(()));
    assert_eq!(fs.unlink("/b"), Ok(()));
    fs.rename("/l", "/m").unwrap();
    fs.mkdir("/x").unwrap();
    fs.mkdir("/x/y").unwrap();
    assert_eq!(fs.rename("/x", "/x/y/z"), Err(FsError::InvalidPath));
    fs.rename("/x", "/z").unwrap();
    assert_eq!(fs.unlink("/z"), Err(FsError::NotEmpty));
    let mut fs = reboot(fs);
    assert_eq!(read_all(&mut fs, "/m"), b"hello world");
    assert_eq!(fs.stat("/z/y").unwrap().kind, Kind::Dir);
}

#[test]
fn errors_have_their_codes() {
    let mut fs = fresh(64);
    assert_eq!(fs.create("relative"), Err(FsError::InvalidPath));
    assert_eq!(fs.create("/a/../b"), Err(FsError::InvalidPath));
    assert_eq!(fs.create(&format!("/{}", "n".repeat(oxok_cffs::layout::NAME_MAX + 1))), Err(FsError::NameTooLong));
    let longest = format!("/{}", "n".repeat(oxok_cffs::layout::NAME_MAX));
    fs.create(&longest).unwrap();
    assert_eq!(fs.readdir("/").unwrap().iter().filter(|(n, _)| n.len() == oxok_cffs::layout::NAME_MAX).count(), 1);
    fs.unlink(&longest).unwrap();
    fs.create("/f").unwrap();
    assert_eq!(fs.create("/f"), Err(FsError::Exists));
    // The root exists (busybox `mkdir -p /a/b` makes `/` first and goes on
    // only on EEXIST).
    assert_eq!(
        (fs.mkdir("/"), fs.create("/"), fs.link("/f", "/")),
        (Err(FsError::Exists), Err(FsError::Exists), Err(FsError::Exists))
    );
    assert_eq!(fs.create("/f/g"), Err(FsError::NotDir));
    assert_eq!(fs.mkdir("/nope/d"), Err(FsError::NotFound));
    fs.mkdir("/d").unwrap();
    assert_eq!(fs.write("/d", 0, b"x"), Err(FsError::IsDir));
    assert_eq!(fs.link("/d", "/e"), Err(FsError::IsDir));
    // Disk full: a clear error, and what was there is intact.
    fs.write("/f", 0, b"keep").unwrap();
    let big = vec![9u8; 64 * 4096];
    fs.create("/big").unwrap();
    assert_eq!(fs.write("/big", 0, &big), Err(FsError::NoSpace));
    let mut fs = reboot(fs);
    assert_eq!(read_all(&mut fs, "/f"), b"keep");
}

#[test]
fn fsync_writes_the_file_and_its_path_not_everything() {
    use oxok_cffs::Disk;
    let mut fs = fresh(256);
    fs.mkdir("/a").unwrap();
    fs.mkdir("/b").unwrap();
    fs.sync().unwrap();
    fs.create("/a/x").unwrap();
    fs.write("/a/x", 0, b"durable").unwrap();
    fs.create("/b/y").unwrap();
    fs.write("/b/y", 0, b"in core").unwrap();
    fs.fsync("/a/x").unwrap();
    let mut dirty = Vec::new();
    fs.disk().dirty(&mut dirty);
    assert_eq!(dirty.len(), 2, "/b's block and /b/y's data wait: {dirty:?}");
    // A crash now: /a/x is there, /b/y is not.
    let (d, _) = MemDisk::open(fs.disk().image().to_vec(), OWNER).unwrap();
    let (mut after, _) = Fs::mount(d, OWNER).unwrap();
    assert_eq!(read_all(&mut after, "/a/x"), b"durable");
    assert_eq!(after.stat("/b/y"), Err(FsError::NotFound));
}

#[test]
fn the_superblock_may_live_elsewhere() {
    let mut fs = Fs::mkfs_at(MemDisk::blank(128, OWNER, 0).unwrap(), OWNER, 40).unwrap();
    fs.create("/f").unwrap();
    fs.write("/f", 0, b"moved root").unwrap();
    fs.sync().unwrap();
    let mut d = fs.into_disk();
    let f = oxok_cffs::fsck_at(&mut d, 40).unwrap();
    assert!(f.clean() && f.blocks == 4, "{f:?}");
    assert!(d.xn().free_map().is_free(0));
    let (mut fs, _) = Fs::mount_at(d, OWNER, 40).unwrap();
    assert_eq!(read_all(&mut fs, "/f"), b"moved root");
}

#[test]
fn hundreds_of_small_files_in_one_directory() {
    let mut fs = fresh(2048);
    fs.mkdir("/d").unwrap();
    for i in 0..300 {
        let p = format!("/d/file{i}");
        fs.create(&p).unwrap();
        fs.write(&p, 0, p.as_bytes()).unwrap();
    }
    let s = fs.stat("/d").unwrap();
    // 10 blocks of records needed; grown 1, 1, 2, 4, 8 at a time.
    assert_eq!(s.blocks, 16, "{s:?}");
    let mut fs = reboot(fs);
    assert_eq!(fs.readdir("/d").unwrap().len(), 300);
    for i in (0..300).step_by(37) {
        let p = format!("/d/file{i}");
        assert_eq!(read_all(&mut fs, &p), p.as_bytes());
    }
    for i in 0..300 {
        fs.unlink(&format!("/d/file{i}")).unwrap();
    }
    fs.unlink("/d").unwrap();
    let fs = reboot(fs);
    let f = fsck(&mut fs.into_disk()).unwrap();
    assert_eq!(f.blocks, 3, "{f:?}");
}

/// A disk whose directory `/s` holds 60 one-block files with a one-block
/// hole after each (more holes than a file has extents), and free space
/// after them.
fn fragmented() -> Fs<MemDisk> {
    fragmented_on(MemDisk::blank(2048, OWNER, 0xa5).unwrap())
}

/// [`fragmented`] on `disk` (2,048 blocks).
fn fragmented_on(disk: MemDisk) -> Fs<MemDisk> {
    let mut fs = Fs::mkfs(disk, OWNER).unwrap();
    fs.mkdir("/s").unwrap();
    for i in 0..120 {
        let p = format!("/s/{i}");
        fs.create(&p).unwrap();
        fs.write(&p, 0, b"small").unwrap();
    }
    for i in (0..120).step_by(2) {
        fs.unlink(&format!("/s/{i}")).unwrap();
    }
    fs
}

#[test]
fn a_large_file_on_a_fragmented_disk_takes_a_long_free_run_not_the_holes() {
    let mut fs = fragmented();
    fs.create("/big").unwrap();
    let data: Vec<u8> = (0..200 * 4096u32).map(|i| (i % 251) as u8).collect();
    assert_eq!(fs.write("/big", 0, &data), Ok(data.len()), "a 200-block file fits in the free space");
    let mut fs = reboot(fs);
    assert_eq!(read_all(&mut fs, "/big"), data);
    assert_eq!(read_all(&mut fs, "/s/1"), b"small");
}

#[test]
fn a_file_written_a_block_at_a_time_on_a_fragmented_disk_does_not_run_out_of_extents() {
    let mut fs = fragmented();
    // The file sits among the holes and grows 4 KiB per write, as a
    // program's writes reach the server a page at a time.
    fs.create("/s/grow").unwrap();
    let data: Vec<u8> = (0..300 * 4096u32).map(|i| (i % 253) as u8).collect();
    for (n, page) in data.chunks(4096).enumerate() {
        assert_eq!(fs.write("/s/grow", (n * 4096) as u64, page), Ok(4096), "write {n}");
    }
    let mut fs = reboot(fs);
    assert_eq!(read_all(&mut fs, "/s/grow"), data);
}

/// Blocks XN holds allocated to the file system.
fn used(fs: &Fs<MemDisk>) -> u64 {
    fs.disk().xn().usage(fs.disk().fs_id())
}

#[test]
fn removing_a_file_frees_its_first_extent_with_its_record_in_one_change() {
    let mut disk = MemDisk::blank(2048, OWNER, 0xa5).unwrap();
    disk.record();
    let mut fs = fragmented_on(disk);
    fs.sync().unwrap();
    let before = used(&fs);
    // A one-block file: its removal is one checked change of its
    // directory block (the free of its block, the record cleared with it).
    fs.create("/s/one").unwrap();
    fs.write("/s/one", 0, b"one block").unwrap();
    let changes = fs.disk().changes();
    fs.unlink_file("/s/one").unwrap();
    assert_eq!(fs.disk().changes() - changes, 1, "a one-block file's removal");
    // A file in many extents (grown a page at a time among the holes):
    // one change per extent, the first with the record.
    fs.create("/s/many").unwrap();
    let from = fs.disk().event_count();
    for n in 0..40u64 {
        assert_eq!(fs.write("/s/many", n * 4096, &[n as u8; 4096]), Ok(4096));
    }
    // Its extents: the runs of adjacent blocks it was given.
    let mut blocks: Vec<u64> = fs
        .disk()
        .events()
        .iter()
        .skip(from)
        .flat_map(|e| match *e {
            Event::Alloc { start, len } => start..start + len,
            _ => 0..0,
        })
        .collect();
    blocks.sort_unstable();
    let runs = 1 + blocks.windows(2).filter(|w| w[1] != w[0] + 1).count() as u64;
    assert_eq!(blocks.len(), 40);
    assert!(runs > 1, "the file lies in {runs} runs: it should have several extents");
    let changes = fs.disk().changes();
    fs.unlink("/s/many").unwrap();
    assert_eq!(fs.disk().changes() - changes, runs, "one change per extent");
    fs.sync().unwrap();
    assert_eq!(used(&fs), before, "every block of both files is free again");
    let mut fs = reboot(fs);
    assert_eq!(fs.stat("/s/many"), Err(FsError::NotFound));
    assert_eq!(read_all(&mut fs, "/s/1"), b"small");
}
