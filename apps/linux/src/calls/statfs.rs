//! `statfs` and `fstatfs`: a file system's size and use, from its file
//! server's `INFO` (the disk's: XN's exposed count of its blocks), and
//! `/proc/mounts`, which names the two file systems (`devices.rs`), so that
//! `df` finds them.

use crate::calls::fs::{AT_FDCWD, DEV_DISK, DEV_RAM, dev_of_server, path_arg, stat_path};
use crate::errno::{Res, from_io};
use crate::{devices, fdtab, uaccess};
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::fs::{self as lfs, ServerStats};

/// `f_type` of the disk's C-FFS (no Linux file system has it: "CFS3").
pub const CFFS_MAGIC: u64 = 0x4346_5333;
/// `f_type` of the RAM file system: Linux's `TMPFS_MAGIC`, which it is like.
pub const TMPFS_MAGIC: u64 = 0x0102_1994;
/// `f_type` of a pipe (`PIPEFS_MAGIC`).
const PIPEFS_MAGIC: u64 = 0x5049_5045;
/// The block both file systems count in.
const BLOCK: u64 = 4096;
/// Longest name: C-FFS's (`oxok_cffs::layout::NAME_MAX`) and the RAM file
/// system's.
const CFFS_NAME_MAX: u64 = 42;
const RAM_NAME_MAX: u64 = 255;

/// Linux's `struct statfs` on x86-64: eleven words and four spare.
struct StatFs {
    kind: u64,
    blocks: u64,
    free: u64,
    files: u64,
    files_free: u64,
    fsid: u64,
    name_max: u64,
}

impl StatFs {
    /// What a file server's counters say.
    fn of(s: &ServerStats, disk: bool) -> StatFs {
        let blocks = s.capacity / BLOCK;
        let free = blocks.saturating_sub(s.bytes.div_ceil(BLOCK));
        StatFs {
            kind: if disk { CFFS_MAGIC } else { TMPFS_MAGIC },
            blocks,
            free,
            files: s.max_inodes,
            files_free: s.max_inodes.saturating_sub(s.inodes),
            fsid: if disk { DEV_DISK } else { DEV_RAM },
            name_max: if disk { CFFS_NAME_MAX } else { RAM_NAME_MAX },
        }
    }

    /// What holds no blocks: a pipe, a device, the console.
    fn empty(kind: u64) -> StatFs {
        StatFs { kind, blocks: 0, free: 0, files: 0, files_free: 0, fsid: 0, name_max: RAM_NAME_MAX }
    }

    fn bytes(&self) -> [u8; 120] {
        let words = [
            self.kind,
            BLOCK,
            self.blocks,
            self.free,
            self.free,
            self.files,
            self.files_free,
            self.fsid,
            self.name_max,
            BLOCK,
            0,
        ];
        let mut b = [0u8; 120];
        for (chunk, w) in b.chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        b
    }
}

/// What holds `path`: its file server's file system, or — for the
/// personality's own files (devices, the boot archive's, `/proc`) — none.
fn of_path(path: &str) -> Result<StatFs, i64> {
    stat_path(path)?;
    if devices::kind_of(path).is_some() || devices::boot_file(path).is_some() {
        return Ok(StatFs::empty(TMPFS_MAGIC));
    }
    let (s, disk) = lfs::stats_for(path).map_err(from_io)?;
    Ok(StatFs::of(&s, disk))
}

pub fn statfs(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let st = of_path(&path_arg(AT_FDCWD as u64, a[0])?)?;
    uaccess::write(a[1], &st.bytes()).map(|()| 0)
}

pub fn fstatfs(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let h = crate::calls::file::handle(a[0])?;
    let st = match fdtab::get(a[0] as usize).and_then(|i| i.file) {
        Some(file) => {
            let server = file.server();
            let s = lfs::stats_of(server).map_err(from_io)?;
            StatFs::of(&s, dev_of_server(server) == DEV_DISK)
        }
        None if h.kind() == "pipe" => StatFs::empty(PIPEFS_MAGIC),
        None => StatFs::empty(TMPFS_MAGIC),
    };
    uaccess::write(a[1], &st.bytes()).map(|()| 0)
}
