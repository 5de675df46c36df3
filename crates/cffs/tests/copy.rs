//! XCP: `Fs::copy_tree` through the real XN checks (host disk): the copy
//! is byte-identical, survives a reboot, passes fsck, and refuses what
//! `cp -r` would.

use oxok_cffs::host::MemDisk;
use oxok_cffs::{COPY_BATCH, Fs, FsError, Kind, fsck};

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

fn reboot(fs: Fs<MemDisk>) -> Fs<MemDisk> {
    let image = fs.into_disk().image().to_vec();
    let (mut d, report) = MemDisk::open(image, OWNER).unwrap();
    assert!(report.duplicates.is_empty() && report.unreadable.is_empty(), "{report:?}");
    let f = fsck(&mut d).unwrap();
    assert!(f.clean(), "{f:?}");
    Fs::mount(d, OWNER).unwrap().0
}

fn data(seed: u32, len: usize) -> Vec<u8> {
    (0..len as u32).map(|i| (i.wrapping_mul(2_654_435_761) ^ seed) as u8).collect()
}

/// A tree: empty, small, multi-block and large files, nested directories.
fn tree(fs: &mut Fs<MemDisk>) -> Vec<(&'static str, Vec<u8>)> {
    let files = vec![
        ("/src/empty", Vec::new()),
        ("/src/small", data(1, 100)),
        ("/src/page", data(2, 4096)),
        ("/src/three", data(3, 3 * 4096 + 17)),
        ("/src/d/big", data(4, (COPY_BATCH + 40) * 4096 + 5)),
        ("/src/d/e/deep", data(5, 9000)),
    ];
    for d in ["/src", "/src/d", "/src/d/e", "/src/d/empty-dir"] {
        fs.mkdir(d).unwrap();
    }
    for (p, v) in &files {
        fs.create(p).unwrap();
        fs.write(p, 0, v).unwrap();
    }
    fs.sync().unwrap();
    files
}

#[test]
fn a_tree_copy_is_byte_identical_after_a_reboot_and_passes_fsck() {
    let mut fs = fresh(4096);
    let files = tree(&mut fs);
    let c = fs.copy_tree("/src", "/dst").unwrap();
    let bytes: usize = files.iter().map(|(_, v)| v.len()).sum();
    let blocks: usize = files.iter().map(|(_, v)| v.len().div_ceil(4096)).sum();
    assert_eq!((c.files, c.bytes, c.blocks), (files.len() as u64, bytes as u64, blocks as u64));
    let mut fs = reboot(fs);
    for (p, v) in &files {
        let q = p.replacen("/src", "/dst", 1);
        assert_eq!(&read_all(&mut fs, &q), v, "{q}");
        assert_eq!(&read_all(&mut fs, p), v, "{p} (the source) unchanged");
    }
    assert_eq!(fs.stat("/dst/d/empty-dir").unwrap().kind, Kind::Dir);
    let mut names = fs.readdir("/dst").unwrap();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    let mut want = fs.readdir("/src").unwrap();
    want.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(names, want);
}

#[test]
fn a_single_file_copies_to_a_new_name_in_another_directory() {
    let mut fs = fresh(1024);
    fs.mkdir("/a").unwrap();
    fs.mkdir("/b").unwrap();
    fs.create("/a/f").unwrap();
    let v = data(9, 5000);
    fs.write("/a/f", 0, &v).unwrap();
    fs.sync().unwrap();
    assert_eq!(fs.copy_tree("/a/f", "/b/g").unwrap().blocks, 2);
    let mut fs = reboot(fs);
    assert_eq!(read_all(&mut fs, "/b/g"), v);
}

#[test]
fn what_cp_r_refuses_is_refused() {
    let mut fs = fresh(512);
    tree_small(&mut fs);
    assert_eq!(fs.copy_tree("/s", "/s/inside"), Err(FsError::InvalidArg));
    assert_eq!(fs.copy_tree("/s", "/s"), Err(FsError::InvalidArg));
    assert_eq!(fs.copy_tree("/", "/x"), Err(FsError::InvalidArg));
    assert_eq!(fs.copy_tree("/s", "/t"), Ok(oxok_cffs::Copied { files: 1, bytes: 3, blocks: 1 }));
    assert_eq!(fs.copy_tree("/s", "/t"), Err(FsError::Exists));
    assert_eq!(fs.copy_tree("/nothing", "/u"), Err(FsError::NotFound));
    assert_eq!(fs.copy_tree("/s", "/no/such/dir"), Err(FsError::NotFound));
    reboot(fs);
}

fn tree_small(fs: &mut Fs<MemDisk>) {
    fs.mkdir("/s").unwrap();
    fs.create("/s/f").unwrap();
    fs.write("/s/f", 0, b"abc").unwrap();
    fs.sync().unwrap();
}

#[test]
fn a_copy_that_runs_out_of_space_says_so_and_leaves_a_clean_disk() {
    let mut fs = fresh(160);
    fs.mkdir("/s").unwrap();
    fs.create("/s/f").unwrap();
    fs.write("/s/f", 0, &data(7, 100 * 4096)).unwrap();
    fs.sync().unwrap();
    assert_eq!(fs.copy_tree("/s", "/t"), Err(FsError::NoSpace));
    fs.sync().unwrap();
    reboot(fs);
}

/// The data blocks cached now.
fn cached_data(fs: &Fs<MemDisk>) -> std::collections::BTreeSet<u64> {
    fs.disk().xn().blocks().filter(|(_, v)| v.ty == oxok_abi::xn::DATA && v.frame.is_some()).map(|(b, _)| b).collect()
}

/// A copy lets go of the source frames it brought in, and only of those:
/// a source cached before the copy stays cached after it.
#[test]
fn a_copy_keeps_the_cache_it_found_and_lets_go_of_what_it_brought_in() {
    let mut fs = fresh(4096);
    tree(&mut fs);
    let before = cached_data(&fs);
    assert!(before.len() > 100, "the written sources are cached: {}", before.len());
    fs.copy_tree("/src", "/dst").unwrap();
    assert!(before.is_subset(&cached_data(&fs)), "every source cached before still is");

    let mut fs = reboot(fs);
    assert!(cached_data(&fs).is_empty(), "nothing cached after the reboot");
    fs.copy_tree("/src", "/dst2").unwrap();
    assert!(cached_data(&fs).is_empty(), "the sources the copy read in are let go");
}
