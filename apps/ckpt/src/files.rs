//! Open files of the file server across a checkpoint.
//!
//! A handle of the file server is bound to the client's environment id and
//! the server is outside the tree, so handles are not carried; what is
//! carried is what the member's libOS keeps in its own memory, the
//! open-file table (`oxok_libos::fs::ftable`): path, mode, position. The
//! table is in the image with the rest of the memory; this module reads it
//! there and re-binds it.
//!
//! **Saving** ([`collect`]): every live entry of every member becomes a
//! [`FileRec`]. Entries with one share id are one open-file record of the
//! server (a descriptor a child inherited: the spec carried the parent's
//! path, mode and share id); their position, or a directory's cursor, is
//! the one the latest reply among them reported (the entries' TSC stamps).
//! Refused, with the path: an entry whose path is unknown (a descriptor
//! passed without its origin), a directory whose cursor was too long to
//! keep or whose cursor's entry is gone, a file of another server or of a
//! server inside the tree, and a file whose path no longer names the inode
//! it was opened on (removed or replaced since: a re-open would reach
//! another file). To
//! carry a tree to another machine (`send`, `migrate`) the file's bytes at
//! the cut go in the image too. The cut itself waits while any entry has a
//! request in flight ([`busy`]), so the positions are the server's.
//!
//! **Restoring**: [`prepare`] runs before anything is built. A file whose
//! content the image does not carry must exist on this machine (else the
//! restore is refused: "not on this machine"); a carried file is created
//! from the image if its path is free (in an existing directory) and
//! refused if the path holds other bytes — the checkpointer never
//! overwrites a file. Files it created are removed again if the restore
//! fails later. Then [`bind`], for each member's table page: re-open by
//! path with the saved mode (never `CREATE`, `TRUNCATE` or `EXCLUSIVE`)
//! once per share id ([`Groups`]), seek to the saved position (a directory:
//! read entries up to its cursor), hand each member of the group its own
//! handle on that one record (`DUP`: the restored members are the
//! checkpointer's children) and rewrite the entry's owner, server, handle
//! and position in the page before it is filled. A position two processes
//! shared comes back shared. A directory must exist on the restoring
//! machine with its cursor's entry (directories are not carried). The
//! checkpointer re-opens the files with
//! its own authority; the RAM file system has no per-user permissions, so
//! that is no more than the restored process could open itself.

use crate::CkptError;
use crate::image::{FileRec, Image, MAX_CARRIED};
use alloc::collections::BTreeMap;
use alloc::collections::btree_map::Entry;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use oxok_libos::abi::layout::PAGE_SIZE;
use oxok_libos::fd::{File, IoError, SeekFrom};
use oxok_libos::fs::{self, OpenFile, OpenFlags, ftable, proto};
use oxok_libos::sys;

/// True if the member named by `slot` (id `id`) has a file request in
/// flight: its entries' positions may be behind the server's.
pub fn busy(slot: u64, id: u64) -> Result<bool, CkptError> {
    let mut page = vec![0u64; (PAGE_SIZE / 8) as usize];
    for p in 0..ftable::PAGES {
        let va = ftable::FILES_BASE + p as u64 * PAGE_SIZE;
        match sys::env_peek(slot, va, page.as_mut_ptr() as u64) {
            Ok(_) => {}
            Err(oxok_libos::Error::NotFound) => continue,
            Err(e) => return Err(CkptError::Call("env_peek(open files)", e)),
        }
        let bytes = as_bytes(&page);
        if ftable::entries_in(va, &bytes).iter().any(|e| e.owner == id && e.busy != 0) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Fills `img.files` from the members' open-file tables in the image;
/// with `carry`, each file's content too.
pub fn collect(img: &mut Image, carry: bool) -> Result<(), CkptError> {
    let own = fs::locate::server();
    img.server = own.unwrap_or(0);
    let mut files = Vec::new();
    let mut stamps = Vec::new();
    let mut carried = 0usize;
    for (ei, e) in img.envs.iter().enumerate() {
        for m in e.maps.iter().filter(|m| ftable::page_index(m.va).is_some()) {
            let bytes = as_bytes(&img.frames[m.frame as usize].words);
            for s in ftable::entries_in(m.va, &bytes).into_iter().filter(|s| s.owner == e.id) {
                let path = String::from_utf8_lossy(&s.path).into_owned();
                let refuse = |why: &'static str| CkptError::File(why, path.clone());
                if s.path.is_empty() {
                    return Err(refuse("its path is unknown (passed without its origin)").with_slot(s.slot));
                }
                let dir = s.flags & proto::flags::DIRECTORY != 0;
                let cursor = match (&s.cursor, dir) {
                    (_, false) => Vec::new(),
                    (Some(c), true) => c.clone(),
                    (None, true) => return Err(refuse("an open directory whose cursor was too long to keep")),
                };
                if img.index_of(s.server).is_some() {
                    return Err(refuse("its file server is inside the tree"));
                }
                if own != Some(s.server) {
                    return Err(refuse("it belongs to another file server"));
                }
                match fs::stat(&path) {
                    Ok(meta) if meta.ino == s.ino && meta.is_dir() == dir => {}
                    _ => return Err(refuse("removed or replaced since it was opened")),
                }
                let content = if carry && !dir {
                    let c = fs::read_file(&path).map_err(|_| refuse("cannot be read"))?;
                    carried += c.len();
                    if carried > MAX_CARRIED {
                        return Err(refuse("too much file content to carry"));
                    }
                    Some(c)
                } else {
                    None
                };
                files.push(FileRec {
                    env: ei as u64,
                    slot: s.slot as u64,
                    flags: s.flags,
                    pos: s.pos,
                    ino: s.ino,
                    share: s.share,
                    path: s.path,
                    cursor,
                    content,
                });
                stamps.push(s.stamp);
            }
        }
    }
    latest_of_groups(&mut files, &stamps);
    for f in files.iter().filter(|f| !f.cursor.is_empty()) {
        let path = String::from_utf8_lossy(&f.path).into_owned();
        if fs::stat(&entry_path(f)).is_err() {
            return Err(CkptError::File("an open directory whose cursor's entry is gone", path));
        }
    }
    img.files = files;
    Ok(())
}

/// Gives every record of a share group the position and cursor of the one
/// whose reply came last (`stamps[i]` is record `i`'s).
fn latest_of_groups(files: &mut [FileRec], stamps: &[u64]) {
    for i in 0..files.len() {
        let share = files[i].share;
        let latest = (0..files.len()).filter(|&j| files[j].share == share).max_by_key(|&j| stamps[j]).unwrap_or(i);
        let (pos, cursor) = (files[latest].pos, files[latest].cursor.clone());
        files[i].pos = pos;
        files[i].cursor = cursor;
    }
}

/// The path of the entry a directory record's cursor names.
fn entry_path(f: &FileRec) -> String {
    let dir = String::from_utf8_lossy(&f.path);
    let name = String::from_utf8_lossy(&f.cursor);
    if dir.ends_with('/') { alloc::format!("{dir}{name}") } else { alloc::format!("{dir}/{name}") }
}

trait WithSlot {
    fn with_slot(self, slot: usize) -> Self;
}

impl WithSlot for CkptError {
    /// A path-less entry is named by its table slot.
    fn with_slot(self, slot: usize) -> CkptError {
        match self {
            CkptError::File(why, p) if p.is_empty() => CkptError::File(why, alloc::format!("(entry {slot})")),
            other => other,
        }
    }
}

/// Files [`prepare`] created, removed again by [`Created::undo`].
#[derive(Debug, Default)]
pub struct Created(Vec<String>);

impl Created {
    /// Removes the files this restore created.
    pub fn undo(self) {
        for p in self.0.iter().rev() {
            let _ = fs::unlink(p);
        }
    }
}

/// Makes sure every file of `img` can be re-opened here (see the module
/// documentation); nothing else is built yet.
pub fn prepare(img: &Image) -> Result<Created, CkptError> {
    let mut created = Created::default();
    if img.files.is_empty() {
        return Ok(created);
    }
    if fs::locate::server().is_none() {
        let path = String::from_utf8_lossy(&img.files[0].path).into_owned();
        return Err(CkptError::File("no file server on this machine", path));
    }
    for f in &img.files {
        let path = String::from_utf8_lossy(&f.path).into_owned();
        let r = if f.flags & proto::flags::DIRECTORY != 0 {
            prepare_dir(&path, f)
        } else {
            prepare_one(&path, f.content.as_deref(), &mut created)
        };
        if let Err(e) = r {
            created.undo();
            return Err(CkptError::File(e, path));
        }
    }
    Ok(created)
}

/// A directory is not carried: it must be here, with its cursor's entry.
fn prepare_dir(path: &str, f: &FileRec) -> Result<(), &'static str> {
    match fs::stat(path) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Err("not a directory on this machine"),
        Err(_) => return Err("a directory not on this machine"),
    }
    if !f.cursor.is_empty() && fs::stat(&entry_path(f)).is_err() {
        return Err("its cursor's entry is not on this machine");
    }
    Ok(())
}

fn prepare_one(path: &str, content: Option<&[u8]>, created: &mut Created) -> Result<(), &'static str> {
    match (fs::stat(path), content) {
        (Ok(meta), _) if meta.is_dir() => Err("a directory on this machine"),
        (Ok(_), None) => Ok(()),
        (Ok(_), Some(c)) => match fs::read_file(path) {
            Ok(here) if here == c => Ok(()),
            _ => Err("exists on this machine with other content"),
        },
        (Err(IoError::NotFound), Some(c)) => {
            fs::write_file(path, c).map_err(|e| match e {
                IoError::NotFound | IoError::NotDir => "its directory is not on this machine",
                _ => "cannot be created on this machine",
            })?;
            created.0.push(path.to_string());
            Ok(())
        }
        (Err(IoError::NotFound), None) => Err("not on this machine (the image does not carry its content)"),
        (Err(_), _) => Err("cannot be looked up on this machine"),
    }
}

/// The records [`bind`] opened, one per share id, held until every member
/// has its handle on them (dropping closes the checkpointer's handles).
#[derive(Debug, Default)]
pub struct Groups(BTreeMap<u64, OpenFile>);

/// Re-binds the entries of member `env`'s table page mapped at `va`
/// (`page`, the frame's bytes about to be filled) to handles of this
/// machine's file server for the new member `new_id`, one record per share
/// id (`groups`); returns how many files it bound. Entries of the member
/// the image has no record for are marked dead.
pub fn bind(
    img: &Image,
    groups: &mut Groups,
    env: usize,
    va: u64,
    page: &mut [u8],
    new_id: u64,
) -> Result<usize, CkptError> {
    let old = img.envs[env].id;
    let mut bound = 0;
    for s in ftable::entries_in(va, page).into_iter().filter(|s| s.owner == old) {
        let Some(f) = img.files.iter().find(|f| f.env == env as u64 && f.slot == s.slot as u64) else {
            ftable::kill_entry(va, page, s.slot);
            continue;
        };
        let path = String::from_utf8_lossy(&f.path).into_owned();
        let file = match groups.0.entry(f.share) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => v.insert(reopen(f, &path)?),
        };
        let handle = file.dup_for(new_id).map_err(|e| CkptError::File(dup_why(e), path.clone()))?;
        let to = ftable::Rebind { owner: new_id, server: file.server(), handle, pos: f.pos };
        if !ftable::rebind_entry(va, page, s.slot, to) {
            return Err(CkptError::File("its entry is not in its page", path));
        }
        bound += 1;
    }
    Ok(bound)
}

/// Opens the record of `f` afresh: by path with its mode, at its position
/// (a directory: its entries read up to its cursor).
fn reopen(f: &FileRec, path: &str) -> Result<OpenFile, CkptError> {
    let file = fs::open_file(path, flags_of(f.flags))
        .map_err(|_| CkptError::File("cannot be re-opened on this machine", path.to_string()))?;
    if f.flags & proto::flags::DIRECTORY == 0 {
        file.seek(SeekFrom::Start(f.pos))
            .map_err(|_| CkptError::File("cannot seek to its position", path.to_string()))?;
        return Ok(file);
    }
    if !f.cursor.is_empty() {
        // Entries come in name order; the cursor's entry exists (`prepare`).
        loop {
            match file.next_entry() {
                Ok(Some(e)) if e.name.as_bytes() >= f.cursor.as_slice() => break,
                Ok(Some(_)) => {}
                _ => return Err(CkptError::File("cannot move to its directory cursor", path.to_string())),
            }
        }
    }
    Ok(file)
}

fn dup_why(e: IoError) -> &'static str {
    match e {
        IoError::NoSpace => "the file server's table is full",
        _ => "cannot be handed to the restored process",
    }
}

/// Open flags from their wire bits (those an entry keeps); none of read,
/// write and append opens for reading, as the server does.
fn flags_of(bits: u64) -> OpenFlags {
    let mut f: Option<OpenFlags> = None;
    for (bit, flag) in [
        (proto::flags::READ, OpenFlags::READ),
        (proto::flags::WRITE, OpenFlags::WRITE),
        (proto::flags::APPEND, OpenFlags::APPEND),
        (proto::flags::DIRECTORY, OpenFlags::DIRECTORY),
    ] {
        if bits & bit != 0 {
            f = Some(f.map_or(flag, |g| g | flag));
        }
    }
    match f {
        Some(f) if bits & (proto::flags::READ | proto::flags::WRITE | proto::flags::APPEND) != 0 => f,
        Some(f) => f | OpenFlags::READ,
        None => OpenFlags::READ,
    }
}

fn as_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Checks every file record was bound (`bound`: the sum of [`bind`]'s).
pub fn all_bound(img: &Image, bound: usize) -> Result<(), CkptError> {
    if bound == img.files.len() {
        return Ok(());
    }
    Err(CkptError::Image(crate::image::ImageError::Invalid("a file record names no open file")))
}
