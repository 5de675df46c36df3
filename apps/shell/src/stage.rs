//! One pipeline stage's descriptors: which entries of the shell's own
//! descriptor table a stage sees differently — a pipe end on 0 or 1, a file
//! opened for a redirection, a descriptor closed — and how they reach the
//! stage (Xok §5.2: ExOS passes open descriptors across exec).
//!
//! * A **program** gets them through `exec::SpawnOptions`: every descriptor
//!   of the shell is inherited except the ones changed here, which are
//!   replaced or closed. The shell's own table never changes.
//! * A **built-in** runs inside the shell, so for its duration the shell's
//!   own entries are swapped for the stage's and put back afterwards
//!   ([`Stage::run_installed`]); `echo hi > f` and `ps | wc` work that way.
//!
//! Dropping a `Stage` drops its objects: a pipe end closes (the partner sees
//! end of file or a broken pipe), a file's handle goes back to the server.

use alloc::format;
use alloc::string::String;
use oxok_libos::exec::SpawnOptions;
use oxok_libos::fd::{self, Handle, MAX_FDS};
use oxok_libos::fs::{self, OpenFlags};
use oxok_shparse::{Redirect, Target};

/// The changed descriptors of one stage: entry `n` is `None` when `n` is the
/// shell's own, `Some(None)` when closed, `Some(Some(h))` when it is `h`.
#[derive(Default)]
pub struct Stage {
    fds: [Option<Option<Handle>>; MAX_FDS],
}

impl Stage {
    /// A stage that sees the shell's table unchanged.
    pub fn new() -> Stage {
        Stage::default()
    }

    /// Descriptor `n` of the stage is `file` (`None`: closed). `n` must be
    /// below [`MAX_FDS`]; larger ones are ignored (callers check).
    pub fn set(&mut self, n: usize, file: Option<Handle>) {
        if let Some(slot) = self.fds.get_mut(n) {
            *slot = Some(file);
        }
    }

    /// Descriptor `n` goes back to being the shell's own; what the stage
    /// had there is dropped.
    pub fn forget(&mut self, n: usize) {
        if let Some(slot) = self.fds.get_mut(n) {
            *slot = None;
        }
    }

    /// What descriptor `n` is for the stage now.
    fn current(&self, n: usize) -> Option<Handle> {
        match self.fds.get(n)? {
            Some(choice) => choice.clone(),
            None => fd::get(n).ok(),
        }
    }

    /// Applies redirections in the order written (`>f 2>&1` sends both to
    /// `f`). Files open through the file server in the shell; the error
    /// says which file and why (`/nosuch/f: no such file or directory`).
    pub fn redirect(&mut self, redirects: &[Redirect]) -> Result<(), String> {
        for r in redirects {
            let n = r.fd as usize;
            if n >= MAX_FDS {
                return Err(format!("{n}: bad file descriptor (at most {})", MAX_FDS - 1));
            }
            let file = match &r.target {
                Target::Read(path) => open(path, OpenFlags::READ)?,
                Target::Write(path) => open(path, OpenFlags::WRITE | OpenFlags::CREATE | OpenFlags::TRUNCATE)?,
                Target::Append(path) => open(path, OpenFlags::WRITE | OpenFlags::CREATE | OpenFlags::APPEND)?,
                Target::Dup(m) => {
                    let m = *m as usize;
                    self.current(m).ok_or_else(|| format!("{m}: bad file descriptor"))?
                }
            };
            self.set(n, Some(file));
        }
        Ok(())
    }

    /// Spawn options giving a program this stage's descriptors.
    pub fn options<'a>(&self) -> SpawnOptions<'a> {
        let mut opts = SpawnOptions::new();
        for (n, choice) in self.fds.iter().enumerate() {
            match choice {
                Some(Some(h)) => {
                    opts.fd(n, h.clone());
                }
                Some(None) => {
                    opts.close(n);
                }
                None => {}
            }
        }
        opts
    }

    /// Runs `f` (a built-in) with the shell's own descriptors swapped for
    /// the stage's, then puts the shell's back; the stage's objects are
    /// dropped then (a pipe's reader sees end of file).
    pub fn run_installed<R>(mut self, f: impl FnOnce() -> R) -> R {
        let mut saved: [Option<Option<Handle>>; MAX_FDS] = Default::default();
        for (n, choice) in self.fds.iter_mut().enumerate() {
            if let Some(file) = choice.take() {
                saved[n] = Some(fd::get(n).ok());
                install(n, file);
            }
        }
        let result = f();
        for (n, old) in saved.into_iter().enumerate() {
            if let Some(old) = old {
                install(n, old);
            }
        }
        result
    }
}

/// Opens `path` for a redirection.
fn open(path: &str, flags: OpenFlags) -> Result<Handle, String> {
    fs::open_handle(path, flags).map_err(|e| format!("{path}: {e}"))
}

/// Puts `file` in the shell's descriptor `n`, or closes `n` for `None`.
fn install(n: usize, file: Option<Handle>) {
    let _ = match file {
        Some(h) => fd::install_at(n, h),
        None => fd::close(n),
    };
}
