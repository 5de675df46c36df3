//! File attributes: modes (`chmod`), owners (`chown`) and times
//! (`utimensat`). There is one user, root, who owns every file. Those calls
//! check what Linux would check — the path or descriptor names an object,
//! pointers are readable, flags are known — and then set what the file
//! system keeps: the RAM file system keeps permission bits (bits beyond
//! `07777`, such as the file type `cp -r` passes from a `stat`, are
//! ignored as Linux ignores them) and times (whole seconds; `stat` shows
//! the modification time for all three). Elsewhere (the disk's C-FFS,
//! devices) modes and times are accepted without being kept. Owners: root
//! (uid/gid 0 or -1) is accepted; another owner is `EPERM`, since no other
//! user exists.

use crate::calls::fs::{path_arg, resolve, stat_fd, stat_path};
use crate::errno::{EINVAL, EPERM, Res, from_io};
use crate::{fdtab, uaccess};
use alloc::sync::Arc;
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::fd::IoError;
use oxok_libos::fs::OpenFile;
use oxok_libos::fs::{self as lfs, OpenFlags};

const AT_FDCWD: u64 = -100i64 as u64;
const AT_SYMLINK_NOFOLLOW: u64 = 0x100;
const AT_EMPTY_PATH: u64 = 0x1000;
/// `utimensat`'s `tv_nsec` values that stand for "now" and "leave".
const UTIME_NOW: u64 = (1 << 30) - 1;
const UTIME_OMIT: u64 = (1 << 30) - 2;

/// The object `dirfd` and the path at `addr` name (with `AT_EMPTY_PATH`
/// and an empty path: `dirfd` itself) exists.
fn exists_at(dirfd: u64, addr: u64, flags: u64) -> Result<(), i64> {
    if flags & !(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0 {
        return Err(EINVAL);
    }
    let name = uaccess::read_path(addr)?;
    if name.is_empty() && flags & AT_EMPTY_PATH != 0 {
        return stat_fd(dirfd).map(|_| ());
    }
    stat_path(&resolve(dirfd, &name)?).map(|_| ())
}

/// Only root's ids (or -1, "unchanged") name an owner that exists.
fn owner_ok(uid: u64, gid: u64) -> Result<(), i64> {
    let ok = |id: u64| id as u32 == 0 || id as u32 == u32::MAX;
    if ok(uid) && ok(gid) { Ok(()) } else { Err(EPERM) }
}

/// The file server's open file for the object at the resolved path `full`
/// (`None` for a device or a file of the personality's own), to set an
/// attribute through.
fn open_at(full: &str) -> Option<Arc<OpenFile>> {
    let how = match lfs::stat(full) {
        Ok(m) if m.is_dir() => OpenFlags::READ | OpenFlags::DIRECTORY,
        _ => OpenFlags::READ,
    };
    lfs::open_file(full, how).ok().map(Arc::new)
}

/// Sets `mode` on `file` where the file system keeps modes.
fn set_mode(file: Option<Arc<OpenFile>>, mode: u64) -> Res {
    match file.map(|f| f.set_mode((mode & 0o7777) as u32)) {
        None | Some(Ok(()) | Err(IoError::Unsupported)) => Ok(0),
        Some(Err(e)) => Err(from_io(e)),
    }
}

pub fn chmod(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let full = path_arg(AT_FDCWD, a[0])?;
    stat_path(&full)?;
    set_mode(open_at(&full), a[1])
}

pub fn fchmod(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    stat_fd(a[0])?;
    set_mode(fdtab::get(a[0] as usize).and_then(|i| i.file), a[1])
}

pub fn fchmodat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    exists_at(a[0], a[1], 0)?;
    set_mode(open_at(&resolve(a[0], &uaccess::read_path(a[1])?)?), a[2])
}

pub fn chown(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    stat_path(&path_arg(AT_FDCWD, a[0])?)?;
    owner_ok(a[1], a[2]).map(|()| 0)
}

pub fn fchown(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    stat_fd(a[0])?;
    owner_ok(a[1], a[2]).map(|()| 0)
}

pub fn fchownat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    exists_at(a[0], a[1], a[4])?;
    owner_ok(a[2], a[3]).map(|()| 0)
}

/// `utimensat(dirfd, path, times, flags)`; a NULL path is `futimens` on
/// `dirfd`. Each `timespec` must be readable and valid. The times are set
/// in whole seconds where the file system keeps them (the RAM file
/// system); elsewhere they are accepted and not kept.
pub fn utimensat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (dirfd, path, times, flags) = (a[0], a[1], a[2], a[3]);
    let now = oxok_libos::time::unix_secs().unwrap_or(0);
    // Linux's order: access, then modification; `None` leaves it.
    let mut set = [Some(now), Some(now)];
    if times != 0 {
        for (i, t) in set.iter_mut().enumerate() {
            let at = times + i as u64 * 16;
            let (sec, nsec) = (uaccess::read_u64(at)?, uaccess::read_u64(at + 8)?);
            *t = match nsec {
                UTIME_OMIT => None,
                UTIME_NOW => Some(now),
                n if n < 1_000_000_000 => Some(sec),
                _ => return Err(EINVAL),
            };
        }
    }
    let [atime, mtime] = set;
    let file = if path == 0 {
        stat_fd(dirfd)?;
        fdtab::get(dirfd as usize).and_then(|i| i.file)
    } else {
        exists_at(dirfd, path, flags)?;
        match uaccess::read_path(path)? {
            // `AT_EMPTY_PATH` (checked above): `dirfd` itself.
            name if name.is_empty() => fdtab::get(dirfd as usize).and_then(|i| i.file),
            // A device or a file of the personality's own has no times to set.
            name => open_at(&resolve(dirfd, &name)?),
        }
    };
    match file.map(|f| f.set_times(mtime, atime)) {
        None | Some(Ok(()) | Err(IoError::Unsupported)) => Ok(0),
        Some(Err(e)) => Err(from_io(e)),
    }
}
