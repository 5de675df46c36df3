//! The documents: read from the file server and kept in a cache keyed by
//! path. A document's `Last-Modified` is its file's modification time; on
//! a file system that keeps none (the disk's C-FFS, which reports 0) it is
//! the moment (wall-clock time) httpd first read its present content. A
//! file whose length, inode or time changed is read again.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use oxok_http::samples::{SAMPLES, index_html, sample_byte};
use oxok_libos::fd::IoError;
use oxok_libos::fs;

/// Bytes the cache may hold before it forgets everything and starts over.
const CACHE_BYTES: usize = 8 << 20;
/// The largest document served.
pub const DOC_MAX: u64 = 4 << 20;

/// A document in the cache.
pub struct Doc {
    pub data: Arc<Vec<u8>>,
    pub mtime: u64,
    ino: u64,
}

/// What a lookup found.
pub enum Found {
    /// The document.
    Doc(Arc<Vec<u8>>, u64),
    /// No such file (or a directory without an index).
    Missing,
    /// The file exists but could not be read (or is too large).
    Failed,
}

/// The cache.
#[derive(Default)]
pub struct Cache {
    docs: BTreeMap<String, Doc>,
    bytes: usize,
}

/// Unix seconds from the wall clock (read from the RTC at boot), or
/// seconds since boot on a machine without one.
pub fn now_secs() -> u64 {
    match oxok_libos::time::unix_ns() {
        Some(ns) => ns / 1_000_000_000,
        None => oxok_libos::exposed::clock().map_or(0, |c| c.ticks / c.tick_hz.max(1)),
    }
}

impl Cache {
    /// The document at `path` under `root` (`path` normalised, starting
    /// with `/`; a directory serves its `index.html`).
    pub fn get(&mut self, root: &str, path: &str) -> Found {
        let mut full = String::from(root.trim_end_matches('/'));
        full.push_str(&oxok_http::path::with_index(path));
        let meta = match fs::stat(&full) {
            Ok(m) if m.is_dir() => {
                full.push('/');
                full.push_str(oxok_http::path::INDEX);
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
        if let Some(d) = self.docs.get(&full)
            && d.data.len() as u64 == meta.size
            && d.ino == meta.ino
            && (meta.mtime == 0 || d.mtime == meta.mtime)
        {
            return Found::Doc(d.data.clone(), d.mtime);
        }
        if meta.size > DOC_MAX {
            return Found::Failed;
        }
        let Ok(bytes) = fs::read_file(&full) else { return Found::Failed };
        if self.bytes + bytes.len() > CACHE_BYTES {
            self.docs.clear();
            self.bytes = 0;
        }
        let data = Arc::new(bytes);
        let mtime = if meta.mtime != 0 { meta.mtime } else { now_secs() };
        self.bytes += data.len();
        if let Some(old) = self.docs.insert(full, Doc { data: data.clone(), mtime, ino: meta.ino }) {
            self.bytes -= old.data.len();
        }
        Found::Doc(data, mtime)
    }
}

/// Writes the samples and an `index.html` into `root`.
pub fn write_samples(root: &str) -> Result<(), IoError> {
    match fs::mkdir(root) {
        Ok(()) | Err(IoError::Exists) => {}
        Err(e) => return Err(e),
    }
    let dir = root.trim_end_matches('/');
    for (name, len) in SAMPLES {
        let data: Vec<u8> = (0..*len).map(|i| sample_byte(name, i)).collect();
        fs::write_file(&alloc::format!("{dir}/{name}"), &data)?;
    }
    fs::write_file(&alloc::format!("{dir}/index.html"), index_html("Oxok httpd").as_bytes())
}
