//! The name cache: a path resolved before costs one look at one block, and
//! no change to the name space leaves a stale answer behind.

use oxok_cffs::host::MemDisk;
use oxok_cffs::{Fs, FsError, Kind};

const OWNER: u64 = 7;

fn fresh(n: u64) -> Fs<MemDisk> {
    Fs::mkfs(MemDisk::blank(n, OWNER, 0xa5).unwrap(), OWNER).unwrap()
}

/// Blocks `stat(path)` looks at.
fn looks(fs: &mut Fs<MemDisk>, path: &str) -> u64 {
    let before = fs.disk().reads();
    fs.stat(path).unwrap();
    fs.disk().reads() - before
}

#[test]
fn a_path_resolved_before_costs_one_block() {
    let mut fs = fresh(2048);
    fs.mkdir("/a").unwrap();
    fs.mkdir("/a/b").unwrap();
    for i in 0..300 {
        fs.create(&format!("/a/b/f{i:03}")).unwrap();
    }
    // A change to the name space other than a file's create or removal
    // empties the cache.
    fs.mkdir("/a/c").unwrap();
    let first = looks(&mut fs, "/a/b/f299");
    let again = looks(&mut fs, "/a/b/f299");
    // A scan of /a/b's blocks the first time; one block (the name's) after.
    assert!(first > 5, "first resolution looked at {first} blocks");
    assert_eq!(again, 1);
    let data = b"hello";
    fs.write("/a/b/f299", 0, data).unwrap();
    let mut out = [0; 5];
    assert_eq!(fs.read("/a/b/f299", 0, &mut out).unwrap(), 5);
    assert_eq!(&out, data);
}

#[test]
fn a_directory_read_in_order_scans_once_per_block() {
    let mut fs = fresh(4096);
    fs.mkdir("/a").unwrap();
    for i in 0..300 {
        fs.create(&format!("/a/f{i:03}")).unwrap();
    }
    fs.mkdir("/b").unwrap();
    // The mkdir emptied the cache. Each name costs the scan up to its
    // block only when its block was not looked at before: the first name
    // of each directory block.
    let mut total = 0;
    let mut scans = 0;
    for i in 0..300 {
        let n = looks(&mut fs, &format!("/a/f{i:03}"));
        total += n;
        if n > 1 {
            scans += 1;
        }
    }
    let blocks = fs.stat("/a").unwrap().size / 4096;
    assert!(blocks > 3, "the directory has {blocks} blocks");
    assert!(scans <= blocks, "{scans} scans for a directory of {blocks} blocks");
    assert!(total < 300 + blocks * blocks, "{total} blocks looked at for 300 names in {blocks} blocks");
    // Every answer is the file asked for.
    for i in (0..300).step_by(37) {
        let p = format!("/a/f{i:03}");
        fs.write(&p, 0, p.as_bytes()).unwrap();
        let mut out = [0; 7];
        assert_eq!(fs.read(&p, 0, &mut out).unwrap(), 7);
        assert_eq!(&out, p.as_bytes());
    }
}

/// Blocks `create(path)` looks at, and its result.
fn create_looks(fs: &mut Fs<MemDisk>, path: &str) -> (u64, Result<(), FsError>) {
    let before = fs.disk().reads();
    let r = fs.create(path);
    (fs.disk().reads() - before, r)
}

#[test]
fn creating_files_scans_the_directory_once() {
    let mut fs = fresh(4096);
    fs.mkdir("/a").unwrap();
    let (mut total, mut late) = (0, 0);
    for i in 0..400 {
        let (n, r) = create_looks(&mut fs, &format!("/a/f{i:03}"));
        r.unwrap();
        total += n;
        if i >= 300 {
            late += n;
        }
    }
    let blocks = fs.stat("/a").unwrap().size / 4096;
    assert!(blocks > 10, "the directory has {blocks} blocks");
    // Known absent: no scan for the name, only the directory's inode, the
    // block with room and the record's (more when the directory grows) —
    // as few for the last hundred names as on average.
    assert!(total <= 7 * 400, "400 creates looked at {total} blocks");
    assert!(late <= 7 * 100, "the last 100 creates looked at {late} blocks in a directory of {blocks}");
    // Names that exist are refused, whether the cache holds them or not;
    // a refused create changes nothing and keeps the directory complete.
    assert_eq!(fs.create("/a/f123"), Err(FsError::Exists));
    let (n, r) = create_looks(&mut fs, "/a/g000");
    assert_eq!((r, n <= 8), (Ok(()), true), "a create after a refused one looked at {n} blocks");
    fs.unlink_file("/a/f200").unwrap();
    assert_eq!(create_looks(&mut fs, "/a/f200").1, Ok(()));
    assert_eq!(fs.create("/a/f200"), Err(FsError::Exists));
    fs.mkdir("/b").unwrap();
    assert_eq!(fs.create("/a/f399"), Err(FsError::Exists));
    assert_eq!(fs.create("/a/f000"), Err(FsError::Exists));
    // Every file is there once, empty.
    let names = fs.readdir("/a").unwrap();
    assert_eq!(names.len(), 401);
    let distinct: std::collections::BTreeSet<_> = names.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(distinct.len(), 401);
}

#[test]
fn removing_a_file_keeps_the_other_names() {
    let mut fs = fresh(1024);
    fs.mkdir("/d").unwrap();
    for n in ["a", "b", "c"] {
        let p = format!("/d/{n}");
        fs.create(&p).unwrap();
        fs.write(&p, 0, p.as_bytes()).unwrap();
    }
    looks(&mut fs, "/d/a");
    fs.unlink_file("/d/a").unwrap();
    // The others are still found where they were: one block each.
    assert_eq!(looks(&mut fs, "/d/b"), 1);
    assert_eq!(looks(&mut fs, "/d/c"), 1);
    assert_eq!(fs.stat("/d/a"), Err(FsError::NotFound));
    // Made again: the new, empty file.
    fs.create("/d/a").unwrap();
    assert_eq!(fs.stat("/d/a").unwrap().size, 0);
    let mut out = [0; 4];
    assert_eq!(fs.read("/d/b", 0, &mut out).unwrap(), 4);
    assert_eq!(&out, b"/d/b");
}

#[test]
fn no_change_leaves_a_stale_name() {
    let mut fs = fresh(1024);
    fs.mkdir("/d").unwrap();
    fs.create("/d/x").unwrap();
    fs.write("/d/x", 0, b"one").unwrap();
    fs.stat("/d/x").unwrap();
    // Renamed away: the old path is gone, the new one has the data.
    fs.rename("/d/x", "/d/y").unwrap();
    assert_eq!(fs.stat("/d/x"), Err(FsError::NotFound));
    assert_eq!(fs.stat("/d/y").unwrap().size, 3);
    // A directory renamed: paths through its old name are gone.
    fs.stat("/d/y").unwrap();
    fs.rename("/d", "/e").unwrap();
    assert_eq!(fs.stat("/d/y"), Err(FsError::NotFound));
    assert_eq!(fs.stat("/e/y").unwrap().size, 3);
    // Removed and made again elsewhere with the same name: the new one.
    fs.stat("/e/y").unwrap();
    fs.unlink("/e/y").unwrap();
    assert_eq!(fs.stat("/e/y"), Err(FsError::NotFound));
    fs.mkdir("/e/y").unwrap();
    assert_eq!(fs.stat("/e/y").unwrap().kind, Kind::Dir);
    // A directory removed and a file made where its name was.
    fs.unlink("/e/y").unwrap();
    fs.unlink("/e").unwrap();
    fs.mkdir("/f").unwrap();
    fs.create("/f/y").unwrap();
    assert_eq!(fs.stat("/e/y"), Err(FsError::NotFound));
    assert_eq!(fs.stat("/e"), Err(FsError::NotFound));
    assert_eq!(fs.stat("/f/y").unwrap().kind, Kind::File);
    // A second name moves the inode out of line; both names reach it.
    fs.write("/f/y", 0, b"two!").unwrap();
    fs.stat("/f/y").unwrap();
    fs.link("/f/y", "/f/z").unwrap();
    assert_eq!(fs.stat("/f/y").unwrap().nlink, 2);
    assert_eq!(fs.stat("/f/z").unwrap().size, 4);
}

#[test]
fn malformed_paths_are_refused_as_before() {
    let mut fs = fresh(256);
    fs.mkdir("/a").unwrap();
    fs.create("/a/f").unwrap();
    for bad in ["", "a", "a/f", "//a", "/a//f", "/a/", "/a/./f", "/a/../a/f", "/a/f/."] {
        assert_eq!(fs.stat(bad).map(|_| ()), Err(FsError::InvalidPath), "{bad:?}");
    }
    // Resolved once, the good path still refuses its malformed spellings.
    fs.stat("/a/f").unwrap();
    assert_eq!(fs.stat("//a/f").map(|_| ()), Err(FsError::InvalidPath));
    assert_eq!(fs.stat("/a/f/g").map(|_| ()), Err(FsError::NotDir));
}

/// `following` gives the entries after a name in `readdir`'s order, a
/// removed one no longer, and nothing after the last.
#[test]
fn the_entries_following_a_name_are_readdirs_next() {
    let mut fs = fresh(2048);
    fs.mkdir("/d").unwrap();
    for i in 0..40 {
        fs.create(&format!("/d/f{i:02}")).unwrap();
    }
    fs.write("/d/f06", 0, b"abc").unwrap();
    fs.mkdir("/d/sub").unwrap();
    let all = fs.readdir("/d").unwrap();
    let at = all.iter().position(|(n, _)| n == "f04").unwrap();
    let next: Vec<_> = fs.following("/d/f04", 5).unwrap().into_iter().map(|(n, k, _)| (n, k)).collect();
    assert_eq!(next, all[at + 1..at + 6].to_vec());
    assert_eq!(fs.following("/d/f04", 5).unwrap()[1], ("f06".to_string(), Kind::File, 3), "with its size");
    fs.unlink_file("/d/f05").unwrap();
    let next = fs.following("/d/f04", 1).unwrap();
    assert_eq!(next[0].0, "f06", "a removed name is not given");
    let last = &fs.readdir("/d").unwrap().last().unwrap().0.clone();
    assert_eq!(fs.following(&format!("/d/{last}"), 5).unwrap(), vec![]);
    assert_eq!(fs.following("/d/nothing", 5).unwrap_err(), FsError::NotFound);
    let many = fs.following("/d/f00", 100).unwrap();
    assert!(many.len() >= 30 && many.iter().any(|(n, k, _)| n == "sub" && *k == Kind::Dir));
}
