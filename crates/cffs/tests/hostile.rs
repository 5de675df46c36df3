//! What XN refuses a misbehaving library file system on this format, and
//! that the file system stays intact (fsck clean) after each refusal.

use oxok_abi::xn::BLOCK_SIZE;
use oxok_cffs::host::MemDisk;
use oxok_cffs::layout::*;
use oxok_cffs::{Disk, Fs, fsck};
use oxok_xn::{Extent, Refusal};

const OWNER: u64 = 5;

/// A synced file system with `/f` (one block), the image reopened.
fn victim() -> (MemDisk, u64, u64) {
    let mut fs = Fs::mkfs(MemDisk::blank(128, OWNER, 0).unwrap(), OWNER).unwrap();
    fs.create("/f").unwrap();
    fs.write("/f", 0, b"victim").unwrap();
    fs.sync().unwrap();
    let (d, _) = MemDisk::open(fs.into_disk().image().to_vec(), OWNER).unwrap();
    let mut d = d;
    let mut sb = [0; BLOCK_SIZE];
    d.read(SUPER_BLOCK, &mut sb).unwrap();
    let mut t = [0; BLOCK_SIZE];
    d.read(itab(&sb, 0), &mut t).unwrap();
    let root_dir = u64::from(record(&t, 0).ext[0].start);
    let mut db = [0; BLOCK_SIZE];
    d.read(root_dir, &mut db).unwrap();
    let data = u64::from(record(&db, 0).ext[0].start);
    (d, root_dir, data)
}

fn intact(d: &mut MemDisk) {
    let f = fsck(d).unwrap();
    assert!(f.clean(), "{f:?}");
}

#[test]
fn hostile_forged_metadata_is_refused_and_the_victim_stays_intact() {
    let (mut d, dir, data) = victim();
    let mut img = [0; BLOCK_SIZE];
    d.read(dir, &mut img).unwrap();
    let free = (1..128).find(|&b| d.is_free(b)).unwrap();

    // A record claiming a block never allocated.
    let mut forged = img;
    let mut r = record(&forged, 1);
    r.kind = K_FILE;
    r.set_name(b"steal");
    r.ext[0] = Ext { start: free as u32, len: 1, ty: 0 };
    set_record(&mut forged, 1, &r);
    assert_eq!(d.modify(dir, &forged), Err(Refusal::OwnsMismatch(dir)));

    // Dropping a block without freeing it (it would leak or be reused).
    let mut dropped = img;
    set_record(&mut dropped, 0, &Record::default());
    assert_eq!(d.modify(dir, &dropped), Err(Refusal::OwnsMismatch(dir)));

    // Freeing a block the record still points to.
    assert_eq!(d.free(dir, &img, Extent::new(data, 1, 0)), Err(Refusal::OwnsMismatch(dir)));

    // Writing a metadata block through the data path.
    assert_eq!(d.write_data(dir, &forged), Err(Refusal::MetadataWritable(dir)));

    // Another principal may neither read nor change the file system.
    let (mut other, _) = MemDisk::open(d.image().to_vec(), OWNER + 1).unwrap();
    assert_eq!(other.read(dir, &mut [0; BLOCK_SIZE]), Err(Refusal::Denied(dir)));
    assert_eq!(other.modify(dir, &img), Err(Refusal::Denied(dir)));
    intact(&mut d);
}

#[test]
fn hostile_persisting_a_pointer_to_an_unwritten_block_is_refused() {
    let (mut d, dir, _) = victim();
    let mut img = [0; BLOCK_SIZE];
    d.read(dir, &mut img).unwrap();
    let free = (1..128).find(|&b| d.is_free(b)).unwrap();
    let mut r = record(&img, 1);
    r.kind = K_FILE;
    r.set_name(b"new");
    r.size = 10;
    r.ext[0] = Ext { start: free as u32, len: 1, ty: 0 };
    set_record(&mut img, 1, &r);
    d.alloc(dir, &img, Extent::new(free, 1, 0)).unwrap();
    assert_eq!(d.write(dir), Err(Refusal::TaintedPointer { block: dir, child: free }));
    // In the right order it goes through.
    d.write(free).unwrap();
    d.flush().unwrap();
    d.write(dir).unwrap();
    d.flush().unwrap();
    let (mut after, _) = MemDisk::open(d.image().to_vec(), OWNER).unwrap();
    let f = fsck(&mut after).unwrap();
    assert!(f.errors.is_empty(), "{f:?}");
    assert_eq!(f.errors.len(), 0);
}

/// Corrupted metadata (random bytes flipped in the superblock, inode
/// table and directory blocks): recovery, fsck and mount report or repair,
/// never panic, and whatever mounts still passes fsck's structural checks
/// or reports why not.
#[test]
fn hostile_corrupt_images_never_panic() {
    let mut fs = Fs::mkfs(MemDisk::blank(128, OWNER, 0).unwrap(), OWNER).unwrap();
    fs.mkdir("/a").unwrap();
    for i in 0..6 {
        let p = format!("/a/{i}");
        fs.create(&p).unwrap();
        fs.write(&p, 0, &vec![i as u8; 3000 * i + 1]).unwrap();
    }
    fs.link("/a/1", "/l").unwrap();
    fs.sync().unwrap();
    let image = fs.into_disk().image().to_vec();
    let meta: Vec<usize> = (0..image.len()).filter(|&b| image[b][..2] == *b"CF").collect();
    let mut rng = oxok_testrng::Rng::new(99);
    let mut mounted = 0;
    for _ in 0..300 {
        let mut img = image.clone();
        for _ in 0..1 + rng.below(4) {
            let b = *rng.pick(&meta);
            let at = rng.index(BLOCK_SIZE);
            img[b][at] ^= 1 << rng.below(8);
        }
        let Ok((mut d, _)) = MemDisk::open(img, OWNER) else { continue };
        let _ = fsck(&mut d);
        if let Ok((mut fs, _)) = Fs::mount(d, OWNER) {
            mounted += 1;
            let _ = fs.readdir("/a");
            let _ = fs.stat("/l");
            let _ = fs.create("/new");
            let _ = fs.sync();
            let mut d = fs.into_disk();
            let _ = fsck(&mut d);
        }
    }
    assert!(mounted > 0);
}

/// A file grown over blocks another file freed reads as zeros, before and
/// after a sync and a reopen: a data block allocated and not yet written
/// is never filled from the disk, which still holds the former file's
/// bytes (the kernel's `fill_unwritten`, mirrored by `MemDisk`).
#[test]
fn hostile_a_grown_file_never_shows_a_freed_files_bytes() {
    const BLOCKS: usize = 8;
    let secret = [0xa5u8; BLOCK_SIZE * BLOCKS];
    let mut fs = Fs::mkfs(MemDisk::blank(128, OWNER, 0).unwrap(), OWNER).unwrap();
    fs.create("/secret").unwrap();
    fs.write("/secret", 0, &secret).unwrap();
    fs.sync().unwrap();
    let holding = |d: &MemDisk| d.image().iter().filter(|b| b.iter().all(|&x| x == 0xa5)).count();
    fs.unlink("/secret").unwrap();
    fs.sync().unwrap();
    fs.sync().unwrap();
    let (d, _) = MemDisk::open(fs.into_disk().image().to_vec(), OWNER).unwrap();
    assert_eq!(holding(&d), BLOCKS, "freed blocks keep their bytes on the disk");
    let (mut fs, _) = Fs::mount(d, OWNER).unwrap();
    fs.create("/g").unwrap();
    fs.truncate("/g", secret.len() as u64).unwrap();
    let mut got = vec![0xffu8; secret.len()];
    assert_eq!(fs.read("/g", 0, &mut got).unwrap(), secret.len());
    assert!(got.iter().all(|&x| x == 0), "before the sync");
    fs.sync().unwrap();
    let (d, _) = MemDisk::open(fs.into_disk().image().to_vec(), OWNER).unwrap();
    assert!(holding(&d) < BLOCKS, "the new file took some of the freed blocks");
    let (mut fs, _) = Fs::mount(d, OWNER).unwrap();
    got.fill(0xff);
    assert_eq!(fs.read("/g", 0, &mut got).unwrap(), secret.len());
    assert!(got.iter().all(|&x| x == 0), "after a reopen");
    intact(&mut fs.into_disk());
}
