//! The file cache, which is also the retransmission pool: each file's bytes
//! in pages of this process's own frames, its canned heads (200 and 304, for
//! keep-alive and close) in a page before them, and the sum of every
//! maximum-size segment of head + file computed when it enters. A file
//! stays while a connection's send queue names it; an HTML page's
//! references are loaded with it (grouping). Files are looked at again
//! (size, inode) at most once a second.
//!
//! A file's `Last-Modified` is its modification time as the file system
//! keeps it (the RAM file system does); on one that keeps none (the disk's
//! C-FFS reports 0) it is when (seconds since boot) its present content
//! entered the cache.
//!
//! Every cached page is a frame this environment holds a capability for
//! (`net_send` names frames by capability slot), and an environment has
//! `CAP_SLOTS` (64) of them: with the ring and the canned errors, about 40
//! pages (160 KB) of files fit at once. Files no queue names are evicted,
//! least recently used first, to make room.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use oxok_cheetah::{SegmentSums, checksum, group};
use oxok_http::response::{self, Connection, Head};
use oxok_http::{Status, mime, path};
use oxok_libos::fd::IoError;
use oxok_libos::fs;

use crate::pages::{PAGE, Pages};

/// The largest file served (as `httpd`).
pub const FILE_MAX: u64 = 4 << 20;
/// Pages the cache may hold.
const BUDGET_PAGES: usize = 4096;

/// Head variants: 200 keep-alive, 200 close, 304 keep-alive, 304 close.
pub const HEADS: usize = 4;

/// A canned head in a file's head page.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeadRef {
    pub off: u32,
    pub len: u32,
    pub sum: u64,
}

/// One cached file.
pub struct File {
    pub size: u32,
    ino: u64,
    pub mtime: u64,
    /// Page 0: the heads; pages 1..: the file.
    pub pages: Pages,
    pub heads: [HeadRef; HEADS],
    /// Segment sums of head 0 + file and head 1 + file.
    pub sums: [SegmentSums; 2],
    pub refs: u32,
    live: bool,
    last_used: u64,
    checked: u64,
}

/// What a lookup found.
pub enum Found {
    File(usize),
    Missing,
    Failed,
}

/// The cache.
pub struct Cache {
    root: String,
    mss: u32,
    pub files: Vec<Option<File>>,
    by_path: BTreeMap<String, usize>,
    pages: usize,
    /// Files loaded because a page referenced them.
    pub grouped: u64,
    /// Files loaded (all reasons).
    pub loaded: u64,
}

impl Cache {
    pub fn new(root: &str, mss: u32) -> Cache {
        Cache {
            root: String::from(root.trim_end_matches('/')),
            mss,
            files: Vec::new(),
            by_path: BTreeMap::new(),
            pages: 0,
            grouped: 0,
            loaded: 0,
        }
    }

    /// Files held now and their pages.
    pub fn usage(&self) -> (usize, usize) {
        (self.files.iter().flatten().count(), self.pages)
    }

    /// The file for normalised URL path `url` (a directory: its index).
    pub fn lookup(&mut self, url: &str, now: u64, hz: u64) -> Found {
        let url = path::with_index(url);
        if let Some(&i) = self.by_path.get(&url) {
            let full = self.full_path(&url);
            if let Some(f) = self.files[i].as_mut() {
                f.last_used = now;
                if now < f.checked + hz {
                    return Found::File(i);
                }
                match fs::stat(&full) {
                    Ok(m) if !m.is_dir() && m.size == u64::from(f.size) && m.ino == f.ino => {
                        f.checked = now;
                        return Found::File(i);
                    }
                    _ => self.retire(i),
                }
            }
        }
        let found = self.load(&url, now, hz);
        if let Found::File(i) = found
            && group::is_html(&url)
        {
            // The page itself is not to be evicted for its references.
            if let Some(f) = self.files[i].as_mut() {
                f.refs += 1;
            }
            self.group(i, &url, now, hz);
            if let Some(f) = self.files[i].as_mut() {
                f.refs -= 1;
            }
        }
        found
    }

    fn full_path(&self, url: &str) -> String {
        let mut full = self.root.clone();
        full.push_str(url);
        full
    }

    /// Reads the file for `url` into the cache.
    fn load(&mut self, url: &str, now: u64, hz: u64) -> Found {
        let mut full = self.full_path(url);
        let meta = match fs::stat(&full) {
            Ok(m) if m.is_dir() => {
                full.push('/');
                full.push_str(path::INDEX);
                match fs::stat(&full) {
                    Ok(m) if !m.is_dir() => m,
                    Ok(_) | Err(IoError::NotFound | IoError::NotDir) => return Found::Missing,
                    Err(_) => return Found::Failed,
                }
            }
            Ok(m) => m,
            Err(IoError::NotFound | IoError::NotDir | IoError::Invalid) => return Found::Missing,
            Err(_) => return Found::Failed,
        };
        if meta.size > FILE_MAX {
            return Found::Failed;
        }
        let Ok(bytes) = fs::read_file(&full) else { return Found::Failed };
        let need = 1 + bytes.len().div_ceil(PAGE);
        if !self.make_room(need) {
            return Found::Failed;
        }
        // Every page is a frame named by one of this environment's few
        // capability slots (`net_send` names frames by slot): when none is
        // left, unused files make room.
        let pages = loop {
            match Pages::new(need) {
                Ok(p) => break p,
                Err(_) => {
                    if !self.evict_one() {
                        return Found::Failed;
                    }
                }
            }
        };
        // The file's own time; on a file system that keeps none, the load.
        let mtime = if meta.mtime != 0 { meta.mtime } else { now / hz.max(1) };
        let ctype = mime::content_type(url);
        let mut head_page = Vec::with_capacity(PAGE);
        let mut heads = [HeadRef::default(); HEADS];
        let variants = [
            (Status::Ok, Connection::KeepAlive),
            (Status::Ok, Connection::Close),
            (Status::NotModified, Connection::KeepAlive),
            (Status::NotModified, Connection::Close),
        ];
        let mut texts: [Vec<u8>; HEADS] = Default::default();
        for (k, (status, connection)) in variants.into_iter().enumerate() {
            let head = Head {
                status,
                content_length: bytes.len() as u64,
                content_type: Some(ctype),
                last_modified: Some(mtime),
                connection,
            };
            response::write_head(&mut texts[k], &head);
            heads[k] =
                HeadRef { off: head_page.len() as u32, len: texts[k].len() as u32, sum: checksum::add(0, &texts[k]) };
            head_page.extend_from_slice(&texts[k]);
            // Keep every head 2-byte aligned (their sums start even).
            if head_page.len() % 2 == 1 {
                head_page.push(0);
            }
        }
        pages.write_page(0, &head_page);
        for (p, chunk) in bytes.chunks(PAGE).enumerate() {
            pages.write_page(1 + p, chunk);
        }
        let sums = [SegmentSums::new(&[&texts[0], &bytes], self.mss), SegmentSums::new(&[&texts[1], &bytes], self.mss)];
        let file = File {
            size: bytes.len() as u32,
            ino: meta.ino,
            mtime,
            pages,
            heads,
            sums,
            refs: 0,
            live: true,
            last_used: now,
            checked: now,
        };
        self.pages += need;
        self.loaded += 1;
        let i = match self.files.iter().position(Option::is_none) {
            Some(i) => {
                self.files[i] = Some(file);
                i
            }
            None => {
                self.files.push(Some(file));
                self.files.len() - 1
            }
        };
        self.by_path.insert(String::from(url), i);
        Found::File(i)
    }

    /// Loads what the page `i` at `url` references (not its references').
    fn group(&mut self, i: usize, url: &str, now: u64, hz: u64) {
        let Some(f) = self.files[i].as_ref() else { return };
        let mut html = alloc::vec![0u8; f.size as usize];
        f.pages.read(PAGE, &mut html);
        for r in group::references(&html, url) {
            if !self.by_path.contains_key(&r) && matches!(self.load(&r, now, hz), Found::File(_)) {
                self.grouped += 1;
            }
        }
    }

    /// Evicts least recently used files no queue names until `need` more
    /// pages fit the budget.
    fn make_room(&mut self, need: usize) -> bool {
        while self.pages + need > BUDGET_PAGES {
            if !self.evict_one() {
                return false;
            }
        }
        true
    }

    /// Retires the least recently used file no queue names; `false` if
    /// there is none.
    fn evict_one(&mut self) -> bool {
        let victim = self
            .files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.as_ref().filter(|f| f.refs == 0).map(|f| (f.last_used, i)))
            .min();
        let Some((_, i)) = victim else { return false };
        self.retire(i);
        true
    }

    /// Takes file `i` out of the lookup; its pages go when no queue names it.
    fn retire(&mut self, i: usize) {
        self.by_path.retain(|_, &mut j| j != i);
        if let Some(f) = self.files[i].as_mut() {
            f.live = false;
        }
        self.drop_if_unused(i);
    }

    /// One queue is done with file `i`.
    pub fn release(&mut self, i: usize) {
        if let Some(f) = self.files[i].as_mut() {
            f.refs = f.refs.saturating_sub(1);
        }
        self.drop_if_unused(i);
    }

    fn drop_if_unused(&mut self, i: usize) {
        if self.files[i].as_ref().is_some_and(|f| !f.live && f.refs == 0)
            && let Some(f) = self.files[i].take()
        {
            self.pages -= f.pages.count();
        }
    }
}
