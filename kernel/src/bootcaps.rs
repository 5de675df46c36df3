//! Capabilities the kernel hands boot programs, as their creator: the
//! programs of one step (started together, `&` on the command line) get a
//! call-only capability for each other, so they can reach each other by
//! protected control transfer and directed yield — and nobody else can
//! reach them without being handed one. Every boot program also gets a
//! capability for the console (read, write, grant): console input and
//! output are the kernel's to hand out, and a parent passes it on.

use crate::env::{EnvId, EnvTable, env_name};
use oxok_cap::{Cap, Name, Rights};

/// Gives every environment in `step` a capability with only
/// [`Rights::CALL`] for every other one. A full list just goes without.
pub fn introduce(envs: &mut EnvTable, step: &[EnvId]) {
    for &me in step {
        if let Some(env) = envs.get(me) {
            let console = Rights::READ.union(Rights::WRITE).union(Rights::GRANT);
            let _ = env.caps.insert(Cap::new(Name::console(), console));
        }
        for &peer in step.iter().filter(|&&p| p != me) {
            if let Some(env) = envs.get(me) {
                let _ = env.caps.insert(Cap::new(env_name(peer), Rights::CALL));
            }
        }
    }
}
