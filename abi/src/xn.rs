//! XN: the disk multiplexer's formats — UDF bytecode, templates, rights and
//! reasons (Xok, SOSP'97 §4; Oxok DESIGN §3 "Disk").
//!
//! XN hands out disk blocks by their physical numbers and lets many library
//! file systems (libFSes) share one disk without understanding their
//! metadata. Each libFS registers a *template* per metadata type; a template
//! carries three small programs (*UDFs*, untrusted deterministic functions)
//! that XN verifies once and then runs over one metadata block at a time:
//!
//! * `owns` — the extents (start, length, type) of the blocks this metadata
//!   block points to;
//! * `acl` — the principals that hold rights over the blocks this metadata
//!   block owns (and over the block itself if it is a root), with the rights;
//! * `size` — the byte count the metadata describes (for views and `stat`).
//!
//! An allocate, free or metadata write is accepted only when `owns` before
//! and after the change differ by exactly the declared extent. This module
//! is the format only; the verifier, interpreter and checks live in the
//! `oxok-xn` crate.
//!
//! # The UDF language
//!
//! A pseudo-RISC machine with [`REGS`] `u64` registers `r0..r7` (all 0 at the
//! start) and read-only access to the one [`BLOCK_SIZE`]-byte metadata block
//! it is given — nothing else: no memory, no clock, no parameters, so a UDF
//! is deterministic.
//!
//! | opcode | written | effect |
//! | --- | --- | --- |
//! | [`op::LI`]   | `li ra, imm`       | `ra = imm` (zero-extended) |
//! | [`op::MOV`]  | `mov ra, rb`       | `ra = rb` |
//! | [`op::ADD`]  | `add ra, rb, rc`   | `ra = rb + rc` (wrapping) |
//! | [`op::ADDI`] | `addi ra, rb, imm` | `ra = rb + imm` (wrapping) |
//! | [`op::SUB`]  | `sub ra, rb, rc`   | `ra = rb - rc` (wrapping) |
//! | [`op::MUL`]  | `mul ra, rb, rc`   | `ra = rb * rc` (wrapping) |
//! | [`op::MULI`] | `muli ra, rb, imm` | `ra = rb * imm` (wrapping) |
//! | [`op::AND`]  | `and ra, rb, rc`   | `ra = rb & rc` |
//! | [`op::ANDI`] | `andi ra, rb, imm` | `ra = rb & imm` |
//! | [`op::OR`]   | `or ra, rb, rc`    | `ra = rb \| rc` |
//! | [`op::SHL`]  | `shl ra, rb, imm`  | `ra = rb << imm` (`imm < 64`) |
//! | [`op::SHR`]  | `shr ra, rb, imm`  | `ra = rb >> imm` (`imm < 64`) |
//! | [`op::EQ`]   | `eq ra, rb, rc`    | `ra = (rb == rc) as u64` |
//! | [`op::LT`]   | `lt ra, rb, rc`    | `ra = (rb < rc) as u64`, unsigned |
//! | [`op::LD8`] … [`op::LD64`] | `ld32 ra, [rb+imm]` | `ra` = the little-endian 1/2/4/8-byte word at byte `rb + imm` of the block |
//! | [`op::JZ`]   | `jz rb, +imm`      | if `rb == 0`, skip the next `imm` instructions (`imm >= 1`) |
//! | [`op::JNZ`]  | `jnz rb, +imm`     | if `rb != 0`, skip the next `imm` instructions |
//! | [`op::LOOP`] | `loop ra, imm, b`  | run the next `b` instructions (the body) `imm` times, with `ra` = 0, 1, …, `imm - 1` at the start of each pass |
//! | [`op::HALT`] | `halt`             | stop (the results so far stand) |
//! | [`op::EXT`]  | `ext ra, rb, rc`   | `owns` only: emit the extent start `ra`, length `rb`, type `rc`; a length of 0 emits nothing |
//! | [`op::PRIN`] | `prin ra, imm`     | `acl` only: grant principal `ra` the [`rights`] `imm` |
//! | [`op::SIZE`] | `size ra`          | `size` only: the result is `ra` (the last one executed wins; none: 0) |
//!
//! ## Termination and bounds (what the verifier demands)
//!
//! * `1..=`[`MAX_INSNS`] instructions; the byte length is a multiple of
//!   [`INSN_SIZE`]; every register field an instruction uses is `< REGS`,
//!   every field it does not use is 0.
//! * Control only moves forward, except at the end of a `loop` body, which
//!   returns to the body's start until the constant count is exhausted.
//!   Counts are `1..=`[`MAX_LOOP`]; loops nest at most [`MAX_DEPTH`] deep;
//!   a body lies inside its enclosing body; a jump lands inside its own
//!   body (at most at its end — "continue") or the program (at most at its
//!   end) and never inside a loop body it did not start in.
//! * The worst-case instruction count, computed from the loop counts, is at
//!   most [`MAX_STEPS`]; the interpreter also stops at that bound.
//! * A load whose constant offset alone reaches past the block is refused
//!   when verified; a load whose computed address reaches past the block
//!   stops the run with an error when run, and the operation that needed
//!   the result is refused.
//! * `ext`, `prin` and `size` appear only in the function they belong to.
//! * A run emits at most [`MAX_EXTENTS`] extents or [`MAX_PRINCIPALS`]
//!   grants; more stops the run with an error.
//!
//! # Encoding
//!
//! Every instruction is [`INSN_SIZE`] = 8 bytes, little-endian:
//!
//! | bytes | field | meaning |
//! | --- | --- | --- |
//! | 0 | `op` | opcode, [`op`] (0 is invalid, so zeroed memory is no program) |
//! | 1 | `a` | register (destination, loop index, `ext` start, `prin`/`size` source) |
//! | 2 | `b` | register (first source, load base, jump test, `ext` length); for `loop`, the body length |
//! | 3 | `c` | register (second source, `ext` type) |
//! | 4–7 | `imm` | immediate, load offset, skip count, loop count, or rights |
//!
//! # Templates
//!
//! A template is a [`TEMPLATE_HEADER`]-byte header followed by the `owns`,
//! `acl` and `size` programs back to back:
//!
//! | bytes | field |
//! | --- | --- |
//! | 0–3 | [`TEMPLATE_MAGIC`] |
//! | 4–5 | `owns` instruction count (`>= 1`) |
//! | 6–7 | `acl` instruction count (`>= 1`) |
//! | 8–9 | `size` instruction count (`>= 1`) |
//! | 10–15 | reserved, 0 |
//!
//! A libFS registers its templates as one list; extent types in its `owns`
//! output name them by position: type [`DATA`] (0) is a plain data block
//! (no metadata, no UDFs), type `n >= 1` is the libFS's `n`-th template. A
//! type therefore never names another libFS's template.
//!
//! # Rights
//!
//! The rights over a block are what the `acl` of the metadata block that
//! owns it grants (for a root, its own `acl`). Changing a metadata block
//! (allocate, free, write) needs [`rights::WRITE`] over it; binding a data
//! block's frame needs the rights asked for; a metadata block's frame is
//! never bound writable. Principal [`ANYONE`] matches every caller.
//!
//! A principal is a `u64` the `acl` names; the caller acts as principal
//! `p` when a capability in its list covers `/8/p`
//! ([`cap_kind::PRINCIPAL`](crate::cap_kind::PRINCIPAL); rights do not
//! matter, the name does), and as every principal with one on `/8`. The
//! kernel gives `/8` to the boot programs; they mint one principal with
//! `cap_narrow` and grant it (init gives the disk file server
//! [`DISK_PRINCIPAL`]). The name carries no generation, so a file system
//! belongs to the same principal in every boot, whichever environment id
//! serves it.

/// Bytes per disk block (and per metadata block a UDF reads).
pub const BLOCK_SIZE: usize = 4096;
/// Bytes per UDF instruction.
pub const INSN_SIZE: usize = 8;
/// Most instructions in one UDF.
pub const MAX_INSNS: usize = 256;
/// Registers `r0..r7`.
pub const REGS: usize = 8;
/// Largest loop count.
pub const MAX_LOOP: u32 = 4096;
/// Deepest loop nesting.
pub const MAX_DEPTH: usize = 3;
/// Most instructions one run may execute (worst case, checked when verified).
pub const MAX_STEPS: u64 = 1 << 16;
/// Most extents one `owns` run may emit.
pub const MAX_EXTENTS: usize = 1024;
/// Most grants one `acl` run may emit.
pub const MAX_PRINCIPALS: usize = 16;
/// Extent type of a plain data block.
pub const DATA: u32 = 0;
/// Most templates one libFS registers.
pub const MAX_TEMPLATES: usize = 16;
/// Bytes of a template header.
pub const TEMPLATE_HEADER: usize = 16;
/// First four bytes of a template: `"XNT1"`.
pub const TEMPLATE_MAGIC: [u8; 4] = *b"XNT1";
/// The principal that matches every caller.
pub const ANYONE: u64 = 0;
/// The principal of the system's disk file system: init gives the disk
/// file server `dfsd` a capability on `/8/DISK_PRINCIPAL`, and the file
/// systems it makes (and the host's `mkfs` images) belong to it.
pub const DISK_PRINCIPAL: u64 = 1;

/// Rights an `acl` grants (the `imm` of `prin`).
pub mod rights {
    /// Read: bind the block's frame read-only.
    pub const READ: u32 = 1;
    /// Write: change the metadata (allocate, free, write), bind a data
    /// block's frame writable.
    pub const WRITE: u32 = 2;
    /// Every right.
    pub const ALL: u32 = READ | WRITE;
}

/// The three functions of a template.
pub mod func {
    /// `owns`: emits extents.
    pub const OWNS: u8 = 0;
    /// `acl`: emits grants.
    pub const ACL: u8 = 1;
    /// `size`: sets a byte count.
    pub const SIZE: u8 = 2;
}

/// Opcodes (byte 0).
pub mod op {
    /// `li ra, imm`.
    pub const LI: u8 = 0x01;
    /// `mov ra, rb`.
    pub const MOV: u8 = 0x02;
    /// `add ra, rb, rc`.
    pub const ADD: u8 = 0x03;
    /// `addi ra, rb, imm`.
    pub const ADDI: u8 = 0x04;
    /// `sub ra, rb, rc`.
    pub const SUB: u8 = 0x05;
    /// `mul ra, rb, rc`.
    pub const MUL: u8 = 0x06;
    /// `muli ra, rb, imm`.
    pub const MULI: u8 = 0x07;
    /// `and ra, rb, rc`.
    pub const AND: u8 = 0x08;
    /// `andi ra, rb, imm`.
    pub const ANDI: u8 = 0x09;
    /// `or ra, rb, rc`.
    pub const OR: u8 = 0x0a;
    /// `shl ra, rb, imm`.
    pub const SHL: u8 = 0x0b;
    /// `shr ra, rb, imm`.
    pub const SHR: u8 = 0x0c;
    /// `eq ra, rb, rc`.
    pub const EQ: u8 = 0x10;
    /// `lt ra, rb, rc` (unsigned).
    pub const LT: u8 = 0x11;
    /// `ld8 ra, [rb+imm]`.
    pub const LD8: u8 = 0x20;
    /// `ld16 ra, [rb+imm]`.
    pub const LD16: u8 = 0x21;
    /// `ld32 ra, [rb+imm]`.
    pub const LD32: u8 = 0x22;
    /// `ld64 ra, [rb+imm]`.
    pub const LD64: u8 = 0x23;
    /// `jz rb, +imm`.
    pub const JZ: u8 = 0x30;
    /// `jnz rb, +imm`.
    pub const JNZ: u8 = 0x31;
    /// `loop ra, imm, b`.
    pub const LOOP: u8 = 0x40;
    /// `halt`.
    pub const HALT: u8 = 0x41;
    /// `ext ra, rb, rc` (owns only).
    pub const EXT: u8 = 0x50;
    /// `prin ra, imm` (acl only).
    pub const PRIN: u8 = 0x51;
    /// `size ra` (size only).
    pub const SIZE: u8 = 0x52;
}

/// Why the verifier refused a UDF or a template: stable codes.
pub mod reject {
    /// No instructions.
    pub const EMPTY: u64 = 1;
    /// More than [`MAX_INSNS`](super::MAX_INSNS) instructions.
    pub const TOO_LONG: u64 = 2;
    /// Length not a multiple of [`INSN_SIZE`](super::INSN_SIZE).
    pub const TRUNCATED: u64 = 3;
    /// Unknown opcode.
    pub const BAD_OPCODE: u64 = 4;
    /// A register field `>= REGS`.
    pub const BAD_REGISTER: u64 = 5;
    /// A field the instruction does not use is not 0.
    pub const RESERVED: u64 = 6;
    /// A load whose constant offset already reaches past the block.
    pub const OUT_OF_BLOCK: u64 = 7;
    /// A jump of 0, past its body or the program, or into a loop body.
    pub const BAD_JUMP: u64 = 8;
    /// A loop count of 0 or above `MAX_LOOP`, an empty body, a body past
    /// its enclosing body or the program.
    pub const BAD_LOOP: u64 = 9;
    /// Loops nested deeper than `MAX_DEPTH`.
    pub const TOO_DEEP: u64 = 10;
    /// Worst-case steps above `MAX_STEPS`.
    pub const TOO_COSTLY: u64 = 11;
    /// `ext`, `prin` or `size` in the wrong function.
    pub const WRONG_FUNCTION: u64 = 12;
    /// A shift of 64 or more.
    pub const BAD_SHIFT: u64 = 13;
    /// A template header that is short, has the wrong magic, a zero or
    /// inconsistent length, or reserved bytes set.
    pub const BAD_TEMPLATE: u64 = 14;
    /// No memory to keep the program.
    pub const NO_MEMORY: u64 = 15;
}

/// Why XN refused an operation: stable codes the kernel reports beside
/// [`Error`](crate::Error).
pub mod refuse {
    /// The block number is past the end of the disk.
    pub const OUT_OF_RANGE: u64 = 1;
    /// A block to allocate is not free.
    pub const NOT_FREE: u64 = 2;
    /// A block is not allocated, or not to this file system.
    pub const NOT_ALLOCATED: u64 = 3;
    /// The block is not a metadata block of this file system.
    pub const NOT_METADATA: u64 = 4;
    /// `acl` does not grant the caller the rights needed.
    pub const DENIED: u64 = 5;
    /// `owns` after the change is not exactly `owns` before plus/minus the
    /// declared extent.
    pub const OWNS_MISMATCH: u64 = 6;
    /// `owns` emitted overlapping extents, a bad type or an extent past the
    /// disk.
    pub const BAD_OWNS: u64 = 7;
    /// A UDF stopped with an error (out-of-block read, too many results).
    pub const UDF_FAULT: u64 = 8;
    /// The write would persist a pointer to a tainted block.
    pub const TAINTED_POINTER: u64 = 9;
    /// A write of the block is in flight.
    pub const IN_FLIGHT: u64 = 10;
    /// A metadata block to free still owns blocks.
    pub const NOT_EMPTY: u64 = 11;
    /// The block is already bound to another frame.
    pub const ALREADY_BOUND: u64 = 12;
    /// The block is not bound to a frame.
    pub const NOT_BOUND: u64 = 13;
    /// A metadata frame may not be bound writable.
    pub const METADATA_WRITABLE: u64 = 14;
    /// The block is dirty, tainted or in flight and cannot leave the cache.
    pub const BUSY: u64 = 15;
    /// No memory for XN's own bookkeeping.
    pub const NO_MEMORY: u64 = 16;
    /// No such file system, or too many templates.
    pub const BAD_FS: u64 = 17;
    /// The block is freed and waits on the will-free list.
    pub const WILL_FREE: u64 = 18;
    /// The block (a copy's source) has never been durably written.
    pub const TAINTED: u64 = 19;
}

/// Buffer-cache registry states, as exposed read-only.
pub mod state {
    /// Cached content equals the durable disk content.
    pub const CLEAN: u8 = 0;
    /// Cached content changed since the last write was issued.
    pub const DIRTY: u8 = 1;
    /// Allocated and not yet durably written: nothing may point to it on
    /// disk.
    pub const TAINTED: u8 = 2;
    /// A write of the block is in flight.
    pub const IN_FLIGHT: u8 = 3;
}

/// One instruction as raw fields, before any checking.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RawInsn {
    /// Opcode ([`op`]).
    pub op: u8,
    /// Field `a`.
    pub a: u8,
    /// Field `b`.
    pub b: u8,
    /// Field `c`.
    pub c: u8,
    /// Immediate.
    pub imm: u32,
}

impl RawInsn {
    /// Decodes the 8 bytes of one instruction (no checking).
    pub const fn from_bytes(x: &[u8; INSN_SIZE]) -> RawInsn {
        RawInsn { op: x[0], a: x[1], b: x[2], c: x[3], imm: u32::from_le_bytes([x[4], x[5], x[6], x[7]]) }
    }

    /// Encodes the instruction as its 8 bytes.
    pub const fn to_bytes(self) -> [u8; INSN_SIZE] {
        let i = self.imm.to_le_bytes();
        [self.op, self.a, self.b, self.c, i[0], i[1], i[2], i[3]]
    }
}

/// A template header as raw fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TemplateHeader {
    /// `owns` instruction count.
    pub owns: u16,
    /// `acl` instruction count.
    pub acl: u16,
    /// `size` instruction count.
    pub size: u16,
}

impl TemplateHeader {
    /// Encodes the header as its [`TEMPLATE_HEADER`] bytes.
    pub const fn to_bytes(self) -> [u8; TEMPLATE_HEADER] {
        let (o, a, s) = (self.owns.to_le_bytes(), self.acl.to_le_bytes(), self.size.to_le_bytes());
        let m = TEMPLATE_MAGIC;
        [m[0], m[1], m[2], m[3], o[0], o[1], a[0], a[1], s[0], s[1], 0, 0, 0, 0, 0, 0]
    }

    /// Decodes a header: `None` if the magic or a reserved byte is wrong.
    pub fn from_bytes(x: &[u8; TEMPLATE_HEADER]) -> Option<TemplateHeader> {
        if x[..4] != TEMPLATE_MAGIC || x[10..].iter().any(|&b| b != 0) {
            return None;
        }
        let h = |i: usize| u16::from_le_bytes([x[i], x[i + 1]]);
        Some(TemplateHeader { owns: h(4), acl: h(6), size: h(8) })
    }
}

// ---- The kernel's XN: the disk layout, the exposed table, the calls ----

/// Disk blocks (4 KiB) at the start of the disk that hold XN's catalogue
/// (the registered file systems' templates and roots); XN block `b` is disk
/// block `CATALOG_BLOCKS + b`.
pub const CATALOG_BLOCKS: u64 = 64;
/// Most file systems registered on one disk.
pub const MAX_FS: usize = 8;
/// Most bytes of one file system's templates (they live in
/// [`CATALOG_FS_BLOCKS`] catalogue blocks).
pub const MAX_TEMPLATE_BYTES: usize = CATALOG_FS_BLOCKS * BLOCK_SIZE;
/// Catalogue blocks per file system.
pub const CATALOG_FS_BLOCKS: usize = 4;
/// Most roots on one disk.
pub const MAX_ROOTS: usize = 64;
/// Most blocks one `xn_alloc` or `xn_free` extent covers.
pub const MAX_EXTENT_CALL: u64 = 64;
/// Most XN blocks the kernel manages (larger disks are used up to this).
pub const MAX_BLOCKS: u64 = (XN_FREE_MAP_PAGES * 4096 * 8) as u64;

/// XN's table, read-only in every address space: an [`XnHeader`] at 0,
/// [`XnRoot`]s at [`XN_ROOTS`], [`XnFs`] rows at [`XN_FSS`], the free map
/// at [`XN_FREE_MAP`] (bit `b % 64` of word `b / 64` set: XN block `b` is
/// allocated) and the buffer-cache registry's entries as [`XnRow`]s at
/// [`XN_ROWS`]: each entry keeps one row for as long as it is registered
/// (rows are not in block order; a free row reads [`XN_ROW_EMPTY`]), up to
/// [`XN_ROWS_MAX`] of them; an entry that came when every row was taken
/// gets the next row freed. Read rows `0..`[`XnHeader::rows`].
pub const XN_TABLE: u64 = crate::layout::EXPOSED_BASE + 0x9100_0000;
/// Byte offset of the root rows.
pub const XN_ROOTS: u64 = 512;
/// Byte offset of the file-system rows.
pub const XN_FSS: u64 = 2048;
/// Byte offset of the free map.
pub const XN_FREE_MAP: u64 = 4096;
/// Pages of the free map.
pub const XN_FREE_MAP_PAGES: usize = 8;
/// Byte offset of the registry rows.
pub const XN_ROWS: u64 = XN_FREE_MAP + XN_FREE_MAP_PAGES as u64 * 4096;
/// Registry rows exposed (the header counts every entry).
pub const XN_ROWS_MAX: usize = 2048;
/// The block of a free registry row.
pub const XN_ROW_EMPTY: u64 = u64::MAX;
/// Pages of the whole table.
pub const XN_TABLE_PAGES: u64 = XN_ROWS / 4096 + (XN_ROWS_MAX * 32 / 4096) as u64;
/// Byte offset of [`XnHeader::oldest_pending`] (for wakeup predicates).
pub const XN_OLDEST_PENDING: u64 = 7 * 8;

/// The header of [`XN_TABLE`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct XnHeader {
    /// 1 when a disk is attached, 0 otherwise.
    pub present: u64,
    /// XN blocks (the disk less the catalogue).
    pub nblocks: u64,
    /// Free blocks.
    pub free: u64,
    /// Registry entries (allocated blocks, will-free ones included).
    pub registered: u64,
    /// Registered file systems.
    pub fss: u64,
    /// Registered roots.
    pub roots: u64,
    /// Requests submitted since boot (the last one's sequence number).
    pub submitted: u64,
    /// The lowest request sequence number not yet completed
    /// (`submitted + 1` when none is outstanding): request `s` is done
    /// once this is above `s`.
    pub oldest_pending: u64,
    /// Requests that failed.
    pub errors: u64,
    /// Blocks on the will-free list.
    pub will_free: u64,
    /// 1 while roots wait to be written to the catalogue.
    pub catalog_pending: u64,
    /// Duplicates recovery found at boot.
    pub duplicates: u64,
    /// Blocks recovery found reachable at boot.
    pub recovered: u64,
    /// Cached blocks.
    pub cached: u64,
    /// Block writes submitted since boot (one 4 KiB block each; the device
    /// may get several adjacent ones as one request, see
    /// [`XnHeader::write_requests`]), so a
    /// program can say where in a write log of the disk its operations
    /// ended (flushes are not counted: a device may drop a flush that
    /// follows no write).
    pub writes: u64,
    /// Completions the disk's interrupt collected since boot, one per block
    /// read or written (a run's blocks each) and one per flush (the rest
    /// were found by a tick or an XN call; 0 when the device has no MSI-X
    /// and every completion is polled).
    pub interrupted: u64,
    /// Write requests the device was handed since boot: a run of writes of
    /// adjacent blocks, submitted one after another, goes as one request
    /// of up to 32 blocks, so this is at most [`XnHeader::writes`].
    pub write_requests: u64,
    /// Registry rows handed out so far (at most [`XN_ROWS_MAX`]): every
    /// entry shown has its row below this; free ones among them read
    /// [`XN_ROW_EMPTY`].
    pub rows: u64,
}

/// One root row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct XnRoot {
    /// XN block.
    pub block: u64,
    /// File system.
    pub fs: u32,
    /// Template number.
    pub ty: u32,
}

/// One file-system row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct XnFs {
    /// Templates registered (0: no such file system).
    pub templates: u64,
    /// Blocks allocated to it.
    pub blocks: u64,
}

/// One registry row (an entry's for as long as it is registered; a free
/// row's `block` is [`XN_ROW_EMPTY`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct XnRow {
    /// XN block.
    pub block: u64,
    /// Frame number caching it, or `u64::MAX`.
    pub frame: u64,
    /// The owning metadata block, or `u64::MAX` for a root.
    pub parent: u64,
    /// File system.
    pub fs: u16,
    /// `DATA` or a template number.
    pub ty: u16,
    /// [`state`].
    pub state: u8,
    /// 1 when freed and waiting on the will-free list.
    pub will_free: u8,
    /// Reserved.
    pub reserved: u16,
}

const _: () = assert!(core::mem::size_of::<XnHeader>() <= XN_ROOTS as usize);
const _: () = assert!(XN_ROOTS as usize + MAX_ROOTS * 16 <= XN_FSS as usize);
const _: () = assert!(XN_FSS as usize + MAX_FS * 16 <= XN_FREE_MAP as usize);
const _: () = assert!(core::mem::size_of::<XnRow>() == 32);

/// `xn_register`'s first result when the templates were refused: the
/// second result is a [`reject`] code, the third the template's index.
pub const REJECTED: u64 = 0x100;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_and_header_round_trip() {
        let raw = RawInsn { op: op::LD32, a: 1, b: 2, c: 0, imm: 0x0102_0304 };
        assert_eq!(raw.to_bytes(), [op::LD32, 1, 2, 0, 4, 3, 2, 1]);
        assert_eq!(RawInsn::from_bytes(&raw.to_bytes()), raw);
        let h = TemplateHeader { owns: 3, acl: 2, size: 1 };
        assert_eq!(TemplateHeader::from_bytes(&h.to_bytes()), Some(h));
        let mut bad = h.to_bytes();
        bad[12] = 1;
        assert_eq!(TemplateHeader::from_bytes(&bad), None);
        bad = h.to_bytes();
        bad[0] = b'Y';
        assert_eq!(TemplateHeader::from_bytes(&bad), None);
    }

    #[test]
    fn codes_are_distinct_and_nonzero() {
        let rejects = [
            reject::EMPTY,
            reject::TOO_LONG,
            reject::TRUNCATED,
            reject::BAD_OPCODE,
            reject::BAD_REGISTER,
            reject::RESERVED,
            reject::OUT_OF_BLOCK,
            reject::BAD_JUMP,
            reject::BAD_LOOP,
            reject::TOO_DEEP,
            reject::TOO_COSTLY,
            reject::WRONG_FUNCTION,
            reject::BAD_SHIFT,
            reject::BAD_TEMPLATE,
            reject::NO_MEMORY,
        ];
        let refusals = [
            refuse::OUT_OF_RANGE,
            refuse::NOT_FREE,
            refuse::NOT_ALLOCATED,
            refuse::NOT_METADATA,
            refuse::DENIED,
            refuse::OWNS_MISMATCH,
            refuse::BAD_OWNS,
            refuse::UDF_FAULT,
            refuse::TAINTED_POINTER,
            refuse::IN_FLIGHT,
            refuse::NOT_EMPTY,
            refuse::ALREADY_BOUND,
            refuse::NOT_BOUND,
            refuse::METADATA_WRITABLE,
            refuse::BUSY,
            refuse::NO_MEMORY,
            refuse::BAD_FS,
            refuse::WILL_FREE,
            refuse::TAINTED,
        ];
        for all in [&rejects[..], &refusals[..]] {
            for (i, a) in all.iter().enumerate() {
                assert_ne!(*a, 0);
                assert!(all[i + 1..].iter().all(|b| b != a));
            }
        }
    }
}
