//! Calls about the calling environment itself.

use super::Cx;
use oxok_abi::Error;

/// Ends the caller.
pub fn env_exit(cx: &mut Cx<'_>, code: u64) -> Result<[u64; 0], Error> {
    let id = cx.caller;
    let name = cx.env()?.name.clone();
    log::info!("env {id} ({name}) exited with status {}", code as i64);
    if cx.k.envs.destroy(id).is_err() {
        log::warn!("env {id}: exit of a dead environment");
    }
    Ok([])
}

/// The caller's id.
pub fn env_self(cx: &mut Cx<'_>) -> Result<[u64; 1], Error> {
    Ok([u64::from(cx.caller)])
}
