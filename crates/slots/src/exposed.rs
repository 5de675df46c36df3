//! The read-only representation the kernel copies into an exposed page:
//! the rows are part of the contract and live in `oxok-abi`
//! ([`oxok_abi::slot_rows`]); this module re-exports them under the name
//! the policy has always used.

pub use oxok_abi::slot_rows::*;
