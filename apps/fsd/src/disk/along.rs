//! The disk's open along ([`Files::open_along`](crate::files::Files)): the
//! regular files that follow a name in its directory, each found once by
//! the look at the directory's blocks (C-FFS's `following_entries`) and
//! read from where that look found it, instead of an open by path and a
//! read by path, each of which resolved the path again.
//!
//! Each is what an open of its path would open: the entry holds until the
//! file system next changes, and nothing changes it within the request; a
//! name that is not UTF-8 (no path names it exactly) is passed over.

use alloc::string::String;
use oxok_cffs::Kind as DiskKind;

use super::convert::{PATH_HASH_START, meta_with, normal, number_of, path_hash};
use super::{DiskFiles, Node};
use crate::files::Along;

impl DiskFiles {
    /// [`Files::open_along`](crate::files::Files::open_along) on the disk.
    pub(super) fn open_along_disk(&mut self, path: &[u8], look: usize, max: usize, along: &mut dyn Along) -> usize {
        self.settle();
        let Ok(p) = normal(path) else { return 0 };
        let parent = match p.rfind('/') {
            Some(0) => "",
            Some(i) => &p[..i],
            None => return 0,
        };
        if self.fs().is_err() {
            return 0;
        }
        let Some(fs) = self.mounted.as_mut() else { return 0 };
        let Ok(entries) = fs.following_entries(&p, look) else { return 0 };
        // Each file's number hashes its path: the directory's part once.
        let dir_hash = path_hash(path_hash(PATH_HASH_START, parent.as_bytes()), b"/");
        let mut went = 0;
        for e in &entries {
            if went == max {
                break;
            }
            let Some(name_str) = e.name() else { continue };
            let name = name_str.as_bytes();
            if e.kind() != DiskKind::File || !along.carries(name) {
                continue;
            }
            let st = e.stat();
            let Ok(len) = usize::try_from(st.size) else { break };
            if !along.room(name, len) {
                break;
            }
            if fs.read_following(e, 0, len, |at, b| along.bytes(at, b)).ok() != Some(len) {
                break;
            }
            let mut full = String::new();
            if full.try_reserve(parent.len() + 1 + name.len()).is_err() {
                break;
            }
            full.push_str(parent);
            full.push('/');
            full.push_str(name_str);
            let meta = meta_with(&st, || number_of(dir_hash, name));
            let Some(ino) = self.nodes.add(Node { path: full, pins: 1, detached: None }) else { break };
            if !along.opened(ino, &meta, name) {
                self.nodes.remove(ino);
                break;
            }
            went += 1;
        }
        went
    }
}
