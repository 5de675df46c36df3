//! A full consistency check of the file system's invariants, for tests and
//! for paranoid callers. Linear in the size of the tree.

use alloc::collections::BTreeMap;

use crate::fs::Fs;
use crate::inode::{Body, Ino, Kind, MODE_MASK, SYMLINK_MODE};
use crate::path::{NAME_MAX, PATH_MAX};

fn valid_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name.len() <= NAME_MAX
        && !name.contains(&b'/')
        && !name.contains(&0)
        && name != b"."
        && name != b".."
}

impl Fs {
    /// Checks every invariant: entries name live inodes of the right kind;
    /// link counts match entries (`2 + subdirectories` for directories);
    /// symbolic-link targets are 1..`PATH_MAX` bytes without NUL; modes fit
    /// in `0o7777` (symbolic links: `0o777`);
    /// directory parent links and names match their entries and lead to the
    /// root without cycles; unlinked inodes are pinned; removed directories
    /// are empty; page accounting adds up and file pages hold nothing past
    /// the end. Returns the first violation found.
    pub fn fsck(&self) -> Result<(), &'static str> {
        let root = self.arena.get(Ino::ROOT).map_err(|_| "root missing")?;
        if root.dir().map_err(|_| "root is not a directory")?.parent != Some(Ino::ROOT) {
            return Err("root's parent is not the root");
        }
        let mut links: BTreeMap<Ino, u64> = BTreeMap::new();
        let (mut live, mut pages) = (0usize, 0u64);
        for (ino, inode) in self.arena.iter() {
            live += 1;
            if inode.nlink == 0 && inode.pins == 0 {
                return Err("unreferenced inode not freed");
            }
            if inode.mode & !MODE_MASK != 0 {
                return Err("mode beyond 0o7777");
            }
            match &inode.body {
                Body::Symlink(target) => {
                    if target.is_empty() || target.len() >= PATH_MAX || target.contains(&0) {
                        return Err("invalid symbolic-link target");
                    }
                    if inode.mode != SYMLINK_MODE {
                        return Err("symbolic link with a mode other than 0o777");
                    }
                }
                Body::File(f) => {
                    f.check()?;
                    pages += f.pages();
                }
                Body::Dir(d) => {
                    let mut subdirs = 0u64;
                    for (name, entry) in d.after(None) {
                        if !valid_name(name) {
                            return Err("invalid name in a directory");
                        }
                        let child = self.arena.get(entry.ino).map_err(|_| "entry names a dead inode")?;
                        if child.kind() != entry.kind {
                            return Err("entry kind does not match its inode");
                        }
                        if let Body::Dir(c) = &child.body {
                            subdirs += 1;
                            if c.parent != Some(ino) || &*c.name != name {
                                return Err("subdirectory's parent link or name does not match its entry");
                            }
                        }
                        *links.entry(entry.ino).or_default() += 1;
                    }
                    match d.parent {
                        None => {
                            if !d.is_empty() || inode.nlink != 0 || !d.name.is_empty() {
                                return Err("removed directory not empty, linked or named");
                            }
                        }
                        Some(_) if inode.nlink != 2 + subdirs => return Err("directory link count wrong"),
                        Some(_) => self.check_reaches_root(ino)?,
                    }
                }
            }
        }
        for (ino, inode) in self.arena.iter() {
            let entries = links.get(&ino).copied().unwrap_or(0);
            match inode.kind() {
                Kind::File | Kind::Symlink if inode.nlink != entries => {
                    return Err("file or symbolic link count wrong");
                }
                Kind::Dir if ino != Ino::ROOT && entries != u64::from(inode.nlink != 0) => {
                    return Err("directory has the wrong number of entries naming it");
                }
                Kind::Dir if ino == Ino::ROOT && entries != 0 => return Err("an entry names the root"),
                _ => {}
            }
        }
        if live != self.arena.live() {
            return Err("live inode count wrong");
        }
        if self.arena.free_len() + live > self.arena.capacity() {
            return Err("free list too long");
        }
        if pages != self.used_pages {
            return Err("page accounting wrong");
        }
        Ok(())
    }

    /// Follows parent links from a linked directory to the root.
    fn check_reaches_root(&self, ino: Ino) -> Result<(), &'static str> {
        let mut at = ino;
        for _ in 0..=self.arena.capacity() {
            if at == Ino::ROOT {
                return Ok(());
            }
            let dir = self.arena.get(at).ok().and_then(|i| i.dir().ok()).ok_or("parent link to a non-directory")?;
            if dir.name.is_empty() && at != Ino::ROOT {
                return Err("linked directory without a name");
            }
            at = dir.parent.ok_or("parent link to a removed directory")?;
        }
        Err("cycle in parent links")
    }
}
