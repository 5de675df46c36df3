//! Who runs: the glue between the kernel and the slot scheduler of
//! `oxok-slots` (see `slots` for the policy's view and the defaults).
//!
//! `k.current` is the environment whose registers are in the frame the
//! kernel returns to; the scheduler's `running()` is the one that should
//! run. Every change of who runs goes through the scheduler and then
//! [`apply`]: a switch saves the outgoing registers where needed, clears
//! `k.current`, and [`resume`] loads whoever the scheduler chose (with its
//! slot-start upcall at the start of an owned slot). With nobody to run the
//! kernel idles, processing timer ticks, until someone can.

use crate::arch::idt::enter_user;
use crate::arch::qemu;
use crate::arch::trapframe::TrapFrame;
use crate::env::EnvId;
use crate::slots::{self, View};
use crate::state::{self, Kernel};
use crate::upcall::{self, Event};
use oxok_abi::boot::EXIT_HALT;
use oxok_abi::upcall as kinds;
use oxok_abi::{ENV_RUNNABLE, ENV_RUNNING};
use oxok_slots::{End, Envs, Reason, Step, Switch};

/// After an entry from user mode (and after reaping destroyed environments
/// for a bounded while): if the current environment is still the one that
/// should run, its registers are already in `frame` and it simply
/// continues; otherwise the scheduler's choice is loaded into `frame` and
/// its address space activated. With nobody to run the kernel idles until a
/// tick gives someone the CPU; with nothing left that could ever run, the
/// next step of boot programs starts or the machine halts.
pub fn resume(k: &mut Kernel, frame: &mut TrapFrame) {
    if k.envs.reaping() {
        k.envs.reap(crate::env::REAP_BUDGET);
    }
    loop {
        if let Some(cur) = k.current {
            if k.envs.alive(cur) && k.sched.running() == Some(cur) {
                return;
            }
            // Not the scheduler's choice (never expected): keep its state.
            if let Some(env) = k.envs.get(cur) {
                env.save_regs(frame);
                if env.status == ENV_RUNNING {
                    env.status = ENV_RUNNABLE;
                    env.publish();
                }
            }
            k.current = None;
        }
        match k.sched.running() {
            Some(e) if k.envs.alive(e) => {
                load(k, frame, e);
                return;
            }
            Some(e) => {
                let step = k.sched.remove(e, &mut View(&mut k.envs));
                apply(k, frame, step);
                continue;
            }
            None => {}
        }
        if !anyone_can_run(k) {
            if collect_unstartable(k) {
                continue;
            }
            if start_step(k) {
                let step = k.sched.start(&mut View(&mut k.envs));
                apply(k, frame, step);
                continue;
            }
            halt(k);
        }
        // Idle until a tick or a device's interrupt (a receive interrupt
        // masked since the last is let through now), then let the
        // scheduler look again.
        crate::net::idle();
        crate::arch::cpu::wait_for_interrupt();
        catch_up(k, frame);
    }
}

/// Whether a kernel entry has bookkeeping to do beyond its own work: a
/// revocation outstanding or a round of the abort protocol in progress
/// (`revoke::pending`), or destroyed environments still being torn down
/// (`EnvTable::reaping`). Two loads; while it is false the entry paths
/// skip `revoke::enforce`, `revoke::step` and the reaper, which would do
/// nothing then.
#[inline(always)]
pub fn pending(k: &Kernel) -> bool {
    crate::revoke::pending(k) || k.envs.reaping()
}

/// The fast way back to user mode after an entry from `cur`, which the
/// caller knows to be alive (its registers in the frame): true if nothing
/// is pending and `cur` is still current and still the scheduler's choice,
/// so [`resume`] would return at once and the entry may return to user
/// mode now. Inlined always: a handful of loads on every fast return,
/// where a call would cost as much again.
#[inline(always)]
pub fn still_running(k: &Kernel, cur: EnvId) -> bool {
    k.current == Some(cur) && still_chosen(k, cur)
}

/// [`still_running`] for a path that cannot have changed `k.current`
/// (`cur`, the caller, at entry): nothing pending and `cur` still the
/// scheduler's choice.
#[inline(always)]
pub fn still_chosen(k: &Kernel, cur: EnvId) -> bool {
    !pending(k) && k.sched.running() == Some(cur)
}

/// Refreshes only the status and run count in `env`'s exposed row: what a
/// switch or a transfer changes (every other field is published by what
/// changes it, with `Env::publish`). A whole row costs a few times more.
#[inline]
pub fn publish_status(env: &crate::env::Env) {
    crate::mem::exposed::set_env_status(env.id.row(), env.status, env.runs);
}

/// Loads environment `e` (the scheduler's choice) into `frame`; delivers
/// its slot-start upcall if its owned slot just started.
fn load(k: &mut Kernel, frame: &mut TrapFrame, e: EnvId) {
    let slot_start = core::mem::take(&mut k.slot_start);
    let Some(env) = enter(&mut k.envs, e) else { return };
    frame.copy_from(env.regs());
    if slot_start && env.handlers.upcall(kinds::SLOT_START) != 0 {
        let ev = Event {
            kind: kinds::SLOT_START,
            vector: kinds::VECTOR_SLOT_START,
            error: k.sched.slot().number(),
            addr: u64::from(k.sched.remaining()),
        };
        // An undeliverable slot-start upcall (bad stack) is skipped: the
        // environment simply resumes.
        let _ = upcall::deliver(env, frame, &ev);
    }
    k.current = Some(e);
    #[cfg(feature = "model-process")]
    crate::model::loaded(e);
    if crate::revoke::pending(k) {
        crate::revoke::enforce(k, e, frame);
    }
}

/// The machine's half of a switch to `e`, whatever its registers: what
/// another environment has live saved, `e`'s address space and x87/SSE
/// state loaded, its status running. `None` if `e` is gone.
#[inline(always)]
fn enter(envs: &mut crate::env::EnvTable, e: EnvId) -> Option<&mut crate::env::Env> {
    let env = crate::fpu::switch_to(envs, e)?;
    env.space.activate();
    env.status = ENV_RUNNING;
    env.runs += 1;
    publish_status(env);
    Some(env)
}

/// A protected control transfer's switch, made at once: when nothing is
/// pending, `me` is current and the scheduler lets it give the rest of
/// its slot to `to` ([`oxok_slots::Scheduler::donate`]), `to` becomes
/// current here — what [`give_up`], [`switched`] and [`resume`] do for a
/// donation, without their general cases — and is returned; its registers
/// are the caller's to put in the frame (a message or a reply written in
/// place, with no copy through `to`'s saved registers), which then leaves
/// by the full exit. `me`'s registers and status (not running) must
/// already be saved. `None`, nothing changed: the caller gives up the
/// general way.
#[inline(always)]
pub fn donate(k: &mut Kernel, me: EnvId, to: EnvId) -> Option<&mut crate::env::Env> {
    if pending(k) || k.current != Some(me) || !k.sched.donate(me, to, &mut View(&mut k.envs)) {
        return None;
    }
    log::trace!("slot {}: {me} donates to {to} at tick {}", k.sched.slot().number(), k.ticked);
    slots::publish_donation(k.sched.slot(), to);
    k.slot_start = false;
    let env = enter(&mut k.envs, to)?;
    debug_assert!(env.id == to);
    k.current = Some(to);
    #[cfg(feature = "model-process")]
    crate::model::loaded(to);
    Some(env)
}

/// Whether anything could run now or later: a runnable environment that
/// owns a slot or asked for spare time, or a sleeper.
fn anyone_can_run(k: &mut Kernel) -> bool {
    if !k.sleepers.is_empty() {
        return true;
    }
    let sched = &k.sched;
    let ids =
        k.envs.ids_where(|e| matches!(e.status, ENV_RUNNABLE | ENV_RUNNING) && e.waiting_for.is_none() && !e.stopped);
    ids.iter().any(|&id| sched.spare.contains(id) || sched.vector.count_owned(id) > 0)
}

/// Carries out what the scheduler decided. `frame` holds `k.current`'s
/// registers (if any).
pub fn apply(k: &mut Kernel, frame: &mut TrapFrame, step: Step) {
    match step {
        Step::Continue => {}
        Step::SlotEnd { env } => slot_end(k, frame, env),
        Step::Switch(sw) => {
            if let Some(out) = sw.out
                && matches!(out.end, End::Overrun { .. } | End::Destroy { .. })
            {
                if k.current == Some(out.env)
                    && let Some(e) = k.envs.get(out.env)
                {
                    e.save_regs(frame);
                }
                if let End::Overrun { .. } = out.end {
                    let name = k.envs.get(out.env).map(|e| e.name.clone()).unwrap_or_default();
                    log::info!("env {} ({name}) {}", out.env, out.end);
                }
            }
            switched(k, sw);
        }
    }
}

/// The bookkeeping of a switch (no registers needed: the outgoing
/// environment's are saved by the caller where they must be).
fn switched(k: &mut Kernel, sw: Switch) {
    if let Some(out) = sw.out {
        let id = out.env;
        if let Some(e) = k.envs.get(id)
            && e.status == ENV_RUNNING
        {
            e.status = ENV_RUNNABLE;
            publish_status(e);
        }
        if let End::Destroy { .. } = out.end {
            destroy(k, id, 0xff, format_args!("{}", out.end));
        }
    }
    log::trace!("slot {}: {:?} -> {:?} at tick {}", sw.slot, sw.out, sw.decision, k.ticked);
    k.current = None;
    k.slot_start = sw.decision.reason == Reason::Owner;
    if let (Reason::Donated, Some(to)) = (sw.decision.reason, sw.decision.run) {
        slots::publish_donation(sw.slot, to);
    } else {
        slots::publish_turn(&k.sched, sw.slot);
    }
}

/// The running environment's slot budget is used up: its slot-end upcall,
/// or, with no slot-end entry (or one that cannot be delivered), a
/// preemption as if it had yielded.
fn slot_end(k: &mut Kernel, frame: &mut TrapFrame, id: EnvId) {
    let slot = k.sched.slot().number();
    let Some(env) = k.envs.get(id) else { return };
    if k.current == Some(id) {
        if env.handlers.upcall(kinds::SLOT_END) != 0 {
            let ev = Event { kind: kinds::SLOT_END, vector: kinds::VECTOR_SLOT_END, error: slot, addr: 0 };
            if upcall::deliver(env, frame, &ev).is_ok() {
                return;
            }
        }
        env.save_regs(frame);
    }
    env.status = ENV_RUNNABLE;
    env.publish();
    let step = k.sched.yielded(id, None, &mut View(&mut k.envs));
    apply(k, frame, step);
}

/// Takes the NIC's packets if its interrupt arrived, then processes the
/// timer ticks that arrived since the last call: wakes
/// sleepers whose predicates hold and advances the slot clock. Stops early
/// when the running environment changes (the rest of the ticks are
/// dropped; the new one's registers are not loaded yet).
pub fn catch_up(k: &mut Kernel, frame: &mut TrapFrame) {
    let interrupted = crate::net::IRQ.take();
    if interrupted && crate::net::poll_interrupt() > 0 {
        woken(k, frame);
    }
    if crate::xn::IRQ.take() && crate::xn::poll(true) > 0 {
        woken(k, frame);
    }
    let now = crate::timer::ticks();
    if k.ticked < now {
        // Deadlines hold whatever the target does: bounded work per tick.
        if crate::revoke::pending(k) {
            crate::revoke::step(k, crate::revoke::STEP_BUDGET);
        }
        // The tick's poll is for an interrupt masked while nobody made
        // progress; right after the interrupt's own batch it would only
        // bring a second one before any program ran.
        if !interrupted {
            crate::net::poll();
        }
        crate::xn::poll(false);
    }
    while k.ticked < now {
        k.ticked += 1;
        wake_sleepers(k);
        let slot = k.sched.slot();
        let step = k.sched.tick(&mut View(&mut k.envs));
        // A switch publishes the vector itself (`switched`); a tick that
        // continues changes it only when an owner's turn runs on into its
        // next slot (the scheduler's merge).
        let published = matches!(step, Step::Switch(_));
        apply(k, frame, step);
        let running = k.sched.running();
        if !published && k.sched.slot() != slot {
            slots::publish_turn(&k.sched, k.sched.slot());
        }
        if k.current != running {
            k.ticked = now;
        }
    }
}

/// A device interrupted and its work is done (the NIC's packets are in
/// rings, the disk's completions published): sleepers whose predicates now
/// hold wake, and on an idle CPU one of them may take the rest of the idle
/// slot at once rather than at the next tick.
fn woken(k: &mut Kernel, frame: &mut TrapFrame) {
    crate::sleep::wake_for_devices(k);
    if k.sched.running().is_none() {
        let step = k.sched.woke(&mut View(&mut k.envs));
        apply(k, frame, step);
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

/// A scheduling point's look at the sleepers (`crate::sleep`): those
/// whose deadline came and a bounded round of the others.
pub fn wake_sleepers(k: &mut Kernel) {
    crate::sleep::wake(k, crate::sleep::WATCH_BUDGET);
}

/// A timer tick arrived while `k.current` ran in user mode (its registers
/// are in `frame`): the scheduler advances; a switch loads the next
/// environment.
pub fn tick(k: &mut Kernel, frame: &mut TrapFrame) {
    catch_up(k, frame);
    resume(k, frame);
}

/// `me`, the running environment, gives up the rest of its slot: to `to`
/// (directed yield) or to the next slot. Its registers in `frame` are saved
/// with `rax` 0 (the yield's status); `frame` then holds whoever runs.
/// Inlined into its one caller, the `yield_cpu` call (a directed yield is
/// a fast path of its own: `shm_pingpong`). True if `to` runs now, made
/// current by [`donate`] (its registers in `frame`, for the full exit as
/// they are).
#[inline]
pub fn yield_now(k: &mut Kernel, frame: &mut TrapFrame, me: EnvId, to: Option<EnvId>) -> bool {
    // A plain yield is a scheduling point: sleepers whose predicate now
    // holds become runnable here rather than at the next tick. A directed
    // yield names who runs next (and is refused if that one sleeps), so it
    // evaluates nobody: the cost of a hand-off between two environments
    // does not grow with the number of sleepers, and the others' predicates
    // are looked at by the next tick or plain yield, as after any call.
    if to.is_none() {
        wake_sleepers(k);
    }
    frame.rax = 0;
    if let Some(env) = k.envs.get(me) {
        env.save_regs(frame);
        env.status = ENV_RUNNABLE;
        publish_status(env);
    }
    if let Some(to) = to
        && let Some(env) = donate(k, me, to)
    {
        frame.copy_from(env.regs());
        return true;
    }
    give_up(k, frame, me, to);
    false
}

/// `me`, whose registers and status are already saved, stops running: the
/// rest of its slot goes to `to` if it can run, else the next slot begins.
pub fn give_up(k: &mut Kernel, frame: &mut TrapFrame, me: EnvId, to: Option<EnvId>) {
    let step = k.sched.yielded(me, to, &mut View(&mut k.envs));
    apply(k, frame, step);
}

/// Whether environment `id` could run now (for directed yields).
pub fn runnable(k: &mut Kernel, id: EnvId) -> bool {
    View(&mut k.envs).runnable(id)
}

/// Makes a created environment runnable; it asks for spare time.
pub fn make_runnable(k: &mut Kernel, id: EnvId) -> Result<(), oxok_abi::Error> {
    if let Some(env) = k.envs.get(id) {
        // Its FPU image, made now that it will run (`NoMemory`, nothing
        // changed, if the kernel heap has no room).
        env.ext.make_image()?;
        env.status = ENV_RUNNABLE;
        env.publish();
        let _ = k.sched.spare.request(id);
    }
    Ok(())
}

/// Starts the next step of boot programs once no environment is left.
fn start_step(k: &mut Kernel) -> bool {
    if k.envs.count() != 0 {
        return false;
    }
    let Some(step) = k.steps.pop_front() else { return false };
    crate::revoke::drain(k);
    while !k.envs.reap(usize::MAX) {}
    let mut started = alloc::vec::Vec::new();
    for prog in &step {
        match crate::loader::load(&mut k.envs, k.archive, &prog.argv) {
            Ok(id) => {
                if let Err(e) = make_runnable(k, id) {
                    log::error!("cannot start {:?}: {e}", prog.argv[0]);
                    kill(k, id, oxok_abi::EXIT_KILLED | 0xff);
                    continue;
                }
                log::info!("env {id} ({}) started", prog.argv[0]);
                if started.try_reserve(1).is_ok() {
                    started.push(id);
                }
            }
            Err(e) => log::error!("cannot start {:?}: {e}", prog.argv[0]),
        }
    }
    crate::bootcaps::introduce(&mut k.envs, &started);
    true
}

fn halt(k: &mut Kernel) -> ! {
    crate::revoke::drain(k);
    while !k.envs.reap(usize::MAX) {}
    let blocked = k.envs.ids_where(|e| e.waiting_for.is_some());
    if !blocked.is_empty() {
        log::error!("deadlock: environments {blocked:?} wait for replies that cannot come");
    }
    let starved = k.envs.ids_where(|e| matches!(e.status, ENV_RUNNABLE | ENV_RUNNING) && e.waiting_for.is_none());
    if !starved.is_empty() {
        log::warn!("environments {starved:?} could run but own no slots and asked for no spare time");
    }
    let alive = k.envs.count();
    log::info!("no runnable environments left ({alive} alive); halting");
    if alive == 0 {
        let (free, retired) = crate::mem::frame::with(|f| (f.free_count(), f.retired()));
        // Retired frames (generation limit) are out of use for good, not lost.
        // Frames the XN buffer cache holds stay there across programs.
        let cached = crate::xn::cached_frames();
        match k.baseline_free_frames.checked_sub(free + retired + cached) {
            Some(0) => {
                let (used, _) = crate::mem::heap::usage();
                log::info!("frames: all {free} free again, none leaked; kernel heap {used} bytes in use");
                if cached > 0 {
                    log::info!("frames: {cached} more in the XN buffer cache");
                }
            }
            _ => log::error!("frames: {free} free, {} at start: frames leaked", k.baseline_free_frames),
        }
        // The cache's frames stay charged after their programs end (they
        // are counted apart above, like the frames themselves).
        let cache_heap = crate::xn::cached_heap();
        crate::xn::shut_down();
        heap_check(k.baseline_heap, cache_heap);
    }
    crate::logline::flush();
    qemu::exit(halt_value())
}

/// Kernel heap that may stay in use once every environment is gone beyond
/// what was in use at boot: tables that keep their high-water capacity
/// (the account table's free rows, the network's and XN's maps) — never
/// anything per environment.
pub const HEAP_SLACK: usize = 16 * 1024;

/// The leak check's heap half, with every environment gone: nothing is
/// charged to any account any more (every record an environment caused was
/// given back) but the XN buffer cache's frames (`cache_heap`), and the
/// heap — without XN's state, which the disk keeps — is back at its boot
/// baseline.
fn heap_check(baseline: usize, cache_heap: u64) {
    let (used, _) = crate::mem::heap::usage();
    // In the process model the CPU may still be on the last ended
    // environment's kernel stack, freed at the next switch, which never comes.
    #[cfg(feature = "model-process")]
    let used = used.saturating_sub(crate::model::deferred_bytes());
    let root = crate::account::with(|a| a.info(crate::account::ROOT));
    let charged = root.map_or(0, |r| r.used.heap).saturating_sub(cache_heap);
    let envs = root.map_or(0, |r| r.used.envs);
    let orphans = crate::env::orphans::count();
    if orphans != 0 {
        log::error!("accounts: {orphans} orphaned frames still charged with every environment gone: frames leaked");
    }
    if charged != 0 || envs != 0 {
        log::error!("accounts: {charged} heap bytes and {envs} environments still charged: kernel heap leaked");
    } else if used > baseline + HEAP_SLACK {
        log::error!("kernel heap: {used} bytes in use, {baseline} at start: kernel heap leaked");
    } else {
        log::info!("kernel heap: {used} bytes in use, {baseline} at start, nothing charged: none leaked");
    }
}

/// Whether the halt carries the exit status of the last boot program to
/// end (the command-line word `halt_status`, which `cargo xtask run` adds).
pub static HALT_WITH_STATUS: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
/// The exit status of the last boot program (no parent) that ended.
static LAST_BOOT_STATUS: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);

/// The debug-exit value of an orderly halt: [`EXIT_HALT`], or with
/// `halt_status` and a nonzero last boot status, `EXIT_STATUS_BASE + status`.
fn halt_value() -> u32 {
    use core::sync::atomic::Ordering::Relaxed;
    let status = LAST_BOOT_STATUS.load(Relaxed) as u32;
    if HALT_WITH_STATUS.load(Relaxed) && status != 0 {
        oxok_abi::boot::EXIT_STATUS_BASE + status.min(oxok_abi::boot::EXIT_STATUS_MAX)
    } else {
        EXIT_HALT
    }
}

/// Starts the first boot programs; never returns.
pub fn start() -> ! {
    #[allow(unused_mut)]
    let mut frame = state::with(|k| {
        k.ticked = crate::timer::ticks();
        let mut frame = TrapFrame::new_user(0, 0);
        resume(k, &mut frame);
        frame
    });
    #[cfg(feature = "model-process")]
    crate::model::leave(&mut frame);
    enter_user(&frame)
}

/// Destroys environment `id` (exit status `EXIT_KILLED | vector`; 0xff
/// when no CPU vector applies) and logs why.
pub fn destroy(k: &mut Kernel, id: EnvId, vector: u64, why: core::fmt::Arguments<'_>) {
    let name = k.envs.get(id).map(|e| e.name.clone()).unwrap_or_default();
    log::info!("env {id} ({name}) destroyed: {why}");
    kill(k, id, oxok_abi::EXIT_KILLED | (vector & 0xff));
}

/// Destroys environment `id` with exit `status`: its slots are freed, its
/// spare-time request dropped (if it was running, the next slot begins);
/// environments waiting for its reply to a protected control transfer wake
/// up with `BadEnv`.
pub fn kill(k: &mut Kernel, id: EnvId, status: u64) {
    let parent = k.envs.get(id).map(|e| e.parent);
    if parent == Some(None) {
        LAST_BOOT_STATUS.store(status, core::sync::atomic::Ordering::Relaxed);
    }
    // Its slots go back to the vector below (or already did, after an
    // overrun): give back their charge while its account is known.
    if let Some(env) = k.envs.get(id) {
        crate::account::uncharge_slots(env.account, u64::from(env.slots));
        env.slots = 0;
    }
    crate::net::forget(id);
    if k.envs.destroy(id, status).is_err() {
        log::warn!("env {id}: destroy of a dead environment");
        return;
    }
    crate::fpu::forget(id);
    // An end changes the exposed environment table (the row turns zombie):
    // a parent waiting for it wakes now, not at the next tick.
    crate::sleep::unlist(k, id);
    crate::sleep::ended(k, parent.flatten());
    for w in k.envs.ids_where(|e| e.waiting_for == Some(id)) {
        if let Some(env) = k.envs.get(w) {
            crate::calls::pct_wake_with(env, oxok_abi::Error::BadEnv);
        }
    }
    match k.sched.remove(id, &mut View(&mut k.envs)) {
        Step::Switch(sw) => switched(k, sw),
        _ => slots::publish_vector(&k.sched),
    }
}
