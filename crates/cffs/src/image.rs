//! Disk images on the host: `mkfs` writes a fresh file system into an
//! image; `fsck` opens one as the kernel does at boot (XN recovery from
//! the superblock) and checks it.

use std::path::Path;

use oxok_abi::xn::BLOCK_SIZE;
use oxok_xn::Report;

use crate::host::MemDisk;
use crate::layout::{Block, SUPER_BLOCK, owner};
use crate::{Fs, FsError, Fsck, fsck};

/// The principal an image made by [`mkfs`] belongs to: the system disk
/// file server's ([`DISK_PRINCIPAL`](oxok_abi::xn::DISK_PRINCIPAL)), so
/// `dfsd` serves a host-made image as one it made itself.
pub const IMAGE_OWNER: u64 = oxok_abi::xn::DISK_PRINCIPAL;

/// A fresh file system of `nblocks` blocks; unused blocks are zero.
pub fn mkfs(nblocks: u64) -> Result<Vec<Block>, FsError> {
    let disk = MemDisk::blank(nblocks, IMAGE_OWNER, 0)?;
    let fs = Fs::mkfs(disk, IMAGE_OWNER)?;
    Ok(fs.into_disk().image().to_vec())
}

/// The first bytes of the kernel's XN catalogue (disk block 0 of a disk
/// Oxok has used): XN block `b` is then disk block `CATALOG_BLOCKS + b`.
pub const CATALOG_MAGIC: [u8; 8] = *b"OXKXNCT1";

/// Recovers and checks an image: XN's report and fsck's. An image of a
/// disk Oxok used (its catalogue first) is checked from the first block
/// after the catalogue, as the kernel numbers XN's blocks.
pub fn check(mut image: Vec<Block>) -> Result<(Report, Fsck), FsError> {
    if image.first().is_some_and(|b| b[..8] == CATALOG_MAGIC) {
        let skip = (oxok_abi::xn::CATALOG_BLOCKS as usize).min(image.len());
        image.drain(..skip);
    }
    let who = image.get(SUPER_BLOCK as usize).map(owner).ok_or(FsError::Corrupt("empty image"))?;
    let (mut disk, report) = MemDisk::open(image, who)?;
    let f = fsck(&mut disk)?;
    Ok((report, f))
}

/// Reads an image file (a whole number of blocks).
pub fn load(path: &Path) -> Result<Vec<Block>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.is_empty() || bytes.len() % BLOCK_SIZE != 0 {
        return Err(format!("{}: {} bytes is not a whole number of 4 KiB blocks", path.display(), bytes.len()));
    }
    Ok(bytes.chunks_exact(BLOCK_SIZE).map(|c| c.try_into().unwrap_or([0; BLOCK_SIZE])).collect())
}

/// Writes an image file.
pub fn save(path: &Path, image: &[Block]) -> Result<(), String> {
    std::fs::write(path, image.concat()).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_image_is_clean_and_round_trips_through_a_file() {
        let img = mkfs(64).unwrap();
        let path = std::env::temp_dir().join(format!("cffs-image-test-{}.img", std::process::id()));
        save(&path, &img).unwrap();
        let back = load(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(back, img);
        let (report, f) = check(back).unwrap();
        assert!(report.duplicates.is_empty() && report.unreadable.is_empty());
        assert!(f.clean(), "{f:?}");
        assert_eq!((f.dirs, f.files), (1, 0));
        assert_eq!(f.blocks, 3, "superblock, inode table, root directory block");
    }

    #[test]
    fn fsck_finds_a_forged_pointer() {
        let mut img = mkfs(64).unwrap();
        // Point the root directory's inode at a second, unwritten block.
        let (report, _) = check(img.clone()).unwrap();
        assert_eq!(report.reachable, 3);
        let t = crate::layout::itab(&img[0], 0) as usize;
        let mut r = crate::layout::record(&img[t], 0);
        r.ext[0].len += 1;
        crate::layout::set_record(&mut img[t], 0, &r);
        let (_, f) = check(img).unwrap();
        assert!(!f.errors.is_empty(), "{f:?}");
    }
}
