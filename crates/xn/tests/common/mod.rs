//! Shared test helpers: frames in a map, and a toy file system whose
//! directory blocks list their children's extents.
#![allow(dead_code)]

use std::collections::HashMap;

use oxok_abi::xn::{BLOCK_SIZE, rights};
use oxok_xn::{Asm, Frame, Frames, FsId, Xn, template};

pub type Block = [u8; BLOCK_SIZE];

/// Frames by number, allocated on demand.
#[derive(Default)]
pub struct Mem {
    pub frames: HashMap<Frame, Block>,
    pub next: u64,
}

impl Mem {
    /// A new zeroed frame.
    pub fn frame(&mut self) -> Frame {
        self.next += 1;
        let f = Frame::from_word(self.next);
        self.frames.insert(f, [0; BLOCK_SIZE]);
        f
    }
}

impl Frames for Mem {
    fn read(&self, f: Frame) -> Option<&Block> {
        self.frames.get(&f)
    }
    fn write(&mut self, f: Frame) -> Option<&mut Block> {
        self.frames.get_mut(&f)
    }
}

/// Directory layout: owner principal (u64) at 0, content tag (u64) at 8,
/// a size (u64) at 16, and [`ENTRIES`] entries of 16 bytes from 64:
/// start u32, len u32, type u32, tag u32 (the tag the child's content must
/// carry at byte 8).
pub const ENTRIES: usize = 64;
pub const DIR: u32 = 1;
pub const OWNER: u64 = 42;

pub fn entry_at(i: usize) -> usize {
    64 + 16 * i
}

/// `owns`: for i in 0..64: ext(start, len, type) of entry i.
pub fn dir_owns() -> Asm {
    Asm::new().repeat(0, ENTRIES as u32, 5).muli(1, 0, 16).ld32(2, 1, 64).ld32(3, 1, 68).ld32(4, 1, 72).ext(2, 3, 4)
}

/// `acl`: the owner at byte 0 holds every right.
pub fn dir_acl() -> Asm {
    Asm::new().ld64(0, 7, 0).prin(0, rights::ALL)
}

/// `size`: the u64 at byte 16.
pub fn dir_size() -> Asm {
    Asm::new().ld64(0, 7, 16).size(0)
}

pub fn dir_template() -> Vec<u8> {
    template(&dir_owns(), &dir_acl(), &dir_size())
}

/// A directory image with `owner` and `tag` and no entries.
pub fn dir(owner: u64, tag: u64) -> Block {
    let mut b = [0; BLOCK_SIZE];
    b[0..8].copy_from_slice(&owner.to_le_bytes());
    b[8..16].copy_from_slice(&tag.to_le_bytes());
    b
}

/// `b` with entry `i` set.
pub fn with_entry(mut b: Block, i: usize, start: u64, len: u64, ty: u32, tag: u32) -> Block {
    let o = entry_at(i);
    b[o..o + 4].copy_from_slice(&(start as u32).to_le_bytes());
    b[o + 4..o + 8].copy_from_slice(&(len as u32).to_le_bytes());
    b[o + 8..o + 12].copy_from_slice(&ty.to_le_bytes());
    b[o + 12..o + 16].copy_from_slice(&tag.to_le_bytes());
    b
}

/// Entry `i` of `b`: (start, len, type, tag).
pub fn entry(b: &Block, i: usize) -> (u64, u64, u32, u32) {
    let o = entry_at(i);
    let u = |k: usize| u32::from_le_bytes(b[o + k..o + k + 4].try_into().unwrap());
    (u(0).into(), u(4).into(), u(8), u(12))
}

pub fn tag_of(b: &Block) -> u64 {
    u64::from_le_bytes(b[8..16].try_into().unwrap())
}

/// An XN of `nblocks` with the toy file system registered and a root
/// directory at block 1 owned by [`OWNER`], cached in a frame.
pub fn toy(nblocks: u64) -> (Xn, Mem, FsId) {
    let mut xn = Xn::new(nblocks).unwrap();
    let fs = xn.register_fs(&[&dir_template()]).unwrap();
    let mut mem = Mem::default();
    let f = mem.frame();
    xn.add_root(&mut mem, fs, 1, DIR, f, &dir(OWNER, 1)).unwrap();
    (xn, mem, fs)
}

/// The cached content of `block`.
pub fn cached(xn: &Xn, mem: &Mem, block: u64) -> Block {
    *mem.read(xn.block(block).unwrap().frame.unwrap()).unwrap()
}

/// Writes `block` and completes the write (not flushed).
pub fn write(xn: &mut Xn, mem: &Mem, block: u64) {
    let t = xn.write_begin(mem, block).unwrap();
    xn.write_done(t);
}

/// A flush, begun and completed.
pub fn flush(xn: &mut Xn) {
    let t = xn.flush_begin();
    xn.flush_done(t);
}

/// Allocates `block` of type `ty` into entry `i` of `dir_block` and caches
/// it (zeroed, as the wrapper would); a directory child gets its header.
pub fn alloc_child(xn: &mut Xn, mem: &mut Mem, dir_block: u64, i: usize, block: u64, ty: u32, tag: u32) {
    let new = with_entry(cached(xn, mem, dir_block), i, block, 1, ty, tag);
    xn.allocate(mem, &[OWNER], dir_block, &new, oxok_xn::Extent::new(block, 1, ty)).unwrap();
    let f = mem.frame();
    xn.insert(block, f).unwrap();
    if ty == DIR {
        xn.modify(mem, &[OWNER], block, &dir(OWNER, u64::from(tag))).unwrap();
    } else {
        mem.write(f).unwrap()[8..16].copy_from_slice(&u64::from(tag).to_le_bytes());
        xn.mark_dirty(block);
    }
}
