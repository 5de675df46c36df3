//! What the personality knows about a descriptor beyond the libOS's
//! table (which stays the one table of open objects, so native and Linux
//! programs pass descriptors the same way): for files it opened, the path,
//! the open file object (for `fstat`), the open flags, the directory
//! cursor of `getdents64`, and close-on-exec.

use alloc::string::String;
use alloc::sync::Arc;
use oxok_libos::fd::MAX_FDS;
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

/// A record per descriptor the libOS's table can hold, by number.
static INFO: Mutex<[Option<Info>; MAX_FDS]> = Mutex::new([const { None }; MAX_FDS]);

/// The record of `fd`, if the personality has one.
pub fn get(fd: usize) -> Option<Info> {
    INFO.lock().get(fd)?.clone()
}

/// Records `info` for `fd` (replacing any earlier record).
pub fn set(fd: usize, info: Info) {
    if let Some(slot) = INFO.lock().get_mut(fd) {
        *slot = Some(info);
    }
}

/// Changes the record of `fd` in place (making one if there is none).
pub fn update(fd: usize, f: impl FnOnce(&mut Info)) {
    if let Some(slot) = INFO.lock().get_mut(fd) {
        f(slot.get_or_insert_with(Info::default));
    }
}

/// Forgets `fd` (it was closed).
pub fn remove(fd: usize) {
    let gone = INFO.lock().get_mut(fd).and_then(Option::take);
    drop(gone); // its file object let go with the table unlocked
}

/// `new` became a duplicate of `old`: it shares the path, object and flags,
/// but not close-on-exec.
pub fn duplicate(old: usize, new: usize) {
    let mut table = INFO.lock();
    let info = table.get(old).cloned().flatten().map(|mut info| {
        info.cloexec = false;
        info
    });
    if let Some(slot) = table.get_mut(new) {
        *slot = info;
    }
}

/// In a fork child: the file objects recorded here are the parent's (the
/// libOS's table got the child its own), so they are forgotten — not
/// dropped, which would close the parent's handles. Paths, flags and
/// cursors stay.
pub fn after_fork() {
    for info in INFO.lock().iter_mut().flatten() {
        if let Some(file) = info.file.take() {
            core::mem::forget(file);
        }
    }
}

/// Forgets every record (the descriptors were all closed).
pub fn clear() {
    INFO.lock().iter_mut().for_each(|slot| *slot = None);
}
