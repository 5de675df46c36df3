//! Mounting the disk's file system, or making one on a blank disk.

use oxok_cffs::Fs;
use oxok_cffs::layout::SUPER_BLOCK;
use oxok_libos::abi::xn::{BLOCK_SIZE, refuse};
use oxok_libos::println;
use oxok_libos::xn::XnDisk;

use oxok_cffs::FsError as DiskError;

/// Mounts the C-FFS file system whose superblock is a catalogued root
/// (XN recovered its free map at boot; mount repairs link counts and
/// orphans), or registers the templates and makes a fresh one with a
/// `/tmp` (where the RAM server's `/tmp` is reached). The owner is the
/// principal init gave this environment (`DISK_PRINCIPAL`), the same in
/// every boot whatever this environment's id.
pub(super) fn mount() -> Option<Fs<XnDisk>> {
    let Some(me) = oxok_libos::principal::mine() else {
        println!("dfsd: no file system: no principal (init gives the disk file server one)");
        return None;
    };
    let nblocks = oxok_libos::xn::header().map_or(0, |h| h.nblocks);
    let made = match XnDisk::existing() {
        Some(id) => XnDisk::new(id)
            .ok_or(DiskError::Io)
            .and_then(|mut d| {
                // The superblock's acl names its owner: another principal's
                // file system cannot even be read.
                let mut sb = [0u8; BLOCK_SIZE];
                if let Err(r) = oxok_cffs::Disk::read(&mut d, SUPER_BLOCK, &mut sb)
                    && r.code() == refuse::DENIED
                {
                    println!("dfsd: file system {id} belongs to another principal: XN refuses principal {me}");
                }
                Fs::mount(d, me)
            })
            .map(|(fs, r)| {
                (
                    fs,
                    alloc::format!(
                        "mounted file system {id} ({} orphans, {} link counts repaired)",
                        r.orphans,
                        r.nlinks
                    ),
                )
            }),
        None => match XnDisk::register() {
            Ok(id) => XnDisk::new(id).ok_or(DiskError::Io).and_then(|d| Fs::mkfs(d, me)).and_then(|mut fs| {
                fs.mkdir("/tmp")?;
                fs.sync()?;
                // The root is catalogued before anyone relies on it.
                if let Err(e) = oxok_libos::xn::wait_catalog() {
                    println!("dfsd: catalogue: {e}");
                }
                Ok((fs, alloc::format!("made file system {id}")))
            }),
            Err(e) => {
                println!("dfsd: cannot register the templates: {e}");
                return None;
            }
        },
    };
    match made {
        Ok((fs, how)) => {
            let env = oxok_libos::exposed::self_id();
            let window = (fs.disk().window() * BLOCK_SIZE as u64) >> 20;
            println!(
                "dfsd: C-FFS on a disk of {nblocks} blocks: {how}; principal {me}, environment {env}; cache window {window} MiB"
            );
            Some(fs)
        }
        Err(e) => {
            println!("dfsd: no file system: {e:?}");
            None
        }
    }
}
