//! Restoring a process tree from an [`Image`] into fresh environments.
//!
//! Everything is checked before anything is built ([`Image::decode`]);
//! whatever the kernel refuses afterwards (a mapping it will not make, an
//! account that is full) destroys every environment built so far, which
//! frees every frame allocated for them, and drops the checkpointer's
//! capabilities: nothing half-built is left behind.
//!
//! **Re-binding.** Environment ids and frame numbers are new. Capability
//! slots keep their numbers: the slots are filled in order, a capability
//! for a member with one for the new member, a frame's with the new
//! frame's, the console's with the checkpointer's own console capability.
//! A capability for an environment outside the tree is carried when this
//! checkpointer can derive it from its own: the saving checkpointer (the
//! root's parent) becomes this one, the saver's file server this one's, and
//! on the same boot of the same machine ([`boot_stamp`]) an id this
//! checkpointer holds a capability for is granted from it (rights: the
//! saved ones this checkpointer has). Anything else — and a slot that was
//! empty — is filled with a placeholder while the list is built, then
//! revoked: the slot is empty, its use fails with `BadCap`, and the
//! restore notice tells the libOS which slots were revoked (visible
//! revocation, Aegis; `oxok_libos::restore::revoked`).
//! Pipe holder ids in shared frames are rewritten here, once per frame,
//! and open files re-bound to this machine's file server ([`files`]).
//! Each member then starts in its libOS's restore notice (see
//! `oxok_libos::restore`), which resumes the saved registers.

use crate::image::{Image, STATE_WORDS, boot_stamp};
use crate::{CkptError, Step};
use crate::{files, transfer};
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::mem::offset_of;
use oxok_libos::abi::layout::pte;
use oxok_libos::abi::{ANY_FRAME, CAP_SLOTS, EnvState, PctState, Regs, cap_kind, rights, upcall};
use oxok_libos::fd::pipe;
use oxok_libos::fs::{self, ftable};
use oxok_libos::{exec, exposed, pct, sys};

/// A restored tree: the checkpointer's slot and the new id of each member,
/// root first.
#[derive(Debug)]
pub struct Restored {
    pub members: Vec<(u64, u64)>,
    /// Members restored while serving a transfer: their slot and the
    /// restore notice they get once they have replied.
    pub late: Vec<(u64, pct::Msg)>,
}

impl Restored {
    /// Delivers the restore notices of members restored mid-transfer,
    /// each once it has replied (it serves one transfer at a time); gives
    /// up on one that still serves after about ten seconds.
    pub fn notify_late(&mut self) {
        for (slot, msg) in core::mem::take(&mut self.late) {
            for _ in 0..10_000 {
                let serving = crate::save::state_of(slot).map_or(true, |st| st[SERVING] != 0);
                let id = sys::cap_info(slot).map(|[_, id, _]| id);
                match (serving, id) {
                    (false, Ok(id)) if pct::send(id, &msg).is_ok() => break,
                    (_, Err(_)) => break,
                    _ => {
                        let _ = oxok_libos::time::sleep_ms(1);
                    }
                }
            }
        }
    }
}

/// Flags `page_map` accepts.
const MAP_FLAGS: u64 = pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_BITS;

/// What is built so far, for the rollback.
#[derive(Default)]
struct Building {
    envs: Vec<(u64, u64)>,
    frame_caps: Vec<u64>,
    late: Vec<(u64, pct::Msg)>,
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
    let created = files::prepare(img)?;
    let mut b = Building::default();
    match build(img, &mut b) {
        Ok(()) => {
            for &cap in &b.frame_caps {
                let _ = sys::cap_drop(cap);
            }
            Ok(Restored { members: b.envs, late: b.late })
        }
        Err(e) => {
            b.undo();
            created.undo();
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
    let mut bound = 0;
    let mut groups = files::Groups::default();
    for (fi, f) in img.frames.iter().enumerate() {
        let owner = b.envs[f.owner as usize].0;
        let [cap, _] = sys::frame_alloc_for(owner, ANY_FRAME).at("frame_alloc_for")?;
        b.frame_caps.push(cap);
        let mut bytes: Vec<u8> = f.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        if let Some((ei, va)) = img.first_mapping(fi) {
            pipe::rebind_holders(va, &mut bytes, &rebind);
            if ftable::page_index(va).is_some() {
                bound += files::bind(img, &mut groups, ei, va, &mut bytes, b.envs[ei].1)?;
            }
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
    files::all_bound(img, bound)?;
    // Every member holds its handle: the checkpointer's own go.
    drop(groups);
    let console = own_console();
    let outside =
        Outside { saver: img.saver, server: img.server, same_boot: img.boot != 0 && img.boot == boot_stamp() };
    let mut revoked = alloc::vec![0u64; img.envs.len()];
    for (ei, e) in img.envs.iter().enumerate() {
        let target = b.envs[ei].0;
        let holder = Placeholder::new(target)?;
        let built = build_list(e, target, &holder, &mut revoked[ei], |c| match c.kind {
            cap_kind::ENV => match img.index_of(c.number) {
                Some(i) => Source::Inside(b.envs[i].0),
                None => outside.source(c.number),
            },
            cap_kind::FRAME => kept.get(&c.number).map_or(Source::None, |&s| Source::Inside(s)),
            cap_kind::CONSOLE => console.map_or(Source::None, Source::Inside),
            _ => Source::None,
        });
        holder.revoke();
        built?;
    }
    let me = exposed::self_id();
    let pairs = transfer::pairs(img)?;
    let notice = |ei: usize| notice(img.envs[ei].id, revoked[ei], [img.ticks, img.tick_hz]);
    // Callers of transfers in progress come after their callees: the
    // callee (imported owing nobody) then owes the reply to the new caller
    // under a new ticket, which the caller's restart names.
    let mut set = alloc::vec![false; img.envs.len()];
    for _ in 0..=img.envs.len() {
        for (ei, e) in img.envs.iter().enumerate() {
            let callee = pairs.iter().find(|&&(c, _)| c == ei).map(|&(_, s)| s);
            if set[ei] || callee.is_some_and(|s| !set[s]) {
                continue;
            }
            let mut st = e.state.clone();
            if let Some(s) = callee {
                let [ticket] = sys::pct_owe(b.envs[s].0, b.envs[ei].0).at("pct_owe")?;
                transfer::rewait(&mut st, b.envs[s].1, ticket);
            }
            if st[SERVING] != 0 {
                transfer::owe_nobody(&mut st);
                b.late.push((b.envs[ei].0, notice(ei)));
            } else {
                announce(&mut st, me, notice(ei));
            }
            sys::env_set_state(b.envs[ei].0, st.as_ptr() as u64).at("env_set_state")?;
            set[ei] = true;
        }
    }
    if set.iter().any(|s| !s) {
        return Err(CkptError::Image(crate::image::ImageError::Invalid("transfers in progress in a cycle")));
    }
    for &(slot, _) in &b.envs {
        sys::env_run(slot).at("env_run")?;
    }
    Ok(())
}

/// Where a saved capability comes from on this machine.
enum Source {
    /// A capability of this checkpointer for what the tree had (a member,
    /// a frame of the tree, the console): granting it must work.
    Inside(u64),
    /// One of this checkpointer's own for an environment outside the tree:
    /// carried if this checkpointer may grant it, else revoked.
    Outside(u64),
    /// Not carried: revoked.
    None,
}

/// How ids of environments outside the tree are re-bound.
struct Outside {
    saver: u64,
    server: u64,
    same_boot: bool,
}

impl Outside {
    fn source(&self, id: u64) -> Source {
        let slot = if id == self.saver {
            Some(0)
        } else if self.server != 0 && id == self.server {
            fs::locate::server().and_then(own_env_slot)
        } else if self.same_boot {
            own_env_slot(id)
        } else {
            None
        };
        slot.map_or(Source::None, Source::Outside)
    }
}

/// This checkpointer's slot for environment `id` that may grant, if any.
fn own_env_slot(id: u64) -> Option<u64> {
    (1..CAP_SLOTS as u64).find(|&s| {
        sys::cap_info(s).is_ok_and(|[kind, n, r]| kind == cap_kind::ENV && n == id && r & rights::GRANT != 0)
    })
}

/// Fills `target`'s list like `e`'s: each saved capability from its
/// source, everything else a placeholder (whose slot bit goes in
/// `revoked` unless the slot was empty when saved).
fn build_list(
    e: &crate::image::EnvRec,
    target: u64,
    holder: &Placeholder,
    revoked: &mut u64,
    source: impl Fn(&crate::image::CapRec) -> Source,
) -> Result<(), CkptError> {
    let mut next = 1u64;
    for c in &e.caps {
        while next < c.slot {
            holder.fill(target)?;
            next += 1;
        }
        let grant = |src: u64| {
            let own = sys::cap_info(src).map(|[_, _, r]| r).unwrap_or(0);
            sys::cap_grant(src, target, c.rights & own).map(|[s]| s)
        };
        let got = match source(c) {
            Source::Inside(src) => grant(src).at("cap_grant")?,
            Source::Outside(src) => match grant(src) {
                Ok(s) => s,
                Err(_) => {
                    *revoked |= 1 << c.slot;
                    holder.fill(target)?
                }
            },
            Source::None => {
                *revoked |= 1 << c.slot;
                holder.fill(target)?
            }
        };
        if got != c.slot {
            return Err(CkptError::Unsupported("capability slot moved"));
        }
        next = c.slot + 1;
    }
    Ok(())
}

/// Keeps slot numbers while a list is built: each placeholder is a
/// read-only capability for the target itself, granted from one capability
/// of this checkpointer's derived for the purpose, so that revoking that
/// one empties exactly the placeholders.
struct Placeholder {
    slot: u64,
}

impl Placeholder {
    fn new(target: u64) -> Result<Placeholder, CkptError> {
        let [slot] = sys::cap_derive(target, rights::READ | rights::GRANT).at("cap_derive(placeholder)")?;
        Ok(Placeholder { slot })
    }

    /// Fills the next free slot of `target`'s list; returns the slot.
    fn fill(&self, target: u64) -> Result<u64, CkptError> {
        Ok(sys::cap_grant(self.slot, target, rights::READ).at("cap_grant(placeholder)")?[0])
    }

    /// Empties every placeholder and drops the source.
    fn revoke(self) {
        let _ = sys::cap_revoke(self.slot);
        let _ = sys::cap_drop(self.slot);
    }
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

/// The restore notice's message: the restore tag, the old id, the mask of
/// revoked capability slots and the saver's clock at the cut.
fn notice(old_id: u64, revoked: u64, [ticks, hz]: [u64; 2]) -> pct::Msg {
    let mut m = [0u64; pct::WORDS];
    m[..5].copy_from_slice(&[pct::TAG_RESTORE, old_id, revoked, ticks, hz]);
    m
}

/// Makes the state start in the libOS's restore notice: the saved
/// registers become the interrupted state of a transfer from `me` (owed
/// to nobody), whose message is `notice`. A program with no transfer entry
/// simply resumes.
fn announce(st: &mut [u64], me: u64, notice: pct::Msg) {
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
    // The message registers, in `Msg` order.
    let words = [
        offset_of!(Regs, rsi),
        offset_of!(Regs, rdx),
        offset_of!(Regs, r8),
        offset_of!(Regs, r9),
        offset_of!(Regs, r10),
        offset_of!(Regs, r12),
        offset_of!(Regs, r13),
        offset_of!(Regs, r14),
        offset_of!(Regs, r15),
    ];
    for (reg, w) in words.into_iter().zip(notice) {
        msg[at(reg)] = w;
    }
    st[REGS..REGS + REG_WORDS].copy_from_slice(&msg);
}
