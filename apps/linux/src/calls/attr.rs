//! File attributes the file system does not keep: modes (`chmod`), owners
//! (`chown`) and times (`utimensat`). There is one user, root, who owns
//! every file; modes are fixed by kind, and the only time is the one the
//! file system stamps when a file's content changes (`stat` shows it for
//! all three times; the disk's C-FFS keeps none: 0). So each call checks what Linux would check — the path or
//! descriptor names an object, pointers are readable, flags are known —
//! and then accepts what leaves the file as `stat` shows it: any mode
//! (none is kept; bits beyond `07777`, such as the file type `cp -r`
//! passes from a `stat`, are ignored as Linux ignores them), the owner root (uid/gid 0 or -1; another owner is
//! `EPERM`: no other user exists), any times (none are set).

use crate::calls::fs::{path_arg, resolve, stat_fd, stat_path};
use crate::errno::{EINVAL, EPERM, Res};
use crate::uaccess;
use oxok_libos::abi::ExceptionFrame;

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

pub fn chmod(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    stat_path(&path_arg(AT_FDCWD, a[0])?).map(|_| 0)
}

pub fn fchmod(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    stat_fd(a[0]).map(|_| 0)
}

pub fn fchmodat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    exists_at(a[0], a[1], 0).map(|()| 0)
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
/// `dirfd`. Each `timespec` must be readable and valid.
pub fn utimensat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (dirfd, path, times, flags) = (a[0], a[1], a[2], a[3]);
    if times != 0 {
        for i in 0..2u64 {
            let nsec = uaccess::read_u64(times + i * 16 + 8)?;
            if nsec >= 1_000_000_000 && nsec != UTIME_NOW && nsec != UTIME_OMIT {
                return Err(EINVAL);
            }
        }
    }
    if path == 0 {
        return stat_fd(dirfd).map(|_| 0);
    }
    exists_at(dirfd, path, flags).map(|()| 0)
}
