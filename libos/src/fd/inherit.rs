//! Descriptors passed to a child across `spawn` (Xok §5.2: ExOS hands an
//! exec'd program its open descriptors): the parent writes one environment
//! variable per descriptor, `OXOK_FD<n>=<spec>`, where `<spec>` is what
//! [`File::spec`](super::File::spec) returned for the object at `n`
//! (`console`, `pipe:r:0x…`, `file:…`); the child's runtime turns each back
//! into an object with [`from_spec`](super::from_spec) before `main`.
//!
//! * A child's table holds exactly the descriptors passed; objects whose
//!   spec is `None` are not passed.
//! * No `OXOK_FD` variable at all means the default table (the console on
//!   0, 1 and 2), so a child whose table is the default gets none, and
//!   neither parent nor child touches the heap for descriptors.
//! * The child removes the variables from its environment once read, and
//!   a parent never passes on `OXOK_FD` variables of its own environment:
//!   a grandchild sees only what its own parent passed.

use super::{Handle, IoError, MAX_FDS};
use crate::Args;
use crate::environ::MAX_PASSED;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// The prefix of the descriptor variables (`oxok_fdspec` parses them).
pub use oxok_fdspec::PREFIX;
use oxok_fdspec::{fd_of, is_fd_var};

/// A child's descriptor table as the parent decided it: entry `n` is the
/// object the child gets as descriptor `n`.
pub type ChildTable = [Option<Handle>; MAX_FDS];

/// True if `table` is the default one (console on 0–2, nothing else).
fn is_default(table: &ChildTable) -> bool {
    table.iter().enumerate().all(|(n, h)| match h {
        Some(Handle::Console) => n < 3,
        Some(Handle::Object(_)) => false,
        None => n >= 3,
    })
}

/// Calls `f` with the child's environment: `base` without any `OXOK_FD`
/// variable (at most [`MAX_PASSED`] of them), plus one variable per
/// descriptor of `table` unless it is the default. Each object's spec is
/// asked for with the child's id and the caller's capability slot for it,
/// so it can give the child what it needs (map a pipe's frame, register
/// it as a holder). Fails if an object cannot give a spec.
pub(crate) fn with_child_env<R>(
    child: u64,
    child_slot: u64,
    table: &ChildTable,
    base: &[&str],
    f: impl FnOnce(&[&str]) -> R,
) -> Result<R, IoError> {
    let mut owned: Vec<String> = Vec::new();
    if !is_default(table) {
        for (n, handle) in table.iter().enumerate() {
            if let Some(h) = handle
                && let Some(spec) = h.spec(child, child_slot)?
            {
                owned.push(format!("{PREFIX}{n}={spec}"));
            }
        }
    }
    let mut strs: [&str; MAX_PASSED + MAX_FDS] = [""; MAX_PASSED + MAX_FDS];
    let mut len = 0;
    for e in base.iter().filter(|e| !is_fd_var(e)).take(MAX_PASSED) {
        strs[len] = e;
        len += 1;
    }
    for e in &owned {
        strs[len] = e;
        len += 1;
    }
    Ok(f(&strs[..len]))
}

/// In a new program, before `main`: rebuilds the descriptor table from the
/// `OXOK_FD<n>` variables, if there are any, and removes them from the
/// environment. A variable that does not reopen (a malformed spec, a pipe
/// frame that is not there) leaves its descriptor closed and is reported
/// on the console.
pub(crate) fn init(args: Args) {
    if !args.envp().any(is_fd_var) {
        return; // the default table, built on first use
    }
    for fd in 0..MAX_FDS {
        let _ = super::close(fd);
    }
    for entry in args.envp().filter(|e| is_fd_var(e)) {
        let (key, spec) = entry.split_once('=').unwrap_or((entry, ""));
        let opened = match fd_of(key, MAX_FDS) {
            Some(n) => super::from_spec(spec).and_then(|h| super::install_at(n, h)),
            None => Err(IoError::BadFd),
        };
        if let Err(e) = opened {
            report(key, e);
        }
        crate::environ::remove_var(key);
    }
}

/// Tells the console that descriptor variable `key` could not be used.
fn report(key: &str, e: IoError) {
    for part in [key.as_bytes(), b": ", e.text().as_bytes(), b"\n"] {
        let _ = crate::console::write(part);
    }
}
