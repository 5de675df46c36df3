//! XN, the pure logic of Oxok's disk multiplexer (Xok, SOSP'97 §4; Oxok
//! DESIGN §3 "Disk"). The formats — UDF bytecode, templates, rights, reject
//! and refusal codes — are in [`oxok_abi::xn`]; read that first.
//!
//! XN lets library file systems share one disk by block number without the
//! kernel understanding their metadata. Each libFS registers templates
//! whose verified UDFs say what a metadata block owns (`owns`), who holds
//! rights over what it owns (`acl`) and its size (`size`). Every allocate,
//! free and metadata change is accepted only when `owns` before and after
//! differ by exactly the declared extent and `acl` grants the caller write;
//! a disk write that would persist a pointer to a tainted (not durably
//! initialised) block is refused; a freed block waits on the will-free
//! list until no disk version of its parent can point to it; recovery
//! rebuilds the free map from the roots.
//!
//! `no_std`, no `unsafe`, no panics on any input; the state (`alloc`) grows
//! only by fallible reservations, and no operation changes anything when it
//! returns a [`Refusal`].
//!
//! # What the kernel wrapper calls
//!
//! The wrapper owns the frames, the block device and the capabilities; it
//! turns the caller's capabilities into `creds` (a [`Creds`]: the principals
//! the caller acts as) and gives
//! XN access to frame contents through [`Frames`]; XN names a frame by its
//! number, a [`Frame`].
//!
//! | moment | call | wrapper then |
//! | --- | --- | --- |
//! | boot | [`Xn::new`], [`Xn::register_fs`] per catalogued libFS, [`Xn::recover`] with the catalogued [`Root`]s | expose [`Xn::free_map`], print the [`Report`] |
//! | libFS installs a type set / a root | [`Xn::register_fs`], [`Xn::add_root`] | persist them in the catalogue |
//! | read a block | [`Xn::insert_read`] after filling the frame from disk itself; for an [`Xn::unwritten`] data block, [`Xn::insert`] of a zeroed frame instead (its disk bytes are a former owner's) | — |
//! | map a cached block | [`Xn::bind`] (the one rights check; metadata read-only); an unwritten data block first passes [`Xn::may_bind`], then gets a zeroed frame | map the frame |
//! | allocate / free / change metadata (libFS passes the proposed new image) | [`Xn::allocate`], [`Xn::free`], [`Xn::modify`] | zero and [`Xn::insert`] frames for new metadata blocks (data blocks get one when first used); unmap frames `free` releases |
//! | write a block | [`Xn::write_begin`] → submit; completion: [`Xn::write_done`] / [`Xn::write_failed`] | — |
//! | write a data block from another block's frame (XCP) | [`Xn::copy_begin`] (a batch: [`Xn::copy_check_memo`] with one [`AclMemo`]) → submit from the source's frame; completion: [`Xn::copy_done`] | release the destination's old frame, if any |
//! | flush | [`Xn::flush_begin`] → submit; completion: [`Xn::flush_done`], then [`Xn::reap`] with a budget | — |
//! | evict a clean block | [`Xn::evict`] | reuse the frame |
//! | views | [`Xn::block`], [`Xn::blocks`], [`Xn::will_free`], [`Xn::usage`], [`Xn::owns`], [`Xn::size`] | — |
//!
//! # Invariants (what the host tests check)
//!
//! * The free map is the complement of the registry; the registry is the
//!   blocks reachable in core from the roots plus the will-free list;
//!   nothing is owned twice.
//! * Every metadata block's in-core `owns` is exactly the set of live registry
//!   entries naming it as parent (changes go only through the checks).
//! * `owns` run again after a change (from the last pass before the first
//!   read of a changed word, taking over the old run where the new one
//!   stands as it stood: `rerun`, with `live`'s registers) says what a
//!   whole run over the new content says, refusals included.
//! * In every crash state — the durable writes plus any subset of those
//!   completed or in flight since the last completed flush — every pointer
//!   reachable from a root leads to content written for it, recovery finds
//!   nothing owned twice, and nothing reachable there is free in the
//!   running XN.
//!
//! # Limits
//!
//! * A block changes parent only by free and allocate (no in-place move,
//!   Ganger's third rule is left to libFSes as in Xok).
//! * Xok's two taint exceptions (temporary file systems, unattached
//!   subtrees) are not implemented: every allocated block is ordered.
//! * A duplicate found by recovery is reported, not repaired: the second
//!   claim stays in its metadata and cannot be freed through XN.
//! * Durability per block is tracked exactly for up to 4 open flush epochs
//!   with completions; beyond that a write counts as durable later, never
//!   earlier.
//!
//! ```
//! use oxok_abi::xn::{BLOCK_SIZE, DATA, rights};
//! use oxok_xn::{Asm, Extent, Frame, Frames, Refusal, Xn, template};
//!
//! struct Mem(Vec<[u8; BLOCK_SIZE]>);
//! impl Frames for Mem {
//!     fn read(&self, f: Frame) -> Option<&[u8; BLOCK_SIZE]> { self.0.get(f.raw() as usize) }
//!     fn write(&mut self, f: Frame) -> Option<&mut [u8; BLOCK_SIZE]> { self.0.get_mut(f.raw() as usize) }
//! }
//!
//! // A one-block "inode": u32 start at 0, u32 length at 4 (data blocks);
//! // owner principal (u64) at 8 with read and write.
//! let owns = Asm::new().ld32(0, 7, 0).ld32(1, 7, 4).ext(0, 1, 2);
//! let acl = Asm::new().ld64(0, 7, 8).prin(0, rights::ALL);
//! let size = Asm::new().ld32(0, 7, 4).shl(0, 0, 12).size(0);
//! let mut xn = Xn::new(64)?;
//! let fs = xn.register_fs(&[&template(&owns, &acl, &size)]).map_err(|_| Refusal::BadFs)?;
//!
//! let mut mem = Mem(vec![[0; BLOCK_SIZE]; 4]);
//! let mut inode = [0u8; BLOCK_SIZE];
//! inode[8] = 42; // owned by principal 42
//! xn.add_root(&mut mem, fs, 1, 1, Frame::from_word(0), &inode)?;
//!
//! // Principal 42 allocates blocks 10..13 and says so in the inode.
//! inode[0] = 10;
//! inode[4] = 3;
//! xn.allocate(&mut mem, &[42], 1, &inode, Extent::new(10, 3, DATA))?;
//! assert!(xn.is_tainted(10));
//!
//! // Claiming one more block than declared is refused.
//! let mut greedy = inode;
//! greedy[4] = 5;
//! assert_eq!(xn.allocate(&mut mem, &[42], 1, &greedy, Extent::new(13, 1, DATA)), Err(Refusal::OwnsMismatch(1)));
//! // So is anyone else.
//! assert_eq!(xn.modify(&mut mem, &[7], 1, &inode), Err(Refusal::Denied(1)));
//! // The inode may not reach the disk before its blocks do.
//! assert_eq!(xn.write_begin(&mem, 1), Err(Refusal::TaintedPointer { block: 1, child: 10 }));
//! # Ok::<(), Refusal>(())
//! ```

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

mod aclmemo;
mod asm;
mod blockmap;
mod blockset;
mod cache;
mod copy;
mod creds;
mod error;
mod extent;
mod frame;
mod freemap;
mod insn;
mod live;
mod meta;
mod op;
mod order;
mod readset;
mod recover;
mod registry;
mod rerun;
mod rows;
mod spans;
mod template;
mod udf;
mod verify;
mod xn;

pub use aclmemo::AclMemo;
pub use asm::{Asm, template};
pub use blockmap::BlockMap;
pub use blockset::BlockSet;
pub use copy::{Copy, CopyPlan, CopyReceipt};
pub use creds::Creds;
pub use error::Refusal;
pub use extent::{Extent, Owned, SetError};
pub use frame::Frame;
pub use freemap::FreeMap;
pub use insn::{Alu, AluImm, Insn, Reg};
pub use order::{FlushReceipt, WritePlan, WriteReceipt};
pub use readset::ReadSet;
pub use recover::{Duplicate, Report};
pub use rows::RowSet;
pub use spans::Spans;
pub use template::{Acl, OwnsError, Template};
pub use udf::{Emit, Fault, Udf};
pub use verify::{VerifyError, verify};
pub use xn::{BlockView, Frames, FsId, MEMOS, Root, Xn};
