//! The kernel side of every call in the table, one function per call with
//! the name the table gives it. Each takes the call context and the
//! arguments decoded by their classes ([`args`]) and returns as many
//! results as the table declares.

mod account;
mod area;
pub mod args;
mod base;
mod cap;
pub mod check;
mod ckpt;
mod console;
mod cpu;
mod env;
mod filter;
mod frame;
mod info;
mod net;
mod page;
pub mod pct;
mod pred;
mod range;
mod slot;
mod state;
mod xn;

pub use account::{account_info, env_limit, env_limit_heap, env_limit_slots};
pub use area::app_area_make;
pub use base::{env_get_base, env_set_base};
pub use cap::{cap_derive, cap_drop, cap_grant, cap_info, cap_narrow, cap_revoke, pct_grant};
pub use ckpt::{cap_copy, cap_peek, env_mappings, env_peek, env_stop};
pub use console::{aux_read, aux_write, console_peek, console_read, console_write};
pub use cpu::yield_cpu;
pub use env::{env_create, env_destroy, env_exit, env_reap, env_rename, env_run, env_self, upcall_register};
pub use filter::{filter_install, filter_remove};
pub use frame::{frame_alloc, frame_alloc_for, frame_free, frame_revoke};
pub use info::{mem_info, null};
pub use net::{net_info, net_send, net_template, net_template_get, ring_bind, ring_unbind};
pub use page::{page_batch, page_map, page_protect, page_unmap};
pub use pct::{pct_call, pct_owe, pct_reply, pct_send, pct_wait, wake_with as pct_wake_with};
pub use pred::{env_sleep, pred_install, pred_param};
pub use range::page_protect_range;
pub use slot::{slot_alloc, slot_free, slot_give, slot_spare};
pub use state::{env_get_state, env_set_state};
pub use xn::{
    xn_alloc, xn_bind, xn_evict, xn_evict_batch, xn_flush, xn_free, xn_modify, xn_read, xn_register, xn_root, xn_write,
    xn_write_batch, xn_write_from, xn_write_from_batch,
};

use crate::arch::trapframe::TrapFrame;
use crate::env::{Env, EnvId};
use crate::state::Kernel;
use oxok_abi::Error;

/// Everything a call handler may touch.
pub struct Cx<'a> {
    /// The kernel state (locked).
    pub k: &'a mut Kernel,
    /// The caller's registers, as they will be on return.
    pub frame: &'a mut TrapFrame,
    /// The calling environment.
    pub caller: EnvId,
    /// Set by a call that did part of its work: return to user mode with
    /// `rip` back on the `syscall` so it continues (Fluke's restart rule).
    pub restart: bool,
    /// Set when the call replaced the caller's own registers: write no
    /// results over them.
    pub replaced: bool,
    /// Set with `replaced` when the call made another environment current
    /// itself and left nothing pending (`sched::donate`): the frame is
    /// that environment's, to be returned to as it is.
    pub entered: bool,
}

impl Cx<'_> {
    /// The calling environment.
    pub fn env(&mut self) -> Result<&mut Env, Error> {
        self.k.envs.get(self.caller).ok_or(Error::BadEnv)
    }

    /// Asks for the call to be re-executed from its (advanced) registers.
    pub fn restart(&mut self) {
        self.restart = true;
    }
}
