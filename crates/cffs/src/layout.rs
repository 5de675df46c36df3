//! The on-disk format. Every metadata block starts with a 64-byte header:
//! magic (4 bytes), 4 reserved, the owning principal (u64 at 8, read by the
//! `acl` UDF), and type-specific words.
//!
//! * **Superblock** (template [`T_SUPER`], the XN root, block 0): disk size
//!   (u64 at 16) and [`ITABS`] inode-table block numbers (u32 from 64; 0 =
//!   none). It owns the inode-table blocks.
//! * **Inode table** (template [`T_ITAB`]) and **directory block**
//!   (template [`T_DIR`]) share one record layout: [`RECORDS`] records of
//!   [`RECORD`] bytes from byte 64. A record is kind (u8 at 0), name length
//!   (u8 at 1), link count (u16 at 2), inode number (u32 at 4), size (u64 at
//!   8), name (16..58), permission bits (u16 at 58: an inode's `chmod`
//!   bits, 0 in a name-only record), modification time (u32 at 60, Unix
//!   seconds), and
//!   [`EXTENTS`] extents (64..128: start u32, length u16, type u16). A
//!   block owns every extent of every record.
//!
//! C-FFS's embedded inodes: a file with one name is a [`K_FILE`] record in
//! the directory block that names it, so its data blocks belong to that
//! directory block. Directories and files with several names live out of
//! line in the inode table ([`K_XDIR`], [`K_XFILE`]) and are named by
//! [`K_LINK`] records carrying the inode number (table index ×
//! [`RECORDS`] + record). A directory's extents are its directory blocks.
//! A symbolic link is embedded as a small file is ([`K_SYMLINK`]): its
//! data is its target.

use oxok_abi::xn::BLOCK_SIZE;

/// One disk block.
pub type Block = [u8; BLOCK_SIZE];
/// Bytes per block.
pub const BSIZE: u64 = BLOCK_SIZE as u64;

/// Template numbers (XN extent types); 0 is data.
pub const T_SUPER: u32 = 1;
/// Inode table.
pub const T_ITAB: u32 = 2;
/// Directory block.
pub const T_DIR: u32 = 3;

/// Magic words. `CFS3`: records carry permission bits (their name two
/// bytes shorter than in `CFS2`, which [`MAGIC_SUPER_V2`] names; `CFS2`'s
/// carried a modification time, four bytes shorter than in `CFS1`).
pub const MAGIC_SUPER: [u8; 4] = *b"CFS3";
/// The superblock magic of the second format, whose records had no
/// permission bits: refused with its own reason, not mounted.
pub const MAGIC_SUPER_V2: [u8; 4] = *b"CFS2";
/// The superblock magic of the first format, whose records had no time:
/// such a disk is refused with its own reason, not mounted.
pub const MAGIC_SUPER_V1: [u8; 4] = *b"CFS1";
/// Inode table magic.
pub const MAGIC_ITAB: [u8; 4] = *b"CFIT";
/// Directory block magic.
pub const MAGIC_DIR: [u8; 4] = *b"CFDR";

/// The superblock's block number (the XN root).
pub const SUPER_BLOCK: u64 = 0;
/// Inode-table slots in the superblock.
pub const ITABS: usize = 64;
/// Byte where records (and the superblock's table list) start.
pub const HEADER: usize = 64;
/// Bytes per record.
pub const RECORD: usize = 128;
/// Records per table or directory block.
pub const RECORDS: usize = (BLOCK_SIZE - HEADER) / RECORD;
/// Extents per record.
pub const EXTENTS: usize = 8;
/// Byte of the first extent within a record.
pub const EXT_AT: usize = 64;
/// Longest name.
pub const NAME_MAX: usize = 42;
/// Byte of the permission bits within a record (after the name).
pub const MODE_AT: usize = 16 + NAME_MAX;
/// Byte of the modification time within a record (after the bits).
pub const MTIME_AT: usize = MODE_AT + 2;
const _: () = assert!(MTIME_AT + 4 == EXT_AT, "the bits and the time lie between the name and the extents");
/// A new file's permission bits when its maker gives none.
pub const FILE_MODE: u16 = 0o644;
/// A new directory's, when its maker gives none.
pub const DIR_MODE: u16 = 0o755;
/// A symbolic link's (`lstat` shows them; nothing checks them).
pub const SYMLINK_MODE: u16 = 0o777;
/// The bits a record keeps.
pub const MODE_BITS: u16 = 0o7777;
/// Largest extent.
pub const EXT_MAX: u64 = u16::MAX as u64;
/// The root directory's inode number.
pub const ROOT_INO: u32 = 0;

/// Record kinds.
pub const K_FREE: u8 = 0;
/// A file whose inode is embedded in its directory entry.
pub const K_FILE: u8 = 1;
/// A name for an out-of-line inode.
pub const K_LINK: u8 = 2;
/// An out-of-line file (several names).
pub const K_XFILE: u8 = 3;
/// An out-of-line directory.
pub const K_XDIR: u8 = 4;
/// A symbolic link, embedded in the directory block that names it as a
/// small file is: its target is its data (`size` bytes, one block at
/// most, [`SYMLINK_MAX`]).
pub const K_SYMLINK: u8 = 5;
/// The longest target of a symbolic link (Linux's `PATH_MAX` less its
/// NUL).
pub const SYMLINK_MAX: usize = 4095;

/// Whether a record of `kind` is a name in a directory (what a lookup
/// finds): an embedded file, a link to an out-of-line inode or a
/// symbolic link.
pub fn is_name(kind: u8) -> bool {
    kind == K_FILE || kind == K_LINK || kind == K_SYMLINK
}

/// One extent of a record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ext {
    /// First block.
    pub start: u32,
    /// Blocks (0: unused slot).
    pub len: u16,
    /// XN type: 0 (data) or [`T_DIR`].
    pub ty: u16,
}

/// One record, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// `K_*`.
    pub kind: u8,
    /// Link count (out-of-line inodes).
    pub nlink: u16,
    /// Inode number (`K_LINK`).
    pub ino: u32,
    /// Bytes.
    pub size: u64,
    /// Name bytes (`name_len` used).
    pub name: [u8; NAME_MAX],
    /// Name length.
    pub name_len: u8,
    /// Last change of the contents (an out-of-line directory: when it was
    /// made), Unix seconds.
    pub mtime: u32,
    /// Permission bits of an inode's record ([`MODE_BITS`]).
    pub mode: u16,
    /// Extents.
    pub ext: [Ext; EXTENTS],
}

impl Default for Record {
    fn default() -> Record {
        Record {
            kind: K_FREE,
            nlink: 0,
            ino: 0,
            size: 0,
            name: [0; NAME_MAX],
            name_len: 0,
            mtime: 0,
            mode: 0,
            ext: [Ext::default(); EXTENTS],
        }
    }
}

impl Record {
    /// The name.
    pub fn name(&self) -> &[u8] {
        self.name.get(..usize::from(self.name_len)).unwrap_or(&[])
    }

    /// Sets the name (caller checked the length).
    pub fn set_name(&mut self, name: &[u8]) {
        self.name = [0; NAME_MAX];
        let n = name.len().min(NAME_MAX);
        self.name[..n].copy_from_slice(&name[..n]);
        self.name_len = n as u8;
    }

    /// Blocks its extents cover.
    pub fn blocks(&self) -> u64 {
        self.ext.iter().map(|e| u64::from(e.len)).sum()
    }

    /// The `i`-th block of the file, if allocated.
    pub fn block_at(&self, mut i: u64) -> Option<u64> {
        for e in &self.ext {
            let len = u64::from(e.len);
            if i < len {
                return Some(u64::from(e.start) + i);
            }
            i -= len;
        }
        None
    }

    /// Whether the record names or holds a directory.
    pub fn is_dir(&self) -> bool {
        self.kind == K_XDIR
    }
}

fn u32_at(b: &Block, at: usize) -> u32 {
    b.get(at..at + 4).and_then(|s| s.try_into().ok()).map_or(0, u32::from_le_bytes)
}
/// The little-endian u64 at byte `at`.
pub fn u64_at(b: &Block, at: usize) -> u64 {
    b.get(at..at + 8).and_then(|s| s.try_into().ok()).map_or(0, u64::from_le_bytes)
}
fn put(b: &mut Block, at: usize, x: &[u8]) {
    if let Some(d) = b.get_mut(at..at + x.len()) {
        d.copy_from_slice(x);
    }
}

/// A fresh metadata block: `magic`, `owner`, everything else 0.
pub fn header(magic: [u8; 4], owner: u64) -> Block {
    let mut b = [0; BLOCK_SIZE];
    put(&mut b, 0, &magic);
    put(&mut b, 8, &owner.to_le_bytes());
    b
}

/// The magic of a block.
pub fn magic(b: &Block) -> [u8; 4] {
    [b[0], b[1], b[2], b[3]]
}

/// Whether `sb` is a superblock of this format; why not if it is not.
pub fn superblock_format(sb: &Block) -> Result<(), &'static str> {
    match magic(sb) {
        MAGIC_SUPER => Ok(()),
        MAGIC_SUPER_V2 => Err("a C-FFS of the second format (CFS2, records without permission bits): make a new one"),
        MAGIC_SUPER_V1 => Err("a C-FFS of the first format (CFS1, records without times): make a new one"),
        _ => Err("no superblock"),
    }
}

/// The owner principal of a metadata block.
pub fn owner(b: &Block) -> u64 {
    u64_at(b, 8)
}

/// Record `i` of a table or directory block (a free record if `i` is past
/// the block's last). Decoded from one fixed-size view of the record's
/// bytes, so each field is a load at a constant offset.
pub fn record(b: &Block, i: usize) -> Record {
    let Some(r) = HEADER.checked_add(RECORD.saturating_mul(i)).and_then(|o| b.get(o..o.checked_add(RECORD)?)) else {
        return Record::default();
    };
    let Ok(r): Result<&[u8; RECORD], _> = r.try_into() else { return Record::default() };
    let word = |at: usize| -> [u8; 8] { core::array::from_fn(|k| r[at + k]) };
    let mut out = Record {
        kind: r[0],
        name_len: r[1],
        nlink: u16::from_le_bytes([r[2], r[3]]),
        ino: u32::from_le_bytes([r[4], r[5], r[6], r[7]]),
        size: u64::from_le_bytes(word(8)),
        mtime: u32::from_le_bytes([r[MTIME_AT], r[MTIME_AT + 1], r[MTIME_AT + 2], r[MTIME_AT + 3]]),
        mode: u16::from_le_bytes([r[MODE_AT], r[MODE_AT + 1]]),
        name: [0; NAME_MAX],
        ext: [Ext::default(); EXTENTS],
    };
    out.name.copy_from_slice(&r[16..16 + NAME_MAX]);
    for (j, e) in out.ext.iter_mut().enumerate() {
        let x = word(EXT_AT + 8 * j);
        *e = Ext {
            start: u32::from_le_bytes([x[0], x[1], x[2], x[3]]),
            len: u16::from_le_bytes([x[4], x[5]]),
            ty: u16::from_le_bytes([x[6], x[7]]),
        };
    }
    out
}

/// The kind of record `i` of `b`, without decoding the record.
pub fn kind_at(b: &Block, i: usize) -> u8 {
    b.get(HEADER + RECORD * i).copied().unwrap_or(K_FREE)
}

/// The name of record `i` of `b`, without decoding the record (a scan for
/// one name decodes only the record that has it).
pub fn name_at(b: &Block, i: usize) -> &[u8] {
    let o = HEADER + RECORD * i;
    let len = usize::from(b.get(o + 1).copied().unwrap_or(0));
    if len > NAME_MAX {
        return &[]; // as `Record::name` reads it
    }
    b.get(o + 16..o + 16 + len).unwrap_or(&[])
}

/// Writes record `i` into `b`.
pub fn set_record(b: &mut Block, i: usize, r: &Record) {
    let o = HEADER + RECORD * i;
    put(b, o, &[r.kind, r.name_len]);
    put(b, o + 2, &r.nlink.to_le_bytes());
    put(b, o + 4, &r.ino.to_le_bytes());
    put(b, o + 8, &r.size.to_le_bytes());
    put(b, o + 16, &r.name);
    put(b, o + MODE_AT, &r.mode.to_le_bytes());
    put(b, o + MTIME_AT, &r.mtime.to_le_bytes());
    for (j, e) in r.ext.iter().enumerate() {
        let x = o + EXT_AT + 8 * j;
        put(b, x, &e.start.to_le_bytes());
        put(b, x + 4, &e.len.to_le_bytes());
        put(b, x + 6, &e.ty.to_le_bytes());
    }
}

/// The superblock's inode-table block `i` (0: none).
pub fn itab(sb: &Block, i: usize) -> u64 {
    u64::from(u32_at(sb, HEADER + 4 * i))
}

/// Sets the superblock's inode-table block `i`.
pub fn set_itab(sb: &mut Block, i: usize, block: u64) {
    put(sb, HEADER + 4 * i, &(block as u32).to_le_bytes());
}

/// A fresh superblock for a disk of `nblocks`.
pub fn superblock(owner: u64, nblocks: u64) -> Block {
    let mut b = header(MAGIC_SUPER, owner);
    put(&mut b, 16, &nblocks.to_le_bytes());
    b
}

/// Inode number → (table index, record).
pub fn ino_split(ino: u32) -> (usize, usize) {
    (ino as usize / RECORDS, ino as usize % RECORDS)
}

/// (table index, record) → inode number.
pub fn ino_join(table: usize, rec: usize) -> u32 {
    (table * RECORDS + rec) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trips() {
        let mut r = Record { kind: K_FILE, nlink: 3, ino: 77, size: 5000, mtime: 0xfedc_ba98, ..Record::default() };
        r.set_name(&[b'n'; NAME_MAX]);
        let mut b = header(MAGIC_DIR, 5);
        set_record(&mut b, 0, &r);
        assert_eq!(record(&b, 0), r, "the longest name and the time beside it");
        set_record(&mut b, 0, &Record::default());
        r.set_name(b"hello");
        r.ext[0] = Ext { start: 9, len: 2, ty: 0 };
        r.ext[7] = Ext { start: 100, len: 1, ty: T_DIR as u16 };
        set_record(&mut b, RECORDS - 1, &r);
        assert_eq!(record(&b, RECORDS - 1), r);
        assert_eq!(record(&b, 0), Record::default());
        // Past the last record: a free one, whatever the index.
        assert_eq!(record(&b, RECORDS), Record::default());
        assert_eq!(record(&b, usize::MAX), Record::default());
        assert_eq!(r.name(), b"hello");
        assert_eq!(r.blocks(), 3);
        assert_eq!(r.block_at(1), Some(10));
        assert_eq!(r.block_at(2), Some(100));
        assert_eq!(r.block_at(3), None);
        assert_eq!(owner(&b), 5);
        assert_eq!(RECORDS, 31);
        assert_eq!(ino_split(ino_join(3, 30)), (3, 30));
        // The undecoded accessors agree with the decoded record, also for
        // a name length past NAME_MAX (no name, as `name()` reads it).
        assert_eq!((kind_at(&b, RECORDS - 1), name_at(&b, RECORDS - 1)), (K_FILE, &b"hello"[..]));
        assert_eq!((kind_at(&b, 0), name_at(&b, 0)), (K_FREE, &b""[..]));
        b[HEADER + 1] = 200;
        assert_eq!(name_at(&b, 0), record(&b, 0).name());
    }
}
