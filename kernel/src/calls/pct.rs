//! Protected control transfer (Aegis §5.1): `pct_call`, `pct_send`,
//! `pct_reply`. The registers are the message; the kernel adds only the
//! caller's id. The switch happens here, inside the call: the handler
//! replaces the registers the system-call path returns to.
//!
//! For the CPU scheduler a transfer is a donation of the rest of the slot
//! (directed yield): a synchronous callee runs on its caller's time, and
//! the reply donates the rest back, so the caller runs again in the same
//! turn. If the slot has no time left, the next slot begins instead and
//! the callee (or the replied-to caller) runs at its next turn; the
//! message (or reply) waits in its saved registers.

use super::Cx;
use crate::arch::trapframe::TrapFrame;
use crate::env::EnvId;
use oxok_abi::{ENV_RUNNABLE, ENV_RUNNING, ENV_WAITING, Error, upcall};

const SYNC: u64 = 1;
const ASYNC: u64 = 0;

/// Synchronous transfer: the caller waits for the reply.
pub fn pct_call(cx: &mut Cx<'_>, target: u64) -> Result<[u64; 0], Error> {
    transfer(cx, target, SYNC)
}

/// Asynchronous transfer: the caller donates its time and stays runnable.
pub fn pct_send(cx: &mut Cx<'_>, target: u64) -> Result<[u64; 0], Error> {
    transfer(cx, target, ASYNC)
}

fn transfer(cx: &mut Cx<'_>, target: u64, mode: u64) -> Result<[u64; 0], Error> {
    let caller = cx.caller;
    let (callee, cap_slot) = super::check::split_target(target);
    if callee == caller {
        return Err(Error::Invalid);
    }
    let entry = {
        let env = cx.k.envs.get(callee).ok_or(Error::BadEnv)?;
        let entry = env.upcalls[upcall::PCT as usize];
        if entry == 0 {
            return Err(Error::Denied);
        }
        if env.pct_saved.is_some() || env.waiting_for.is_some() || env.status == oxok_abi::ENV_CREATED {
            return Err(Error::Busy);
        }
        entry
    };
    // The credential: a capability for the callee with the call right.
    super::check::call_cap(&mut cx.k.envs, caller, cap_slot, callee)?;
    // The message: the caller's registers, with the kernel's additions.
    let mut msg = *cx.frame;
    msg.rdi = u64::from(caller);
    msg.rcx = mode;
    msg.rax = 0;
    let mut message = TrapFrame::new_user(entry, 0);
    message.rbx = msg.rbx;
    message.rcx = msg.rcx;
    message.rdx = msg.rdx;
    message.rsi = msg.rsi;
    message.rdi = msg.rdi;
    message.rbp = msg.rbp;
    message.r8 = msg.r8;
    message.r9 = msg.r9;
    message.r10 = msg.r10;
    message.r12 = msg.r12;
    message.r13 = msg.r13;
    message.r14 = msg.r14;
    message.r15 = msg.r15;

    // The caller: waits (sync) or stays runnable (async).
    {
        let me = cx.k.envs.get(caller).ok_or(Error::BadEnv)?;
        me.regs = *cx.frame;
        me.regs.rax = 0;
        if mode == SYNC {
            me.status = ENV_WAITING;
            me.waiting_for = Some(callee);
        } else {
            me.status = ENV_RUNNABLE;
        }
        me.publish();
    }
    // The callee: keeps its interrupted state aside and runs the entry on
    // the caller's time.
    let env = cx.k.envs.get(callee).ok_or(Error::BadEnv)?;
    env.pct_saved = Some(env.regs);
    env.regs = message;
    env.status = ENV_RUNNABLE;
    env.publish();
    crate::sched::give_up(cx.k, cx.frame, caller, Some(callee));
    cx.replaced = true;
    Ok([])
}

/// Ends serving a transfer; resumes the waiting caller with the reply.
pub fn pct_reply(cx: &mut Cx<'_>, caller: u64) -> Result<[u64; 0], Error> {
    let me = cx.caller;
    let waiting: Option<EnvId> = match caller {
        0 => None,
        id => Some(u32::try_from(id).map_err(|_| Error::BadEnv)?),
    };
    let saved = {
        let env = cx.k.envs.get(me).ok_or(Error::BadEnv)?;
        env.pct_saved.ok_or(Error::Invalid)?
    };
    if let Some(w) = waiting {
        let ok = cx.k.envs.get(w).is_some_and(|e| e.waiting_for == Some(me));
        if !ok {
            return Err(Error::BadEnv);
        }
    }
    let reply = *cx.frame;
    // This environment returns to what it was doing when the call came.
    {
        let env = cx.k.envs.get(me).ok_or(Error::BadEnv)?;
        env.pct_saved = None;
        env.regs = saved;
        env.status = ENV_RUNNABLE;
        env.publish();
    }
    match waiting {
        Some(w) => {
            // The caller resumes with the reply in its registers, on the
            // rest of this slot.
            let env = cx.k.envs.get(w).ok_or(Error::BadEnv)?;
            let f = &mut env.regs;
            f.rax = 0;
            f.rbx = reply.rbx;
            f.rdx = reply.rdx;
            f.rsi = reply.rsi;
            f.rdi = u64::from(me);
            f.rbp = reply.rbp;
            f.r8 = reply.r8;
            f.r9 = reply.r9;
            f.r10 = reply.r10;
            f.r12 = reply.r12;
            f.r13 = reply.r13;
            f.r14 = reply.r14;
            f.r15 = reply.r15;
            env.waiting_for = None;
            env.status = ENV_RUNNABLE;
            env.publish();
            crate::sched::give_up(cx.k, cx.frame, me, Some(w));
        }
        None => {
            // Nobody waits: continue this environment's own work.
            *cx.frame = saved;
            let env = cx.k.envs.get(me).ok_or(Error::BadEnv)?;
            env.status = ENV_RUNNING;
            env.publish();
        }
    }
    cx.replaced = true;
    Ok([])
}
