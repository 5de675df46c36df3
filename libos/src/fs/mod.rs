//! Files: the libOS's client of the file server `fsd` (Xok §5.2: ExOS's
//! files behind the descriptor table; Aegis §5.1: requests by protected
//! control transfer).
//!
//! The RAM file system (`crates/ramfs`) lives in one server environment,
//! which every process finds in the exposed environment table
//! ([`locate`]: the `fsd` its nearest ancestor started; init starts one
//! before the shell, a test program may start its own with
//! [`spawn_server`]). Each request is one transfer whose registers carry
//! the op, a handle and up to 64 bytes ([`proto`]), and the kernel stamps
//! it with the caller's id, so the server keys every open file by (client,
//! handle) and one process can never use another's handles. File data of
//! more than a message moves through a page the server shares with each
//! client ([`buffer`]).
//!
//! An open file is an [`OpenFile`] in the descriptor table (kind `file`); a
//! child started by `spawn` inherits it through its spec
//! `file:<server>:<handle>`, the handle being one the server made for the
//! child. Relative paths resolve against the current directory, kept per
//! process in `PWD` ([`chdir`], [`cwd`]).
//!
//! With a disk, init also starts `dfsd`, the same server over the C-FFS
//! library file system on XN: [`route`] then sends every path to it but
//! `/tmp` and what lies under it, which stay in the RAM server.

mod ahead;
pub mod buffer;
mod client;
pub mod closes;
mod file;
pub mod ftable;
pub mod locate;
mod path;
pub mod proto;
mod sinks;

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use crate::exec::{self, Child, ExitStatus};
use crate::fd::{self, File, Handle, IoError};
use proto::op;

pub use client::{requests, server};
pub use file::OpenFile;
pub use path::{
    Normal, PWD, absolute, absolute_normal, absolute_normal_owned, cwd, file_name, join, join_normal, normalize,
};

/// How [`open`] opens: combine with `|`. Without `READ` or `WRITE` a file
/// opens for reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenFlags(u64);

impl OpenFlags {
    /// Read.
    pub const READ: OpenFlags = OpenFlags(proto::flags::READ);
    /// Write.
    pub const WRITE: OpenFlags = OpenFlags(proto::flags::WRITE);
    /// Create the file if it does not exist.
    pub const CREATE: OpenFlags = OpenFlags(proto::flags::CREATE);
    /// Cut an existing file to length 0.
    pub const TRUNCATE: OpenFlags = OpenFlags(proto::flags::TRUNCATE);
    /// Every write goes to the end of the file.
    pub const APPEND: OpenFlags = OpenFlags(proto::flags::APPEND);
    /// With `CREATE`: fail with `Exists` if the name exists.
    pub const EXCLUSIVE: OpenFlags = OpenFlags(proto::flags::EXCLUSIVE);
    /// The path must be a directory.
    pub const DIRECTORY: OpenFlags = OpenFlags(proto::flags::DIRECTORY);
    /// A symbolic link as the last component fails the open (`Loop`).
    pub const NOFOLLOW: OpenFlags = OpenFlags(proto::flags::NOFOLLOW);

    /// These flags, and the permission bits (`0o7777`) a file the open
    /// creates gets (the caller's umask already applied).
    pub const fn with_mode(self, mode: u32) -> OpenFlags {
        OpenFlags(proto::with_mode(self.0, mode))
    }

    /// The wire bits.
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// True if every flag of `other` is set.
    pub const fn contains(self, other: OpenFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl core::ops::BitOr for OpenFlags {
    type Output = OpenFlags;
    fn bitor(self, rhs: OpenFlags) -> OpenFlags {
        OpenFlags(self.0 | rhs.0)
    }
}

/// What a name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (seen only where links are not followed:
    /// [`symlink_metadata`], directory entries).
    Symlink,
}

impl FileKind {
    /// The kind of a wire kind code (an unknown code reads as a file).
    fn of(code: u64) -> FileKind {
        match code {
            proto::KIND_DIR => FileKind::Dir,
            proto::KIND_LINK => FileKind::Symlink,
            _ => FileKind::File,
        }
    }
}

/// What [`stat`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// File or directory.
    pub kind: FileKind,
    /// A file's length in bytes; a directory's number of entries.
    pub size: u64,
    /// The inode number.
    pub ino: u64,
    /// Links (names of a file; 2 + subdirectories for a directory).
    pub nlink: u64,
    /// The last change of the content, in Unix seconds (0: the file
    /// system keeps no times — the disk's C-FFS does not yet).
    pub mtime: u64,
    /// The permission bits (`None`: the file system keeps no modes — the
    /// disk's C-FFS).
    pub mode: Option<u16>,
    /// Bytes of storage it holds (`None`: not known — the disk's C-FFS);
    /// less than `size` for a sparse file.
    pub allocated: Option<u64>,
}

impl Metadata {
    /// From `STAT` reply words 1.. ([`proto::WireStat`]).
    fn from_words(w: &[u64]) -> Metadata {
        let st = proto::WireStat::of(w);
        Metadata {
            kind: FileKind::of(st.kind),
            size: st.size,
            ino: st.ino,
            nlink: st.nlink,
            mtime: st.mtime,
            mode: st.mode,
            allocated: st.allocated,
        }
    }

    /// True for a directory.
    pub fn is_dir(&self) -> bool {
        self.kind == FileKind::Dir
    }
}

/// One entry of [`read_dir`] (never `.` or `..`), in name order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// The name (bytes that are not UTF-8 shown as U+FFFD).
    pub name: String,
    /// File or directory.
    pub kind: FileKind,
    /// A file's length; a directory's number of entries.
    pub size: u64,
}

/// The server's counters ([`server_stats`]), after it has released what
/// dead clients held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerStats {
    /// Clients holding handles or a staged path.
    pub clients: u64,
    /// Handles over all clients.
    pub handles: u64,
    /// Open-file records (shared by duplicated handles).
    pub open_files: u64,
    /// Live inodes, the root included.
    pub inodes: u64,
    /// File data held, in bytes (whole pages; the disk's: its blocks in
    /// use).
    pub bytes: u64,
    /// File data it can hold, in bytes.
    pub capacity: u64,
    /// Inodes it can hold (0: no limit).
    pub max_inodes: u64,
}

/// Where the RAM file system stays when the disk holds `/`.
pub const TMP: &str = "/tmp";

/// Whether the normalized absolute `full` is `/tmp` or under it.
fn under_tmp(full: &str) -> bool {
    full == TMP || full.strip_prefix(TMP).is_some_and(|r| r.starts_with('/'))
}

/// The server holding `path` and the path as it is sent: with a disk file
/// server ([`locate::disk_server`]) `/` is on the disk and `/tmp` in RAM;
/// without one, everything is in RAM.
pub fn route(path: &str) -> Result<(u64, String), IoError> {
    let (server, full) = route_cow(path)?;
    Ok((server, full.into_owned()))
}

/// [`route`], borrowing `path` when it is sent as it is.
fn route_cow(path: &str) -> Result<(u64, Cow<'_, str>), IoError> {
    route_of(path::absolute_normal_cow(path)?)
}

/// The server holding the normal absolute path `full`, and the path.
fn route_of(full: Cow<'_, str>) -> Result<(u64, Cow<'_, str>), IoError> {
    if !under_tmp(&full)
        && let Some(disk) = locate::disk_server()
    {
        return Ok((disk, full));
    }
    Ok((server()?, full))
}

/// `OPEN` flags of an open that may change the file, or wants a directory:
/// such an open never prefetches.
const CHANGES: u64 = proto::flags::WRITE
    | proto::flags::APPEND
    | proto::flags::CREATE
    | proto::flags::TRUNCATE
    | proto::flags::DIRECTORY;

/// Opens `path` as an object (not in the descriptor table).
pub fn open_file(path: &str, flags: OpenFlags) -> Result<OpenFile, IoError> {
    open_routed(route_cow(path)?, flags)
}

/// [`open_file`] of a path already normal.
pub fn open_normal(path: &Normal, flags: OpenFlags) -> Result<OpenFile, IoError> {
    open_routed(route_of(Cow::Borrowed(path.as_str()))?, flags)
}

/// Opens `full` on `server`.
fn open_routed((server, full): (u64, Cow<'_, str>), flags: OpenFlags) -> Result<OpenFile, IoError> {
    let bits = flags.bits() & (proto::flags::ALL | proto::flags::MODE_FIELD);
    // The entry first, busy until the reply is in it (`ftable::take_opening`).
    let slot = ftable::take_opening(server, bits, &full).ok_or(IoError::NoSpace)?;
    // A file opened only to read may have been opened along with one
    // before it (`flags::AHEAD`).
    if bits & CHANGES == 0
        && let Some(hit) = buffer::take_ahead(server, slot, &full)
    {
        ftable::opened(slot, hit.handle, hit.number);
        return Ok(OpenFile::opened(slot, hit.kind, hit.bytes.is_some(), false));
    }
    // Else it may come with its bytes (`flags::PREFETCH`), and with the
    // files that follow it; one that changes the file carries the closes
    // waiting, and a writer's may leave its first write behind.
    // (`more`: the flags the buffer adds, if any).
    let open = |prefetch: bool, more: u64| {
        let bits = if prefetch { bits | proto::flags::PREFETCH } else { bits };
        client::path_call(server, op::OPEN, bits | more, full.as_bytes())
    };
    let writes = proto::flags::WRITE | proto::flags::APPEND;
    let (mut opened, mut prefetched, mut behind) = if bits & CHANGES == 0 {
        let (r, prefetched) = buffer::open_prefetching(server, slot, &full, open);
        (r, prefetched, false)
    } else {
        let (r, behind) = buffer::open_changing(server, bits & writes == proto::flags::WRITE, |more| open(false, more));
        (r, false, behind)
    };
    if matches!(opened, Err(IoError::NoSpace)) {
        // The server's room for this client's handles may be taken by
        // closes still waiting here.
        closes::flush_for(Some(server));
        (opened, prefetched, behind) = (open(false, 0), false, false);
    }
    match opened {
        Ok(r) => {
            ftable::opened(slot, r[1], r[3]);
            let behind = behind && r[4] == proto::behind::GRANTED;
            Ok(OpenFile::opened(slot, r[2], prefetched, behind))
        }
        Err(e) => {
            ftable::free(slot);
            Err(e)
        }
    }
}

/// Opens `path` as a descriptor object, to install or to give a child
/// (`SpawnOptions::stdout` and the like).
/// `/dev/null` is the null device ([`crate::fd::null`]), which no file
/// server holds.
pub fn open_handle(path: &str, flags: OpenFlags) -> Result<Handle, IoError> {
    if path::absolute_normal_cow(path)? == crate::fd::null::PATH {
        if flags.contains(OpenFlags::DIRECTORY) {
            return Err(IoError::NotDir);
        }
        return Ok(Handle::Object(Arc::new(crate::fd::null::Null)));
    }
    let file: Arc<dyn File> = Arc::new(open_file(path, flags)?);
    Ok(Handle::from(file))
}

/// Opens `path` and puts it in the lowest free descriptor; returns it.
pub fn open(path: &str, flags: OpenFlags) -> Result<usize, IoError> {
    fd::install(open_handle(path, flags)?)
}

/// Makes the directory `path`.
pub fn mkdir(path: &str) -> Result<(), IoError> {
    path_op(op::MKDIR, path).map(|_| ())
}

/// Makes the directory `path` with the permission bits `mode` (the
/// caller's umask already applied; ignored where the file system keeps no
/// modes).
pub fn mkdir_mode(path: &str, mode: u32) -> Result<(), IoError> {
    let (server, full) = route(path)?;
    client::path_call(server, op::MKDIR, proto::with_mode(0, mode), full.as_bytes()).map(|_| ())
}

/// Makes `new` another name of the file `existing` names (a symbolic link
/// named by `existing` is linked itself). `NotPermitted` for a directory
/// or on a file system without hard links; `Unsupported` across `/tmp` and
/// the disk.
pub fn link(existing: &str, new: &str) -> Result<(), IoError> {
    pair_op(op::LINK, existing, new).map(|_| ())
}

/// Makes a symbolic link at `path` holding `target` as written (resolved
/// when a path walks through the link, relative to the link's directory
/// unless absolute, inside the file server the link is on).
/// `NotPermitted` on a file system without them.
pub fn symlink(target: &str, path: &str) -> Result<(), IoError> {
    if target.is_empty() {
        return Err(IoError::NotFound);
    }
    let (server, full) = route(path)?;
    let mut payload = Vec::with_capacity(target.len() + 1 + full.len());
    payload.extend_from_slice(target.as_bytes());
    payload.push(0);
    payload.extend_from_slice(full.as_bytes());
    client::path_call(server, op::SYMLINK, 0, &payload).map(|_| ())
}

/// The target of the symbolic link `path` (`Invalid` if it is not one).
pub fn read_link(path: &str) -> Result<Vec<u8>, IoError> {
    let (server, full) = route(path)?;
    let mut target = Vec::new();
    loop {
        let r = client::path_call(server, op::READLINK, target.len() as u64, full.as_bytes())?;
        let n = proto::len_of(r[0]).min(proto::LINK_CHUNK);
        let mut chunk = [0u8; proto::LINK_CHUNK];
        proto::get_bytes(&r[2..], &mut chunk[..n]);
        target.extend_from_slice(&chunk[..n]);
        // The total in word 1; a link changed meanwhile ends the loop too.
        if target.len() >= proto::PATH_MAX {
            return Err(IoError::Invalid);
        }
        if n == 0 || target.len() as u64 >= r[1] {
            target.truncate(r[1] as usize);
            return Ok(target);
        }
    }
}

/// Removes the file name `path` (`IsDir` for a directory). The file's data
/// goes with its last name and its last open handle.
pub fn unlink(path: &str) -> Result<(), IoError> {
    path_op(op::UNLINK, path).map(|_| ())
}

/// Removes the empty directory `path` (`NotEmpty`, `NotDir`).
pub fn rmdir(path: &str) -> Result<(), IoError> {
    path_op(op::RMDIR, path).map(|_| ())
}

/// Renames `from` to `to`, replacing a file (or an empty directory) there.
/// Both names must be on one file system (`Unsupported` across `/tmp` and
/// the disk).
pub fn rename(from: &str, to: &str) -> Result<(), IoError> {
    pair_op(op::RENAME, from, to).map(|_| ())
}

/// An op on two paths (payload `from NUL to`), both on one file system
/// (`Unsupported` across `/tmp` and the disk).
fn pair_op(op: u8, from: &str, to: &str) -> Result<crate::pct::Msg, IoError> {
    let ((server, from), (other, to)) = (route(from)?, route(to)?);
    if server != other {
        return Err(IoError::Unsupported);
    }
    let mut payload = from.into_bytes();
    payload.push(0);
    payload.extend_from_slice(to.as_bytes());
    client::path_call(server, op, 0, &payload)
}

/// What [`copy_tree`] copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Copied {
    /// Regular files.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Data blocks written from the source's cache frames.
    pub blocks: u64,
}

/// XCP: copies the file or tree `from` to the new name `to` inside the
/// file server, which writes every destination block from the cache frame
/// of its source block (the CPU never touches the data). Both names on the
/// disk's file system (`Unsupported` on `/tmp` or across the two).
pub fn copy_tree(from: &str, to: &str) -> Result<Copied, IoError> {
    let r = pair_op(op::COPY, from, to)?;
    Ok(Copied { files: r[1], bytes: r[2], blocks: r[3] })
}

/// Kind and size of `path` (symbolic links followed).
pub fn stat(path: &str) -> Result<Metadata, IoError> {
    path_op(op::STAT, path).map(|r| Metadata::from_words(&r[1..]))
}

/// As [`stat`], but a symbolic link as the last component is described
/// itself (`lstat`).
pub fn symlink_metadata(path: &str) -> Result<Metadata, IoError> {
    let (server, full) = route(path)?;
    client::path_call(server, op::STAT, proto::flags::NOFOLLOW, full.as_bytes()).map(|r| Metadata::from_words(&r[1..]))
}

/// The entries of directory `path`, sorted by name.
pub fn read_dir(path: &str) -> Result<Vec<DirEntry>, IoError> {
    let dir = open_file(path, OpenFlags::READ | OpenFlags::DIRECTORY)?;
    let mut entries = Vec::new();
    while let Some(e) = dir.next_entry()? {
        entries.push(e);
    }
    Ok(entries)
}

/// Makes `path` (a directory) the current directory.
pub fn chdir(path: &str) -> Result<(), IoError> {
    let full = path::absolute_normal(path)?;
    if !stat(&full)?.is_dir() {
        return Err(IoError::NotDir);
    }
    crate::environ::set_var(PWD, &full);
    Ok(())
}

/// The whole content of the file `path`, read straight into the result a
/// shared buffer's worth (64 KiB) at a time: one round trip per 64 KiB
/// where the process has a buffer with the server, and none to find the
/// end (the read before it came back short).
pub fn read_file(path: &str) -> Result<Vec<u8>, IoError> {
    let f = open_file(path, OpenFlags::READ)?;
    let mut out = Vec::new();
    loop {
        let have = out.len();
        out.resize(have + oxok_fsproto::BUFFER_SIZE, 0);
        let n = f.read(&mut out[have..])?;
        out.truncate(have + n);
        // A file's read comes back short only at its end.
        if n < oxok_fsproto::BUFFER_SIZE {
            return Ok(out);
        }
    }
}

/// Makes `path` a file holding exactly `data`.
pub fn write_file(path: &str, data: &[u8]) -> Result<(), IoError> {
    let f = open_file(path, OpenFlags::WRITE | OpenFlags::CREATE | OpenFlags::TRUNCATE)?;
    let mut rest = data;
    while !rest.is_empty() {
        let n = f.write(rest)?;
        if n == 0 {
            return Err(IoError::NoSpace);
        }
        rest = &rest[n.min(rest.len())..];
    }
    Ok(())
}

/// Makes everything the file servers hold durable (`SYNC` to the disk
/// server, if there is one; the RAM server keeps nothing on a disk).
pub fn sync() -> Result<(), IoError> {
    match locate::disk_server() {
        Some(disk) => client::handle_call(disk, op::SYNC, 0, 0, &[]).map(|_| ()),
        None => Ok(()),
    }
}

/// Asks the disk file server to make durable what it has held unwritten
/// for `age_ms` milliseconds or more (the `update` daemon's call): whether
/// it wrote anything. Without a disk server, `false` at once.
pub fn write_back(age_ms: u64) -> Result<bool, IoError> {
    match locate::disk_server() {
        Some(disk) => client::handle_call(disk, op::WRITE_BACK, 0, 0, &[age_ms]).map(|r| r[1] != 0),
        None => Ok(false),
    }
}

/// The server's counters.
pub fn server_stats() -> Result<ServerStats, IoError> {
    stats_of(server()?)
}

/// The counters of `server`.
pub fn stats_of(server: u64) -> Result<ServerStats, IoError> {
    let r = client::handle_call(server, op::INFO, 0, 0, &[])?;
    Ok(ServerStats {
        clients: r[1],
        handles: r[2],
        open_files: r[3],
        inodes: r[4],
        bytes: r[5],
        capacity: r[6],
        max_inodes: r[7],
    })
}

/// The counters of the server that holds `path` (the disk's for every
/// path but `/tmp` when there is a disk), and whether it is the disk's.
pub fn stats_for(path: &str) -> Result<(ServerStats, bool), IoError> {
    let (server, _) = route(path)?;
    Ok((stats_of(server)?, locate::disk_server() == Some(server)))
}

/// Starts the file server `fsd` from the boot archive as a child, so this
/// process and every child it starts afterwards find it ([`locate`]).
/// Stop it with [`stop_server`] (a sleeping server keeps the machine from
/// halting).
pub fn spawn_server() -> Result<Child, IoError> {
    let child = exec::spawn(locate::SERVER_NAME, &[locate::SERVER_NAME]).map_err(|e| match e {
        exec::SpawnError::Kernel(k) => IoError::Kernel(k),
        _ => IoError::NoServer,
    })?;
    // `exec::spawn` told the lookup (`locate::started`).
    Ok(child)
}

/// Stops a server started by [`spawn_server`] (only its creator may) and
/// waits for it to end. If it does not take the request it is destroyed.
pub fn stop_server(child: Child) -> Result<ExitStatus, IoError> {
    let mut m = [0u64; proto::WORDS];
    m[0] = proto::request(op::STOP, 0, 0);
    locate::forget();
    stop(child, &m)
}

/// Starts the disk file server `dfsd` (C-FFS over XN) as a child: from
/// then on this process and every child it starts afterwards keep `/` on
/// the disk and `/tmp` in the RAM server. Stop it with [`stop_server`]
/// (which makes everything durable first). It acts as principal
/// [`DISK_PRINCIPAL`](oxok_abi::xn::DISK_PRINCIPAL), minted from this
/// process's capability on `/8` (see [`crate::principal`]), so the file
/// system it makes is its own in every boot, whatever its environment id.
pub fn spawn_disk_server() -> Result<Child, IoError> {
    let name = locate::DISK_SERVER_NAME;
    let mut opts = exec::SpawnOptions::new();
    opts.principal(oxok_abi::xn::DISK_PRINCIPAL);
    let child = exec::spawn_with(name, &[name], &opts).map_err(|e| match e {
        exec::SpawnError::Kernel(k) => IoError::Kernel(k),
        _ => IoError::NoServer,
    })?;
    Ok(child)
}

fn stop(child: Child, m: &crate::pct::Msg) -> Result<ExitStatus, IoError> {
    if let Err(e) = client::call(child.id, m) {
        let _ = crate::sys::env_destroy(child.slot);
        return Err(e);
    }
    Ok(exec::wait(child)?)
}

/// The descriptor object `file:<server>:<handle>` (see [`OpenFile`]'s
/// spec).
pub fn from_spec(spec: &str) -> Result<Handle, IoError> {
    let file: Arc<dyn File> = Arc::new(file::from_spec(spec)?);
    Ok(Handle::from(file))
}

/// A request whose only argument is `path`.
fn path_op(op: u8, path: &str) -> Result<crate::pct::Msg, IoError> {
    let (server, full) = route(path)?;
    client::path_call(server, op, 0, full.as_bytes())
}
