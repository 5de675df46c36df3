//! The boot archive's programs by name. The archive is scanned once per
//! process (a fork child inherits the index) and then searched by name:
//! a shell's `PATH` search and `execve` ask for programs often, and a
//! linear scan of a few hundred tar headers per question cost `busybox sh`
//! a tenth of its instructions and `spawn` two thirds of its own.
//!
//! The index is one word per file — the name's hash above the header's
//! offset — sorted, so it takes a page or two of heap: every heap page is
//! one more a fork must share and the parent copy back on its next write.

use alloc::vec::Vec;
use oxok_archive::Archive;
use oxok_rt::exposed;
use spin::Mutex;

/// `hash(name) << 32 | header offset` of every file, sorted (so equal
/// names follow archive order); `None` until first asked.
static INDEX: Mutex<Option<Vec<u64>>> = Mutex::new(None);

/// The file `name` in the boot archive, if there is an archive and it
/// holds that file (the first of that name, as a scan would find it).
pub fn find(name: &str) -> Option<&'static [u8]> {
    let archive = Archive::new(exposed::boot_archive()?);
    let Some(mut index) = INDEX.try_lock() else {
        // Held by the code an upcall interrupted: look the slow way.
        return archive.find(name);
    };
    let rows = index.get_or_insert_with(|| build(archive));
    let h = u64::from(hash(name)) << 32;
    let first = rows.partition_point(|&row| row < h);
    rows[first..]
        .iter()
        .take_while(|&&row| row & !u64::from(u32::MAX) == h)
        .filter_map(|&row| archive.entry_at((row & u64::from(u32::MAX)) as usize))
        .find(|e| e.name == name)
        .map(|e| e.data)
}

/// The index of `archive` (files past 4 GiB are left out: none is).
fn build(archive: Archive<'static>) -> Vec<u64> {
    let mut rows = Vec::new();
    let mut it = archive.entries();
    loop {
        let at = it.offset();
        match (it.next(), u32::try_from(at)) {
            (Some(Ok(e)), Ok(at)) => rows.push(u64::from(hash(e.name)) << 32 | u64::from(at)),
            (Some(Ok(_)), Err(_)) => {}
            _ => break,
        }
    }
    rows.sort_unstable();
    rows
}

/// FNV-1a of `name`.
fn hash(name: &str) -> u32 {
    name.bytes().fold(0x811c_9dc5, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}
