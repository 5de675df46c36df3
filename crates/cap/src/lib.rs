//! Oxok's capabilities: hierarchically-named capabilities with rights,
//! capability lists and guard checks, after Xok (SOSP'97 §5.1) and Mazières
//! & Kaashoek's "Secure applications need flexible operating systems".
//!
//! Pure logic, `no_std`, no `unsafe`, no panics on anything a caller
//! controls, and no allocation but a capability list's, which grows with use
//! and fails instead of panicking when memory is short: every input may
//! come from a hostile user program by way of the kernel.
//!
//! # The model
//!
//! - A [`Name`] is a path of up to [`MAX_DEPTH`] `u64` components. The
//!   kernel gives every resource a *physical name*: a [`Kind`] number, the
//!   resource's physical identity, and a generation that changes whenever the
//!   resource is reallocated — [`Name::frame`] `/1/frame/gen`, [`Name::env`]
//!   `/2/id/gen`, [`Name::slot`] `/3/cpu/index/gen`; later filters (4), rings
//!   (5) and disk extents (6); the console `/7/0`; and principals
//!   [`Name::principal`] `/8/p`, which name no resource but an identity
//!   XN's `acl` functions grant rights to (holding a capability that covers
//!   `/8/p` is acting as principal `p`). A name covers every name it is a
//!   prefix of.
//! - [`Rights`] are `READ`, `WRITE`, `GRANT`, `CALL` and `EXECUTE`.
//! - A [`Cap`] is a name plus rights. `a` [dominates](Cap::dominates) `b`
//!   when `a.name` covers `b.name` and `a.rights ⊇ b.rights`. [`Cap::ROOT`]
//!   dominates everything; the kernel holds it.
//! - Every resource is guarded by its physical name. A call names the
//!   capability it acts with *explicitly*, by slot, and the kernel [`check`]s
//!   it against the guard once, when it binds the resource (Oxok principles
//!   3 and 8). Because the generation is part of the guard, a capability
//!   kept after its resource was freed and reallocated no longer matches.
//! - Each environment has a [`CapList`]. Authority moves only downwards:
//!   [`Cap::derive`] / [`derive_into`] make a dominated child (no right
//!   needed, as in Xok); [`grant`] copies a possibly weakened capability to
//!   another list and needs `GRANT` on the source. Neither can widen.
//! - [`revoke_matching`] removes every capability a name covers; the kernel
//!   runs it over the lists when a resource dies or an environment is
//!   destroyed.
//! - Every list slot also records its capability's derivation
//!   [`Lineage`]. [`derive_child`] makes a child with a subset of the
//!   source's rights and the same name (the kernel's `cap_derive`, and every
//!   `cap_grant`); [`narrow_child`] makes one whose name is the source's
//!   extended by one component, and needs `GRANT` (the kernel's
//!   `cap_narrow`: how `/8/p` is minted from `/8`); [`revoke_derived`]
//!   removes, from a list, everything
//!   derived from one capability, however many derivations deep (the
//!   kernel's `cap_revoke` runs it over every list).
//!
//! ```
//! use oxok_cap::{Cap, CapError, CapList, Name, Rights, check_slot, grant};
//!
//! // The kernel allocates frame 42 (generation 7) to environment A and
//! // mints a capability on it into A's list.
//! let frame = Name::frame(42, 7);
//! let mut a = CapList::<64>::new();
//! let slot = a.insert(Cap::new(frame, Rights::ALL))?;
//!
//! // A shares it read-only with B (A's copy keeps its rights).
//! let mut b = CapList::<64>::new();
//! let b_slot = grant(&a, slot as u64, &mut b, Rights::READ)?;
//!
//! // B maps it: the kernel checks B's named slot against the frame's guard.
//! assert!(check_slot(&b, b_slot as u64, &frame, Rights::READ).is_ok());
//! assert_eq!(
//!     check_slot(&b, b_slot as u64, &frame, Rights::WRITE),
//!     Err(CapError::Denied)
//! );
//! // After the frame is freed and reallocated, the old name no longer matches.
//! assert_eq!(
//!     check_slot(&b, b_slot as u64, &Name::frame(42, 8), Rights::READ),
//!     Err(CapError::WrongName)
//! );
//! # Ok::<(), CapError>(())
//! ```
//!
//! # Unforgeability
//!
//! A capability is unforgeable because it lives only in kernel memory; users
//! name it by slot. A [`Cap`] is plain data, and [`Cap::encode`] /
//! [`Cap::decode`] exist only to describe capabilities (registers, exposed
//! read-only tables, debugging output): the kernel never accepts a decoded
//! capability from user memory as a credential.
//!
//! # Errors and the ABI
//!
//! Operations fail with a [`CapError`]; this crate knows nothing of the
//! kernel ABI. The kernel maps the errors onto its codes as follows:
//!
//! | `CapError` | ABI error |
//! | --- | --- |
//! | `BadSlot`, `EmptySlot`, `WrongName` | `BadCap` |
//! | `Denied`, `Widen` | `Denied` |
//! | `Full` | `NoMemory` |
//! | `TooDeep`, `BadRights` | `Invalid` |

#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

mod cap;
mod error;
mod grant;
mod guard;
mod lineage;
mod list;
mod name;
mod revoke;
mod rights;

pub use cap::{Cap, WIRE_WORDS};
pub use error::CapError;
pub use grant::{derive_into, grant};
pub use guard::{check, check_slot};
pub use lineage::{
    Lineage, MAX_LINEAGE, derive_child, derive_child_with, narrow_child, narrow_child_with, revoke_derived,
};
pub use list::{CapList, DerivedVacancy, Vacancy};
pub use name::{Kind, MAX_DEPTH, Name};
pub use revoke::revoke_matching;
pub use rights::Rights;
