//! The checkpoint image: a versioned, checksummed byte format, checked in
//! full before a restore builds anything.
//!
//! All words are little-endian `u64`. Layout:
//!
//! ```text
//! header   magic "OXCKPT\0\x01", version, total length, checksum (FNV-1a 64
//!          of every byte after these four words), env count, frame count,
//!          file count, the saving checkpointer's id, its file server's id
//!          (0: none), its boot stamp, its clock's ticks at the cut and
//!          tick rate (sleeps keep the time they had left)
//! env      old id, parent index (NO_PARENT for the root), name (4 words),
//!          cap count, map count, EnvState (STATE_WORDS words),
//!          caps: [slot, kind, number, rights] each,
//!          maps: [va, flags, frame index] each
//! frame    old frame number, owner index, 512 words of contents
//! file     env index, open-file table entry, open flags, position, inode
//!          number, share id (records with one id are one shared open-file
//!          record), path length, cursor length (an open directory's last
//!          name handed out; 0 for a file), content length (NO_CONTENT: not
//!          carried; always for a directory), the path's bytes, the
//!          cursor's, the content's (each padded to a word)
//! ```
//!
//! Physical names (environment ids, frame numbers) are recorded only to be
//! re-bound: ids become indices into the env list, frame numbers indices
//! into the frame list. Env 0 is the root; every other env's parent comes
//! before it. Ids of environments outside the tree are re-bound by role
//! (the saving checkpointer, its file server) or, on the machine and boot
//! that saved them (the boot stamp), to the same environment; files by
//! path (`crate::files`).

use alloc::vec::Vec;
use core::fmt;
use oxok_libos::abi::layout::{APP_AREA, PAGE_SIZE, pte};
use oxok_libos::abi::{CAP_SLOTS, ENV_STATE_VERSION, EnvState};
use oxok_libos::fs::ftable;

/// The first word of every image.
pub const MAGIC: u64 = u64::from_le_bytes(*b"OXCKPT\0\x01");
/// The format this code writes and reads.
pub const VERSION: u64 = 3;
/// Words in an exported `EnvState`.
pub const STATE_WORDS: usize = size_of::<EnvState>() / 8;
/// Parent index of the root.
pub const NO_PARENT: u64 = u64::MAX;
/// Environments in one image at most.
pub const MAX_ENVS: usize = 16;
/// Frames in one image at most (64 MiB).
pub const MAX_FRAMES: usize = 16384;
/// Mappings per environment at most.
pub const MAX_MAPS: usize = 65536;
/// Open files in one image at most.
pub const MAX_FILES: usize = 256;
/// Content bytes carried in one image at most (all files).
pub const MAX_CARRIED: usize = 8 << 20;
/// Content length of a file whose content is not carried.
pub const NO_CONTENT: u64 = u64::MAX;
const HEADER_WORDS: usize = 12;
const PAGE_WORDS: usize = (PAGE_SIZE / 8) as usize;
/// Page-table flags an image may ask for.
const FLAGS_OK: u64 =
    pte::PRESENT | pte::USER | pte::WRITABLE | pte::ACCESSED | pte::DIRTY | pte::NO_EXECUTE | pte::LIBOS_BITS;

/// Why an image was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageError {
    /// Shorter than its header or its declared length.
    Truncated,
    /// Not a checkpoint image.
    BadMagic,
    /// A format this code does not read.
    BadVersion(u64),
    /// The length word disagrees with the bytes.
    BadLength,
    /// The contents do not match the checksum.
    BadChecksum,
    /// Well-formed bytes describing something impossible.
    Invalid(&'static str),
}

impl fmt::Display for ImageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImageError::Truncated => write!(f, "truncated"),
            ImageError::BadMagic => write!(f, "not a checkpoint image (magic)"),
            ImageError::BadVersion(v) => write!(f, "version {v}, this ckpt reads {VERSION}"),
            ImageError::BadLength => write!(f, "length word does not match"),
            ImageError::BadChecksum => write!(f, "checksum mismatch"),
            ImageError::Invalid(why) => write!(f, "invalid: {why}"),
        }
    }
}

/// One capability of an environment, as `cap_peek` describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapRec {
    pub slot: u64,
    pub kind: u64,
    pub number: u64,
    pub rights: u64,
}

/// One mapping: page address, flags, index into [`Image::frames`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapRec {
    pub va: u64,
    pub flags: u64,
    pub frame: u64,
}

/// One environment of the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvRec {
    /// Its id when saved (re-bound on restore).
    pub id: u64,
    /// Index of its parent in the image, or [`NO_PARENT`].
    pub parent: u64,
    /// Its name (at most 32 bytes).
    pub name: [u8; 32],
    /// Its exported state, as words.
    pub state: Vec<u64>,
    pub caps: Vec<CapRec>,
    pub maps: Vec<MapRec>,
}

/// One frame: its number when saved, the env that owned it, its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameRec {
    pub pfn: u64,
    pub owner: u64,
    pub words: Vec<u64>,
}

/// One open file of a member: the entry of its libOS's open-file table
/// (`oxok_libos::fs::ftable`) to re-bind, what to re-open and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileRec {
    /// Index of the member.
    pub env: u64,
    /// Its entry in the member's open-file table.
    pub slot: u64,
    /// Open flags (`ftable::KEEP_FLAGS` at most).
    pub flags: u64,
    /// The position at the cut (of the record, for a shared one).
    pub pos: u64,
    /// The inode number when saved (informative: another machine's differ).
    pub ino: u64,
    /// Records with the same share id are one open-file record of the
    /// server, shared (a descriptor a child inherited); restored as one.
    pub share: u64,
    /// The absolute path.
    pub path: Vec<u8>,
    /// An open directory's cursor: the last name handed out (empty: at
    /// the start); always empty for a file.
    pub cursor: Vec<u8>,
    /// The file's bytes at the cut, when carried to another machine.
    pub content: Option<Vec<u8>>,
}

/// A whole checkpoint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Image {
    pub envs: Vec<EnvRec>,
    pub frames: Vec<FrameRec>,
    pub files: Vec<FileRec>,
    /// The checkpointer that saved it (the root's parent).
    pub saver: u64,
    /// The saver's file server, 0 if it had none.
    pub server: u64,
    /// The saver's boot ([`boot_stamp`]).
    pub boot: u64,
    /// The saver's clock ticks at the cut, and their rate.
    pub ticks: u64,
    pub tick_hz: u64,
}

/// A value that tells one boot of one machine from another: the TSC and
/// the wall clock at boot.
pub fn boot_stamp() -> u64 {
    oxok_libos::exposed::clock().map_or(0, |c| c.boot_tsc.rotate_left(32) ^ c.boot_unix ^ c.tsc_hz)
}

/// `bytes` as words, the last padded with zeros.
fn padded(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes.chunks(8).map(|c| {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        u64::from_le_bytes(w)
    })
}

/// FNV-1a, 64 bits.
pub fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

impl Image {
    /// The image as bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w: Vec<u64> = Vec::new();
        w.extend_from_slice(&[
            MAGIC,
            VERSION,
            0,
            0,
            self.envs.len() as u64,
            self.frames.len() as u64,
            self.files.len() as u64,
            self.saver,
            self.server,
            self.boot,
            self.ticks,
            self.tick_hz,
        ]);
        for e in &self.envs {
            w.push(e.id);
            w.push(e.parent);
            for chunk in e.name.chunks(8) {
                w.push(u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])));
            }
            w.push(e.caps.len() as u64);
            w.push(e.maps.len() as u64);
            w.extend_from_slice(&e.state);
            for c in &e.caps {
                w.extend_from_slice(&[c.slot, c.kind, c.number, c.rights]);
            }
            for m in &e.maps {
                w.extend_from_slice(&[m.va, m.flags, m.frame]);
            }
        }
        for f in &self.frames {
            w.push(f.pfn);
            w.push(f.owner);
            w.extend_from_slice(&f.words);
        }
        for f in &self.files {
            let clen = f.content.as_ref().map_or(NO_CONTENT, |c| c.len() as u64);
            w.extend_from_slice(&[f.env, f.slot, f.flags, f.pos, f.ino, f.share, f.path.len() as u64]);
            w.extend_from_slice(&[f.cursor.len() as u64, clen]);
            w.extend(padded(&f.path));
            w.extend(padded(&f.cursor));
            if let Some(c) = &f.content {
                w.extend(padded(c));
            }
        }
        let mut bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
        let len = bytes.len() as u64;
        bytes[16..24].copy_from_slice(&len.to_le_bytes());
        let sum = checksum(&bytes[32..]);
        bytes[24..32].copy_from_slice(&sum.to_le_bytes());
        bytes
    }

    /// Reads and checks an image: header, checksum, then every record.
    pub fn decode(bytes: &[u8]) -> Result<Image, ImageError> {
        if bytes.len() < HEADER_WORDS * 8 {
            return Err(ImageError::Truncated);
        }
        let mut r = Reader { bytes, at: 0 };
        if r.word()? != MAGIC {
            return Err(ImageError::BadMagic);
        }
        let version = r.word()?;
        if version != VERSION {
            return Err(ImageError::BadVersion(version));
        }
        let len = r.word()?;
        let sum = r.word()?;
        if len > bytes.len() as u64 {
            return Err(ImageError::Truncated);
        }
        if len != bytes.len() as u64 || len % 8 != 0 {
            return Err(ImageError::BadLength);
        }
        if checksum(&bytes[32..]) != sum {
            return Err(ImageError::BadChecksum);
        }
        let envs = usize::try_from(r.word()?).map_err(|_| ImageError::Invalid("env count"))?;
        let frames = usize::try_from(r.word()?).map_err(|_| ImageError::Invalid("frame count"))?;
        if envs == 0 || envs > MAX_ENVS {
            return Err(ImageError::Invalid("env count"));
        }
        if frames > MAX_FRAMES {
            return Err(ImageError::Invalid("frame count"));
        }
        let files =
            usize::try_from(r.word()?).ok().filter(|&n| n <= MAX_FILES).ok_or(ImageError::Invalid("file count"))?;
        let mut img = Image {
            saver: r.word()?,
            server: r.word()?,
            boot: r.word()?,
            ticks: r.word()?,
            tick_hz: r.word()?,
            ..Image::default()
        };
        for i in 0..envs {
            img.envs.push(read_env(&mut r, i, frames)?);
        }
        for _ in 0..frames {
            let pfn = r.word()?;
            let owner = r.word()?;
            if owner >= envs as u64 {
                return Err(ImageError::Invalid("frame owner"));
            }
            let words = r.words(PAGE_WORDS)?;
            img.frames.push(FrameRec { pfn, owner, words });
        }
        let mut carried = 0usize;
        for _ in 0..files {
            let f = read_file(&mut r, envs, &mut carried)?;
            let ordered = img.files.last().is_none_or(|p| (p.env, p.slot) < (f.env, f.slot));
            if !ordered {
                return Err(ImageError::Invalid("file records out of order"));
            }
            img.files.push(f);
        }
        if r.at != bytes.len() {
            return Err(ImageError::BadLength);
        }
        img.check_refs()?;
        Ok(img)
    }

    /// Cross-record checks: ids unique, every frame mapped somewhere.
    fn check_refs(&self) -> Result<(), ImageError> {
        for (i, e) in self.envs.iter().enumerate() {
            if e.id == 0 || self.envs[..i].iter().any(|o| o.id == e.id) {
                return Err(ImageError::Invalid("environment ids"));
            }
        }
        let mut mapped = alloc::vec![false; self.frames.len()];
        for m in self.envs.iter().flat_map(|e| e.maps.iter()) {
            mapped[m.frame as usize] = true;
        }
        if mapped.iter().any(|m| !m) {
            return Err(ImageError::Invalid("a frame nobody maps"));
        }
        // A file's entry lies in a table page its member maps.
        for f in &self.files {
            let va = ftable::FILES_BASE + (f.slot as usize / ftable::PER_PAGE) as u64 * PAGE_SIZE;
            if !self.envs[f.env as usize].maps.iter().any(|m| m.va == va) {
                return Err(ImageError::Invalid("a file entry in a page its process does not map"));
            }
        }
        Ok(())
    }

    /// Index of the environment whose old id is `id`.
    pub fn index_of(&self, id: u64) -> Option<usize> {
        self.envs.iter().position(|e| e.id == id)
    }

    /// The first address frame `index` is mapped at, and by whom.
    pub fn first_mapping(&self, index: usize) -> Option<(usize, u64)> {
        self.envs
            .iter()
            .enumerate()
            .find_map(|(i, e)| e.maps.iter().find(|m| m.frame == index as u64).map(|m| (i, m.va)))
    }
}

fn read_env(r: &mut Reader<'_>, index: usize, frames: usize) -> Result<EnvRec, ImageError> {
    let id = r.word()?;
    let parent = r.word()?;
    let valid_parent = if index == 0 { parent == NO_PARENT } else { parent < index as u64 };
    if !valid_parent {
        return Err(ImageError::Invalid("parent index"));
    }
    let mut name = [0u8; 32];
    for chunk in name.chunks_mut(8) {
        chunk.copy_from_slice(&r.word()?.to_le_bytes());
    }
    let ncaps = r.word()?;
    let nmaps = r.word()?;
    if ncaps >= CAP_SLOTS as u64 {
        return Err(ImageError::Invalid("capability count"));
    }
    if nmaps > MAX_MAPS as u64 {
        return Err(ImageError::Invalid("mapping count"));
    }
    let state = r.words(STATE_WORDS)?;
    if state[0] != ENV_STATE_VERSION {
        return Err(ImageError::Invalid("state version"));
    }
    let mut caps = Vec::new();
    for _ in 0..ncaps {
        let c = CapRec { slot: r.word()?, kind: r.word()?, number: r.word()?, rights: r.word()? };
        let ordered = caps.last().is_none_or(|p: &CapRec| p.slot < c.slot);
        if c.slot == 0 || c.slot >= CAP_SLOTS as u64 || !ordered || c.rights > 0xff {
            return Err(ImageError::Invalid("capability record"));
        }
        caps.push(c);
    }
    let mut maps = Vec::new();
    for _ in 0..nmaps {
        let m = MapRec { va: r.word()?, flags: r.word()?, frame: r.word()? };
        let ordered = maps.last().is_none_or(|p: &MapRec| p.va < m.va);
        if !m.va.is_multiple_of(PAGE_SIZE) || m.va >= APP_AREA || !ordered {
            return Err(ImageError::Invalid("mapping address"));
        }
        if m.flags & !FLAGS_OK != 0 || m.frame >= frames as u64 {
            return Err(ImageError::Invalid("mapping record"));
        }
        maps.push(m);
    }
    Ok(EnvRec { id, parent, name, state, caps, maps })
}

fn read_file(r: &mut Reader<'_>, envs: usize, carried: &mut usize) -> Result<FileRec, ImageError> {
    let [env, slot, flags, pos, ino, share, plen, cursor_len, clen] =
        [r.word()?, r.word()?, r.word()?, r.word()?, r.word()?, r.word()?, r.word()?, r.word()?, r.word()?];
    if env >= envs as u64 || slot >= ftable::ENTRIES as u64 || flags & !ftable::KEEP_FLAGS != 0 || share == 0 {
        return Err(ImageError::Invalid("file record"));
    }
    if plen == 0 || plen > ftable::PATH_ROOM as u64 {
        return Err(ImageError::Invalid("file path length"));
    }
    let dir = flags & oxok_libos::fs::proto::flags::DIRECTORY != 0;
    let room = (ftable::PATH_ROOM - (plen as usize).next_multiple_of(8)) as u64;
    if cursor_len > room || (!dir && cursor_len != 0) || (dir && clen != NO_CONTENT) {
        return Err(ImageError::Invalid("directory cursor"));
    }
    let path = r.bytes(plen as usize)?;
    if path[0] != b'/' || path.contains(&0) {
        return Err(ImageError::Invalid("file path"));
    }
    let cursor = r.bytes(cursor_len as usize)?;
    if cursor.contains(&0) || cursor.contains(&b'/') {
        return Err(ImageError::Invalid("directory cursor"));
    }
    let content = if clen == NO_CONTENT {
        None
    } else {
        let n = usize::try_from(clen).ok().filter(|&n| n <= MAX_CARRIED - *carried);
        let n = n.ok_or(ImageError::Invalid("carried file content"))?;
        *carried += n;
        Some(r.bytes(n)?)
    };
    Ok(FileRec { env, slot, flags, pos, ino, share, path, cursor, content })
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn word(&mut self) -> Result<u64, ImageError> {
        let b = self.bytes.get(self.at..self.at + 8).ok_or(ImageError::Truncated)?;
        self.at += 8;
        Ok(u64::from_le_bytes(b.try_into().map_err(|_| ImageError::Truncated)?))
    }

    fn words(&mut self, n: usize) -> Result<Vec<u64>, ImageError> {
        let end = n.checked_mul(8).and_then(|b| b.checked_add(self.at)).ok_or(ImageError::Truncated)?;
        let b = self.bytes.get(self.at..end).ok_or(ImageError::Truncated)?;
        self.at = end;
        Ok(b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect())
    }

    /// `n` bytes padded to a whole word.
    fn bytes(&mut self, n: usize) -> Result<Vec<u8>, ImageError> {
        let words = n.div_ceil(8);
        let end = words.checked_mul(8).and_then(|b| b.checked_add(self.at)).ok_or(ImageError::Truncated)?;
        let b = self.bytes.get(self.at..end).ok_or(ImageError::Truncated)?;
        self.at = end;
        Ok(b[..n].to_vec())
    }
}
