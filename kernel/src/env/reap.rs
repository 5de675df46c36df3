//! Tearing destroyed environments down in bounded steps, collecting
//! unreachable frames, and counting mappings as they go (`map` counts
//! them as they come).

use super::{Dying, EnvId, EnvTable, Row, publish_heap};
use crate::account;
use crate::mem::addr::{Pfn, PhysAddr};
use crate::mem::frame;
use oxok_abi::frames::{OWNER_FIRST_ENV, OWNER_FREE, OWNER_ORPHAN, OWNER_RESERVED};
use oxok_cap::{Cap, Kind};

impl EnvTable {
    /// Continues tearing down destroyed environments for at most `budget`
    /// last-level page tables (`usize::MAX`: until done). When one is
    /// finished its account is given back everything it was charged (1
    /// environment, its frames and page tables — except frames that live
    /// on as orphans, which stay charged until their last mapping goes,
    /// see `orphans`) and its table row is free again.
    /// Returns true when nothing is left to reap.
    pub fn reap(&mut self, budget: usize) -> bool {
        let EnvTable { rows, dying, .. } = self;
        let Some(d) = dying.front_mut() else { return true };
        let done = d.space.teardown_step(&mut d.cursor, budget, |_va, entry| {
            let pa = PhysAddr::of_entry(entry);
            if release_mapping(pa) {
                collect_in(&mut rows[..], pa.pfn());
            }
        });
        if !done {
            return false;
        }
        let Some(Dying { id, app_area, account, frames, heap, .. }) = dying.pop_front() else { return true };
        let mut kept = 0;
        frame::with(|f| {
            if let Some(area) = app_area {
                area.free_in(f);
            }
            // Its row's list holds exactly the frames it still owns (the
            // row is not reused before this), and each step takes one off.
            for _ in 0..f.owned_count(id.row()) {
                let Some(pfn) = f.first_owned(id.row()) else { break };
                if f.entry(pfn).is_some_and(|e| e.maps == 0) {
                    f.free(pfn.addr());
                } else {
                    // Still mapped elsewhere: an orphan, still charged here.
                    f.set_owner(pfn, OWNER_ORPHAN);
                    if super::orphans::adopt(pfn, account) {
                        kept += 1;
                    }
                }
            }
        });
        let orphans = account::owned(kept);
        // A zombie still in the row keeps its environment charged, and the
        // account attached, until its creator reaps it (`Row::held`).
        let row = rows.get_mut(id.row());
        let held = row.as_ref().is_some_and(|s| s.zombie.is_some_and(|z| z.id == id.raw()));
        let back = oxok_account::Amount::new(frames.saturating_sub(orphans.frames), u64::from(!held))
            .with_heap(heap.saturating_sub(orphans.heap));
        account::uncharge_amount(account, back);
        #[cfg(feature = "model-process")]
        crate::model::release(id.row());
        if !held {
            account::with(|a| a.detach(account));
        }
        if let Some(s) = row {
            s.tearing = false;
            if held {
                s.held = Some(account);
            }
        }
        publish_heap();
        dying.is_empty()
    }

    /// True if destroyed environments are still being torn down (there is
    /// work for [`Self::reap`]).
    pub fn reaping(&self) -> bool {
        !self.dying.is_empty()
    }

    /// Frees frame `pfn` if it belongs to a live environment and nothing
    /// reaches it any more: no mapping and no capability anywhere. Its owner
    /// could never name it again, so this is no policy, only the end of a
    /// leak (a page the libOS unmapped after dropping its capability, or a
    /// copy-on-write original whose last sharer died).
    pub fn collect(&mut self, pfn: Pfn) {
        collect_in(&mut self.rows[..], pfn);
    }
}

fn collect_in(rows: &mut [Row], pfn: Pfn) {
    let Some(entry) = frame::with(|f| f.entry(pfn).copied()) else { return };
    if entry.owner < OWNER_FIRST_ENV || entry.maps != 0 || entry.refs != 0 {
        return;
    }
    let Some(id) = EnvId::decode(u64::from(entry.owner)) else { return };
    let Some(env) = rows.get_mut(id.row()).and_then(|s| s.env.as_deref_mut()).filter(|e| e.id == id) else {
        return;
    };
    frame::with(|f| f.free(pfn.addr()));
    account::uncharge_frames(env.account, 1);
    env.publish_frames();
}

/// Releases one page-table entry's mapping for an address space dropped
/// before it was torn down (`oxok_hw::mem::paging::on_leaf_release`): as
/// [`release_mapping`], except that a frame this leaves unreachable is not
/// collected here (no table at hand); it stays its owner's, freed with the
/// owner's other frames when the owner ends.
pub fn release_leaf(entry: u64) {
    let _ = release_mapping(PhysAddr::of_entry(entry));
}

/// Drops one mapping of the frame at `pa`; an orphaned frame is freed when
/// its last mapping goes. Returns true if an environment's frame just
/// became unreachable (no mapping, no capability): the caller passes it to
/// [`EnvTable::collect`]. Inlined always: it runs for every page a
/// teardown or an unmapping releases, where the compiler's own choice
/// flips with unrelated changes (a call here cost `fork_4mb_exit_wait`
/// 3 %).
#[inline(always)]
pub fn release_mapping(pa: PhysAddr) -> bool {
    let (freed_orphan, unreachable) = frame::with(|f| {
        let (free, unreachable) = match f.entry_mut(pa.pfn()) {
            Some(e) => {
                e.maps = e.maps.saturating_sub(1);
                let idle = e.maps == 0;
                (e.owner == OWNER_ORPHAN && idle, e.owner >= OWNER_FIRST_ENV && idle && e.refs == 0)
            }
            None => (false, false),
        };
        if free {
            f.free(pa);
        }
        (free, unreachable)
    });
    if freed_orphan {
        super::orphans::freed(pa.pfn());
    }
    unreachable
}

/// The frame number a frame capability names, if it is one.
pub fn frame_of_cap(cap: &Cap) -> Option<Pfn> {
    let comps = cap.name.components();
    (cap.name.kind() == Some(Kind::Frame) && comps.len() == 3).then(|| Pfn::from_word(comps[1]))
}

/// Counts one more (`+1`) or one fewer (`-1`) capability naming a frame in
/// the frame table's `refs`, if `cap` names a frame of the current
/// generation (a stale capability names nothing any more).
pub fn count_frame_ref(cap: &Cap, delta: i32) {
    let comps = cap.name.components();
    if cap.name.kind() != Some(Kind::Frame) || comps.len() != 3 {
        return;
    }
    frame::with(|f| {
        if let Some(e) = f.entry_mut(Pfn::from_word(comps[1]))
            && u64::from(e.generation) == comps[2]
            && !matches!(e.owner, OWNER_FREE | OWNER_RESERVED)
        {
            e.refs = if delta > 0 { e.refs.saturating_add(1) } else { e.refs.saturating_sub(1) };
        }
    });
}
