//! Links: symbolic links (`symlink`, `readlink` and their `*at` forms)
//! and hard links (`link`, `linkat`), kept by the file servers (the RAM
//! file system; the disk's C-FFS, whose server `dfsd` follows its links,
//! `apps/fsd/src/disk/links.rs`). The server follows
//! links in the names it keeps; a link from its names to what only the
//! personality serves — a device, the boot archive's files and programs —
//! looks dangling there and is followed here ([`beyond_server`]).

use crate::calls::fs::{AT_FDCWD, exe, path_arg, resolve};
use crate::devices;
use crate::errno::{EINVAL, ELOOP, ENOENT, Res, from_io};
use crate::uaccess;
use alloc::string::String;
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::fs::{self as lfs, FileKind};

const AT_SYMLINK_FOLLOW: u64 = 0x400;

/// Where the chain of symbolic links that is `path`'s last component ends,
/// if it leaves the file server's names (`ln -s /bin/busybox /usr/bin/ls`,
/// `ln -s /dev/null log`): the file server cannot follow a link to the
/// devices or the boot archive, which only the personality serves, so it
/// reports such a link dangling and the personality follows it here.
/// `None` when `path` is no link.
pub(crate) fn beyond_server(path: &str) -> Option<String> {
    follow(String::from(path)).ok().filter(|end| end != path)
}

/// The target of the symbolic link `path` (or `/proc/self/exe`'s
/// program), as much as fits in `len` bytes at `buf` (no NUL added).
fn readlink_path(path: &str, buf: u64, len: u64) -> Res {
    if len as i64 <= 0 {
        return Err(EINVAL);
    }
    let target = if path == "/proc/self/exe" {
        exe().into_bytes()
    } else if devices::kind_of(path).is_some() {
        return Err(EINVAL);
    } else {
        lfs::read_link(path).map_err(from_io)?
    };
    let n = target.len().min(len as usize);
    uaccess::write(buf, &target[..n])?;
    Ok(n as i64)
}

pub fn readlink(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    readlink_path(&path_arg(AT_FDCWD as u64, a[0])?, a[1], a[2])
}

pub fn readlinkat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    readlink_path(&path_arg(a[0], a[1])?, a[2], a[3])
}

/// `symlink(target, path)`: the target is kept as written.
fn symlink_at(target: u64, dirfd: u64, path: u64) -> Res {
    let target = uaccess::read_path(target)?;
    if target.is_empty() {
        return Err(ENOENT);
    }
    lfs::symlink(&target, &path_arg(dirfd, path)?).map(|()| 0).map_err(from_io)
}

pub fn symlink(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    symlink_at(a[0], AT_FDCWD as u64, a[1])
}

pub fn symlinkat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    symlink_at(a[0], a[1], a[2])
}

/// Links allowed on one path resolved by the personality (Linux's
/// `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// `path` with symbolic links as its last component followed (for
/// `linkat`'s `AT_SYMLINK_FOLLOW`): the name of what the chain ends at.
fn follow(mut path: String) -> Result<String, i64> {
    for _ in 0..MAX_LINKS {
        match lfs::symlink_metadata(&path) {
            Ok(m) if m.kind == FileKind::Symlink => {
                let target = String::from_utf8(lfs::read_link(&path).map_err(from_io)?).map_err(|_| EINVAL)?;
                let dir = &path[..path.rfind('/').unwrap_or(0)];
                path =
                    resolve(AT_FDCWD as u64, &if target.starts_with('/') { target } else { lfs::join(dir, &target) })?
                        .into_string();
            }
            _ => return Ok(path),
        }
    }
    Err(ELOOP)
}

pub fn link(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (from, to) = (path_arg(AT_FDCWD as u64, a[0])?, path_arg(AT_FDCWD as u64, a[1])?);
    lfs::link(&from, &to).map(|()| 0).map_err(from_io)
}

pub fn linkat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    if a[4] & !AT_SYMLINK_FOLLOW != 0 {
        return Err(EINVAL);
    }
    let from = path_arg(a[0], a[1])?;
    let from = if a[4] & AT_SYMLINK_FOLLOW != 0 { follow(from.into_string())? } else { from.into_string() };
    lfs::link(&from, &path_arg(a[2], a[3])?).map(|()| 0).map_err(from_io)
}
