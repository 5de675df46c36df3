//! Host tests for the slot vector: placement, ownership changes,
//! generations, errors, and a model check.

mod basic;
mod model;

use oxok_abi::env_id::EnvId;

/// The environment id a test's number names, through the contract's codec
/// (a number no id has stops the test at compile time).
pub const fn env(n: u32) -> EnvId {
    match EnvId::decode(n as u64) {
        Some(id) => id,
        None => panic!("not an environment id"),
    }
}
