//! File-system calls, through the libOS's client of the file server: open,
//! the stat family, directories, names, the current directory.

use crate::errno::{EBADF, EFAULT, EINVAL, ENOENT, ENOTDIR, ERANGE, Res, from_io};
use crate::fdtab::{self, Info};
use crate::{devices, uaccess};
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::fd::{self, File, Handle, IoError, MAX_FDS};
use oxok_libos::fs::{self as lfs, FileKind, Normal, OpenFlags};

/// `AT_FDCWD`: relative paths resolve against the current directory.
pub(crate) const AT_FDCWD: i32 = -100;
const AT_SYMLINK_NOFOLLOW: u64 = 0x100;
const AT_REMOVEDIR: u64 = 0x200;
const AT_EMPTY_PATH: u64 = 0x1000;

const O_ACCMODE: u64 = 3;
const O_WRONLY: u64 = 1;
const O_RDWR: u64 = 2;
const O_CREAT: u64 = 0o100;
const O_EXCL: u64 = 0o200;
const O_TRUNC: u64 = 0o1000;
const O_APPEND: u64 = 0o2000;
const O_DIRECTORY: u64 = 0o200000;
const O_NOFOLLOW: u64 = 0o400000;
const O_CLOEXEC: u64 = 0o2000000;

/// The absolute, normalised path `path` names relative to `dirfd`.
pub(crate) fn resolve(dirfd: u64, path: &str) -> Result<Normal, i64> {
    if path.is_empty() {
        return Err(ENOENT);
    }
    if path.starts_with('/') || dirfd as i32 == AT_FDCWD {
        return lfs::absolute_normal(path).map_err(from_io);
    }
    let dir = fdtab::get(dirfd as usize).filter(|i| !i.path.is_empty()).ok_or(EBADF)?;
    if !dir.dir {
        return Err(ENOTDIR);
    }
    lfs::join_normal(&dir.path, path).map_err(from_io)
}

/// The path argument at `addr`, resolved against `dirfd`.
pub(crate) fn path_arg(dirfd: u64, addr: u64) -> Result<Normal, i64> {
    let path = uaccess::read_path(addr)?;
    if path.starts_with('/') || dirfd as i32 == AT_FDCWD {
        // As `resolve` has it, with the bytes read kept when they are normal.
        return if path.is_empty() { Err(ENOENT) } else { lfs::absolute_normal_owned(path).map_err(from_io) };
    }
    resolve(dirfd, &path)
}

/// The permission bits `mode` leaves after the process's umask.
pub(crate) fn masked(mode: u64) -> u32 {
    (mode & 0o7777 & !UMASK.load(Ordering::Relaxed)) as u32
}

fn open_flags(flags: u64, mode: u64) -> OpenFlags {
    let mut f = match flags & O_ACCMODE {
        O_WRONLY => OpenFlags::WRITE,
        O_RDWR => OpenFlags::READ | OpenFlags::WRITE,
        _ => OpenFlags::READ,
    };
    for (bit, of) in [
        (O_CREAT, OpenFlags::CREATE),
        (O_EXCL, OpenFlags::EXCLUSIVE),
        (O_TRUNC, OpenFlags::TRUNCATE),
        (O_APPEND, OpenFlags::APPEND),
        (O_DIRECTORY, OpenFlags::DIRECTORY),
        (O_NOFOLLOW, OpenFlags::NOFOLLOW),
    ] {
        if flags & bit != 0 {
            f = f | of;
        }
    }
    if flags & O_CREAT != 0 { f.with_mode(masked(mode)) } else { f }
}

/// Opens `path` with Linux `flags` (and `mode` for a file it creates);
/// returns the descriptor.
fn open_path(path: Normal, flags: u64, mode: u64) -> Res {
    if let Some(h) = devices::open(&path) {
        let path = path.into_string();
        return install(h, Info { path, flags, cloexec: flags & O_CLOEXEC != 0, ..Info::default() });
    }
    let mut of = open_flags(flags, mode);
    let file = match lfs::open_normal(&path, of) {
        Err(IoError::IsDir) if flags & O_ACCMODE == 0 => {
            of = of | OpenFlags::DIRECTORY;
            lfs::open_normal(&path, of)
        }
        Err(IoError::NotFound) if flags & O_NOFOLLOW == 0 => {
            // A link to a device or a boot file; or, read-only, a program
            // of the boot archive where `execve` would find it (also
            // through a link, and `/proc/self/exe`).
            let end = crate::calls::links::beyond_server(&path);
            let target = end
                .clone()
                .unwrap_or_else(|| if &*path == "/proc/self/exe" { exe() } else { String::from(path.as_str()) });
            let read_only = flags & O_ACCMODE == 0;
            let h = end.as_deref().and_then(devices::open);
            if let Some(h) = h.or_else(|| if read_only { devices::open_program(&target) } else { None }) {
                return install(h, Info { path: target, flags, cloexec: flags & O_CLOEXEC != 0, ..Info::default() });
            }
            Err(IoError::NotFound)
        }
        r => r,
    }
    .map_err(from_io)?;
    let file = Arc::new(file);
    // The open's reply says whether it is a directory: no second call.
    let dir = of.contains(OpenFlags::DIRECTORY)
        || file.known_dir().unwrap_or_else(|| file.metadata().is_ok_and(|m| m.is_dir()));
    let obj: Arc<dyn File> = file.clone();
    let info =
        Info { path: path.into_string(), file: Some(file), dir, cursor: 0, flags, cloexec: flags & O_CLOEXEC != 0 };
    install(Handle::Object(obj), info)
}

fn install(h: Handle, info: Info) -> Res {
    let fd = fd::install(h).map_err(|_| crate::errno::EMFILE)?;
    fdtab::set(fd, info);
    Ok(fd as i64)
}

pub fn open(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    open_path(path_arg(AT_FDCWD as u64, a[0])?, a[1], a[2])
}

pub fn openat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    open_path(path_arg(a[0], a[1])?, a[2], a[3])
}

const S_IFIFO: u32 = 0o010000;
const S_IFCHR: u32 = 0o020000;
const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFLNK: u32 = 0o120000;

/// `st_dev` of the RAM file system's files and of the personality's own
/// (and `f_fsid` of the RAM file system, `statfs.rs`).
pub(crate) const DEV_RAM: u64 = 1;
/// `st_dev` of the disk's files (its `f_fsid`): programs that stay on one
/// file system (`df PATH`, `find -xdev`, `du -x`) tell the two apart.
pub(crate) const DEV_DISK: u64 = 2;

/// The device number of what the file server `server` holds.
pub(crate) fn dev_of_server(server: u64) -> u64 {
    if lfs::locate::disk_server() == Some(server) { DEV_DISK } else { DEV_RAM }
}

/// What `stat` reports about one object.
pub(crate) struct Stat {
    /// `st_dev`: [`DEV_DISK`] for the disk's files, else [`DEV_RAM`].
    dev: u64,
    mode: u32,
    size: u64,
    ino: u64,
    nlink: u64,
    rdev: (u64, u64),
    /// Unix seconds (0: not kept); reported as access, modification and
    /// status-change time alike.
    mtime: u64,
    /// 512-byte blocks held (`st_blocks`).
    blocks: u64,
}

impl Stat {
    /// Linux's x86-64 `struct stat` (144 bytes).
    fn bytes(&self) -> [u8; 144] {
        let mut b = [0u8; 144];
        let mut put = |off: usize, v: &[u8]| b[off..off + v.len()].copy_from_slice(v);
        put(0, &self.dev.to_le_bytes());
        put(8, &self.ino.to_le_bytes());
        put(16, &self.nlink.to_le_bytes());
        put(24, &self.mode.to_le_bytes());
        let (major, minor) = self.rdev;
        put(40, &((major << 8) | minor).to_le_bytes());
        put(48, &self.size.to_le_bytes());
        put(56, &4096u64.to_le_bytes()); // st_blksize
        put(64, &self.blocks.to_le_bytes());
        for off in [72, 88, 104] {
            put(off, &self.mtime.to_le_bytes()); // st_atime, st_mtime, st_ctime (seconds)
        }
        b
    }

    /// A file server's object: its mode where the file system keeps one
    /// (the RAM file system), else fixed by kind. A file's link count is
    /// the server's: 0 for an open file whose last name went, as Linux's.
    fn of(m: &lfs::Metadata) -> Stat {
        let (kind, fixed, nlink) = match m.kind {
            FileKind::Dir => (S_IFDIR, 0o755, m.nlink.max(2)),
            FileKind::File => (S_IFREG, 0o644, m.nlink),
            FileKind::Symlink => (S_IFLNK, 0o777, m.nlink.max(1)),
        };
        let mode = kind | m.mode.map_or(fixed, u32::from);
        // The storage it holds where the file system says (whole pages in
        // the RAM file system: a sparse file holds less than its size).
        let blocks = m.allocated.unwrap_or(m.size).div_ceil(512);
        Stat { dev: DEV_RAM, mode, size: m.size, ino: m.ino, nlink, rdev: (0, 0), mtime: m.mtime, blocks }
    }

    /// An object of the personality's own: one link, no inode number or
    /// time, blocks by its size.
    fn plain(mode: u32, size: u64) -> Stat {
        Stat { dev: DEV_RAM, mode, size, ino: 0, nlink: 1, rdev: (0, 0), mtime: 0, blocks: size.div_ceil(512) }
    }

    fn device(kind: &str) -> Stat {
        Stat { rdev: devices::rdev(kind).unwrap_or((0, 0)), ..Stat::plain(S_IFCHR | 0o666, 0) }
    }
}

/// [`stat_path`], or with `nofollow` of a symbolic link itself.
pub(crate) fn stat_path_at(path: &str, nofollow: bool) -> Result<Stat, i64> {
    if nofollow
        && devices::kind_of(path).is_none()
        && let Ok(m) = lfs::symlink_metadata(path)
    {
        return Ok(Stat { dev: dev_of_path(path), ..Stat::of(&m) });
    }
    stat_path(path)
}

/// What the personality serves itself at `path`: the devices and the boot
/// archive's files and programs.
fn virtual_stat(path: &str) -> Option<Stat> {
    if let Some(kind) = devices::kind_of(path) {
        return Some(Stat::device(kind));
    }
    // The boot archive's programs, where `execve` finds them (so a shell
    // searching `PATH` finds them too).
    if let Some(data) = devices::boot_file(path) {
        return Some(Stat::plain(S_IFREG | 0o444, data.len() as u64));
    }
    let image = crate::calls::exec::archive_program(path)?;
    Some(Stat::plain(S_IFREG | 0o755, image.len() as u64))
}

/// The device number of the file server's object at `path`.
fn dev_of_path(path: &str) -> u64 {
    if lfs::locate::disk_server().is_none() {
        return DEV_RAM;
    }
    lfs::route(path).map_or(DEV_RAM, |(server, _)| dev_of_server(server))
}

pub(crate) fn stat_path(path: &str) -> Result<Stat, i64> {
    if let Some(s) = virtual_stat(path) {
        return Ok(s);
    }
    match lfs::stat(path) {
        Ok(m) => Ok(Stat { dev: dev_of_path(path), ..Stat::of(&m) }),
        // A link in the file server to what the personality serves.
        Err(IoError::NotFound) => {
            crate::calls::links::beyond_server(path).and_then(|end| virtual_stat(&end)).ok_or(ENOENT)
        }
        Err(e) => Err(from_io(e)),
    }
}

pub(crate) fn stat_fd(fd: u64) -> Result<Stat, i64> {
    let h = crate::calls::file::handle(fd)?;
    if let Some(file) = fdtab::get(fd as usize).and_then(|i| i.file) {
        return file.metadata().map(|m| Stat { dev: dev_of_server(file.server()), ..Stat::of(&m) }).map_err(from_io);
    }
    Ok(match h.kind() {
        "pipe" => Stat::plain(S_IFIFO | 0o600, 0),
        // A file a native parent passed: its size is the server's to say,
        // through a handle the personality did not open.
        "file" => Stat::plain(S_IFREG | 0o644, 0),
        kind => Stat::device(kind),
    })
}

pub fn stat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let s = stat_path(&path_arg(AT_FDCWD as u64, a[0])?)?;
    uaccess::write(a[1], &s.bytes()).map(|()| 0)
}

pub fn lstat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let s = stat_path_at(&path_arg(AT_FDCWD as u64, a[0])?, true)?;
    uaccess::write(a[1], &s.bytes()).map(|()| 0)
}

pub fn fstat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let s = stat_fd(a[0])?;
    uaccess::write(a[1], &s.bytes()).map(|()| 0)
}

pub fn newfstatat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (dirfd, path, buf, flags) = (a[0], a[1], a[2], a[3]);
    if flags & !(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0 {
        return Err(EINVAL);
    }
    let name = uaccess::read_path(path)?;
    let s = if name.is_empty() && flags & AT_EMPTY_PATH != 0 {
        stat_fd(dirfd)?
    } else {
        stat_path_at(&resolve(dirfd, &name)?, flags & AT_SYMLINK_NOFOLLOW != 0)?
    };
    uaccess::write(buf, &s.bytes()).map(|()| 0)
}

fn access_path(path: String) -> Res {
    stat_path(&path).map(|_| 0)
}

pub fn access(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    access_path(path_arg(AT_FDCWD as u64, a[0])?.into_string())
}

pub fn faccessat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    access_path(path_arg(a[0], a[1])?.into_string())
}

pub fn faccessat2(a: &[u64; 6], f: &mut ExceptionFrame) -> Res {
    faccessat(a, f)
}

pub fn ftruncate(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    crate::calls::file::handle(a[0])?;
    let file = fdtab::get(a[0] as usize).and_then(|i| i.file).ok_or(EINVAL)?;
    file.set_len(a[1]).map(|()| 0).map_err(from_io)
}

pub fn getcwd(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let mut cwd = lfs::cwd().into_bytes();
    cwd.push(0);
    if (a[1] as usize) < cwd.len() {
        return Err(ERANGE);
    }
    uaccess::write(a[0], &cwd)?;
    Ok(cwd.len() as i64)
}

pub fn chdir(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let path = path_arg(AT_FDCWD as u64, a[0])?;
    lfs::chdir(&path).map(|()| 0).map_err(from_io)
}

pub fn rename(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let from = path_arg(AT_FDCWD as u64, a[0])?;
    let to = path_arg(AT_FDCWD as u64, a[1])?;
    lfs::rename(&from, &to).map(|()| 0).map_err(from_io)
}

pub fn renameat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (from, to) = (path_arg(a[0], a[1])?, path_arg(a[2], a[3])?);
    lfs::rename(&from, &to).map(|()| 0).map_err(from_io)
}

const RENAME_NOREPLACE: u64 = 1;

pub fn renameat2(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    if a[4] & !RENAME_NOREPLACE != 0 {
        return Err(EINVAL);
    }
    let (from, to) = (path_arg(a[0], a[1])?, path_arg(a[2], a[3])?);
    if a[4] & RENAME_NOREPLACE != 0 && lfs::symlink_metadata(&to).is_ok() {
        return Err(crate::errno::EEXIST);
    }
    lfs::rename(&from, &to).map(|()| 0).map_err(from_io)
}

pub fn mkdir(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    lfs::mkdir_mode(&path_arg(AT_FDCWD as u64, a[0])?, masked(a[1])).map(|()| 0).map_err(from_io)
}

pub fn mkdirat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    lfs::mkdir_mode(&path_arg(a[0], a[1])?, masked(a[2])).map(|()| 0).map_err(from_io)
}

pub fn rmdir(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    lfs::rmdir(&path_arg(AT_FDCWD as u64, a[0])?).map(|()| 0).map_err(from_io)
}

pub fn unlink(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    lfs::unlink(&path_arg(AT_FDCWD as u64, a[0])?).map(|()| 0).map_err(from_io)
}

pub fn unlinkat(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let path = path_arg(a[0], a[1])?;
    match a[2] {
        0 => lfs::unlink(&path),
        AT_REMOVEDIR => lfs::rmdir(&path),
        _ => return Err(EINVAL),
    }
    .map(|()| 0)
    .map_err(from_io)
}

/// The path `/proc/self/exe` reads as.
static EXE: spin::Mutex<String> = spin::Mutex::new(String::new());

/// Records the program's path for `/proc/self/exe`.
pub fn set_exe(path: &str) {
    *EXE.lock() = String::from(path);
}

/// The program's path (what `/proc/self/exe` names).
pub fn exe() -> String {
    EXE.lock().clone()
}

static UMASK: AtomicU64 = AtomicU64::new(0o022);

pub fn umask(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    Ok(UMASK.swap(a[0] & 0o777, Ordering::Relaxed) as i64)
}

const DT_DIR: u8 = 4;
const DT_REG: u8 = 8;
const DT_LNK: u8 = 10;

/// `getdents64`: `.`, `..`, then the directory's entries in name order,
/// as many whole records as fit, continuing where the last call stopped.
pub fn getdents64(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (fd, buf, len) = (a[0], a[1], a[2]);
    if fd >= MAX_FDS as u64 {
        return Err(EBADF);
    }
    let info = fdtab::get(fd as usize).filter(|i| i.file.is_some()).ok_or(EBADF)?;
    if !info.dir {
        return Err(ENOTDIR);
    }
    let entries = lfs::read_dir(&info.path).map_err(from_io)?;
    let mut names: Vec<(String, u8)> = Vec::from([(String::from("."), DT_DIR), (String::from(".."), DT_DIR)]);
    let dtype = |k: FileKind| match k {
        FileKind::Dir => DT_DIR,
        FileKind::File => DT_REG,
        FileKind::Symlink => DT_LNK,
    };
    names.extend(entries.into_iter().map(|e| (e.name, dtype(e.kind))));
    let mut out = Vec::new();
    let mut cursor = info.cursor;
    for (i, (name, kind)) in names.iter().enumerate().skip(cursor) {
        let reclen = (19 + name.len() + 1).next_multiple_of(8);
        if out.len() + reclen > len as usize {
            break;
        }
        let mut rec = alloc::vec![0u8; reclen];
        rec[0..8].copy_from_slice(&(i as u64 + 1).to_le_bytes()); // d_ino
        rec[8..16].copy_from_slice(&(i as u64 + 1).to_le_bytes()); // d_off
        rec[16..18].copy_from_slice(&(reclen as u16).to_le_bytes());
        rec[18] = *kind;
        rec[19..19 + name.len()].copy_from_slice(name.as_bytes());
        out.extend_from_slice(&rec);
        cursor = i + 1;
    }
    if out.is_empty() && cursor < names.len() {
        return Err(EINVAL); // the buffer holds not even one record
    }
    uaccess::write(buf, &out).map_err(|_| EFAULT)?;
    fdtab::update(fd as usize, |i| i.cursor = cursor);
    Ok(out.len() as i64)
}
