//! Synchronous transfers in progress between members of the tree (Fluke
//! §4: a call in progress is part of the exported state).
//!
//! A caller waiting for a reply exports `pct_wait(callee, ticket)` with
//! `rip` on the `syscall` (issue 10's restart rule); the callee exports
//! its serving record (caller, ticket, the state the transfer
//! interrupted). Both are kernel bindings between two ids, so neither
//! survives a restore as it is. When caller and callee are both members,
//! the cut takes them as they are ([`consistent`]) and the restore binds
//! them again: the callee's serving record is imported owing nobody,
//! `pct_owe` makes it owe the reply to the new caller under a fresh ticket,
//! and the caller's restart becomes `pct_wait(new callee, new ticket)`
//! ([`pairs`], [`rewait`]). The callee's libOS replies to `PCT_OWED`, so
//! the caller id in its own registers does not matter. A transfer with one
//! end outside the tree is still waited out by the cut.
//!
//! A member restored while serving cannot take the restore notice (it is
//! itself a transfer, and an environment serves one at a time): the
//! checkpointer delivers it once the member has replied
//! (`Restored::notify_late`).

use crate::CkptError;
use crate::image::{Image, ImageError};
use core::mem::offset_of;
use oxok_libos::abi::{Call, EnvState, PctState, Regs};

const REGS: usize = offset_of!(EnvState, regs) / 8;
const RAX: usize = REGS + offset_of!(Regs, rax) / 8;
const RDI: usize = REGS + offset_of!(Regs, rdi) / 8;
const RSI: usize = REGS + offset_of!(Regs, rsi) / 8;
const PCT: usize = offset_of!(EnvState, pct) / 8;
/// Word of `pct.serving` in an exported state.
pub const SERVING: usize = PCT + offset_of!(PctState, serving) / 8;
/// Word of `pct.caller`.
pub const CALLER: usize = PCT + offset_of!(PctState, caller) / 8;
/// Word of `pct.ticket`.
pub const TICKET: usize = PCT + offset_of!(PctState, ticket) / 8;

/// The callee and ticket a state waits on, if its registers are the
/// `pct_wait` restart.
fn waits_on(st: &[u64]) -> Option<(u64, u64)> {
    (st[RAX] == Call::pct_wait.number()).then(|| (st[RDI], st[RSI]))
}

/// True if member `callee` (its state `st`) serves the synchronous call
/// `ticket` of `caller`.
fn serves(st: &[u64], caller: u64, ticket: u64) -> bool {
    st[SERVING] != 0 && st[CALLER] == caller && st[TICKET] == ticket && ticket != 0
}

/// Whether the stopped members (`ids`, their `states`, and whether each
/// waits) are at a cut a restore can rebuild: every wait is for a member
/// serving that very call, every synchronous call served comes from a
/// member waiting for it.
pub fn consistent(ids: &[u64], states: &[alloc::vec::Vec<u64>], waiting: &[bool]) -> bool {
    let index = |id: u64| ids.iter().position(|&x| x == id);
    for (i, st) in states.iter().enumerate() {
        if waiting[i] {
            let ok = waits_on(st)
                .is_some_and(|(callee, ticket)| index(callee).is_some_and(|k| serves(&states[k], ids[i], ticket)));
            if !ok {
                return false;
            }
        }
        if st[SERVING] != 0 && st[CALLER] != 0 {
            let ok =
                index(st[CALLER]).is_some_and(|j| waiting[j] && waits_on(&states[j]) == Some((ids[i], st[TICKET])));
            if !ok {
                return false;
            }
        }
    }
    true
}

/// The transfers in progress between members of `img`: (caller index,
/// callee index) pairs. A served synchronous call from outside the tree,
/// or whose caller does not wait for it, makes the image invalid.
pub fn pairs(img: &Image) -> Result<alloc::vec::Vec<(usize, usize)>, CkptError> {
    let mut out = alloc::vec::Vec::new();
    for (ei, e) in img.envs.iter().enumerate() {
        let st = &e.state;
        if st[SERVING] == 0 || st[CALLER] == 0 {
            continue;
        }
        let j = img
            .index_of(st[CALLER])
            .ok_or(CkptError::Image(ImageError::Invalid("a transfer served for a caller outside the tree")))?;
        if waits_on(&img.envs[j].state) != Some((e.id, st[TICKET])) || out.iter().any(|&(c, _)| c == j) {
            return Err(CkptError::Image(ImageError::Invalid("a transfer whose caller does not wait for it")));
        }
        out.push((j, ei));
    }
    Ok(out)
}

/// A serving state imported owing nobody (`pct_owe` binds the reply).
pub fn owe_nobody(st: &mut [u64]) {
    st[CALLER] = 0;
    st[TICKET] = 0;
}

/// The caller's restart, waiting on the new callee with the new ticket.
pub fn rewait(st: &mut [u64], callee: u64, ticket: u64) {
    st[RDI] = callee;
    st[RSI] = ticket;
}
