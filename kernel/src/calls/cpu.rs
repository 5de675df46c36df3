//! CPU calls: yield.

use super::Cx;
use super::check::{call_cap, split_target};
use crate::sched;
use oxok_abi::Error;

/// Plain or directed yield: the rest of the slot goes to the next slot or
/// to `target`. The caller's registers are saved with `rax` 0 and it
/// resumes from them at its next turn.
pub fn yield_cpu(cx: &mut Cx<'_>, target: u64) -> Result<[u64; 0], Error> {
    let to = match split_target(target) {
        (0, _) => None,
        (id, slot) => {
            if !cx.k.envs.alive(id) {
                return Err(Error::BadEnv);
            }
            if id == cx.caller {
                None
            } else {
                if !sched::runnable(cx.k, id) {
                    return Err(Error::Busy);
                }
                call_cap(&mut cx.k.envs, cx.caller, slot, id)?;
                Some(id)
            }
        }
    };
    sched::yield_now(cx.k, cx.frame, cx.caller, to);
    cx.replaced = true;
    Ok([])
}
