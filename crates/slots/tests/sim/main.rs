//! Simulated-machine tests of the slot policy: CPU shares follow slot
//! ownership, hostile environments are charged and destroyed while the
//! others keep their share, critical sections are bounded, spare time goes
//! only to those who asked.

mod fuzz;
mod hostile;
mod protocol;
mod shares;
mod spare;
mod table;
mod world;

use oxok_abi::env_id::EnvId;

/// The environment id a test's number names, through the contract's codec
/// (a number no id has stops the test at compile time).
pub const fn env(n: u32) -> EnvId {
    match EnvId::decode(n as u64) {
        Some(id) => id,
        None => panic!("not an environment id"),
    }
}
