//! CPU calls: yield.

use super::Cx;
use super::args::Target;
use super::check::call_cap;
use crate::sched;
use oxok_abi::Error;

/// Plain or directed yield: the rest of the slot goes to the next slot or
/// to `target`. The caller's registers are saved with `rax` 0 and it
/// resumes from them at its next turn. Inlined always into its dispatch
/// arm (a call's arm is its whole path).
#[inline(always)]
pub fn yield_cpu(cx: &mut Cx<'_>, target: Target) -> Result<[u64; 0], Error> {
    let to = match target {
        Target { named: false, .. } => None,
        Target { env, slot, .. } => {
            let Some(id) = env.filter(|&id| cx.k.envs.alive(id)) else {
                return Err(Error::BadEnv);
            };
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
    cx.entered = sched::yield_now(cx.k, cx.frame, cx.caller, to);
    cx.replaced = true;
    Ok([])
}
