//! Descriptor calls: read and write (plain, vectored, positioned), seek,
//! close, dup, fcntl, terminal ioctls. Descriptors are the libOS's own
//! (console, pipes, files of the file server, devices).

use crate::errno::{EBADF, EINVAL, EMFILE, ENOTTY, ESPIPE, Res, from_io};
use crate::{fdtab, uaccess};
use alloc::vec::Vec;
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::fd::{self, Handle, MAX_FDS, SeekFrom};

/// The object behind Linux descriptor `fd`.
pub fn handle(fd: u64) -> Result<Handle, i64> {
    if fd >= MAX_FDS as u64 {
        return Err(EBADF);
    }
    fd::get(fd as usize).map_err(|_| EBADF)
}

/// Reads up to `len` bytes from `h` into the program's `buf`. A file or a
/// device fills the read as far as it has bytes, chunk after chunk (as
/// Linux's do: `dd bs=1M` of `/dev/zero` gets a whole record); a pipe, the
/// console or a socket returns what one underlying read gave.
fn read_into(h: &Handle, buf: u64, len: u64, checked: u64) -> Res {
    let fills = matches!(h.kind(), "file" | "zero" | "random" | "null" | "boot");
    let mut tmp = uaccess::scratch();
    let mut done = 0u64;
    loop {
        let n = (len - done).min(uaccess::CHUNK as u64) as usize;
        // Each chunk is found writable before it is read (a read has an
        // effect a failed copy would lose); the copy then needs no look.
        let looked = if done == 0 && checked >= n as u64 { Ok(()) } else { uaccess::writable(buf + done, n as u64) };
        // Straight into the program's memory where the object can (a
        // file's bytes that came with its open), else through `tmp`.
        let step = looked.and_then(|()| match h.read_to_guest(buf + done, n) {
            Some(got) => got.map_err(from_io),
            None => h
                .read(&mut tmp[..n])
                .map_err(from_io)
                .and_then(|got| uaccess::write_checked(buf + done, &tmp[..got]).map(|()| got)),
        });
        match step {
            // An error after some bytes: those bytes (the next call sees it).
            Err(_) if done > 0 => return Ok(done as i64),
            Err(e) => return Err(e),
            Ok(got) => {
                done += got as u64;
                if !fills || got < n || done == len {
                    return Ok(done as i64);
                }
            }
        }
    }
}

/// Writes all of the program's `[buf, buf + len)` to `h`, chunk by chunk
/// (straight from the program's memory where the object can: a file's
/// bytes go to the file server's buffer in one copy); returns the bytes
/// taken (short only when an error followed some).
fn write_from(h: &Handle, buf: u64, len: u64) -> Res {
    let mut done = 0u64;
    while done < len {
        let n = (len - done).min(uaccess::CHUNK as u64) as usize;
        uaccess::readable(buf + done, n as u64)?;
        let written = match h.write_from_guest(buf + done, n) {
            Some(Ok(w)) => done as i64 + w as i64,
            Some(Err(e)) if done == 0 => return Err(from_io(e)),
            Some(Err(_)) => return Ok(done as i64),
            None => write_bytes(h, &uaccess::read_vec(buf + done, n)?, done)?,
        };
        if written != (done + n as u64) as i64 {
            return Ok(written);
        }
        done += n as u64;
    }
    Ok(done as i64)
}

/// Writes `data` through `h`, `done` bytes having gone before it: the
/// total written, or the error if nothing was.
fn write_bytes(h: &Handle, data: &[u8], done: u64) -> Res {
    let mut off = 0;
    while off < data.len() {
        match h.write(&data[off..]) {
            Ok(w) => off += w,
            Err(e) if done + off as u64 == 0 => return Err(from_io(e)),
            Err(_) => break,
        }
    }
    Ok((done + off as u64) as i64)
}

/// Before a read or write of pipe end or console `fd` that would block:
/// with other threads, they run meanwhile (`Ok(true)`: the frame holds
/// another thread now); alone, the object is waited for here, where a
/// signal ends the wait with `EINTR` (restarted after an `SA_RESTART`
/// handler). Files and sockets block in their own calls.
fn wait_turn(frame: &mut ExceptionFrame, h: &Handle, fd: u64, events: u16) -> Result<bool, i64> {
    if h.kind() != "pipe" && h.kind() != "console" {
        return Ok(false);
    }
    if crate::threads::wait_io(frame, fd, events) {
        return Ok(true);
    }
    if !crate::calls::poll::ready(fd as i32, events, &mut Vec::new()) {
        crate::calls::poll::wait_ready(&mut [(fd as i32, events, 0)], None)?;
    }
    Ok(false)
}

const POLLIN: u16 = crate::calls::poll::POLLIN;
const POLLOUT: u16 = crate::calls::poll::POLLOUT;

pub fn read(a: &[u64; 6], frame: &mut ExceptionFrame) -> Res {
    let h = handle(a[0])?;
    if a[2] == 0 {
        return Ok(0);
    }
    // A bad buffer is `EFAULT` at once, not after a wait for input.
    let checked = a[2].min(uaccess::CHUNK as u64);
    uaccess::writable(a[1], checked)?;
    if wait_turn(frame, &h, a[0], POLLIN)? {
        return Ok(0);
    }
    read_into(&h, a[1], a[2], checked)
}

pub fn write(a: &[u64; 6], frame: &mut ExceptionFrame) -> Res {
    let h = handle(a[0])?;
    if a[2] != 0 && wait_turn(frame, &h, a[0], POLLOUT)? {
        return Ok(0);
    }
    write_from(&h, a[1], a[2])
}

/// The `(base, len)` pairs of an iovec array (at most `IOV_MAX`).
fn iovecs(addr: u64, count: u64) -> Result<Vec<(u64, u64)>, i64> {
    if count > 1024 {
        return Err(EINVAL);
    }
    let raw = uaccess::read_vec(addr, count as usize * 16)?;
    Ok(raw
        .chunks(16)
        .map(|c| {
            let w = |i: usize| u64::from_le_bytes(c[i..i + 8].try_into().unwrap_or([0; 8]));
            (w(0), w(8))
        })
        .collect())
}

pub fn readv(a: &[u64; 6], frame: &mut ExceptionFrame) -> Res {
    let h = handle(a[0])?;
    if wait_turn(frame, &h, a[0], POLLIN)? {
        return Ok(0);
    }
    let mut total = 0;
    for (base, len) in iovecs(a[1], a[2])? {
        if len == 0 {
            continue;
        }
        let got = read_into(&h, base, len, 0)?;
        total += got;
        if (got as u64) < len {
            break;
        }
    }
    Ok(total)
}

pub fn writev(a: &[u64; 6], frame: &mut ExceptionFrame) -> Res {
    let h = handle(a[0])?;
    if wait_turn(frame, &h, a[0], POLLOUT)? {
        return Ok(0);
    }
    let iov = iovecs(a[1], a[2])?;
    let size = iov.iter().fold(0u64, |s, &(_, len)| s.saturating_add(len));
    if size <= uaccess::CHUNK as u64 {
        // One write, as Linux's `writev` is one: musl's `printf` hands a
        // line over as two pieces (its buffer and the rest), which must
        // reach the console — or a pipe, within `PIPE_BUF` — together.
        let mut data = Vec::new();
        data.try_reserve_exact(size as usize).map_err(|_| crate::errno::ENOMEM)?;
        for &(base, len) in &iov {
            let at = data.len();
            data.resize(at + len as usize, 0);
            uaccess::read(base, &mut data[at..])?;
        }
        return write_bytes(&h, &data, 0);
    }
    let mut total = 0;
    for (base, len) in iov {
        match write_from(&h, base, len) {
            Ok(n) => total += n,
            Err(e) if total == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(total)
}

/// Runs `f` with `h` positioned at `offset`, then puts the position back.
fn at_offset(h: &Handle, offset: u64, f: impl FnOnce() -> Res) -> Res {
    let saved = h.seek(SeekFrom::Current(0)).map_err(|_| ESPIPE)?;
    h.seek(SeekFrom::Start(offset)).map_err(from_io)?;
    let r = f();
    let _ = h.seek(SeekFrom::Start(saved));
    r
}

pub fn pread64(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let h = handle(a[0])?;
    at_offset(&h, a[3], || read_into(&h, a[1], a[2], 0))
}

pub fn pwrite64(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let h = handle(a[0])?;
    at_offset(&h, a[3], || write_from(&h, a[1], a[2]))
}

pub fn lseek(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let h = handle(a[0])?;
    let off = a[1] as i64;
    let to = match a[2] {
        0 if off >= 0 => SeekFrom::Start(off as u64),
        1 => SeekFrom::Current(off),
        2 => SeekFrom::End(off),
        _ => return Err(EINVAL),
    };
    if !matches!(h.kind(), "file" | "boot") {
        return Err(ESPIPE);
    }
    h.seek(to).map(|p| p as i64).map_err(from_io)
}

pub fn close(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    handle(a[0])?;
    fd::close(a[0] as usize).map_err(from_io)?;
    fdtab::remove(a[0] as usize);
    Ok(0)
}

/// Makes `new` a duplicate of `old`.
fn dup_to(old: u64, new: u64) -> Res {
    let h = handle(old)?;
    if new >= MAX_FDS as u64 {
        return Err(EBADF);
    }
    if old != new {
        fd::install_at(new as usize, h).map_err(from_io)?;
        fdtab::duplicate(old as usize, new as usize);
    }
    Ok(new as i64)
}

/// Duplicates `old` into the lowest free descriptor at or above `min`.
fn dup_from(old: u64, min: u64) -> Res {
    let h = handle(old)?;
    let new = (min as usize..MAX_FDS).find(|&i| fd::get(i).is_err()).ok_or(EMFILE)?;
    fd::install_at(new, h).map_err(from_io)?;
    fdtab::duplicate(old as usize, new);
    Ok(new as i64)
}

pub fn dup(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    dup_from(a[0], 0)
}

pub fn dup2(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    dup_to(a[0], a[1])
}

const O_CLOEXEC: u64 = 0o2000000;

pub fn dup3(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    if a[0] == a[1] || a[2] & !O_CLOEXEC != 0 {
        return Err(EINVAL);
    }
    let fd = dup_to(a[0], a[1])?;
    fdtab::update(fd as usize, |i| i.cloexec = a[2] & O_CLOEXEC != 0);
    Ok(fd)
}

const F_DUPFD: u64 = 0;
const F_GETFD: u64 = 1;
const F_SETFD: u64 = 2;
const F_GETFL: u64 = 3;
const F_SETFL: u64 = 4;
const F_DUPFD_CLOEXEC: u64 = 1030;
const FD_CLOEXEC: u64 = 1;
/// `O_RDWR`: what the console and pipes report when the personality did
/// not open them itself.
const O_RDWR: u64 = 2;

pub fn fcntl(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (fd, cmd, arg) = (a[0], a[1], a[2]);
    handle(fd)?;
    let fdu = fd as usize;
    match cmd {
        F_DUPFD => dup_from(fd, arg),
        F_DUPFD_CLOEXEC => {
            let new = dup_from(fd, arg)?;
            fdtab::update(new as usize, |i| i.cloexec = true);
            Ok(new)
        }
        F_GETFD => Ok(fdtab::get(fdu).map_or(0, |i| if i.cloexec { FD_CLOEXEC as i64 } else { 0 })),
        F_SETFD => {
            fdtab::update(fdu, |i| i.cloexec = arg & FD_CLOEXEC != 0);
            Ok(0)
        }
        F_GETFL => {
            let flags = fdtab::get(fdu).map_or(O_RDWR, |i| if i.path.is_empty() { O_RDWR } else { i.flags });
            let nonblock = fd::get(fdu).ok().and_then(|h| h.as_socket().map(|s| s.nonblocking())) == Some(true);
            Ok((flags | if nonblock { super::net::NONBLOCK } else { 0 }) as i64)
        }
        F_SETFL => {
            if let Ok(h) = fd::get(fdu)
                && let Some(s) = h.as_socket()
            {
                s.set_nonblocking(arg & super::net::NONBLOCK != 0);
            }
            Ok(0)
        }
        _ => Err(EINVAL),
    }
}

/// `fsync`/`fdatasync`: the file's data, size and name durable before the
/// return (the file server's `FSYNC`); `EINVAL` for what is not a file
/// (pipes, sockets, the console), as Linux says.
pub fn fsync(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    handle(a[0])?;
    let file = fdtab::get(a[0] as usize).and_then(|i| i.file).ok_or(EINVAL)?;
    file.sync_all().map(|()| 0).map_err(from_io)
}

/// `sync`: everything the file servers hold durable.
pub fn sync(_: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    // Linux's `sync` cannot fail; a server that could not write has said so.
    let _ = oxok_libos::fs::sync();
    Ok(0)
}

/// `syncfs`: as `sync` for the one disk file system (`fd` must be open).
pub fn syncfs(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    handle(a[0])?;
    oxok_libos::fs::sync().map(|()| 0).map_err(from_io)
}

const TCGETS: u64 = 0x5401;
const TCSETS: u64 = 0x5402;
const TCSETSW: u64 = 0x5403;
const TCSETSF: u64 = 0x5404;
const TIOCGPGRP: u64 = 0x540f;
const TIOCSPGRP: u64 = 0x5410;
const TIOCGWINSZ: u64 = 0x5413;

/// Bytes of the kernel's `struct termios` (four flag words, the line
/// discipline, 19 control characters): what `TCGETS` writes.
const TERMIOS_LEN: usize = 36;

/// The console's `struct termios`: cooked mode with echo, as a serial
/// console is, 38400 baud.
fn termios() -> [u8; TERMIOS_LEN] {
    let mut t = [0u8; TERMIOS_LEN];
    let words: [u32; 4] =
        [0o2400 /* ICRNL|IXON */, 0o5 /* OPOST|ONLCR */, 0o277 /* B38400|CS8|CREAD */, 0o105073];
    for (i, w) in words.iter().enumerate() {
        t[i * 4..i * 4 + 4].copy_from_slice(&w.to_le_bytes());
    }
    // c_cc: VINTR ^C, VQUIT ^\, VERASE DEL, VKILL ^U, VEOF ^D, VTIME 0, VMIN 1.
    let cc = [3u8, 28, 127, 21, 4, 0, 1];
    t[17..17 + cc.len()].copy_from_slice(&cc);
    t
}

pub fn ioctl(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (fd, req, arg) = (a[0], a[1], a[2]);
    let h = handle(fd)?;
    if h.kind() != "console" {
        return Err(ENOTTY);
    }
    match req {
        TCGETS => uaccess::write(arg, &termios()).map(|()| 0),
        TCSETS | TCSETSW | TCSETSF => uaccess::read_vec(arg, TERMIOS_LEN).map(|_| 0),
        TIOCGWINSZ => uaccess::write(arg, &[24, 0, 80, 0, 0, 0, 0, 0]).map(|()| 0),
        TIOCGPGRP => uaccess::write(arg, &(crate::groups::foreground() as u32).to_le_bytes()).map(|()| 0),
        TIOCSPGRP => {
            let g = uaccess::read_vec(arg, 4)?;
            let g = i32::from_le_bytes([g[0], g[1], g[2], g[3]]);
            if g <= 0 {
                return Err(crate::errno::EINVAL);
            }
            crate::groups::set_foreground(g as u64).map(|()| 0)
        }
        _ => Err(ENOTTY),
    }
}

/// `sendfile(out, in, offset, count)`: copies through the personality's
/// buffer; with `offset`, reads from there and leaves `in`'s position.
pub fn sendfile(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (out, input, offset, count) = (handle(a[0])?, handle(a[1])?, a[2], a[3]);
    let start = if offset != 0 { Some(uaccess::read_u64(offset)?) } else { None };
    let copy = || -> Res {
        let mut done = 0u64;
        let mut buf = uaccess::scratch();
        while done < count {
            let want = ((count - done) as usize).min(buf.len());
            let n = match input.read(&mut buf[..want]) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if done == 0 => return Err(from_io(e)),
                Err(_) => break,
            };
            let mut off = 0;
            while off < n {
                match out.write(&buf[off..n]) {
                    Ok(w) => off += w,
                    Err(e) if done + off as u64 == 0 => return Err(from_io(e)),
                    Err(_) => return Ok((done + off as u64) as i64),
                }
            }
            done += n as u64;
        }
        Ok(done as i64)
    };
    match start {
        None => copy(),
        Some(pos) => {
            let n = at_offset(&input, pos, copy)?;
            uaccess::write_u64s(offset, &[pos + n as u64])?;
            Ok(n)
        }
    }
}

const O_NONBLOCK: u64 = 0o4000;

/// `pipe2(fds, flags)`: a libOS pipe (shared frames, directed yield), the
/// same kind native programs use, so the ends pass to either kind of child.
pub fn pipe2(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (fds, flags) = (a[0], a[1]);
    if flags & !(O_CLOEXEC | O_NONBLOCK) != 0 {
        return Err(EINVAL);
    }
    uaccess::writable(fds, 8)?;
    let (reader, writer) = fd::pipe::pipe().map_err(from_io)?;
    let r = fd::install(reader).map_err(|_| EMFILE)?;
    let w = match fd::install(writer) {
        Ok(w) => w,
        Err(_) => {
            let _ = fd::close(r);
            return Err(EMFILE);
        }
    };
    for end in [r, w] {
        fdtab::set(end, fdtab::Info { cloexec: flags & O_CLOEXEC != 0, ..fdtab::Info::default() });
    }
    let pair = [(r as u32).to_le_bytes(), (w as u32).to_le_bytes()].concat();
    uaccess::write(fds, &pair)?;
    Ok(0)
}

pub fn pipe(a: &[u64; 6], f: &mut ExceptionFrame) -> Res {
    pipe2(&[a[0], 0, 0, 0, 0, 0], f)
}
