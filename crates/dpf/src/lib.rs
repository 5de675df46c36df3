//! Oxok's packet filters in the style of DPF (Engler & Kaashoek,
//! SIGCOMM'96): the verifier, the semantic overlap check, every installed
//! filter merged into one trie with hash nodes, and the demultiplexer, for
//! the wire format in [`oxok_abi::filter`] (read that module first: it
//! describes the language and the encoding).
//!
//! The kernel decides which environment owns each arriving packet by running
//! the filters environments installed. A filter is a conjunction of masked
//! equalities on 8/16/32-bit big-endian fields, with header-length shifts
//! (IPv4's IHL × 4) moving the base of the fields after them. Pure logic,
//! `no_std`, no `unsafe`, every allocation fallible, no panic on any input.
//!
//! # What the kernel calls
//!
//! | when | call | what it does |
//! | --- | --- | --- |
//! | boot | [`Dpf::new`]`(capacity, seed)` | an empty table for one interface; `seed` keys the hash nodes |
//! | install call | [`decode`]`(&block)` | the [`FILTER_BYTES`](oxok_abi::filter::FILTER_BYTES) block copied from the user → a canonical [`Filter`], or a [`VerifyError`] ([`VerifyError::code`] is an [`oxok_abi::filter::reject`] code) |
//! | install call | [`Dpf::insert`]`(filter, owner, refines)` | after the kernel checked the caller's capability for `refines` (if any): refuses overlap, checks the refinement, merges into the trie → a [`FilterId`] for the kernel to wrap in a capability, or an [`InstallError`] ([`InstallError::code`]) |
//! | remove call, owner's end | [`Dpf::remove`]`(id)`, [`Dpf::remove_where`] | takes the filter out of the trie; its refinements now refine its parent |
//! | each received packet | [`Dpf::demux`]`(packet)` | the most specific filter accepting it, and its owner, or `None` (drop, count) |
//! | exposed filter table | [`Dpf::iter`], [`Filter::to_raw`] | every installed filter with owner, atoms and the filter it refines |
//!
//! # The overlap rule
//!
//! Xok refused only exact duplicates, so anyone could install a wider filter
//! (or the same one with its atoms reordered) and steal a connection's
//! packets. Here a filter is refused if it **could** accept a packet some
//! installed filter accepts — duplicates, supersets, partial overlaps —
//! unless it names the installed filter it refines (`refines`; the kernel
//! demands that filter's capability) and is provably a strict subset of it.
//! Then the installed filters that accept any one packet always form a
//! single refinement chain, and [`Dpf::demux`] gives the packet to the most
//! specific of them: a listener refines its own filter per connection, and
//! nobody without the listener's capability can take its traffic.
//!
//! Deciding: two conjunctions of masked equalities intersect unless some
//! byte both constrain gets contradictory bits. Fields after a shift lie at
//! a base only known per packet, so constraints are compared only at bases
//! both filters reach through identical shifts; anything else counts as
//! possibly overlapping (refused), never the other way round. Refinement is
//! proven the same way: every constraint of the refined filter appears,
//! at least as strict, in the new one.
//!
//! # Cost
//!
//! Filters are merged into one trie (see the `trie` module): filters that
//! test the same field with different values share one hash node, so demux
//! of a thousand port filters reads the port once and does one lookup. Work
//! per packet is bounded by the trie size (at most `capacity × MAX_ATOMS`
//! nodes) and in the common case does not grow with the number of filters.
//!
//! ```
//! use oxok_dpf::{Dpf, InstallError, build, decode};
//!
//! let mut dpf: Dpf<u32> = Dpf::new(64, 0x1234);
//! let listen = dpf.insert(build::tcp_listen(80).build()?, 7, None).unwrap();
//! // A thief's wider filter (all TCP) overlaps the listener: refused.
//! let thief = build::ipv4(build::PROTO_TCP).build()?;
//! assert!(matches!(dpf.insert(thief, 9, None), Err(InstallError::Overlap { .. })));
//! // The listener refines its own filter for one connection.
//! let conn = build::tcp_connection((0x0a00_0002, 80), (0x0a00_0001, 5555));
//! let block = conn.raw().to_bytes(); // what the libOS hands the install call
//! let c = dpf.insert(decode(&block)?, 8, Some(listen)).unwrap();
//! assert_eq!(dpf.get(c).unwrap().refines, Some(listen));
//! # Ok::<(), oxok_dpf::VerifyError>(())
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod build;
mod filter;
mod hash;
mod scope;
mod shape;
mod table;
mod trie;
mod verify;

pub use build::Builder;
pub use filter::{Atom, Field, Filter};
pub use scope::{Scope, scope};
pub use table::{Dpf, FilterId, InstallError, Installed};
pub use verify::{Reject, VerifyError, decode, verify, verify_atoms};
