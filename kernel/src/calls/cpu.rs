//! CPU calls: yield.

use super::Cx;
use crate::sched;
use oxok_abi::Error;

/// Plain or directed yield.
pub fn yield_cpu(cx: &mut Cx<'_>, target: u64) -> Result<[u64; 0], Error> {
    if target == 0 {
        sched::yield_to(cx.k, cx.frame, None);
        return Ok([]);
    }
    let id = u32::try_from(target).map_err(|_| Error::BadEnv)?;
    if !cx.k.envs.alive(id) {
        return Err(Error::BadEnv);
    }
    if !cx.k.runq.contains(&id) {
        return Err(Error::Busy);
    }
    sched::yield_to(cx.k, cx.frame, Some(id));
    Ok([])
}
