//! Protected control transfer (Aegis §5.1): `pct_call`, `pct_send`,
//! `pct_reply`, `pct_wait`. The registers are the message; the kernel adds
//! only the caller's id. The switch happens here, inside the call: the
//! handler replaces the registers the system-call path returns to. The
//! common case of a synchronous call and of its reply — the CPU handed
//! over at once, nothing unusual — is taken ahead of these handlers by
//! `handoff`, through the same functions (`entry_of`, `start_wait`,
//! `start_serving`, `stop_serving`, `end_wait`, `completed`).
//!
//! For the CPU scheduler a transfer is a donation of the rest of the slot
//! (directed yield): a synchronous callee runs on its caller's time, and
//! the reply donates the rest back, so the caller runs again in the same
//! turn. If the slot has no time left, the next slot begins instead and
//! the callee (or the replied-to caller) runs at its next turn; the
//! message (or reply) waits in its saved registers.
//!
//! Fluke's restart rule: a synchronous caller's wait is in its registers.
//! While it waits they say `pct_wait(callee, ticket)` with `rip` on the
//! `syscall`, so its exported state, imported anywhere, waits again for the
//! same reply; the reply completes that call (`rip` past it, `rax` 0). A
//! caller whose state was replaced is no longer waiting: the reply meant
//! for it is dropped, never written over the new state.

use super::Cx;
use super::args::{EnvCap, Msg, Target};
use crate::arch::trapframe::TrapFrame;
use crate::env::{Env, EnvId};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::{Call, ENV_RUNNABLE, ENV_RUNNING, ENV_WAITING, Error, upcall};

pub(crate) const SYNC: u64 = 1;
const ASYNC: u64 = 0;
/// Length of the `syscall` instruction.
const SYSCALL_LEN: u64 = 2;

/// Tickets issued without the CPU's generator so far (the input of
/// [`keyed_ticket`]).
static TICKETS: AtomicU64 = AtomicU64::new(0);
/// [`keyed_ticket`]'s key: the TSC when the first such ticket was issued.
static SECRET: AtomicU64 = AtomicU64::new(0);

/// A fresh call ticket: never 0, and not guessable from any other ticket
/// (a server sees the ticket of every call it serves; holding the ticket
/// of another's call lets an environment take over that wait when the
/// original caller's state is replaced, and `pct_wait` answers `Busy` for
/// a ticket in use, which would confirm a guess). A random word from the
/// CPU (`rdrand`): two tickets are the same with probability 2^-64. A
/// public bijection of a counter, as tickets once were, is inverted from
/// one ticket and gives every later one (`pct-restart` checks that the
/// tickets it sees are not).
pub(crate) fn next_ticket() -> u64 {
    match crate::arch::cpu::random() {
        Some(0) | None => keyed_ticket(),
        Some(t) => t,
    }
}

/// A ticket on a CPU without a generator: SipHash-2-4 of a counter under a
/// key taken from the TSC at the first such ticket — not invertible from
/// the tickets, though the key is only as hard to guess as the TSC.
#[cold]
fn keyed_ticket() -> u64 {
    #[allow(deprecated)] // `core`'s SipHash, stable though deprecated for `HashMap`'s use
    use core::hash::{Hasher, SipHasher};
    if SECRET.load(Ordering::Relaxed) == 0 {
        SECRET.store(crate::arch::cpu::rdtsc() | 1, Ordering::Relaxed);
    }
    let key = SECRET.load(Ordering::Relaxed);
    #[allow(deprecated)]
    let mut h = SipHasher::new_with_keys(key, key.rotate_left(32) ^ 0x7069_6374_6b65_7473);
    h.write_u64(TICKETS.fetch_add(1, Ordering::Relaxed));
    h.finish().max(1)
}

/// Synchronous transfer: the caller waits for the reply.
pub fn pct_call(cx: &mut Cx<'_>, target: Target, _msg: Msg) -> Result<[u64; 0], Error> {
    let r = transfer(cx, target, SYNC);
    if r.is_err() {
        // Refused before the callee got the message: `rsi` 0 says so (a
        // call that reached it fails later from `pct_wait`, with the
        // ticket, never 0, in `rsi`).
        cx.frame.rsi = 0;
    }
    r
}

/// Asynchronous transfer: the caller donates its time and stays runnable.
pub fn pct_send(cx: &mut Cx<'_>, target: Target, _msg: Msg) -> Result<[u64; 0], Error> {
    transfer(cx, target, ASYNC)
}

/// Puts `me` (registers in `cx.frame`, `rip` after the `syscall`) to wait
/// for `callee`'s reply to the call with `ticket`, and gives its time to
/// the callee.
fn wait(cx: &mut Cx<'_>, me: EnvId, callee: EnvId, ticket: u64) -> Result<(), Error> {
    let env = cx.k.envs.get(me).ok_or(Error::BadEnv)?;
    start_wait(env, cx.frame, callee, ticket);
    Ok(())
}

/// [`wait`] for the environment in hand, `frame` its registers.
#[inline(always)]
pub(crate) fn start_wait(env: &mut Env, frame: &TrapFrame, callee: EnvId, ticket: u64) {
    let regs = env.regs_mut();
    regs.copy_from(frame);
    regs.rip -= SYSCALL_LEN;
    regs.rax = Call::pct_wait.number();
    regs.rdi = u64::from(callee);
    regs.rsi = ticket;
    env.status = ENV_WAITING;
    env.waiting_for = Some(callee);
    env.wait_ticket = ticket;
    crate::sched::publish_status(env);
}

/// The PCT entry of `callee` if it takes a call now: `Denied` without an
/// entry or the room a call needs, `Busy` while it serves one, waits for
/// a reply, was never started or is stopped.
#[inline(always)]
pub(crate) fn entry_of(callee: &Env) -> Result<u64, Error> {
    let entry = callee.handlers.upcall(upcall::PCT);
    if entry == 0 {
        return Err(Error::Denied);
    }
    // A PCT entry comes with the room for the state a call interrupts.
    if !callee.pct.has_room() {
        return Err(Error::Denied);
    }
    if callee.pct.serving() || callee.waiting_for.is_some() || callee.status == oxok_abi::ENV_CREATED || callee.stopped
    {
        return Err(Error::Busy);
    }
    Ok(entry)
}

/// `callee` (which [`entry_of`] accepted) starts serving a call from
/// `owed` (none: asynchronous): the state it was in is kept, and it is
/// runnable.
#[inline(always)]
pub(crate) fn start_serving(callee: &mut Env, owed: Option<(EnvId, u64)>) {
    // Room checked by `entry_of`, before anything changed.
    callee.pct_keep();
    callee.pct_caller = owed;
    // Usually runnable already (it replied to the last call, or yields in
    // a loop): its row says so.
    if callee.status != ENV_RUNNABLE {
        callee.status = ENV_RUNNABLE;
        crate::sched::publish_status(callee);
    }
}

/// `me` (which serves a call) stops serving: the kept state goes back,
/// nobody is owed, it is runnable.
#[inline(always)]
pub(crate) fn stop_serving(me: &mut Env) {
    // Serving (checked by the caller): the kept state goes back.
    me.pct_restore();
    me.pct_caller = None;
    me.status = ENV_RUNNABLE;
    crate::sched::publish_status(me);
}

/// Waiter `w`'s wait is over (its reply is being written): runnable.
#[inline(always)]
pub(crate) fn end_wait(w: &mut Env) {
    w.waiting_for = None;
    w.wait_ticket = 0;
    w.status = ENV_RUNNABLE;
}

fn transfer(cx: &mut Cx<'_>, target: Target, mode: u64) -> Result<[u64; 0], Error> {
    let caller = cx.caller;
    let Target { env: callee, slot: cap_slot, .. } = target;
    if callee == Some(caller) {
        return Err(Error::Invalid);
    }
    let callee = callee.ok_or(Error::BadEnv)?;
    let entry = entry_of(cx.k.envs.get(callee).ok_or(Error::BadEnv)?)?;
    // The credential: a capability for the callee with the call right.
    super::check::call_cap(&mut cx.k.envs, caller, cap_slot, callee)?;
    // The caller: waits (sync) or stays runnable (async).
    let owed = if mode == SYNC {
        let ticket = next_ticket();
        wait(cx, caller, callee, ticket)?;
        Some((caller, ticket))
    } else {
        let me = cx.k.envs.get(caller).ok_or(Error::BadEnv)?;
        let regs = me.regs_mut();
        regs.copy_from(cx.frame);
        regs.rax = 0;
        me.status = ENV_RUNNABLE;
        crate::sched::publish_status(me);
        None
    };
    // The callee: keeps its interrupted state aside and runs the entry on
    // the caller's time.
    start_serving(cx.k.envs.get(callee).ok_or(Error::BadEnv)?, owed);
    // The message: the caller's registers, with the kernel's additions.
    // The callee runs at once on the rest of the slot (the common case):
    // they are written where they are, in the frame it returns to.
    if crate::sched::donate(cx.k, caller, callee).is_some() {
        cx.frame.into_message(entry, mode, u64::from(caller));
        cx.entered = true;
    } else if let Some(env) = cx.k.envs.get(callee) {
        // Or it runs later, from its saved registers.
        let regs = env.regs_mut();
        regs.copy_from(cx.frame);
        regs.into_message(entry, mode, u64::from(caller));
        crate::sched::give_up(cx.k, cx.frame, caller, Some(callee));
    }
    cx.replaced = true;
    Ok([])
}

/// The environment waiting on `callee`'s call with `ticket`, if any: the
/// original caller `first` (checked first), else whoever took the wait over
/// with `pct_wait`.
fn waiter(cx: &mut Cx<'_>, callee: EnvId, first: EnvId, ticket: u64) -> Option<EnvId> {
    let waits = |e: &crate::env::Env| e.waiting_for == Some(callee) && e.wait_ticket == ticket;
    if cx.k.envs.get(first).is_some_and(|e| waits(e)) {
        return Some(first);
    }
    cx.k.envs.ids_where(waits).first().copied()
}

/// Ends serving a transfer; resumes the waiting caller with the reply.
pub fn pct_reply(cx: &mut Cx<'_>, caller: u64, _reply: Msg) -> Result<[u64; 0], Error> {
    let me = cx.caller;
    let owed = {
        let env = cx.k.envs.get(me).ok_or(Error::BadEnv)?;
        if !env.pct.serving() {
            return Err(Error::Invalid);
        }
        env.pct_caller
    };
    let named: Option<EnvId> = match caller {
        0 => None,
        oxok_abi::PCT_OWED => owed.map(|(c, _)| c),
        id => Some(super::args::env_word(id)?),
    };
    // Who gets the reply: whoever waits on this call now. A caller named
    // that this environment serves but that no longer waits (its state was
    // replaced, or it died) gets nothing: the reply is dropped.
    let target = match (named, owed) {
        (None, _) => None,
        (Some(w), Some((first, ticket))) if w == first => waiter(cx, me, first, ticket),
        (Some(w), _) => {
            // Not the caller of this call: only a plain waiter (the rule
            // before tickets) is accepted.
            let ok = cx.k.envs.get(w).is_some_and(|e| e.waiting_for == Some(me) && owed.is_none());
            if !ok {
                return Err(Error::BadEnv);
            }
            Some(w)
        }
    };
    // This environment returns to what it was doing when the call came.
    stop_serving(cx.k.envs.get(me).ok_or(Error::BadEnv)?);
    match target {
        Some(w) => {
            // The waiter's pct_wait completes with the reply in its
            // registers, on the rest of this slot.
            end_wait(cx.k.envs.get(w).ok_or(Error::BadEnv)?);
            if let Some(env) = crate::sched::donate(cx.k, me, w) {
                // It runs at once (the common case): the reply is in the
                // frame already, the rest comes from its saved registers.
                completed(cx.frame, env.regs(), me);
                cx.entered = true;
            } else if let Some(env) = cx.k.envs.get(w) {
                // Or later, from its saved registers.
                let saved = *env.regs();
                let regs = env.regs_mut();
                regs.copy_from(cx.frame);
                completed(regs, &saved, me);
                crate::sched::publish_status(env);
                crate::sched::give_up(cx.k, cx.frame, me, Some(w));
            }
        }
        None => {
            // Nobody waits: continue this environment's own work.
            let env = cx.k.envs.get(me).ok_or(Error::BadEnv)?;
            cx.frame.copy_from(env.regs());
            env.status = ENV_RUNNING;
            crate::sched::publish_status(env);
        }
    }
    cx.replaced = true;
    Ok([])
}

/// Makes `reply`, a replier's registers, the completed `pct_wait` of the
/// waiter whose saved registers are `waiter`: the reply's message
/// registers (`rbx rdx rsi rbp r8 r9 r10 r12`–`r15`) stay, the rest is the
/// waiter's, its `rip` past the `syscall`, `rax` 0 and `rdi` the replier.
#[inline(always)]
pub(crate) fn completed(reply: &mut TrapFrame, waiter: &TrapFrame, replier: EnvId) {
    reply.rax = 0;
    reply.rdi = u64::from(replier);
    reply.rcx = waiter.rcx;
    reply.r11 = waiter.r11;
    reply.vector = waiter.vector;
    reply.error = waiter.error;
    reply.rip = waiter.rip + SYSCALL_LEN;
    reply.cs = waiter.cs;
    reply.rflags = waiter.rflags;
    reply.rsp = waiter.rsp;
    reply.ss = waiter.ss;
}

/// Waits (again) for the reply to the synchronous call with `ticket` that
/// `callee` serves.
pub fn pct_wait(cx: &mut Cx<'_>, callee: u64, ticket: u64) -> Result<[u64; 0], Error> {
    let me = cx.caller;
    let callee = super::args::env_word(callee)?;
    if callee == me {
        return Err(Error::Invalid);
    }
    let serving =
        cx.k.envs.get(callee).is_some_and(|e| e.pct.serving() && e.pct_caller.is_some_and(|(_, t)| t == ticket));
    if ticket == 0 || !serving {
        return Err(Error::BadEnv);
    }
    if let Some(first) = cx.k.envs.get(callee).and_then(|e| e.pct_caller).map(|(c, _)| c)
        && waiter(cx, callee, first, ticket).is_some_and(|w| w != me)
    {
        return Err(Error::Busy);
    }
    wait(cx, me, callee, ticket)?;
    crate::sched::give_up(cx.k, cx.frame, me, Some(callee));
    cx.replaced = true;
    Ok([])
}

/// Environment `id`'s state was replaced: a wait it had is over (the reply
/// will be dropped), and a reply it owed is owed by nobody now — whoever
/// waits for it resumes from its `pct_wait` with `BadEnv`.
pub fn state_replaced(k: &mut crate::state::Kernel, id: EnvId, keeps_owed: bool) {
    let Some(env) = k.envs.get(id) else { return };
    env.waiting_for = None;
    env.wait_ticket = 0;
    let owed = if keeps_owed { None } else { env.pct_caller.take() };
    if let Some((_, ticket)) = owed {
        for w in k.envs.ids_where(|e| e.waiting_for == Some(id) && e.wait_ticket == ticket) {
            if let Some(e) = k.envs.get(w) {
                wake_with(e, Error::BadEnv);
            }
        }
    }
}

/// Completes waiter `e`'s `pct_wait` with `err` and makes it runnable.
pub fn wake_with(e: &mut crate::env::Env, err: Error) {
    e.waiting_for = None;
    e.wait_ticket = 0;
    let regs = e.regs_mut();
    regs.rip += SYSCALL_LEN;
    regs.rax = err.code();
    e.status = ENV_RUNNABLE;
    e.publish();
}

/// Binds the reply `callee_slot`'s environment owes to `caller_slot`'s
/// under a fresh ticket (see the call table).
pub fn pct_owe(cx: &mut Cx<'_>, callee_slot: EnvCap, caller_slot: EnvCap) -> Result<[u64; 1], Error> {
    let callee = callee_slot.with(oxok_cap::Rights::WRITE)?;
    let caller = caller_slot.with(oxok_cap::Rights::WRITE)?;
    if callee == caller {
        return Err(Error::Invalid);
    }
    if cx.k.envs.get(caller).ok_or(Error::BadEnv)?.waiting_for.is_some() {
        return Err(Error::Busy);
    }
    let env = cx.k.envs.get(callee).ok_or(Error::BadEnv)?;
    if !env.pct.serving() {
        return Err(Error::Invalid);
    }
    if env.pct_caller.is_some() {
        return Err(Error::Busy);
    }
    let ticket = next_ticket();
    env.pct_caller = Some((caller, ticket));
    Ok([ticket])
}
