//! The file server's wire protocol: what travels in the nine message
//! registers of a protected control transfer (Aegis §5.1) between the libOS
//! file client and `fsd`.
//!
//! **Small messages ride in registers.** The message registers are the one
//! channel the kernel gives client and server, with the caller's id added
//! unforgeably; a request carries at most [`INLINE`] bytes inline. A
//! round trip is one `pct_call` and one `pct_reply`, no copy through the
//! kernel's memory.
//!
//! **File data moves by the page.** On `BUFFER` the server allocates up
//! to [`BUFFER_GRANT`] frames for the calling client, maps them in its own
//! space and hands the client a read-write capability for each with
//! `pct_grant` (the client consented by calling; the two need no capability
//! for each other). The client maps the pages one after the other and from
//! then on `READ_BUF` and `WRITE_BUF` move up to what it has mapped (at
//! most [`BUFFER_SIZE`], [`BUFFER_PAGES`] pages) per round trip through
//! them instead of 56–64 bytes in registers. A client asks for pages as its
//! transfers need them (a first transfer of 1 KiB asks for one page, one of
//! 64 KiB for the buffer's sixteen in two calls), so a program that moves
//! little costs the server little. The buffer belongs to the caller id the
//! kernel reports, so a client can only ever see data it asked for in its
//! own pages; the server keeps no capability for them once granted, and
//! the kernel frees each frame when the last of the two mappings goes (the
//! server lets go of its own when the client has ended or asks afresh). A
//! client without a buffer (the server's table full, a call refused) uses
//! `READ`/`WRITE` as before.
//!
//! **Request** word 0: `op | len << 8 | arg << 16` ([`request`]); the other
//! words depend on the op (below). **Reply** word 0: a [`Status`] in bits
//! 0..8 and, for `READ` and `READDIR`, a byte count in bits 8..16; for the
//! ops that move a position, that position ([`with_pos`]).
//!
//! | op | words 1.. | reply words 1.. |
//! | --- | --- | --- |
//! | `PATH` (arg 1 = first chunk) | `len` payload bytes | — |
//! | `OPEN` (arg = [`flags`], a creation mode [`with_mode`]), `STAT` (arg [`flags::NOFOLLOW`]: of a link itself), `MKDIR` (arg: [`with_mode`]), `UNLINK`, `RMDIR`, `RENAME`, `LINK`, `SYMLINK` | the payload's last `len` bytes | `OPEN`: handle, kind, inode number, and with [`flags::PREFETCH`] the bytes prefetched and the generation they hold at (0: none), with [`flags::AHEAD`] too the files opened along and the name generation they hold at ([`ahead`]); with [`flags::BEHIND`], word 4 [`behind::GRANTED`] if the first write may wait; `STAT`: [`WireStat`] |
//! | `READLINK` (arg = offset in the target) | the payload's last `len` bytes | the target's length, then `len` ≤ [`LINK_CHUNK`] of its bytes from the offset |
//! | `CLOSE` (len = handles, 1..=8; 0 counts as 1) | the handles | — (the first failure's status; every handle given is closed that can be) |
//! | `FSTAT` | handle | [`WireStat`] |
//! | `SET_TIMES` | handle, modification time, access time ([`KEEP_TIME`]: unchanged) | — |
//! | `SET_MODE` | handle, permission bits (`0o7777`) | — |
//! | `READ` (len = most bytes wanted) | handle | the bytes |
//! | `WRITE` | handle, `len` ≤ [`WRITE_MAX`] bytes | bytes taken |
//! | `SEEK` (arg = whence 0 start, 1 current, 2 end) | handle, offset (`i64`) | position |
//! | `TRUNCATE` | handle, length | — |
//! | `READDIR` | handle, offset in the name | [`readdir_word`], size, ≤ [`NAME_CHUNK`] name bytes |
//! | `DUP` | handle, child's env id | the child's handle |
//! | `INFO` | — | clients, handles, open files, inodes, data bytes, the data bytes the file system holds at most, the inodes it holds at most (0: no limit) |
//! | `STOP` | — | — (only from the server's creator) |
//! | `BUFFER` (arg = the first page: 0 makes the buffer afresh, else the pages the buffer has) | pages wanted (1..=[`BUFFER_GRANT`]) | the slots of the pages' capabilities in the caller's list, page by page; 0 past the last (the buffer ends at [`BUFFER_PAGES`]) |
//! | `READ_BUF` | handle, most bytes wanted (≤ the buffer's pages) | bytes read into the buffer |
//! | `WRITE_BUF` | handle, bytes at the buffer's start (≤ the buffer's pages) | bytes taken |
//! | `COPY` | the payload's last `len` bytes (`from NUL to`) | files, bytes, data blocks copied |
//! | `GENERATION` | — | the slot of a read-only capability for the server's generation page |
//! | `BEHIND_PAGE` | — | the slot of a read-write capability for the caller's behind page |
//! | `SETTLE` | — | — (the server took every write left behind, as before any request) |
//!
//! **A small file comes with its open.** An `OPEN` for reading only with
//! [`flags::PREFETCH`], from a client with a buffer, of a file whose
//! whole contents fit in the pages the client has, also reads the file
//! into the buffer from its start: reply word 4 is its length, word 5 the
//! server's *generation* then (never 0; 0: nothing was prefetched). The
//! handle's position stays 0. The generation counts every request that can
//! change a file's bytes (`WRITE`, `WRITE_BUF`, `TRUNCATE`, `COPY`, an
//! `OPEN` with [`flags::TRUNCATE`]); the server bumps it before the change
//! and keeps it in word 0 of one page every client may map read-only
//! (`GENERATION`). So a client whose first reads come after the open
//! serves them from its buffer with no round trip while the page still
//! says that generation — nothing that could change the file has arrived
//! since — and asks the server as before once it says another. The
//! prefetched bytes stay valid only until the client's next use of its
//! buffer (its next `READ_BUF`, `WRITE_BUF`, `BUFFER` or prefetching
//! `OPEN`), which overwrites them. A small-file read costs one round trip
//! instead of two.
//!
//! **A small file's write waits with its close.** An `OPEN` for writing
//! with [`flags::BEHIND`] may let the handle's first write wait in a
//! page beside the client's buffer until the server's next request from
//! anyone
//! ([`behind`]): a small file's create costs one round trip instead of two.
//!
//! **The files that follow come along.** With [`flags::AHEAD`] as well,
//! the server also opens, for reading, up to [`AHEAD_MAX`] regular files
//! that follow the opened one in its directory and fit the buffer after
//! it, each with a handle of the caller's own and its bytes ([`ahead`]:
//! reply word 6 their count, word 7 the server's *name generation* then).
//! The name generation, word 1 of the generation page, counts every
//! request that could change what a path names (everything but the
//! requests that only read, move a position, write or cut a file's bytes,
//! or close); so a client whose next open is of one of those paths uses
//! its handle with no round trip while the page still says that name
//! generation, and closes the handles it did not use (they wait with the
//! other closes). A reader of a directory's files in turn opens them all
//! for a round trip every `AHEAD_MAX + 1` files — or every
//! `AHEAD_WIDE_MAX + 1` with [`flags::AHEAD_WIDE`], which a client asks
//! once it has taken every file of its batch before from that directory
//! (a window that widens as a reader shows it goes through the
//! directory, as read-ahead does).
//!
//! A path payload longer than one message goes ahead in `PATH` chunks that
//! the server stages per client (at most [`PAYLOAD_MAX`] bytes); the op's own
//! message carries the last chunk (with [`STAGED`] set in its `arg`) and
//! consumes the staging; any failure drops it. `RENAME`'s, `LINK`'s and
//! `COPY`'s payload is `from NUL to` (paths never hold NUL); `SYMLINK`'s is
//! `target NUL path`, the target stored as it is, never resolved by the
//! client.
//!
//! A pure `no_std` crate, host-tested: the libOS client (`oxok_libos::fs`)
//! and the server (`apps/fsd`) both encode and decode through it.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod ahead;
pub mod behind;
#[cfg(test)]
mod tests;

/// Message words.
pub const WORDS: usize = 9;
/// Payload bytes in words 1..9.
pub const INLINE: usize = 64;
/// Data bytes of one `WRITE` (words 2..9).
pub const WRITE_MAX: usize = 56;
/// Name bytes of one `READDIR` reply (words 3..9).
pub const NAME_CHUNK: usize = 48;
/// The longest payload: two paths and their separator.
pub const PAYLOAD_MAX: usize = 2 * PATH_MAX + 1;
/// Paths must be shorter than this (as the RAM file system's `PATH_MAX`).
pub const PATH_MAX: usize = 4096;
/// `arg` bit of a path op: the payload starts with what `PATH` staged
/// (without it the server drops anything staged and uses the inline bytes).
pub const STAGED: u64 = 1 << 40;

/// Operation numbers (bits 0..8 of word 0).
pub mod op {
    /// Stage a payload chunk.
    pub const PATH: u8 = 1;
    /// Open a path; returns a handle.
    pub const OPEN: u8 = 2;
    /// Close a handle.
    pub const CLOSE: u8 = 3;
    /// Read at the handle's position.
    pub const READ: u8 = 4;
    /// Write at the handle's position (at the end with `APPEND`).
    pub const WRITE: u8 = 5;
    /// Move the handle's position.
    pub const SEEK: u8 = 6;
    /// Status of an open handle.
    pub const FSTAT: u8 = 7;
    /// Status of a path.
    pub const STAT: u8 = 8;
    /// Make a directory.
    pub const MKDIR: u8 = 9;
    /// Remove a file name.
    pub const UNLINK: u8 = 10;
    /// Remove an empty directory.
    pub const RMDIR: u8 = 11;
    /// Rename `from NUL to`.
    pub const RENAME: u8 = 12;
    /// The next entry of an open directory.
    pub const READDIR: u8 = 13;
    /// Give a child of the caller its own handle on the same open file.
    pub const DUP: u8 = 14;
    /// Set an open file's length.
    pub const TRUNCATE: u8 = 15;
    /// Server counters.
    pub const INFO: u8 = 16;
    /// Stop serving (the server's creator only).
    pub const STOP: u8 = 17;
    /// Give the caller more pages of its shared buffer.
    pub const BUFFER: u8 = 18;
    /// Read into the buffer.
    pub const READ_BUF: u8 = 19;
    /// Write from the buffer.
    pub const WRITE_BUF: u8 = 20;
    /// Copy the tree `from NUL to` (XCP; a server that cannot answers
    /// `Unsupported`).
    pub const COPY: u8 = 21;
    /// Make an open file durable (word 1 the handle): its data, size and
    /// name survive a power cut once the reply comes. A server that keeps
    /// nothing on a disk answers at once.
    pub const FSYNC: u8 = 22;
    /// Make everything the server holds durable.
    pub const SYNC: u8 = 23;
    /// Set an open file's times (word 1 the handle, word 2 the
    /// modification time, word 3 the access time, each in Unix seconds or
    /// [`KEEP_TIME`](super::KEEP_TIME)). A server whose file system keeps no
    /// times answers `Unsupported`.
    pub const SET_TIMES: u8 = 24;
    /// Make `to` another name of the object `from` names (`link(2)`: a
    /// symbolic link as `from` is linked itself). A server whose file
    /// system has no links answers `Unsupported`.
    pub const LINK: u8 = 25;
    /// Make a symbolic link: payload `target NUL path`.
    pub const SYMLINK: u8 = 26;
    /// Read part of a symbolic link's target.
    pub const READLINK: u8 = 27;
    /// Set an open file's permission bits (word 1 the handle, word 2 the
    /// bits). A server whose file system keeps no modes answers
    /// `Unsupported`.
    pub const SET_MODE: u8 = 28;
    /// Make durable what the server has held unwritten for at least word 1
    /// milliseconds (the `update` daemon's call, each second): reply word 1
    /// is 1 when it wrote, 0 when nothing was that old. A server that keeps
    /// nothing on a disk answers 0 at once.
    pub const WRITE_BACK: u8 = 29;
    /// A read-only capability for the server's generation page (see the
    /// module documentation): reply word 1 its slot in the caller's list.
    pub const GENERATION: u8 = 30;
    /// A read-write capability for the caller's behind page
    /// ([`behind`](super::behind)), made once for its buffer, which must
    /// have a page: reply word 1 its slot in the caller's list.
    pub const BEHIND_PAGE: u8 = 31;
    /// Nothing but what every request does first: take the writes left
    /// behind in the clients' behind pages ([`behind`](super::behind)).
    pub const SETTLE: u8 = 32;
}

/// How long a change waits unwritten on the disk before the `update`
/// daemon's `WRITE_BACK` makes it durable (ms; Linux waits 30 s).
pub const WRITE_BACK_AGE_MS: u64 = 5_000;

/// How often the `update` daemon asks (ms).
pub const WRITE_BACK_EVERY_MS: u64 = 1_000;

/// Target bytes of one `READLINK` reply (words 2..9).
pub const LINK_CHUNK: usize = 56;

/// A `SET_TIMES` word that leaves its time as it is.
pub const KEEP_TIME: u64 = u64::MAX;

/// Most files one `OPEN` with [`flags::AHEAD`] opens besides its own.
pub const AHEAD_MAX: usize = 8;
/// Most with [`flags::AHEAD_WIDE`] as well: as many as a client's handle
/// quota lets go with the opened one and one more it holds (128, less the
/// 16 a server keeps over). Each batch is a round trip to the server, and
/// under TCG each round trip's two address-space switches cost more than
/// its instructions: the wider, the fewer.
pub const AHEAD_WIDE_MAX: usize = 110;

/// Most closes one `OPEN` with [`flags::CLOSES`] carries: a wide batch's
/// files and a few more, so that reading a directory's files in turn
/// closes each batch with the next one's request.
pub const CLOSES_MAX: usize = 112;

/// Bytes of one page of a client's shared buffer.
pub const BUFFER_PAGE: usize = 4096;
/// Pages of a client's whole shared buffer.
pub const BUFFER_PAGES: usize = 32;
/// Most pages one `BUFFER` call grants (one capability slot each in the
/// reply's words 1..9).
pub const BUFFER_GRANT: usize = 8;
/// Most bytes of a client's shared buffer: one `READ_BUF` or `WRITE_BUF`.
pub const BUFFER_SIZE: usize = BUFFER_PAGES * BUFFER_PAGE;

/// `OPEN` flag bits (the `arg` of its word 0).
pub mod flags {
    /// Open for reading.
    pub const READ: u64 = 1;
    /// Open for writing.
    pub const WRITE: u64 = 2;
    /// Create the file if missing.
    pub const CREATE: u64 = 4;
    /// Truncate an existing file.
    pub const TRUNCATE: u64 = 8;
    /// Every write goes to the end.
    pub const APPEND: u64 = 16;
    /// With `CREATE`: fail if the name exists.
    pub const EXCLUSIVE: u64 = 32;
    /// The path must be a directory.
    pub const DIRECTORY: u64 = 64;
    /// A symbolic link as the last component is not followed: `OPEN`
    /// fails with `Loop`, `STAT` reports the link itself.
    pub const NOFOLLOW: u64 = 128;
    /// Read a small file into the caller's buffer with the open (see the
    /// module documentation); ignored where the server cannot.
    pub const PREFETCH: u64 = 256;
    /// With `PREFETCH`: also open, each with its bytes, up to
    /// [`AHEAD_MAX`](super::AHEAD_MAX) small files that follow this one in
    /// its directory (see [`ahead`](super::ahead)); ignored where the
    /// server cannot.
    pub const AHEAD: u64 = 512;
    /// With `AHEAD`: up to [`AHEAD_WIDE_MAX`](super::AHEAD_WIDE_MAX)
    /// files rather than [`AHEAD_MAX`](super::AHEAD_MAX).
    pub const AHEAD_WIDE: u64 = 1024;
    /// The caller's buffer starts with closes that were waiting: word 0
    /// their count (at most [`CLOSES_MAX`](super::CLOSES_MAX)), then the
    /// handles. The server closes them first, as a `CLOSE` would, and goes
    /// on with the open whatever those closes found (a close's reply is
    /// never passed on); the open's reply may then overwrite them.
    pub const CLOSES: u64 = 2048;
    /// With `WRITE`, not `APPEND`: the caller may leave the handle's first
    /// write behind in its behind page ([`behind`](super::behind)); reply
    /// word 4 says whether it may. Ignored where the server cannot.
    pub const BEHIND: u64 = 4096;
    /// Every bit defined.
    pub const ALL: u64 = 8191;
    /// Where [`with_mode`](super::with_mode) puts a creation mode.
    pub const MODE_SHIFT: u32 = 16;
    /// Set when the arg carries a creation mode.
    pub const MODE_GIVEN: u64 = 1 << 28;
    /// Every bit [`with_mode`](super::with_mode) may set.
    pub const MODE_FIELD: u64 = MODE_GIVEN | 0o7777 << MODE_SHIFT;
}

/// `OPEN`'s or `MKDIR`'s arg with the permission bits a newly made object
/// gets (`mode & 0o7777`, the caller having applied its umask).
pub const fn with_mode(arg: u64, mode: u32) -> u64 {
    arg | flags::MODE_GIVEN | (((mode & 0o7777) as u64) << flags::MODE_SHIFT)
}

/// The creation mode [`with_mode`] put in an arg, if any.
pub const fn mode_of(arg: u64) -> Option<u16> {
    if arg & flags::MODE_GIVEN == 0 { None } else { Some(((arg >> flags::MODE_SHIFT) & 0o7777) as u16) }
}

/// Kinds in `OPEN`, `STAT` and `READDIR` replies.
pub const KIND_FILE: u64 = 1;
/// A directory.
pub const KIND_DIR: u64 = 2;
/// A symbolic link (only where a link is not followed: `STAT` with
/// [`flags::NOFOLLOW`], `READDIR`).
pub const KIND_LINK: u64 = 3;

/// A reply status (bits 0..8 of reply word 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Status {
    /// Done.
    Ok = 0,
    /// No such file or directory.
    NotFound = 1,
    /// The name exists.
    Exists = 2,
    /// A component is not a directory.
    NotDir = 3,
    /// A directory where a file is needed.
    IsDir = 4,
    /// The directory is not empty.
    NotEmpty = 5,
    /// A bad argument, path or message.
    Invalid = 6,
    /// The file system or a quota is full.
    NoSpace = 7,
    /// The handle names no open file of the caller (or lacks the access).
    BadHandle = 8,
    /// The object does not do that.
    Unsupported = 9,
    /// The server is stopping.
    Stopped = 10,
    /// The caller may not do that (`DUP` to a stranger, `STOP`).
    Denied = 11,
    /// Too many symbolic links in a path, or `NOFOLLOW` met one.
    Loop = 12,
    /// A name or path too long.
    TooLong = 13,
    /// Not on this kind of object (a hard link to a directory).
    NotPermitted = 14,
}

impl Status {
    /// The status in reply word 0 (unknown codes read as `Invalid`).
    pub fn of(w0: u64) -> Status {
        const ALL: [Status; 15] = [
            Status::Ok,
            Status::NotFound,
            Status::Exists,
            Status::NotDir,
            Status::IsDir,
            Status::NotEmpty,
            Status::Invalid,
            Status::NoSpace,
            Status::BadHandle,
            Status::Unsupported,
            Status::Stopped,
            Status::Denied,
            Status::Loop,
            Status::TooLong,
            Status::NotPermitted,
        ];
        ALL.get((w0 & 0xff) as usize).copied().unwrap_or(Status::Invalid)
    }
}

/// Request word 0.
pub const fn request(op: u8, len: usize, arg: u64) -> u64 {
    op as u64 | ((len as u64 & 0xff) << 8) | (arg << 16)
}

/// The op of request word 0.
pub const fn op_of(w0: u64) -> u8 {
    w0 as u8
}

/// The length field of word 0 (request or reply).
pub const fn len_of(w0: u64) -> usize {
    ((w0 >> 8) & 0xff) as usize
}

/// The argument of request word 0.
pub const fn arg_of(w0: u64) -> u64 {
    w0 >> 16
}

/// Reply word 0: a status and a byte count.
pub const fn reply(status: Status, len: usize) -> u64 {
    status as u64 | ((len as u64 & 0xff) << 8)
}

/// Positions [`with_pos`] can report (48 bits, less the "none" code).
pub const POS_LIMIT: u64 = (1 << 48) - 1;

/// Reply word 0 of `READ`, `WRITE`, `SEEK`, `READ_BUF` and `WRITE_BUF`:
/// besides status and count, the handle's position after the request in
/// bits 16..64, as `pos + 1` (0: not reported — a position of
/// [`POS_LIMIT`] or more, reachable only by `SEEK`, whose word 1 has it).
/// The client keeps it in its own memory for a checkpointer.
pub const fn with_pos(w0: u64, pos: u64) -> u64 {
    let field = if pos < POS_LIMIT { pos + 1 } else { 0 };
    (w0 & 0xffff) | (field << 16)
}

/// The position [`with_pos`] put in reply word 0, if any.
pub const fn pos_of(w0: u64) -> Option<u64> {
    match w0 >> 16 {
        0 => None,
        f => Some(f - 1),
    }
}

/// `READDIR` reply word 1: entry present (bit 63), kind (bits 48..56), name
/// length (bits 0..16).
pub const fn readdir_word(present: bool, kind: u64, name_len: usize) -> u64 {
    ((present as u64) << 63) | ((kind & 0xff) << 48) | (name_len as u64 & 0xffff)
}

/// Splits a `READDIR` word: (present, kind, name length).
pub const fn split_readdir_word(w: u64) -> (bool, u64, usize) {
    (w >> 63 != 0, (w >> 48) & 0xff, (w & 0xffff) as usize)
}

/// `STAT`/`FSTAT` reply words 1..8.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireStat {
    /// [`KIND_FILE`], [`KIND_DIR`] or [`KIND_LINK`].
    pub kind: u64,
    /// A file's bytes, a directory's entries, a link's target bytes.
    pub size: u64,
    /// The inode number.
    pub ino: u64,
    /// Links.
    pub nlink: u64,
    /// The last modification of the content in Unix seconds (0: the file
    /// system keeps no times).
    pub mtime: u64,
    /// The permission bits (`None`: the file system keeps no modes).
    pub mode: Option<u16>,
    /// Bytes of storage the object holds (`None`: not known), for
    /// `st_blocks`; less than `size` for a sparse file.
    pub allocated: Option<u64>,
}

/// Word 6's bit that says a mode is kept (a mode may be 0).
const MODE_KEPT: u64 = 1 << 32;

impl WireStat {
    /// Writes the status into `words` (reply words 1..).
    pub fn put(&self, words: &mut [u64]) {
        let mode = self.mode.map_or(0, |m| MODE_KEPT | u64::from(m & 0o7777));
        // Word 7 is the allocation plus one (0: not known).
        let allocated = self.allocated.map_or(0, |a| a.saturating_add(1));
        let fields = [self.kind, self.size, self.ino, self.nlink, self.mtime, mode, allocated];
        for (w, v) in words.iter_mut().zip(fields) {
            *w = v;
        }
    }

    /// The status in `words` (reply words 1..; missing words read 0).
    pub fn of(words: &[u64]) -> WireStat {
        let word = |i: usize| words.get(i).copied().unwrap_or(0);
        let mode = word(5);
        WireStat {
            kind: word(0),
            size: word(1),
            ino: word(2),
            nlink: word(3),
            mtime: word(4),
            mode: (mode & MODE_KEPT != 0).then_some((mode & 0o7777) as u16),
            allocated: word(6).checked_sub(1),
        }
    }
}

/// Packs `bytes` little-endian into `words` (at most `8 * words.len()`
/// bytes taken; the rest of the words zeroed).
pub fn put_bytes(words: &mut [u64], bytes: &[u8]) -> usize {
    let mut n = 0;
    for (i, w) in words.iter_mut().enumerate() {
        let mut b = [0u8; 8];
        let chunk = bytes.get(i * 8..).unwrap_or(&[]);
        let take = chunk.len().min(8);
        b[..take].copy_from_slice(&chunk[..take]);
        n += take;
        *w = u64::from_le_bytes(b);
    }
    n
}

/// Unpacks the first `out.len()` bytes of `words` (at most what they hold).
pub fn get_bytes(words: &[u64], out: &mut [u8]) -> usize {
    let mut n = 0;
    for (i, w) in words.iter().enumerate() {
        let Some(dst) = out.get_mut(i * 8..) else { break };
        let take = dst.len().min(8);
        dst[..take].copy_from_slice(&w.to_le_bytes()[..take]);
        n += take;
    }
    n
}
