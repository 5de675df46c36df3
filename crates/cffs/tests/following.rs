//! The entries that follow a name (`Fs::following_entries`,
//! `Fs::read_following`): each is what a look up of its own path finds —
//! the same name, status and bytes — for files embedded in the directory,
//! files with a second name (out of line), directories and symbolic links,
//! over more than one directory block.

use oxok_cffs::host::MemDisk;
use oxok_cffs::layout::RECORDS;
use oxok_cffs::{Fs, FsError, Kind};

const OWNER: u64 = 7;

#[test]
fn each_entry_is_what_its_own_path_finds() {
    let mut fs = Fs::mkfs(MemDisk::blank(1024, OWNER, 0xa5).unwrap(), OWNER).unwrap();
    fs.mkdir("/d").unwrap();
    // More names than one directory block holds.
    let n = RECORDS + 9;
    for i in 0..n {
        let p = format!("/d/f{i:03}");
        match i % 7 {
            3 => fs.mkdir(&p).unwrap(),
            5 => fs.symlink(b"/d/f000", &p).unwrap(),
            _ => {
                fs.create(&p).unwrap();
                let bytes: Vec<u8> = (0..i * 37).map(|k| (k * 13 + i) as u8).collect();
                fs.write(&p, 0, &bytes).unwrap();
            }
        }
    }
    // A second name makes the file's inode out of line.
    fs.link("/d/f001", "/d/other").unwrap();
    let mut checked = 0;
    for start in [0, 1, 2, RECORDS - 3] {
        let from = format!("/d/f{start:03}");
        let entries = fs.following_entries(&from, 12).unwrap();
        let names: Vec<(String, Kind, u64)> = fs.following(&from, 12).unwrap();
        assert_eq!(entries.len(), names.len());
        assert!(!entries.is_empty());
        for (e, (name, kind, size)) in entries.iter().zip(&names) {
            let p = format!("/d/{}", e.name().unwrap());
            assert_eq!((e.name(), e.kind(), e.stat().size), (Some(name.as_str()), *kind, *size));
            assert_eq!(e.stat(), fs.stat(&p).unwrap(), "{p}");
            let mut got = vec![0u8; 8192];
            let mut want = vec![0u8; 8192];
            let read = fs.read_following(e, 3, 5000, |at, b| got[at..at + b.len()].copy_from_slice(b));
            let by_path = fs.read(&p, 3, &mut want[..5000]);
            match e.kind() {
                Kind::File => {
                    assert_eq!(read, by_path, "{p}");
                    assert_eq!(got[..5000], want[..5000], "{p}");
                    checked += 1;
                }
                Kind::Dir => assert_eq!(read, Err(FsError::IsDir)),
                Kind::Symlink => assert_eq!(read, Err(FsError::Symlink)),
            }
        }
    }
    assert!(checked > 20, "{checked} files read");
}
