//! `execve`: a new program in this process, keeping its pid, descriptors
//! (but those marked close-on-exec), ignored signals, mask and directory.
//!
//! A Linux program (an ELF a Linux toolchain made: `Elf::linux_abi`)
//! replaces the old one in place: every area of the old program goes, the
//! new one is loaded as at start ([`crate::load`]) and the upcall resumes
//! at its entry with a fresh stack and clean registers. A native Oxok
//! program cannot share the personality's address space, so it runs in a
//! child environment with this process's descriptors and environment,
//! and this process — its old memory given back — waits for it and ends
//! with its status: the parent still waits for the same pid and gets the
//! program's status (the program itself sees another pid).
//!
//! Programs are found as `linux PROGRAM` finds them: `/proc/self/exe`,
//! the file server's files, and the boot archive's programs by name or as
//! `/bin/NAME` (or any `…/NAME` absent from the file server). A file
//! server's file runs only with an execute bit in its mode (`EACCES`, as
//! a directory); one starting with `#!` is a script, run by the
//! interpreter its first line names with the script's path as an argument
//! (`oxok_elf::shebang`), up to [`MAX_SCRIPTS`] scripts deep (`ELOOP`).

use crate::errno::{E2BIG, EACCES, EFAULT, ELOOP, ENOENT, ENOEXEC, Res};
use crate::{fdtab, mem, signals, uaccess};
use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use oxok_elf::Elf;
use oxok_libos::abi::{ExceptionFrame, Regs};
use oxok_libos::exec::{self, ExitStatus, SpawnOptions};
use oxok_libos::{fd, fs, guest, sys};

/// Most strings in argv or envp, and most bytes in all of them (Linux's
/// `ARG_MAX` default is 2 MiB; the initial stack here takes half of 8 MiB).
const MAX_STRINGS: usize = 8192;
const MAX_BYTES: usize = 1 << 20;
/// Longest single argument or variable (Linux's `MAX_ARG_STRLEN`, 32 pages).
const MAX_STRING: usize = 32 * 4096;
/// Most scripts one `execve` goes through, interpreter after interpreter
/// (Linux's `exec_binprm` allows five).
pub const MAX_SCRIPTS: usize = 5;

/// The boot archive's program a path names: `/bin/NAME`, `/usr/bin/NAME`
/// and the like, or a bare name.
pub fn archive_program(path: &str) -> Option<&'static [u8]> {
    let name = path.rsplit('/').next().filter(|n| !n.is_empty())?;
    let dir = &path[..path.len() - name.len()];
    let bin = matches!(dir, "" | "/bin/" | "/sbin/" | "/usr/bin/" | "/usr/sbin/" | "/usr/local/bin/");
    if bin { exec::program(name) } else { None }
}

/// The file `name` names and the path `AT_EXECFN` and `/proc/self/exe`
/// will show: the file server's file if there is one (`EACCES` if it is a
/// directory or its mode has no execute bit), else the boot archive's
/// program (also through a symbolic link to one:
/// `ln -s /bin/busybox /usr/local/bin/ls`), else `ENOENT`.
pub fn find(name: &str) -> Result<(Cow<'static, [u8]>, String), i64> {
    if name == "/proc/self/exe" {
        return find(&crate::calls::fs::exe());
    }
    if name.contains('/')
        && let Ok(path) = fs::absolute(name).map(|p| fs::normalize(&p))
    {
        match fs::stat(&path) {
            Ok(m) if m.is_dir() || m.mode.is_some_and(|mode| mode & 0o111 == 0) => return Err(EACCES),
            Ok(_) => {
                if let Ok(data) = fs::read_file(&path) {
                    return Ok((Cow::Owned(data), path));
                }
            }
            Err(fd::IoError::NotFound) => {
                if let Some(end) = crate::calls::links::beyond_server(&path) {
                    return in_archive(&end).ok_or(ENOENT);
                }
            }
            Err(_) => {}
        }
    }
    in_archive(name).ok_or(ENOENT)
}

/// The program `execve(name, argv)` runs: `name`'s file, or, for a
/// script, its interpreter's (an interpreter may be a script in turn),
/// with `argv` rewritten as Linux does — the interpreter's name as
/// written, its argument if any, the script's name as given, then the old
/// arguments after the first.
pub fn resolve(name: &str, argv: &mut Vec<String>) -> Result<(Cow<'static, [u8]>, String), i64> {
    let mut name = String::from(name);
    for _ in 0..=MAX_SCRIPTS {
        let (image, path) = find(&name)?;
        let line = match oxok_elf::shebang::parse(&image) {
            None => return Ok((image, path)),
            Some(line) => line.map_err(|_| ENOEXEC)?,
        };
        let mut next = Vec::with_capacity(argv.len() + 2);
        next.push(String::from(line.interpreter));
        next.extend(line.arg.map(String::from));
        next.push(core::mem::replace(&mut name, String::from(line.interpreter)));
        next.extend(argv.drain(..).skip(1));
        *argv = next;
    }
    Err(ELOOP)
}

/// The boot archive's program `name` names: `/bin/NAME` and the like, or
/// its last component.
fn in_archive(name: &str) -> Option<(Cow<'static, [u8]>, String)> {
    let base = fs::file_name(name);
    let image = exec::program(name).or_else(|| archive_program(name)).or_else(|| exec::program(base))?;
    Some((Cow::Borrowed(image), alloc::format!("/bin/{base}")))
}

/// The NUL-terminated strings of the NULL-terminated array at `addr`.
fn strings(addr: u64, total: &mut usize) -> Result<Vec<String>, i64> {
    let mut out = Vec::new();
    if addr == 0 {
        return Ok(out);
    }
    for i in 0..MAX_STRINGS as u64 {
        let p = uaccess::read_u64(addr.checked_add(i * 8).ok_or(EFAULT)?)?;
        if p == 0 {
            return Ok(out);
        }
        let s =
            uaccess::read_cstr(p, MAX_STRING).map_err(|e| if e == crate::errno::ENAMETOOLONG { E2BIG } else { e })?;
        *total += s.len() + 1;
        if *total > MAX_BYTES {
            return Err(E2BIG);
        }
        out.push(s);
    }
    Err(E2BIG)
}

pub fn execve(a: &[u64; 6], frame: &mut ExceptionFrame) -> Res {
    let name = uaccess::read_path(a[0])?;
    let mut total = 0;
    let mut argv = strings(a[1], &mut total)?;
    let envp = strings(a[2], &mut total)?;
    let (image, path) = resolve(&name, &mut argv)?;
    let elf = Elf::parse_pie(&image, u64::MAX, 0).map_err(|_| ENOEXEC)?;
    if !elf.linux_abi() {
        return run_native(&image, &argv, &envp);
    }
    crate::load::parse(&image).map_err(|_| ENOEXEC)?;

    // The point of no return: the old program goes.
    mem::clear();
    close_on_exec();
    signals::on_exec();
    crate::threads::only_current();
    let _ = crate::tls::arch_prctl(0x1002, 0);
    crate::calls::fs::set_exe(&path);
    let short = fs::file_name(&path).as_bytes();
    let short = &short[..short.len().min(15)];
    let _ = sys::env_rename(0, short.as_ptr() as u64, short.len() as u64);
    match crate::load::load(&image, &argv, &envp, &path) {
        Ok(start) => {
            guest::fxrstor(&guest::Fxsave::clean());
            frame.regs = Regs { rip: start.entry, rsp: start.sp, rflags: 0x202, ..Regs::default() };
            crate::keep_frame();
            Ok(0)
        }
        Err(e) => {
            oxok_libos::eprintln!("linux: execve {path}: {e}");
            crate::die_quietly(signals::SIGSEGV)
        }
    }
}

/// Closes the descriptors marked close-on-exec.
fn close_on_exec() {
    for (n, _) in fd::list() {
        if fdtab::get(n).is_some_and(|i| i.cloexec) {
            let _ = fd::close(n);
            fdtab::remove(n);
        }
    }
}

/// Runs native program `image` in a child with this process's descriptors
/// (close-on-exec ones closed) and `envp`, waits for it and ends with its
/// status. Errors before the child exists return to the caller.
fn run_native(image: &[u8], argv: &[String], envp: &[String]) -> Res {
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let envp: Vec<&str> = envp.iter().map(String::as_str).filter(|v| !v.starts_with("OXOK_FD")).collect();
    let mut opts = SpawnOptions::new();
    opts.env(&envp);
    for (n, _) in fd::list() {
        if fdtab::get(n).is_some_and(|i| i.cloexec) {
            opts.close(n);
        }
    }
    let child = exec::spawn_image_with(image, &argv, &opts).map_err(|e| match e {
        exec::SpawnError::BadExecutable(_) | exec::SpawnError::NotFound => ENOEXEC,
        exec::SpawnError::BadArguments => E2BIG,
        _ => crate::errno::ENOMEM,
    })?;
    // This process is now only the program's stand-in: its memory and
    // descriptors go (the program has its own), so pipe partners see the
    // program's ends alone.
    mem::clear();
    fd::close_all();
    fdtab::clear();
    // The stand-in ends as its program did: a parent's `wait4` sees the
    // program's exit code or signal.
    oxok_libos::process::exit_as(exec::wait(child).unwrap_or(ExitStatus::Killed(None)))
}
