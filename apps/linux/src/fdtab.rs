//! What the personality knows about a descriptor beyond the libOS's
//! table (which stays the one table of open objects, so native and Linux
//! programs pass descriptors the same way): for files it opened, the path,
//! the open file object (for `fstat`), the open flags, the directory
//! cursor of `getdents64`, and close-on-exec.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use oxok_libos::fs::OpenFile;
use spin::Mutex;

/// What one descriptor is, as far as the libOS's table does not say.
#[derive(Clone, Default)]
pub struct Info {
    /// The absolute path it was opened by.
    pub path: String,
    /// The file server's object, for files and directories.
    pub file: Option<Arc<OpenFile>>,
    /// A directory.
    pub dir: bool,
    /// Entries `getdents64` has returned so far.
    pub cursor: usize,
    /// The `open` flags (access mode, `O_APPEND`, …).
    pub flags: u64,
    /// `FD_CLOEXEC`.
    pub cloexec: bool,
}

static INFO: Mutex<BTreeMap<usize, Info>> = Mutex::new(BTreeMap::new());

/// The record of `fd`, if the personality has one.
pub fn get(fd: usize) -> Option<Info> {
    INFO.lock().get(&fd).cloned()
}

/// Records `info` for `fd` (replacing any earlier record).
pub fn set(fd: usize, info: Info) {
    INFO.lock().insert(fd, info);
}

/// Changes the record of `fd` in place (making one if there is none).
pub fn update(fd: usize, f: impl FnOnce(&mut Info)) {
    f(INFO.lock().entry(fd).or_default());
}

/// Forgets `fd` (it was closed).
pub fn remove(fd: usize) {
    INFO.lock().remove(&fd);
}

/// `new` became a duplicate of `old`: it shares the path, object and flags,
/// but not close-on-exec.
pub fn duplicate(old: usize, new: usize) {
    let mut map = INFO.lock();
    match map.get(&old).cloned() {
        Some(mut info) => {
            info.cloexec = false;
            map.insert(new, info);
        }
        None => {
            map.remove(&new);
        }
    }
}

/// In a fork child: the file objects recorded here are the parent's (the
/// libOS's table got the child its own), so they are forgotten — not
/// dropped, which would close the parent's handles. Paths, flags and
/// cursors stay.
pub fn after_fork() {
    for info in INFO.lock().values_mut() {
        if let Some(file) = info.file.take() {
            core::mem::forget(file);
        }
    }
}

/// Forgets every record (the descriptors were all closed).
pub fn clear() {
    INFO.lock().clear();
}
