//! Hostile input: random byte paths and symbolic-link targets, forged and
//! stale handles, extreme offsets and lengths, limits changed mid-run. Nothing may panic, and the
//! file system must stay consistent throughout.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::*;
use oxok_ramfs::{Fs, FsError, Ino, Kind, Limits, NAME_MAX, OpenFlags, PATH_MAX};

/// A random path over a small alphabet rich in separators and dots, now
/// and then far too long, with a NUL or a huge component.
fn path(rng: &mut Rng) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ab//..\xff";
    let len = match rng.below(20) {
        0 => PATH_MAX - 2 + rng.below(4) as usize,
        1 => NAME_MAX - 2 + rng.below(4) as usize,
        _ => rng.below(12) as usize,
    };
    let mut p: Vec<u8> = (0..len).map(|_| *rng.pick(ALPHABET)).collect();
    if rng.chance(50) && !p.is_empty() {
        let at = rng.below(p.len() as u64) as usize;
        p[at] = 0;
    }
    if rng.chance(30) {
        p.extend(std::iter::repeat_n(b'n', NAME_MAX - 1 + rng.below(3) as usize));
    }
    p
}

fn handle(rng: &mut Rng, known: &[Ino]) -> Ino {
    if rng.chance(5) || known.is_empty() { Ino::from_raw(rng.hostile()) } else { *rng.pick(known) }
}

#[test]
fn random_garbage_never_panics() {
    let mut rng = Rng::new(0xbad);
    let mut fs = Fs::with_limits(Limits { max_file_size: 1 << 20, max_bytes: 64 << 10, max_inodes: 200 });
    let mut known: Vec<Ino> = vec![ROOT];
    let mut pins: Vec<Ino> = Vec::new();
    let mut errors = std::collections::BTreeMap::new();
    for i in 0..15_000 {
        let cwd = handle(&mut rng, &known);
        let ino = handle(&mut rng, &known);
        let (p, q) = (path(&mut rng), path(&mut rng));
        let off = rng.hostile();
        let len = if rng.chance(20) { 70_000 } else { rng.below(300) as usize };
        let result: Result<(), FsError> = match rng.below(24) {
            0 => fs.create(cwd, &p, Kind::File).map(|i| known.push(i)),
            1 => fs.create(cwd, &p, Kind::Dir).map(|i| known.push(i)),
            2 => {
                let flags = OpenFlags {
                    create: rng.chance(2),
                    exclusive: rng.chance(2),
                    truncate: rng.chance(3),
                    directory: rng.chance(3),
                    write: rng.chance(2),
                    nofollow: rng.chance(4),
                    mode: if rng.chance(2) { Some(rng.next() as u16) } else { None },
                };
                fs.open(cwd, &p, flags).map(|i| known.push(i))
            }
            3 => fs.lookup(cwd, &p).map(|i| known.push(i)),
            4 => fs.write(ino, off, &vec![0x5a; len]).map(drop),
            5 => fs.read(ino, off, &mut vec![0; len]).map(drop),
            6 => fs.truncate(ino, if rng.chance(2) { off } else { off % 100_000 }),
            7 => fs.unlink(cwd, &p),
            8 => fs.rmdir(cwd, &p),
            9 => fs.rename(cwd, &p, &q),
            10 => fs.rename_at(cwd, &p, handle(&mut rng, &known), &q),
            11 => fs.link(cwd, &p, &q),
            12 => fs.stat(ino).map(drop),
            13 => fs.readdir_after(ino, Some(&q), rng.below(5) as usize).map(drop),
            14 => fs.path_of(ino).map(drop),
            15 => fs.pin(ino).map(|()| pins.push(ino)),
            16 => {
                let r = if !pins.is_empty() && rng.chance(2) {
                    let k = rng.below(pins.len() as u64) as usize;
                    fs.unpin(pins.swap_remove(k))
                } else {
                    fs.unpin(ino)
                };
                // A stray unpin of an unpinned handle must be refused.
                if let Err(e) = r {
                    assert!(matches!(e, FsError::Invalid | FsError::BadInode));
                }
                r
            }
            17 => fs.set_times(ino, Some(off), None),
            18 => fs.parent(ino).map(drop),
            19 => {
                // Now and then a link to itself: loops must be refused too.
                let target = if rng.chance(3) { &p } else { &q };
                fs.symlink(cwd, target, &p).map(|i| known.push(i))
            }
            20 => fs.readlink(cwd, &p).map(drop),
            21 => fs.lookup_nofollow(cwd, &p).map(|i| known.push(i)),
            22 => fs.set_mode(ino, rng.next() as u16),
            _ => {
                if rng.chance(50) {
                    fs.set_limits(Limits {
                        max_file_size: rng.hostile(),
                        max_bytes: rng.below(1 << 18),
                        max_inodes: rng.below(300) as usize,
                    });
                }
                fs.set_time(i);
                Ok(())
            }
        };
        if let Err(e) = result {
            *errors.entry(e).or_insert(0u32) += 1;
        }
        if let Err(e) = fs.fsck() {
            panic!("op #{i}: fsck: {e}");
        }
        if known.len() > 500 {
            known.retain(|&k| fs.is_live(k));
            known.truncate(200);
        }
    }
    // The run reached every kind of failure it can.
    for e in FsError::ALL {
        assert!(errors.contains_key(&e), "{e:?} never happened: {errors:?}");
    }
    // Release all pins: nothing unreachable remains.
    for p in pins {
        let _ = fs.unpin(p);
    }
    fs.fsck().unwrap();
}

#[test]
fn deep_trees_and_long_paths() {
    let mut fs = Fs::new();
    // 2000 levels deep via relative paths; the absolute path is far beyond
    // PATH_MAX but everything stays reachable relatively.
    let mut at = ROOT;
    let mut chain = vec![ROOT];
    for _ in 0..2000 {
        at = fs.mkdir(at, "d").unwrap();
        chain.push(at);
    }
    assert_eq!(fs.path_of(at).unwrap().len(), 4000);
    assert_eq!(fs.lookup(at, "../".repeat(1365)), Ok(chain[2000 - 1365]));
    assert_eq!(fs.lookup(at, "../".repeat(1366)), Err(FsError::TooLong));
    // Moving the top of the chain into its bottom is a cycle.
    assert_eq!(fs.rename_at(ROOT, "d", at, "loop"), Err(FsError::Invalid));
    assert_eq!(fs.rename_at(chain[1000], "d", at, "loop"), Err(FsError::Invalid));
    // Moving the bottom to the top is fine.
    fs.rename_at(chain[1999], "d", ROOT, "bottom").unwrap();
    assert_eq!(fs.path_of(at).unwrap(), b"/bottom");
    assert_eq!(fs.stat(chain[1999]).unwrap().nlink, 2);
    fs.fsck().unwrap();
    // Tear it all down from the bottom.
    for k in (1..2000).rev() {
        fs.rmdir(chain[k - 1], "d").unwrap();
    }
    fs.rmdir(ROOT, "bottom").unwrap();
    assert_eq!(fs.statfs().inodes, 1);
    fs.fsck().unwrap();
}

#[test]
fn wide_directories() {
    let mut fs = Fs::with_limits(Limits { max_inodes: 5001, ..Limits::DEFAULT });
    for i in 0..5000 {
        fs.create(ROOT, format!("{i:05}"), Kind::File).unwrap();
    }
    assert_eq!(fs.create(ROOT, "x", Kind::File), Err(FsError::NoSpace));
    let all = fs.readdir(ROOT).unwrap();
    assert_eq!(all.len(), 5000);
    assert!(all.windows(2).all(|w| w[0].name < w[1].name));
    assert_eq!(fs.stat(ROOT).unwrap().size, 5000);
    for i in (0..5000).step_by(2) {
        fs.unlink(ROOT, format!("{i:05}")).unwrap();
    }
    assert_eq!(fs.readdir(ROOT).unwrap().len(), 2500);
    fs.fsck().unwrap();
}
