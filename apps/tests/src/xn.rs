//! Helpers for the XN scenario programs: a one-type "inode" file system
//! whose root lists up to [`ENTRIES`] extents, its templates, and a small
//! `fsck` that checks what a root owns against the exposed registry.
//!
//! Inode layout (one 4096-byte block): principal `u64` at 0 (0: anyone),
//! then from byte 64 [`ENTRIES`] entries of 16 bytes: start `u32`, length
//! `u32`, type `u32` (0: data), reserved.

use alloc::vec::Vec;
use oxok_libos::abi::xn::{BLOCK_SIZE, rights};
use oxok_libos::xn;
use oxok_xn::{Asm, template};

/// Extent entries in an inode.
pub const ENTRIES: u32 = 32;
/// Where entries start.
const ENTRY_BASE: u32 = 64;

/// The inode template: `owns` lists the entries, `acl` grants everything
/// to the principal at 0, `size` counts the blocks.
pub fn inode_template() -> Vec<u8> {
    let owns = Asm::new()
        .repeat(0, ENTRIES, 5)
        .muli(1, 0, 16)
        .ld32(2, 1, ENTRY_BASE)
        .ld32(3, 1, ENTRY_BASE + 4)
        .ld32(4, 1, ENTRY_BASE + 8)
        .ext(2, 3, 4);
    let acl = Asm::new().ld64(0, 7, 0).prin(0, rights::ALL);
    let size = Asm::new().li(0, 0).size(0);
    template(&owns, &acl, &size)
}

/// An inode image.
#[derive(Clone)]
pub struct Inode(pub [u8; BLOCK_SIZE]);

impl Inode {
    /// Empty, owned by `principal`.
    pub fn new(principal: u64) -> Inode {
        let mut b = [0u8; BLOCK_SIZE];
        b[..8].copy_from_slice(&principal.to_le_bytes());
        Inode(b)
    }

    /// Entry `i` set to `start..start+len` of type `ty` (len 0 clears it).
    pub fn set(&self, i: u32, start: u64, len: u64, ty: u32) -> Inode {
        let mut n = self.clone();
        let at = (ENTRY_BASE + i * 16) as usize;
        n.0[at..at + 4].copy_from_slice(&(start as u32).to_le_bytes());
        n.0[at + 4..at + 8].copy_from_slice(&(len as u32).to_le_bytes());
        n.0[at + 8..at + 12].copy_from_slice(&ty.to_le_bytes());
        n
    }

    /// The (start, len, type) entries in use.
    pub fn entries(&self) -> Vec<(u64, u64, u32)> {
        let w = |at: usize| u32::from_le_bytes([self.0[at], self.0[at + 1], self.0[at + 2], self.0[at + 3]]);
        (0..ENTRIES as usize)
            .map(|i| ENTRY_BASE as usize + i * 16)
            .map(|at| (u64::from(w(at)), u64::from(w(at + 4)), w(at + 8)))
            .filter(|e| e.1 != 0)
            .collect()
    }
}

/// Fills `page` with the pattern of block `block` (seeded by `seed`).
pub fn pattern(block: u64, seed: u64, page: &mut [u8; BLOCK_SIZE]) {
    for (i, b) in page.iter_mut().enumerate() {
        *b = (block.wrapping_mul(31).wrapping_add(seed).wrapping_add(i as u64 * 7) % 251) as u8;
    }
}

/// Whether `page` holds the pattern of `block`.
pub fn has_pattern(block: u64, seed: u64, page: &[u8; BLOCK_SIZE]) -> bool {
    let mut want = [0u8; BLOCK_SIZE];
    pattern(block, seed, &mut want);
    want == *page
}

/// What `fsck` found wrong, or `Ok(blocks checked)`.
///
/// Checks that every block the root's cached `inode` owns is in the
/// registry with the root as parent and file system `fs`, not free in the
/// free map, and that each data block (read through a read-only binding at
/// `va`) holds its pattern.
pub fn fsck(fs: u32, root: u64, inode: &Inode, seed: u64, va: u64) -> Result<u64, &'static str> {
    let mut n = 0;
    let r = xn::row_of(root).ok_or("root not registered")?;
    if u32::from(r.fs) != fs || r.parent != u64::MAX {
        return Err("root row wrong");
    }
    for (start, len, _) in inode.entries() {
        for b in start..start + len {
            let row = xn::row_of(b).ok_or("owned block not registered")?;
            if row.parent != root || u32::from(row.fs) != fs {
                return Err("owned block registered to someone else");
            }
            if xn::is_free(b) != Some(false) {
                return Err("owned block free in the free map");
            }
            xn::read(b).map_err(|_| "cannot read an owned block")?;
            let at = va + n * BLOCK_SIZE as u64;
            xn::bind(b, at, rights::READ).map_err(|_| "cannot bind an owned block")?;
            let page = xn::page(at).map_err(|_| "bound page unreadable")?;
            let ok = has_pattern(b, seed, page.bytes());
            let _ = oxok_libos::sys::page_unmap(0, at);
            if !ok {
                return Err("data block lost its content");
            }
            n += 1;
        }
    }
    Ok(n)
}
