//! File descriptors (Xok §5.2): a per-process table whose entries carry
//! their own operations. The table is private memory of this process — no
//! other process can read or change it — and each entry is an object that
//! implements [`File`]: the console, a pipe end, a file of the file server.
//!
//! Descriptors 0, 1 and 2 start as the console; `print!` writes to fd 1 and
//! [`read`] on fd 0 reads the keyboard, so redirecting a program is a matter
//! of replacing its entries before it starts ([`File::spec`] and
//! [`from_spec`] carry them across `spawn`).

mod console;
mod error;
pub(crate) mod inherit;
pub mod null;
pub mod pipe;

use alloc::string::String;
use alloc::sync::Arc;
use spin::Mutex;

pub use console::Console;
pub use error::IoError;

/// Descriptors per process.
pub const MAX_FDS: usize = 32;

/// Standard input, output and error.
pub const STDIN: usize = 0;
/// Standard output.
pub const STDOUT: usize = 1;
/// Standard error.
pub const STDERR: usize = 2;

/// Where [`File::seek`] counts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeekFrom {
    /// From the start of the file.
    Start(u64),
    /// From the current position.
    Current(i64),
    /// From the end of the file.
    End(i64),
}

/// An open file: what a descriptor refers to. Objects are shared between
/// descriptors (`dup`) by reference count; the object's `Drop` is its close.
pub trait File: Send + Sync {
    /// Reads into `buf`; `Ok(0)` means the end of the file (for a pipe: every
    /// writer is gone). Blocks until at least one byte is there otherwise.
    fn read(&self, buf: &mut [u8]) -> Result<usize, IoError>;
    /// Reads up to `len` bytes straight into guest memory at `addr` (a
    /// personality's program's, which the caller found writable), where
    /// the object can with no buffer between — a file whose bytes came with
    /// its open: how many (`Kernel(BadAddress)` if the destination is not
    /// mapped writable after all). `None` when it cannot: the caller reads
    /// into a buffer of its own.
    fn read_to_guest(&self, _addr: u64, _len: usize) -> Option<Result<usize, IoError>> {
        None
    }
    /// Writes from `buf`, returning how much was taken (at least one byte
    /// unless `buf` is empty); [`IoError::BrokenPipe`] when nobody will ever
    /// read (a pipe whose reader is gone).
    fn write(&self, buf: &[u8]) -> Result<usize, IoError>;
    /// Writes up to `len` bytes straight from guest memory at `addr` (a
    /// personality's program's, which the caller found readable), where
    /// the object can with no buffer between — a file of the file server:
    /// how many, as [`write`](File::write) (`Kernel(BadAddress)` if the
    /// source is not mapped readable after all). `None` when it cannot:
    /// the caller copies the bytes into a buffer of its own first.
    fn write_from_guest(&self, _addr: u64, _len: usize) -> Option<Result<usize, IoError>> {
        None
    }
    /// Moves the position; files only.
    fn seek(&self, _to: SeekFrom) -> Result<u64, IoError> {
        Err(IoError::Unsupported)
    }
    /// A short name of the kind of object, for `fds`-style listings.
    fn kind(&self) -> &'static str;
    /// How a child started by `spawn` reopens this object: a text that
    /// [`from_spec`] turns back into an equal object in the child. `child`
    /// is the new environment's id and `child_slot` the caller's capability
    /// slot for it, so an object can first give the child what it needs
    /// (map a pipe's frame, ask the file server for a handle). `None`: the
    /// object cannot be passed on.
    fn spec(&self, _child: u64, _child_slot: u64) -> Result<Option<String>, IoError> {
        Ok(None)
    }
    /// For a child of fork, which starts with a copy of this object: the
    /// spec it must reopen instead (see [`fork_specs`]), or `None` when the
    /// copy works as it is.
    fn fork_spec(&self, _child: u64, _child_slot: u64) -> Result<Option<String>, IoError> {
        Ok(None)
    }
    /// Whether a read or a write would go ahead now, without doing either
    /// (for `poll`-like waits). The default: always (files, devices).
    fn readiness(&self) -> Readiness {
        Readiness { read: true, write: true, hangup: false, wake: None, partner: None }
    }
    /// The socket this object is, if it is one (`crate::net::socket`).
    fn as_socket(&self) -> Option<&crate::net::socket::Socket> {
        None
    }
    /// This object as `Any`, for a library that defines its own kinds of
    /// object and must find its own among the table's (the Linux
    /// personality's epoll instances). The default: not offered.
    fn as_any(&self) -> Option<&dyn core::any::Any> {
        None
    }
}

/// What [`File::readiness`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Readiness {
    /// A read would not block (data, or the end of the file).
    pub read: bool,
    /// A write would not block (room, or an error such as a broken pipe).
    pub write: bool,
    /// The other side is gone (a pipe's writers, or its readers).
    pub hangup: bool,
    /// A word whose change may change the answer and its value now: a
    /// waiter sleeps on a wakeup predicate `word != value`.
    pub wake: Option<(u64, u64)>,
    /// The other side's process (a pipe's), whose end would change the
    /// answer without changing `wake`'s word: a waiter also wakes when it
    /// goes ([`pipe::Watch::wake_on_gone`]).
    pub partner: Option<pipe::Watch>,
}

/// Descriptors a child of `fork` must reopen: (descriptor, spec).
pub type ForkSpecs = alloc::vec::Vec<(usize, String)>;

/// A shared, reference-counted open object.
pub type FileRef = Arc<dyn File>;

/// What a descriptor holds: the console (which needs no memory, so a
/// program that never redirects never touches the heap for it) or a shared
/// object.
#[derive(Clone)]
pub enum Handle {
    /// The console.
    Console,
    /// Any other object.
    Object(FileRef),
}

impl core::ops::Deref for Handle {
    type Target = dyn File;
    fn deref(&self) -> &(dyn File + 'static) {
        match self {
            Handle::Console => &Console,
            Handle::Object(f) => &**f,
        }
    }
}

impl From<FileRef> for Handle {
    fn from(f: FileRef) -> Handle {
        Handle::Object(f)
    }
}

type Table = [Option<Handle>; MAX_FDS];

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    let mut guard = TABLE.lock();
    let table = guard.get_or_insert_with(|| {
        let mut t: Table = Default::default();
        for slot in t.iter_mut().take(3) {
            *slot = Some(Handle::Console);
        }
        t
    });
    f(table)
}

/// True while the descriptor table's lock is held (by code a protected
/// control transfer interrupted: `pct::interrupted_busy`).
pub(crate) fn table_busy() -> bool {
    TABLE.is_locked()
}

/// The object behind `fd` (a new reference; the table lock is not held
/// while the caller uses it, so an upcall handler may print meanwhile).
pub fn get(fd: usize) -> Result<Handle, IoError> {
    with(|t| t.get(fd).and_then(|e| e.clone())).ok_or(IoError::BadFd)
}

/// Reads from `fd`.
pub fn read(fd: usize, buf: &mut [u8]) -> Result<usize, IoError> {
    get(fd)?.read(buf)
}

/// Writes from `buf` to `fd` (possibly only part of it).
pub fn write(fd: usize, buf: &[u8]) -> Result<usize, IoError> {
    get(fd)?.write(buf)
}

/// Writes all of `buf` to `fd`.
pub fn write_all(fd: usize, mut buf: &[u8]) -> Result<(), IoError> {
    let file = get(fd)?;
    while !buf.is_empty() {
        let n = file.write(buf)?;
        buf = &buf[n.min(buf.len())..];
    }
    Ok(())
}

/// Moves `fd`'s position.
pub fn seek(fd: usize, to: SeekFrom) -> Result<u64, IoError> {
    get(fd)?.seek(to)
}

/// Puts `file` in the lowest free descriptor.
pub fn install(file: impl Into<Handle>) -> Result<usize, IoError> {
    let file = file.into();
    with(|t| {
        let fd = t.iter().position(Option::is_none).ok_or(IoError::NoSpace)?;
        t[fd] = Some(file);
        Ok(fd)
    })
}

/// Puts `file` in descriptor `fd`, closing what was there.
pub fn install_at(fd: usize, file: impl Into<Handle>) -> Result<(), IoError> {
    let file = file.into();
    let old = with(|t| t.get_mut(fd).map(|e| e.replace(file))).ok_or(IoError::BadFd)?;
    drop(old); // outside the lock: closing may talk to a server
    Ok(())
}

/// Closes `fd`.
pub fn close(fd: usize) -> Result<(), IoError> {
    let old = with(|t| t.get_mut(fd).and_then(Option::take)).ok_or(IoError::BadFd)?;
    drop(old);
    Ok(())
}

/// Makes `new` refer to the same object as `old` (as `dup2`).
pub fn dup2(old: usize, new: usize) -> Result<(), IoError> {
    install_at(new, get(old)?)
}

/// Parent side of fork (`vm::fork`), before the child runs: the specs of
/// the descriptors whose objects [`File::fork_spec`] says must be reopened
/// in the child (files: the server duplicates the handle for it). Objects
/// that need nothing (the console) or handle fork themselves (pipes, shared
/// through `pte::LIBOS_SHARED` mappings) are simply inherited with memory.
pub fn fork_specs(child: u64, child_slot: u64) -> ForkSpecs {
    let handles: alloc::vec::Vec<(usize, Handle)> =
        with(|t| t.iter().enumerate().filter_map(|(i, e)| e.clone().map(|h| (i, h))).collect());
    handles.into_iter().filter_map(|(fd, h)| h.fork_spec(child, child_slot).ok().flatten().map(|s| (fd, s))).collect()
}

/// Child side of fork: replaces the inherited objects named in `specs` by
/// the reopened ones. The inherited objects are the parent's and are
/// forgotten, not dropped (dropping would close the parent's handles).
pub fn adopt_fork_specs(specs: &ForkSpecs) {
    for (fd, spec) in specs {
        let new = from_spec(spec).ok();
        let old = with(|t| t.get_mut(*fd).map(|e| core::mem::replace(e, new)));
        core::mem::forget(old);
    }
}

/// Closes every descriptor (at exit, so pipe partners see the end and
/// servers release what this process held).
pub fn close_all() {
    let old = with(core::mem::take);
    drop(old);
    // Read-only files' closes wait to go together; they go now.
    crate::fs::closes::flush();
}

/// The open descriptors and their kinds, lowest first.
pub fn list() -> alloc::vec::Vec<(usize, &'static str)> {
    with(|t| t.iter().enumerate().filter_map(|(i, e)| e.as_ref().map(|f| (i, f.kind()))).collect())
}

/// Reopens an object from the text its [`File::spec`] produced in the
/// parent (the `OXOK_FD<n>` variables, see [`inherit`]). One arm per kind —
/// the text before the first `:` — each parsing the whole spec in its own
/// module: `console`, `null` ([`null`]), `file` ([`crate::fs`]), `pipe`
/// ([`pipe`]).
pub fn from_spec(spec: &str) -> Result<Handle, IoError> {
    match oxok_fdspec::Spec::kind_of(spec) {
        "console" => Ok(Handle::Console),
        "null" if oxok_fdspec::Spec::parse(spec) == Some(oxok_fdspec::Spec::Null) => {
            Ok(Handle::Object(Arc::new(null::Null)))
        }
        "file" => crate::fs::from_spec(spec),
        "pipe" => Ok(Handle::Object(Arc::new(pipe::from_spec(spec)?))),
        _ => Err(IoError::Invalid),
    }
}
