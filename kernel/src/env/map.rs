//! Mapping frames into an environment's space, split into a check and a
//! perform: the page tables above the page are made first (charged to
//! the environment's account), then the caller's own check runs (taking a
//! frame, say), and only then is the entry written, which cannot fail. A
//! refusal anywhere leaves every mapping as it was.

use super::Env;
use crate::account;
use crate::mem::access::Mappable;
use crate::mem::frame;
use oxok_abi::Error;

/// Maps `frame` into `env`'s space at `va` and counts the mapping
/// (`Exists` if something is mapped there). The page-table frames the
/// mapping needs are charged to `env`'s account first (`NoMemory`, nothing
/// changed, if the account has no room).
pub fn map_frame(env: &mut Env, va: u64, frame: Mappable, flags: u64) -> Result<(), Error> {
    map_with(env, va, flags, |current| match current {
        Some(_) => Err(Error::Exists),
        None => Ok(frame),
    })
    .map(|_| ())
}

/// Maps at `va` in `env`'s space, in three steps: the page tables above
/// `va` are made, charged to `env`'s account (`NoMemory`; tables made
/// stay charged, as every table until teardown); `check(current entry)`
/// refuses or gives what to map (a frame it takes, say, which it gives
/// back itself if dropped); the entry is written, replacing the current
/// one, and the new frame's mappings counted. Returns what `check` gave
/// and the replaced entry, whose mapping the caller releases.
pub fn map_with<F>(
    env: &mut Env,
    va: u64,
    flags: u64,
    check: impl FnOnce(Option<u64>) -> Result<F, Error>,
) -> Result<(F, Option<u64>), Error>
where
    for<'f> &'f F: Into<Mappable>,
{
    // Each table is charged before the walk takes its frame. The machine
    // can run out after a charge: what was charged and not made goes back.
    let acct = env.account;
    let mut charged = 0;
    let before = env.space.tables();
    let walked = env.space.leaf_for(va, || {
        account::charge_frames(acct, 1)?;
        charged += 1;
        Ok(())
    });
    let mapped = match walked {
        Ok(leaf) => check(leaf.entry()).map(|f| {
            let old = leaf.fill((&f).into(), flags);
            (f, old)
        }),
        Err(e) => Err(e),
    };
    settle_tables(env, before, charged);
    let (f, old) = mapped?;
    let pfn = (&f).into().pa().pfn();
    frame::with(|t| {
        if let Some(e) = t.entry_mut(pfn) {
            e.maps = e.maps.saturating_add(1);
        }
    });
    Ok((f, old))
}

/// Maps the run of pages from `va` on (one summary span of a last-level
/// table: `Invalid` otherwise) to `frames`, one page each, all or none:
/// the tables above are made first, charged to `env`'s account
/// (`NoMemory`; tables made stay charged), then `Exists` if any page of
/// the run is mapped, else every entry is written and every frame's
/// mappings counted.
pub fn map_run(env: &mut Env, va: u64, frames: &[Mappable], flags: u64) -> Result<(), Error> {
    let acct = env.account;
    let mut charged = 0;
    let before = env.space.tables();
    let walked = env.space.leaf_run_for(va, frames.len(), || {
        account::charge_frames(acct, 1)?;
        charged += 1;
        Ok(())
    });
    let mapped = match walked {
        Ok(run) if run.any_present() => Err(Error::Exists),
        Ok(run) => {
            run.fill(frames, flags);
            Ok(())
        }
        Err(e) => Err(e),
    };
    settle_tables(env, before, charged);
    mapped?;
    frame::with(|t| {
        for f in frames {
            if let Some(e) = t.entry_mut(f.pa().pfn()) {
                e.maps = e.maps.saturating_add(1);
            }
        }
    });
    Ok(())
}

/// After a walk that made page tables for `env` (its space had `before`
/// tables; `charged` were charged to its account on the way): the tables
/// made are the environment's kernel frames, a charge for one not made
/// goes back, and the row is republished if the count changed.
#[inline(always)]
fn settle_tables(env: &mut Env, before: u64, charged: u64) {
    let made = env.space.tables().saturating_sub(before);
    env.kernel_frames = env.kernel_frames.saturating_add(u32::try_from(made).unwrap_or(u32::MAX));
    if charged > made {
        account::uncharge_frames(env.account, charged - made);
    }
    if made > 0 {
        env.publish();
    }
}
