//! Restoring a process tree from an [`Image`] into fresh environments.
//!
//! Everything is checked before anything is built ([`Image::decode`]);
//! whatever the kernel refuses afterwards (a mapping it will not make, an
//! account that is full) destroys every environment built so far, which
//! frees every frame allocated for them, and drops the checkpointer's
//! capabilities: nothing half-built is left behind.
//!
//! **Re-binding.** Environment ids and frame numbers are new. Capability
//! slots keep their numbers: the slots are filled in order, a gap with a
//! read-only capability for the environment itself (harmless: it could
//! read itself anyway), a capability for a member with one for the new
//! member, a frame's with the new frame's, the console's with the
//! checkpointer's own console capability; capabilities for environments
//! outside the tree are not carried over (their slot holds a filler).
//! Pipe holder ids in shared frames are rewritten here, once per frame.
//! Each member then starts in its libOS's restore notice (see
//! `oxok_libos::restore`), which resumes the saved registers.

use crate::image::{Image, STATE_WORDS};
use crate::{CkptError, Step};
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::mem::offset_of;
use oxok_libos::abi::layout::pte;
use oxok_libos::abi::{ANY_FRAME, CAP_SLOTS, EnvState, PctState, Regs, cap_kind, rights, upcall};
use oxok_libos::fd::pipe;
use oxok_libos::{exec, exposed, pct, sys};

/// A restored tree: the checkpointer's slot and the new id of each member,
/// root first.
#[derive(Debug)]
pub struct Restored {
    pub members: Vec<(u64, u64)>,
}

/// Flags `page_map` accepts.
const MAP_FLAGS: u64 = pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_BITS;

/// What is built so far, for the rollback.
#[derive(Default)]
struct Building {
    envs: Vec<(u64, u64)>,
    frame_caps: Vec<u64>,
}

impl Building {
    fn undo(self) {
        for &(slot, _) in self.envs.iter().rev() {
            let _ = sys::env_destroy(slot);
        }
        for &cap in &self.frame_caps {
            let _ = sys::cap_drop(cap);
        }
    }
}

/// Rebuilds `img` in fresh environments and starts them.
pub fn restore(img: &Image) -> Result<Restored, CkptError> {
    let mut b = Building::default();
    match build(img, &mut b) {
        Ok(()) => {
            for &cap in &b.frame_caps {
                let _ = sys::cap_drop(cap);
            }
            Ok(Restored { members: b.envs })
        }
        Err(e) => {
            b.undo();
            Err(e)
        }
    }
}

fn build(img: &Image, b: &mut Building) -> Result<(), CkptError> {
    for e in &img.envs {
        let [slot, id] = sys::env_create().at("env_create")?;
        b.envs.push((slot, id));
        let len = e.name.iter().position(|&c| c == 0).unwrap_or(e.name.len());
        if core::str::from_utf8(&e.name[..len]).is_ok() {
            let _ = sys::env_rename(slot, e.name.as_ptr() as u64, len as u64);
        }
    }
    let ids: BTreeMap<u64, u64> = img.envs.iter().zip(&b.envs).map(|(e, &(_, id))| (e.id, id)).collect();
    let rebind = |old: u64| ids.get(&old).copied();
    // Frames named by a capability stay held until the lists are built.
    let mut kept: BTreeMap<u64, u64> = BTreeMap::new();
    for (fi, f) in img.frames.iter().enumerate() {
        let owner = b.envs[f.owner as usize].0;
        let [cap, _] = sys::frame_alloc_for(owner, ANY_FRAME).at("frame_alloc_for")?;
        b.frame_caps.push(cap);
        let mut bytes: Vec<u8> = f.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        if let Some((_, va)) = img.first_mapping(fi) {
            pipe::rebind_holders(va, &mut bytes, &rebind);
        }
        exec::fill_frame(cap, &bytes).at("fill frame")?;
        for (ei, e) in img.envs.iter().enumerate() {
            for m in e.maps.iter().filter(|m| m.frame == fi as u64) {
                sys::page_map(b.envs[ei].0, cap, m.va, m.flags & MAP_FLAGS).at("page_map")?;
            }
        }
        let named = img.envs.iter().flat_map(|e| e.caps.iter()).any(|c| c.kind == cap_kind::FRAME && c.number == f.pfn);
        if named {
            kept.insert(f.pfn, cap);
        } else {
            let _ = sys::cap_drop(cap);
            b.frame_caps.pop();
        }
    }
    let console = own_console();
    for (ei, e) in img.envs.iter().enumerate() {
        let target = b.envs[ei].0;
        let mut next = 1u64;
        for c in &e.caps {
            while next < c.slot {
                filler(target)?;
                next += 1;
            }
            let source = match c.kind {
                cap_kind::ENV => img.index_of(c.number).map(|i| b.envs[i].0),
                cap_kind::FRAME => kept.get(&c.number).copied(),
                cap_kind::CONSOLE => console,
                _ => None,
            };
            let got = match source {
                Some(src) => {
                    let own = sys::cap_info(src).map(|[_, _, r]| r).unwrap_or(0);
                    sys::cap_grant(src, target, c.rights & own).at("cap_grant")?[0]
                }
                None => filler(target)?,
            };
            if got != c.slot {
                return Err(CkptError::Unsupported("capability slot moved"));
            }
            next = c.slot + 1;
        }
    }
    let me = exposed::self_id();
    for (ei, e) in img.envs.iter().enumerate() {
        let mut st = e.state.clone();
        announce(&mut st, me, e.id);
        sys::env_set_state(b.envs[ei].0, st.as_ptr() as u64).at("env_set_state")?;
    }
    for &(slot, _) in &b.envs {
        sys::env_run(slot).at("env_run")?;
    }
    Ok(())
}

/// Fills the next free slot of `target`'s list with a read-only capability
/// for `target` itself; returns the slot.
fn filler(target: u64) -> Result<u64, CkptError> {
    Ok(sys::cap_grant(target, target, rights::READ).at("cap_grant(filler)")?[0])
}

/// The checkpointer's own console capability.
fn own_console() -> Option<u64> {
    (1..CAP_SLOTS as u64).find(|&s| sys::cap_info(s).is_ok_and(|[kind, _, _]| kind == cap_kind::CONSOLE))
}

const REGS: usize = offset_of!(EnvState, regs) / 8;
const UPCALLS: usize = offset_of!(EnvState, upcalls) / 8;
const PCT: usize = offset_of!(EnvState, pct) / 8;
const SERVING: usize = PCT + offset_of!(PctState, serving) / 8;
const SAVED: usize = PCT + offset_of!(PctState, saved) / 8;
const REG_WORDS: usize = size_of::<Regs>() / 8;
const _: () = assert!(SAVED + REG_WORDS <= STATE_WORDS);

/// Makes the state start in the libOS's restore notice: the saved
/// registers become the interrupted state of a transfer from `me` (owed
/// to nobody), whose message is the restore tag and the old id. A program
/// with no transfer entry simply resumes.
fn announce(st: &mut [u64], me: u64, old_id: u64) {
    let entry = st[UPCALLS + upcall::PCT as usize];
    if entry == 0 || st[SERVING] != 0 {
        return;
    }
    let regs: Vec<u64> = st[REGS..REGS + REG_WORDS].to_vec();
    st[SAVED..SAVED + REG_WORDS].copy_from_slice(&regs);
    st[SERVING] = 1;
    st[PCT + 1] = 0; // caller: nobody
    st[PCT + 2] = 0; // ticket
    let mut msg = [0u64; REG_WORDS];
    let at = |f: usize| f / 8;
    msg[at(offset_of!(Regs, rip))] = entry;
    msg[at(offset_of!(Regs, rflags))] = 0x202;
    msg[at(offset_of!(Regs, rdi))] = me;
    msg[at(offset_of!(Regs, rcx))] = 0; // asynchronous
    msg[at(offset_of!(Regs, rsi))] = pct::TAG_RESTORE;
    msg[at(offset_of!(Regs, rdx))] = old_id;
    st[REGS..REGS + REG_WORDS].copy_from_slice(&msg);
}
