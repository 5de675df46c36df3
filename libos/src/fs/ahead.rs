//! The files a prefetching open opened along (`flags::AHEAD`,
//! `proto::ahead`): the regular files that follow the opened one in its
//! directory, each under a handle of this process's own, their bytes in
//! the buffer after the opened file's.
//!
//! An open of one of their paths takes its handle with no round trip while
//! the server's name generation (word 1 of its generation page) is the one
//! they were opened at: no request that could change what a path names
//! has arrived since, so the path still names the file the handle is on.
//! Its bytes serve its reads, as a prefetching open's, while the buffer
//! still holds them and the generation (word 0) is the one they were read
//! at. The handles no open takes are closed as any handle is (they wait
//! with the others, [`closes`](super::closes)): when the list is
//! found stale, when another open brings a new one, and before the
//! requests that could see them (`closes::before`).
//!
//! A process asks for them when it opens a file in the directory of the
//! file it opened last: one that reads a directory's files in turn, as
//! `cp -r`, `tar` or a build does.

use alloc::string::String;
use alloc::vec::Vec;
use oxok_rt::page::SharedRegion;

use super::proto::ahead::{self, HEAD, Head};
use super::proto::{AHEAD_WIDE_MAX, KIND_FILE};

/// One file opened along.
struct File {
    /// Where its name lies in the batch's `names`.
    name: core::ops::Range<usize>,
    handle: u64,
    number: u64,
    /// Where its bytes are in the buffer, and how many.
    at: usize,
    len: usize,
}

/// The files one `OPEN` brought.
pub(super) struct Ahead {
    /// The name generation they were opened at.
    names: u64,
    /// The generation their bytes were read at.
    generation: u64,
    /// Their bytes are still in the buffer (nothing has used it since).
    pub(super) bytes: bool,
    /// The directory they are in.
    dir: String,
    /// Their names' bytes, one after another (one allocation for the
    /// batch), as the server sent them.
    names_in: Vec<u8>,
    /// In the directory's order; a file an open took is `None`.
    files: Vec<Option<File>>,
    /// Where the next look starts: past the file taken last (a reader
    /// going through the directory takes the next one).
    next: usize,
    /// Files no open has taken.
    left: usize,
}

/// A file an open found opened already.
pub(crate) struct Hit {
    pub handle: u64,
    pub kind: u64,
    pub number: u64,
    /// Where its bytes are in the buffer, how many, and the generation
    /// they hold at; `None` when they are no longer there.
    pub bytes: Option<(usize, usize, u64)>,
}

/// Whether `a` and `b` hold the same bytes, compared eight at a time (a
/// path's few bytes without a call to `memcmp`).
fn same(a: &[u8], b: &[u8]) -> bool {
    let word = |c: &[u8]| {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        u64::from_ne_bytes(w)
    };
    if a.len() != b.len() {
        return false;
    }
    let (x, y) = (a.chunks_exact(8), b.chunks_exact(8));
    x.remainder().iter().zip(y.remainder()).all(|(p, q)| p == q) && x.zip(y).all(|(p, q)| word(p) == word(q))
}

/// Name bytes a batch's first allocation makes room for per file.
const NAME_GUESS: usize = 16;

/// The directory part of the absolute path `path` (`/` for the root's
/// entries), if it has one.
pub(super) fn parent(path: &str) -> Option<&str> {
    match path.rfind('/')? {
        0 => Some("/"),
        i => Some(&path[..i]),
    }
}

impl Ahead {
    /// The `count` records an open of a file in directory `parent` left in
    /// `region` (`size` bytes) after the file's own `first` bytes, opened
    /// at name generation `names`, their bytes read at `generation`. The
    /// records are read as far as they are well formed, each length
    /// checked against the buffer. A file whose name is not one component
    /// (empty, `.`, `..`, with a `/`, not UTF-8) is taken by no open
    /// ([`take`](Ahead::take) compares names with a path's last component
    /// only), so its handle is closed with the rest.
    pub(super) fn read(
        region: &SharedRegion,
        size: usize,
        first: usize,
        count: u64,
        at: (u64, u64),
        parent: &str,
    ) -> Ahead {
        let (names, generation) = at;
        let left = count.min(AHEAD_WIDE_MAX as u64);
        let records = Records { region, size, at: ahead::start(first), left };
        // Room for every record at once (a name is a few bytes).
        let mut files = Vec::new();
        let mut names_in: Vec<u8> = Vec::new();
        let _ = files.try_reserve_exact(left as usize);
        let _ = names_in.try_reserve(left as usize * NAME_GUESS);
        for (head, name_at, at) in records {
            // The name, read straight onto the others. It is not looked at
            // here: an open compares it with a path's last component,
            // which it takes only when that is one (`take`).
            let name_len = head.name_len as usize;
            if files.try_reserve(1).is_err() || names_in.try_reserve(name_len).is_err() {
                break;
            }
            let start = names_in.len();
            names_in.resize(start + name_len, 0);
            region.copy_out(name_at, &mut names_in[start..]);
            let name = start..start + name_len;
            files.push(Some(File { name, handle: head.handle, number: head.number, at, len: head.len as usize }));
        }
        let mut dir = String::new();
        if dir.try_reserve(parent.len()).is_ok() {
            dir.push_str(parent);
        }
        let left = files.len();
        Ahead { names, generation, bytes: true, dir, names_in, files, next: 0, left }
    }

    /// Whether these files were from directory `dir` and every one was
    /// taken by an open: a reader going through the directory, for whom
    /// the next batch may be wide.
    pub(super) fn used_up(&self, dir: &str) -> bool {
        self.left == 0 && self.dir == dir
    }

    /// Whether the server's name generation `now` is the one they were
    /// opened at.
    pub(super) fn current(&self, now: u64) -> bool {
        self.names == now
    }

    /// The file at `path`, taken off the list.
    pub(super) fn take(&mut self, path: &str) -> Option<Hit> {
        // Its name, if `path` is in their directory.
        let (path, dir) = (path.as_bytes(), self.dir.as_bytes());
        let rest = path.get(dir.len()..).filter(|_| same(&path[..dir.len()], dir))?;
        let name = if dir == b"/" { rest } else { rest.strip_prefix(b"/")? };
        // One component, neither `.` nor `..`: no record whose name is
        // anything else (a server's) is ever taken. (A loop, not
        // `contains`, whose `memchr` call costs more than a name's bytes.)
        #[allow(clippy::manual_contains)]
        if matches!(name, b"" | b"." | b"..") || name.iter().any(|&b| b == b'/') {
            return None;
        }
        let n = self.files.len();
        let names = &self.names_in;
        let named =
            |f: &Option<File>| f.as_ref().is_some_and(|f| names.get(f.name.clone()).is_some_and(|m| same(m, name)));
        let i = (self.next..n).chain(0..self.next.min(n)).find(|&i| named(&self.files[i]))?;
        let f = self.files[i].take()?;
        self.next = i + 1;
        self.left -= 1;
        let bytes = self.bytes.then_some((f.at, f.len, self.generation));
        Some(Hit { handle: f.handle, kind: KIND_FILE, number: f.number, bytes })
    }

    /// The handles no open took.
    pub(super) fn handles(self) -> Vec<u64> {
        self.files.into_iter().flatten().map(|f| f.handle).collect()
    }
}

/// The records of one reply, read one by one off the buffer.
struct Records<'a> {
    region: &'a SharedRegion,
    size: usize,
    at: usize,
    left: u64,
}

impl Iterator for Records<'_> {
    /// A record's head, where its name's bytes are, and where its file's
    /// bytes are.
    type Item = (Head, usize, usize);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let mut h = [0u8; HEAD];
        if self.at.checked_add(HEAD).is_none_or(|end| end > self.size) {
            self.left = 0;
            return None;
        }
        self.region.copy_out(self.at, &mut h);
        let head = Head::parse(&h);
        let Some((name_at, bytes_at, next)) = head.span(self.at, self.size).filter(|_| head.kind == KIND_FILE) else {
            self.left = 0;
            return None;
        };
        self.at = next;
        Some((head, name_at, bytes_at))
    }
}
