//! Choosing what runs next: round robin over runnable environments with a
//! slice of [`SLICE_TICKS`] timer ticks (the slot vector of `oxok-slots`
//! replaces this policy), sleepers woken by their wakeup predicates, and an
//! idle loop while everyone sleeps.

use crate::arch::idt::enter_user;
use crate::arch::qemu;
use crate::arch::trapframe::TrapFrame;
use crate::env::EnvId;
use crate::state::{self, Kernel};
use oxok_abi::boot::EXIT_HALT;

/// After an entry from user mode (and after reaping destroyed environments
/// for a bounded while): if the current environment still exists
/// its registers are already in `frame` and it simply continues; otherwise
/// the next runnable environment's registers are loaded into `frame` and its
/// address space activated. With nothing left to run, the machine halts.
pub fn resume(k: &mut Kernel, frame: &mut TrapFrame) {
    k.envs.reap(crate::env::REAP_BUDGET);
    if let Some(cur) = k.current {
        if k.envs.alive(cur) {
            return;
        }
        k.current = None;
    }
    loop {
        if let Some(id) = next(k) {
            if let Some(env) = k.envs.get(id) {
                env.space.activate();
                *frame = env.regs;
            }
            crate::revoke::enforce(k, id, frame);
            return;
        }
        if k.sleepers.is_empty() {
            if collect_unstartable(k) {
                continue;
            }
            halt(k);
        }
        // Everyone sleeps: idle until a tick, then look at the predicates.
        crate::arch::cpu::wait_for_interrupt();
        wake_sleepers(k);
    }
}

/// Nothing can run and nobody sleeps: no environment can ever call
/// `env_run` again, so environments that were created but never started
/// can never run. Destroys them (freeing what they hold); true if there
/// were any.
fn collect_unstartable(k: &mut Kernel) -> bool {
    let doomed = k.envs.ids_where(|e| e.status == oxok_abi::ENV_CREATED);
    if doomed.is_empty() {
        return false;
    }
    log::info!("destroying {} environments that were never started and now never can be", doomed.len());
    for id in doomed {
        kill(k, id, oxok_abi::EXIT_KILLED | 0xff);
    }
    true
}

/// Evaluates the predicates of every sleeper; those that hold (or read what
/// they may not) become runnable. A woken sleeper re-executes `env_sleep`,
/// which returns the predicate that holds; a bad read instead completes the
/// call with `BadAddress`.
pub fn wake_sleepers(k: &mut Kernel) {
    let mut i = 0;
    while i < k.sleepers.len() {
        let id = k.sleepers[i];
        let Some(env) = k.envs.get(id) else {
            k.sleepers.swap_remove(i);
            continue;
        };
        if env.status != oxok_abi::ENV_SLEEPING {
            k.sleepers.swap_remove(i);
            continue;
        }
        let mask = env.regs.rdi;
        let wake = match env.first_true(mask) {
            Ok(Some(_)) => true,
            Ok(None) => false,
            Err(_) => {
                env.regs.rip += 2;
                env.regs.rax = oxok_abi::Error::BadAddress.code();
                true
            }
        };
        if wake {
            env.status = oxok_abi::ENV_RUNNABLE;
            env.publish();
            k.runq.push_back(id);
            k.sleepers.swap_remove(i);
        } else {
            i += 1;
        }
    }
}

/// Ticks an environment may run before the next runnable one gets the CPU
/// (round robin; the slot vector replaces this policy).
pub const SLICE_TICKS: u64 = 10;

/// A timer tick arrived while `k.current` ran in user mode (its registers
/// are in `frame`): at the end of its slice, the next runnable environment
/// gets the CPU.
pub fn tick(k: &mut Kernel, frame: &mut TrapFrame, now: u64) {
    wake_sleepers(k);
    if now.is_multiple_of(SLICE_TICKS) {
        preempt(k, frame);
    }
}

/// Puts the current environment at the back of the run queue, if anyone
/// else is waiting, and resumes the next one.
pub fn preempt(k: &mut Kernel, frame: &mut TrapFrame) {
    let Some(cur) = k.current else { return };
    if !k.runq.iter().any(|&id| k.envs.alive(id)) {
        return;
    }
    if let Some(env) = k.envs.get(cur) {
        env.regs = *frame;
        env.status = oxok_abi::ENV_RUNNABLE;
        env.publish();
        k.runq.push_back(cur);
    }
    k.current = None;
    resume(k, frame);
}

/// The caller gives up the CPU: to `target` (directed yield; it must be in
/// the run queue) or to whoever is next. The caller's registers in `frame`
/// already hold its results; it stays runnable. The switch itself happens
/// when the system-call path resumes.
pub fn yield_to(k: &mut Kernel, frame: &mut TrapFrame, target: Option<EnvId>) {
    let Some(cur) = k.current else { return };
    if let Some(t) = target {
        k.runq.retain(|&id| id != t);
        k.runq.push_front(t);
    } else if !k.runq.iter().any(|&id| k.envs.alive(id)) {
        return;
    }
    if let Some(env) = k.envs.get(cur) {
        env.regs = *frame;
        env.regs.rax = 0; // the yield's own status: success
        env.status = oxok_abi::ENV_RUNNABLE;
        env.publish();
        k.runq.push_back(cur);
    }
    k.current = None;
}

/// Starts the next step of boot programs once no environment is left.
fn start_step(k: &mut Kernel) -> bool {
    if k.envs.count() != 0 {
        return false;
    }
    let Some(step) = k.steps.pop_front() else { return false };
    while !k.envs.reap(usize::MAX) {}
    for prog in &step {
        match crate::loader::load(&mut k.envs, k.archive, &prog.argv) {
            Ok(id) => {
                log::info!("env {id} ({}) started", prog.argv[0]);
                if let Some(env) = k.envs.get(id) {
                    env.status = oxok_abi::ENV_RUNNABLE;
                    env.publish();
                }
                k.runq.push_back(id);
            }
            Err(e) => log::error!("cannot start {:?}: {e}", prog.argv[0]),
        }
    }
    true
}

/// Pops runnable environments until a live one is found; makes it current.
/// Starts the next step of boot programs when everything has ended.
fn next(k: &mut Kernel) -> Option<EnvId> {
    if k.runq.is_empty() {
        while start_step(k) && k.runq.is_empty() {}
    }
    while let Some(id) = k.runq.pop_front() {
        if let Some(env) = k.envs.get(id) {
            env.status = oxok_abi::ENV_RUNNING;
            env.runs += 1;
            env.publish();
            k.current = Some(id);
            return Some(id);
        }
    }
    None
}

fn halt(k: &mut Kernel) -> ! {
    while !k.envs.reap(usize::MAX) {}
    let blocked = k.envs.ids_where(|e| e.waiting_for.is_some());
    if !blocked.is_empty() {
        log::error!("deadlock: environments {blocked:?} wait for replies that cannot come");
    }
    let alive = k.envs.count();
    log::info!("no runnable environments left ({alive} alive); halting");
    if alive == 0 {
        let free = crate::mem::frame::with(|f| f.free_count());
        match k.baseline_free_frames.checked_sub(free) {
            Some(0) => {
                let (used, _) = crate::mem::heap::usage();
                log::info!("frames: all {free} free again, none leaked; kernel heap {used} bytes in use")
            }
            _ => log::error!("frames: {free} free, {} at start: frames leaked", k.baseline_free_frames),
        }
    }
    qemu::exit(EXIT_HALT)
}

/// Starts the first runnable environment; never returns.
pub fn start() -> ! {
    let frame = state::with(|k| {
        let Some(id) = next(k) else { halt(k) };
        match k.envs.get(id) {
            Some(env) => {
                env.space.activate();
                env.regs
            }
            None => halt(k),
        }
    });
    enter_user(&frame)
}

/// Destroys environment `id` (exit status `EXIT_KILLED | vector`; 0xff
/// when no CPU vector applies) and logs why.
pub fn destroy(k: &mut Kernel, id: EnvId, vector: u64, why: core::fmt::Arguments<'_>) {
    let name = k.envs.get(id).map(|e| e.name.clone()).unwrap_or_default();
    log::info!("env {id} ({name}) destroyed: {why}");
    kill(k, id, oxok_abi::EXIT_KILLED | (vector & 0xff));
}

/// Destroys environment `id` with exit `status`; environments waiting for
/// its reply to a protected control transfer wake up with `BadEnv`.
pub fn kill(k: &mut Kernel, id: EnvId, status: u64) {
    if k.envs.destroy(id, status).is_err() {
        log::warn!("env {id}: destroy of a dead environment");
        return;
    }
    k.runq.retain(|&r| r != id);
    for w in k.envs.ids_where(|e| e.waiting_for == Some(id)) {
        if let Some(env) = k.envs.get(w) {
            env.waiting_for = None;
            env.regs.rax = oxok_abi::Error::BadEnv.code();
            env.status = oxok_abi::ENV_RUNNABLE;
            env.publish();
            k.runq.push_back(w);
        }
    }
}
