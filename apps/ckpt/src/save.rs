//! Saving a process tree: stop it at a consistent cut, then read
//! everything the kernel exports about each member.
//!
//! **The tree.** The root is named by a capability the checkpointer holds
//! (it started it). A member's children are the environments its
//! capability list names whose kernel parent (the exposed environment
//! table, which nobody but the kernel writes) is that member; the
//! checkpointer copies their capabilities out with `cap_copy`, which needs
//! write on the member. Each member is stopped (`env_stop`) before its list
//! is read, so no child appears behind the walk.
//!
//! **The cut.** A stopped environment's exported registers already encode
//! whatever it was doing — a sleep, a restartable batch, a wait for a
//! reply (Fluke's atomic calls). A transfer between two members is taken
//! as it is and bound again at restore (`crate::transfer`). A wait for an
//! environment outside the tree, or a call served for one, finishes by
//! itself (the reply lands in the stopped caller's registers), so it is
//! simply waited out: the tree continues briefly and is stopped again. So is a request on an
//! open file (`crate::files::busy`): until its reply's position is in the
//! libOS's open-file table, the table may be behind the server.

use crate::image::{CapRec, EnvRec, FrameRec, Image, MapRec, NO_PARENT, STATE_WORDS};
use crate::{CkptError, Step};
use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;
use oxok_libos::abi::layout::{PAGE_SIZE, USER_TOP};
use oxok_libos::abi::{CAP_SLOTS, ENV_WAITING, ENV_ZOMBIE, MAPPINGS_MAX, Mapping, cap_kind};
use oxok_libos::{exposed, sys};

/// Tries at a consistent cut before giving up.
const CUT_TRIES: u32 = 200;

/// One member of a stopped tree: the checkpointer's capability slot for
/// it, its id, its parent's index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    pub slot: u64,
    pub id: u64,
    pub parent: u64,
}

/// A stopped process tree, root first.
#[derive(Debug, Default)]
pub struct Tree {
    pub members: Vec<Member>,
}

impl Tree {
    /// Stops the tree rooted at the environment named by `root_slot`.
    pub fn stop(root_slot: u64) -> Result<Tree, CkptError> {
        let [kind, id, _] = sys::cap_info(root_slot).at("cap_info(root)")?;
        if kind != cap_kind::ENV {
            return Err(CkptError::Unsupported("the root slot names no environment"));
        }
        let mut tree = Tree { members: vec![Member { slot: root_slot, id, parent: NO_PARENT }] };
        if let Err(e) = tree.stop_all() {
            tree.continue_all();
            return Err(e);
        }
        Ok(tree)
    }

    /// Stops every member, discovering children as it goes.
    fn stop_all(&mut self) -> Result<(), CkptError> {
        let mut i = 0;
        while i < self.members.len() {
            let m = self.members[i];
            sys::env_stop(m.slot, 1).at("env_stop")?;
            for s in 1..CAP_SLOTS as u64 {
                let Ok([kind, number, rights]) = sys::cap_peek(m.slot, s) else { continue };
                if kind != cap_kind::ENV || number == m.id || self.members.iter().any(|o| o.id == number) {
                    continue;
                }
                let child =
                    exposed::env_entry(number).is_some_and(|r| u64::from(r.parent) == m.id && r.status != ENV_ZOMBIE);
                if !child {
                    continue;
                }
                if self.members.len() >= crate::image::MAX_ENVS {
                    return Err(CkptError::Unsupported("more than 16 processes"));
                }
                let slot = sys::cap_copy(m.slot, s, rights).at("cap_copy(child)")?;
                self.members.push(Member { slot: slot[0], id: number, parent: i as u64 });
            }
            i += 1;
        }
        Ok(())
    }

    /// Lets every member run again.
    pub fn continue_all(&self) {
        for m in &self.members {
            let _ = sys::env_stop(m.slot, 0);
        }
    }

    /// Destroys every member, leaves first.
    pub fn destroy(self) {
        for m in self.members.iter().rev() {
            let _ = sys::env_destroy(m.slot);
        }
    }

    /// The members' states at a consistent cut (see the module
    /// documentation), the tree stopped.
    pub fn cut(&mut self) -> Result<Vec<Vec<u64>>, CkptError> {
        for _ in 0..CUT_TRIES {
            let mut states = Vec::new();
            let mut waiting = Vec::new();
            let mut consistent = true;
            for m in &self.members {
                let before = exposed::env_entry(m.id).is_some_and(|r| r.status == ENV_WAITING);
                let st = state_of(m.slot)?;
                // A reply from outside may land in a stopped waiter: a
                // state read across it is not taken.
                let after = exposed::env_entry(m.id).is_some_and(|r| r.status == ENV_WAITING);
                consistent &= before == after && !crate::files::busy(m.slot, m.id)?;
                waiting.push(after);
                states.push(st);
            }
            let ids: Vec<u64> = self.members.iter().map(|m| m.id).collect();
            if consistent && crate::transfer::consistent(&ids, &states, &waiting) {
                return Ok(states);
            }
            self.continue_all();
            let _ = sys::yield_cpu(0);
            self.stop_all()?;
        }
        Err(CkptError::Busy)
    }

    /// Reads the whole tree into an image (`states` from [`Tree::cut`]).
    /// With `carry`, the content of every open file goes in the image.
    pub fn capture(&self, states: Vec<Vec<u64>>, carry: bool) -> Result<Image, CkptError> {
        let clock = exposed::clock();
        let mut img = Image {
            saver: exposed::self_id(),
            boot: crate::image::boot_stamp(),
            ticks: clock.map_or(0, |c| c.ticks),
            tick_hz: clock.map_or(0, |c| c.tick_hz),
            ..Image::default()
        };
        let mut by_pfn: BTreeMap<u64, u64> = BTreeMap::new();
        for ((i, m), state) in self.members.iter().enumerate().zip(states) {
            let maps = self.read_memory(i, m, &mut img, &mut by_pfn)?;
            let mut caps = Vec::new();
            for s in 1..CAP_SLOTS as u64 {
                if let Ok([kind, number, rights]) = sys::cap_peek(m.slot, s) {
                    caps.push(CapRec { slot: s, kind, number, rights });
                }
            }
            let mut name = [0u8; 32];
            if let Some(row) = exposed::env_entry(m.id) {
                name[..16].copy_from_slice(&row.name);
            }
            img.envs.push(EnvRec { id: m.id, parent: m.parent, name, state, caps, maps });
        }
        crate::files::collect(&mut img, carry)?;
        Ok(img)
    }

    /// Lists member `m`'s mappings and reads each frame not read yet.
    fn read_memory(
        &self,
        index: usize,
        m: &Member,
        img: &mut Image,
        by_pfn: &mut BTreeMap<u64, u64>,
    ) -> Result<Vec<MapRec>, CkptError> {
        let mut maps = Vec::new();
        let mut buf = [Mapping::default(); MAPPINGS_MAX as usize];
        let mut page = vec![0u64; (PAGE_SIZE / 8) as usize];
        let mut va = 0;
        while va < USER_TOP {
            let [found, next] =
                sys::env_mappings(m.slot, va, buf.as_mut_ptr() as u64, MAPPINGS_MAX).at("env_mappings")?;
            for rec in &buf[..found as usize] {
                let frame = match by_pfn.get(&rec.frame) {
                    Some(&f) => f,
                    None => {
                        sys::env_peek(m.slot, rec.va, page.as_mut_ptr() as u64).at("env_peek")?;
                        let owner = exposed::frame_entry(rec.frame)
                            .and_then(|e| self.members.iter().position(|o| o.id == u64::from(e.owner)))
                            .unwrap_or(index);
                        if img.frames.len() >= crate::image::MAX_FRAMES {
                            return Err(CkptError::Unsupported("more than 64 MiB of memory"));
                        }
                        img.frames.push(FrameRec { pfn: rec.frame, owner: owner as u64, words: page.clone() });
                        let f = (img.frames.len() - 1) as u64;
                        by_pfn.insert(rec.frame, f);
                        f
                    }
                };
                maps.push(MapRec { va: rec.va, flags: rec.flags, frame });
            }
            va = next;
        }
        Ok(maps)
    }
}

/// The exported state of the environment named by `slot`, as words.
pub fn state_of(slot: u64) -> Result<Vec<u64>, CkptError> {
    let mut st = vec![0u64; STATE_WORDS];
    sys::env_get_state(slot, st.as_mut_ptr() as u64).at("env_get_state")?;
    Ok(st)
}

/// Stops, cuts and reads the tree rooted at `root_slot` (with `carry`, the
/// content of its open files too, for another machine). On success the
/// tree stays stopped (continue or destroy it); on failure it runs on.
pub fn checkpoint(root_slot: u64, carry: bool) -> Result<(Tree, Image), CkptError> {
    let mut tree = Tree::stop(root_slot)?;
    let img = tree.cut().and_then(|states| tree.capture(states, carry));
    match img {
        Ok(img) => Ok((tree, img)),
        Err(e) => {
            tree.continue_all();
            Err(e)
        }
    }
}
