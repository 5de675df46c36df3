//! Each environment's CPU state beyond the general registers — the x87/SSE
//! unit (an FXSAVE image) and the FS and GS bases — multiplexed between
//! environments, and what `env_get_state`/`env_set_state` see of it.
//!
//! The unit holds one environment's state at a time, `FPU_LIVE`'s (0: an
//! environment that ended, nobody's); the kernel never uses it. Switching
//! is **eager** by default: when the scheduler loads an environment other
//! than the one whose state is live, the live one is saved (FXSAVE) and
//! the incoming one restored (FXRSTOR) at once; resuming the same
//! environment (after a call, an idle stretch, an upcall) costs nothing.
//! The alternative, `fpu=lazy` on the command line, sets CR0.TS instead
//! and moves the state on the first x87/SSE instruction (#NM).
//!
//! Why eager: measured with `fpu-bench` (apps/tests; `cargo xtask run
//! --append "run=fpu-bench+server&fpu-bench+client fpu=eager"`, then
//! `fpu=lazy`), QEMU TCG on a shared two-core host, two runs each:
//!
//! | median cycles               | eager          | lazy           |
//! | --------------------------- | -------------- | -------------- |
//! | null call                   | 1111, 1109     | 1213, 1131     |
//! | PCT round trip, no x87/SSE  | 248713, 268995 | 161965, 212295 |
//! | PCT round trip, both SSE    | 158870, 171589 | 228192, 185852 |
//!
//! (`cargo xtask bench --quick`, same build: `rpc_roundtrip` 488926 vs
//! 305375, `exception_upcall_ud2` 4208 vs 4734.) The run-to-run spread is
//! larger than any difference: an FXSAVE/FXRSTOR pair is lost in the cost
//! of a switch (address space, scheduler), and the CR0 writes lazy needs
//! on every switch cost about as much under emulation. So the simpler
//! policy wins: eager has no trap path on the common case — code built by
//! ordinary Rust and C toolchains (memcpy, Linux binaries) uses SSE almost
//! at once — and keeps the state exact in the environment's own area
//! whenever it does not run, which export and import rely on. An upcall
//! (exception, page fault, slot end) does no FPU work in either mode: the
//! handler runs with the interrupted state live.
//!
//! For measurement only, `fpu=off` switches no x87/SSE state at all (every
//! environment shares the unit: state leaks between them, so the boot log
//! warns). `cargo xtask bench` boots it once per round beside the normal
//! boot to show what switching costs: the `_fpu_off` rows (null call, PCT
//! round trip, exception upcalls) against the same workloads switched
//! eagerly.
//!
//! FS and GS bases are switched eagerly (two WRMSRs) on the same rule;
//! they are read back on the way out because a program can reset a base by
//! loading a segment selector. That is also the only change a program can
//! make to them, so a switch between two environments whose bases are both
//! zero (the common case) touches no MSR: only the null selectors are
//! loaded. The kernel uses neither FS nor GS and never
//! executes `swapgs`, so `IA32_KERNEL_GS_BASE` plays no part.

use crate::arch::fpu;
use crate::env::{Env, EnvId, EnvTable};
use alloc::boxed::Box;
use core::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering};
use oxok_abi::Error;
use oxok_abi::FpuState;
use oxok_abi::layout::USER_TOP;

/// The x87/SSE state and the segment bases of one environment, in an
/// image made when it first becomes runnable, takes a state or is given a
/// base ([`Extended::make_image`]): one that has none is in the clean
/// state (after `fninit`, MXCSR 0x1f80) with both bases 0.
pub struct Extended {
    /// Its image, exact whenever its state is not live.
    pub image: Option<Box<Image>>,
}

/// What [`Extended`] keeps.
pub struct Image {
    /// The FXSAVE image.
    pub fpu: FpuState,
    /// FS base.
    pub fs_base: u64,
    /// GS base.
    pub gs_base: u64,
}

impl Extended {
    /// A new environment's: no image (clean state, bases 0).
    pub const fn new() -> Extended {
        Extended { image: None }
    }

    /// Kernel heap an image takes (the account pays for it with the
    /// environment's record, `account::ENV_HEAP`).
    pub const IMAGE_HEAP: usize = size_of::<Image>();

    /// Gives it an image (clean, bases 0) if it has none: before it first
    /// runs, takes a state or is given a base. `NoMemory` (nothing changed)
    /// if the kernel heap would fall into its reserve.
    pub fn make_image(&mut self) -> Result<&mut Image, Error> {
        if self.image.is_none() {
            crate::mem::heap::reserve(Self::IMAGE_HEAP)?;
            self.image = Some(Box::new(Image { fpu: FpuState::CLEAN, fs_base: 0, gs_base: 0 }));
        }
        self.image.as_deref_mut().ok_or(Error::NoMemory)
    }

    /// Its x87/SSE state as exported (the clean one without an image).
    pub fn state(&self) -> FpuState {
        self.image.as_deref().map_or(FpuState::CLEAN, |i| i.fpu)
    }

    /// Its FS and GS bases (0 without an image).
    #[inline]
    pub fn bases(&self) -> (u64, u64) {
        self.image.as_deref().map_or((0, 0), |i| (i.fs_base, i.gs_base))
    }

    /// The FXSAVE image, if made.
    fn fpu(&self) -> Option<&FpuState> {
        self.image.as_deref().map(|i| &i.fpu)
    }
}

/// The environment whose x87/SSE state is in the unit (0: none).
static FPU_LIVE: AtomicU32 = AtomicU32::new(0);
/// The environment whose bases are in the MSRs (0: none).
static BASES_LIVE: AtomicU32 = AtomicU32::new(0);
/// The base MSRs may hold a nonzero value: one was loaded since they were
/// last loaded with zeros. A program can only clear a base (by loading a
/// selector), never set one, so while this is false both MSRs are 0.
static BASES_NONZERO: AtomicBool = AtomicBool::new(true);
/// The switching policy: [`EAGER`], [`LAZY`] (CR0.TS and #NM) or [`OFF`]
/// (no switching at all, measurement only), one word for the one load a
/// switch makes to learn it.
static MODE: AtomicU8 = AtomicU8::new(EAGER);
const EAGER: u8 = 0;
const LAZY: u8 = 1;
const OFF: u8 = 2;

/// Eager switching, the default.
#[inline(always)]
fn eager() -> bool {
    MODE.load(Ordering::Relaxed) == EAGER
}

/// Lazy switching.
#[inline(always)]
fn lazy() -> bool {
    MODE.load(Ordering::Relaxed) == LAZY
}

/// No switching (`fpu=off`).
#[inline(always)]
fn off() -> bool {
    MODE.load(Ordering::Relaxed) == OFF
}

/// Enables the unit (once, at boot).
pub fn init() {
    fpu::init();
}

/// Takes the command-line word `fpu=eager`, `fpu=lazy` or `fpu=off`
/// (measurement only); false if `word` is not an `fpu=` word.
pub fn config_word(word: &str) -> bool {
    match word.strip_prefix("fpu=") {
        // `off` stands whatever comes after it.
        Some("lazy") if !off() => MODE.store(LAZY, Ordering::Relaxed),
        Some("eager") if !off() => MODE.store(EAGER, Ordering::Relaxed),
        Some("lazy" | "eager") => {}
        Some("off") => MODE.store(OFF, Ordering::Relaxed),
        Some(other) => log::warn!("cmdline: fpu must be eager, lazy or off, not {other:?}"),
        None => return false,
    }
    true
}

/// The switching policy's name, for the boot log.
pub fn policy() -> &'static str {
    if off() {
        "off"
    } else if lazy() {
        "lazy"
    } else {
        "eager"
    }
}

/// A switch to `e`, the x87/SSE and base half of it: what another
/// environment has live is saved into its own area and `e`'s is loaded,
/// looking each environment up once; `e` itself, if it is alive, is
/// returned for the rest of the switch. The usual case — eager switching,
/// both the unit and the bases another environment's — is written out
/// here in one pass; the rest is [`save_outgoing`] then [`load_incoming`].
#[inline(always)]
pub fn switch_to(envs: &mut EnvTable, e: EnvId) -> Option<&mut Env> {
    let live = FPU_LIVE.load(Ordering::Relaxed);
    if !eager() || live != BASES_LIVE.load(Ordering::Relaxed) || live == e.raw() {
        save_outgoing(envs, e);
        let env = envs.get(e)?;
        load_incoming(env);
        return Some(env);
    }
    if let Some(image) = envs.by_number(live).and_then(|old| old.ext.image.as_deref_mut()) {
        keep_bases(image);
        fpu::save(&mut image.fpu);
    }
    // Saved: the unit and the MSRs now hold nothing another switch must
    // keep. If `e` is gone they are loaded by the next switch.
    let env = envs.get(e)?;
    let (fs, gs) = env.ext.bases();
    load_bases(fs, gs);
    // Eager switching never sets CR0.TS (only `fpu=lazy` does), so no
    // trap to clear: the state is loaded and is live.
    fpu::restore(env.ext.fpu().unwrap_or(&FpuState::CLEAN));
    FPU_LIVE.store(e.raw(), Ordering::Relaxed);
    BASES_LIVE.store(e.raw(), Ordering::Relaxed);
    Some(env)
}

/// Whether a hand-off from `from` may use [`hand_over`]: eager switching,
/// and the unit and the bases both `from`'s (as after any switch to it).
#[inline(always)]
pub fn hand_over_ready(from: EnvId) -> bool {
    let live = FPU_LIVE.load(Ordering::Relaxed);
    live == from.raw() && live == BASES_LIVE.load(Ordering::Relaxed) && eager()
}

/// [`switch_to`]'s usual case for a caller holding both environments,
/// after [`hand_over_ready`] for `from`: `from`'s live state saved into its
/// image, `to`'s loaded.
#[inline(always)]
pub fn hand_over(from: &mut Env, to: &Env) {
    let into = to.ext.fpu().unwrap_or(&FpuState::CLEAN);
    match from.ext.image.as_deref_mut() {
        Some(image) => {
            keep_bases(image);
            fpu::exchange(&mut image.fpu, into);
        }
        None => fpu::restore(into),
    }
    let (fs, gs) = to.ext.bases();
    load_bases(fs, gs);
    FPU_LIVE.store(to.id.raw(), Ordering::Relaxed);
    BASES_LIVE.store(to.id.raw(), Ordering::Relaxed);
}

/// The first half of a switch to `e` (the scheduler's `load`; the second
/// half, [`load_incoming`], takes the incoming environment itself, so that
/// a switch looks each environment up once): whatever of another
/// environment is live (its bases, and with eager switching its x87/SSE
/// state) is saved into that environment's own area, in one look at it.
/// Nothing of `e`'s own is touched.
fn save_outgoing(envs: &mut EnvTable, e: EnvId) {
    let bases_old = BASES_LIVE.load(Ordering::Relaxed);
    let fpu_old = FPU_LIVE.load(Ordering::Relaxed);
    let eager = eager();
    let save_bases = bases_old != e.raw();
    let save_fpu = eager && fpu_old != e.raw();
    if save_bases && save_fpu && bases_old == fpu_old {
        // The usual switch: both are one environment's, found once.
        if let Some(image) = envs.by_number(bases_old).and_then(|old| old.ext.image.as_deref_mut()) {
            keep_bases(image);
            fpu::save(&mut image.fpu);
        }
        return;
    }
    if save_bases && let Some(image) = envs.by_number(bases_old).and_then(|old| old.ext.image.as_deref_mut()) {
        keep_bases(image);
    }
    if save_fpu {
        save_image(envs, fpu_old);
    }
}

/// Saves the live bases into `image`, theirs. They can only have been
/// cleared since they were loaded: zeros it holds are still exact, without
/// a read.
#[inline(always)]
fn keep_bases(image: &mut Image) {
    if (image.fs_base | image.gs_base) != 0 {
        (image.fs_base, image.gs_base) = fpu::bases();
    }
}

/// Saves the unit's state into the image of the environment numbered
/// `live` (the one whose state it holds), if it is alive and has one.
fn save_image(envs: &mut EnvTable, live: u32) {
    if let Some(image) = envs.by_number(live).and_then(|old| old.ext.image.as_deref_mut()) {
        fpu::save(&mut image.fpu);
    }
}

/// The second half of a switch to `env` (after [`save_outgoing`] for it):
/// its bases into the MSRs if they are not live, and its x87/SSE state
/// into the unit (eager) or the unit set to trap (lazy).
fn load_incoming(env: &Env) {
    let e = env.id.raw();
    if BASES_LIVE.load(Ordering::Relaxed) != e {
        let (fs, gs) = env.ext.bases();
        load_bases(fs, gs);
        BASES_LIVE.store(e, Ordering::Relaxed);
    }
    if FPU_LIVE.load(Ordering::Relaxed) == e || off() {
        fpu::set_trap(false);
    } else if lazy() {
        fpu::set_trap(true);
    } else {
        take_image(env);
    }
}

/// Loads the base MSRs (and null selectors); writes the MSRs only when a
/// base is nonzero or one may be (with both zero and known zero, the null
/// selectors are all that changes).
#[inline(always)]
fn load_bases(fs: u64, gs: u64) {
    let nonzero = (fs | gs) != 0;
    if nonzero || BASES_NONZERO.load(Ordering::Relaxed) {
        fpu::set_bases(fs, gs);
        BASES_NONZERO.store(nonzero, Ordering::Relaxed);
    } else {
        fpu::reset_selectors();
    }
}

/// Saves the live state into its owner's area and loads `e`'s.
fn take_unit(envs: &mut EnvTable, e: EnvId) {
    save_image(envs, FPU_LIVE.load(Ordering::Relaxed));
    match envs.get(e) {
        Some(new) => take_image(new),
        None => {
            FPU_LIVE.store(0, Ordering::Relaxed);
            fpu::set_trap(false);
        }
    }
}

/// Loads `env`'s x87/SSE state into the unit (the live state was saved
/// already) and makes it the live one.
fn take_image(env: &Env) {
    // Every environment that runs has an image (`make_image` when it
    // became runnable); the clean state is the fallback.
    fpu::restore(env.ext.fpu().unwrap_or(&FpuState::CLEAN));
    FPU_LIVE.store(env.id.raw(), Ordering::Relaxed);
    fpu::set_trap(false);
}

/// A #NM (device not available) from `current` in user mode: with lazy
/// switching, its state moves into the unit and it retries the
/// instruction (true). Otherwise it is an ordinary exception (false).
pub fn device_not_available(envs: &mut EnvTable, current: EnvId) -> bool {
    if !lazy() || FPU_LIVE.load(Ordering::Relaxed) == current.raw() {
        return false;
    }
    take_unit(envs, current);
    true
}

/// Makes `env.ext` exact (before it is exported): copies the live state
/// out of the unit and the MSRs if they are `env`'s.
pub fn sync(env: &mut Env) {
    let Some(image) = env.ext.image.as_deref_mut() else {
        // Without an image its state was never loaded: nothing is live.
        return;
    };
    if FPU_LIVE.load(Ordering::Relaxed) == env.id.raw() {
        fpu::save(&mut image.fpu);
    }
    if BASES_LIVE.load(Ordering::Relaxed) == env.id.raw() {
        (image.fs_base, image.gs_base) = fpu::bases();
    }
}

/// `env.ext` was replaced (an import, `env_set_base`): if its state is
/// live, the unit and the MSRs take the new values at once.
pub fn reload(env: &Env) {
    if FPU_LIVE.load(Ordering::Relaxed) == env.id.raw() {
        fpu::restore(env.ext.fpu().unwrap_or(&FpuState::CLEAN));
    }
    if BASES_LIVE.load(Ordering::Relaxed) == env.id.raw() {
        let (fs, gs) = env.ext.bases();
        load_bases(fs, gs);
    }
}

/// Environment `id` ended: its live state belongs to nobody now (the next
/// environment loads its own over it; nothing of it is ever saved).
pub fn forget(id: EnvId) {
    let _ = FPU_LIVE.compare_exchange(id.raw(), 0, Ordering::Relaxed, Ordering::Relaxed);
    let _ = BASES_LIVE.compare_exchange(id.raw(), 0, Ordering::Relaxed, Ordering::Relaxed);
}

/// True if `state` may be imported: MXCSR reserved bits clear.
pub fn importable(state: &FpuState) -> bool {
    fpu::valid(state)
}

/// True if `base` may be an FS or GS base: a user address (canonical,
/// below `USER_TOP`).
pub fn base_ok(base: u64) -> bool {
    base < USER_TOP
}
