//! Capabilities the kernel hands boot programs, as their creator: the
//! programs of one step (started together, `&` on the command line) get a
//! call-only capability for each other, so they can reach each other by
//! protected control transfer and directed yield — and nobody else can
//! reach them without being handed one. Every boot program also gets a
//! capability for the console (read, write, grant): console input and
//! output are the kernel's to hand out, and a parent passes it on. And
//! every boot program gets a capability on `/8`, every principal, with
//! every right: the machine's owner named it on the command line, so it
//! may act for anyone on the disk, and it mints the principals of the
//! programs it starts with `cap_narrow` (init gives the disk file server
//! `/8/DISK_PRINCIPAL`). Nothing passes it on by itself: a child acts for
//! no principal unless its parent grants it one.

use crate::env::{EnvId, EnvTable, env_name};
use oxok_cap::{Cap, Kind, Name, Rights};

/// Gives every environment in `step` a capability with only
/// [`Rights::CALL`] for every other one. A full list just goes without.
pub fn introduce(envs: &mut EnvTable, step: &[EnvId]) {
    for &me in step {
        if let Some(env) = envs.get(me) {
            let console = Rights::READ.union(Rights::WRITE).union(Rights::GRANT);
            let _ = env.caps.insert(Cap::new(Name::console(), console));
            let _ = env.caps.insert(Cap::new(Name::kind_root(Kind::Principal), Rights::ALL));
        }
        for &peer in step.iter().filter(|&&p| p != me) {
            if let Some(env) = envs.get(me) {
                let _ = env.caps.insert(Cap::new(env_name(peer), Rights::CALL));
            }
        }
    }
}
