//! # Oxok — an exokernel for x86-64
//!
//! The kernel protects and multiplexes hardware; library operating systems
//! manage it. See `DESIGN.md` in the shared folder and the module docs:
//! `boot` (entry and boot information), `arch` (CPU tables, entry stubs),
//! `mem` (frames, page tables, heap, user access), `env` (environments),
//! `loader`, `sched`, `syscall` and `calls` (the call handlers), `trap`.
//!
//! The kernel proper holds no `unsafe`: `boot`, `arch`, `mem` and `dev`
//! (the machine, memory primitives and device drivers) are the crate
//! `oxok-hw`, whose safe API is all this crate uses.
#![no_std]
#![no_main]
#![forbid(unsafe_code)]

extern crate alloc;

use oxok_hw::{arch, boot, dev, mem};

oxok_hw::entry!(start);

mod account;
mod bootcaps;
mod calls;
mod cmdline;
mod console;
mod env;
mod fpu;
mod handoff;
mod irqflag;
mod ktest;
mod loader;
mod log;
mod logline;
#[cfg(feature = "model-process")]
mod model;
mod net;
mod panic;
mod restart;
mod revoke;
mod sched;
mod sleep;
mod slots;
mod state;
mod syscall;
mod timer;
mod trap;
mod upcall;
mod xn;

use boot::{BootInfo, RegionKind};
use oxok_abi::boot::EXIT_PANIC;

/// The kernel proper, entered from `boot` once in long mode with the
/// protocol's registers.
pub fn start(entry: boot::Entry) -> ! {
    arch::serial::init();
    arch::serial::aux::init();
    let boot = match BootInfo::from_entry(entry) {
        Ok(b) => b,
        Err(e) => panic!("cannot use the boot information: {e:?}"),
    };
    log::init(boot.cmdline());
    ::log::info!("Oxok {} booting ({:?})", oxok_abi::VERSION, boot.protocol);
    let ram: u64 = boot.regions().iter().filter(|r| r.kind == RegionKind::Ram).map(|r| r.end - r.start).sum();
    let ram_end = boot.regions().iter().filter(|r| r.kind == RegionKind::Ram).map(|r| r.end).max().unwrap_or(0);
    ::log::info!("memory: {} MiB of RAM in {} map entries", ram >> 20, boot.regions().len());
    for r in boot.regions() {
        ::log::debug!("  {:#014x}..{:#014x} {:?}", r.start, r.end, r.kind);
    }

    arch::handlers::register(arch::handlers::Handlers {
        #[cfg(not(feature = "model-process"))]
        syscall: syscall::handle,
        #[cfg(feature = "model-process")]
        syscall: model::syscall,
        trap: trap::handle,
        #[cfg(feature = "model-process")]
        leave: model::leave,
    });
    arch::init();
    fpu::init();
    if let Err(e) = mem::frame::init(&boot) {
        panic!("frame allocator: {e:?}");
    }
    mem::paging::on_leaf_release(env::release_leaf);
    if let Err(e) = mem::paging::init(ram_end) {
        panic!("kernel page tables: {e}");
    }
    if let Err(e) = mem::heap::init() {
        panic!("kernel heap: {e}");
    }
    let tsc_hz = arch::tsc::calibrate();
    let boot_unix = arch::rtc::read().map_or_else(
        || {
            ::log::warn!("rtc: no settled reading; the wall clock starts at 1970");
            0
        },
        |t| arch::rtc::unix_seconds(&t),
    );
    let clock = oxok_abi::layout::Clock { tsc_hz, boot_tsc: arch::cpu::rdtsc(), ticks: 0, tick_hz: 0, boot_unix };
    let archive_range = boot.modules().first().map_or((0, 0), |m| (m.start, m.end));
    let run_rows = match mem::exposed::init(clock, archive_range, env::ENV_FRAMES) {
        Ok(rows) => rows,
        Err(e) => panic!("exposed tables: {e}"),
    };
    ::log::info!("clock: TSC at {} MHz", tsc_hz / 1_000_000);
    let (usable, free) = mem::frame::with(|f| (f.usable(), f.free_count()));
    ::log::info!("frames: {usable} usable, {free} free after the kernel's share");

    let cmd = cmdline::parse(boot.cmdline());
    match fpu::policy() {
        "off" => ::log::warn!("fpu: fpu=off: x87/SSE state is not switched, environments share it (measurement only)"),
        policy => ::log::info!("fpu: x87/SSE per environment, {policy} switching"),
    }
    match (arch::cpu::smep_enabled(), arch::cpu::umip_enabled(), arch::cpu::random().is_some()) {
        (true, true, true) => ::log::info!("cpu: SMEP on, UMIP on; call tickets from rdrand"),
        (smep, umip, rdrand) => ::log::warn!(
            "cpu: SMEP {}, UMIP {}; call tickets from {} (weaker: see calls/pct.rs)",
            if smep { "on" } else { "off: ring 0 could run user pages" },
            if umip { "on" } else { "off: ring 3 reads the GDT's and IDT's addresses and CR0" },
            if rdrand { "rdrand" } else { "SipHash under a TSC key" },
        ),
    }
    net::init();
    xn::init();
    let archive = match boot.module_bytes(0) {
        Some(m) => m,
        None => {
            ::log::warn!("no boot archive: no programs to run");
            &[]
        }
    };
    state::init(state::Kernel {
        envs: env::EnvTable::new(run_rows),
        current: None,
        sched: alloc::boxed::Box::new(slots::Sched::with_slots(cmd.slots, cmd.slot_count)),
        ticked: 0,
        slot_start: false,
        archive,
        baseline_free_frames: mem::frame::with(|f| f.free_count()),
        baseline_heap: 0,
        steps: Default::default(),
        sleepers: alloc::boxed::Box::new(sleep::Sleepers::new()),
        revoking: alloc::boxed::Box::new(revoke::Repossess::new()),
    });
    // The heap baseline: the kernel's own tables (above) are all made.
    state::with(|k| k.baseline_heap = mem::heap::usage().0);

    if cmd.ktest {
        let (_, failed) = ktest::run();
        if failed > 0 {
            ::log::error!("kernel self tests failed");
            logline::flush();
            arch::qemu::exit(EXIT_PANIC);
        }
    }

    match cmd.crash {
        Some(cmdline::Crash::Panic) => crash_on_purpose(),
        Some(cmdline::Crash::StackOverflow) => {
            ::log::warn!("crash=stack: recursing until the kernel stack overflows");
            let depth = overflow_on_purpose(0);
            panic!("crash=stack: {depth} frames deep and no fault: the kernel stack has no guard");
        }
        None => {}
    }

    state::with(|k| k.steps = cmd.run.into_iter().collect());
    let c = cmd.slots;
    ::log::info!(
        "cpu: {} slots of {} ticks; grace {} tick(s), critical sections {} tick(s), {} strikes",
        oxok_abi::layout::SLOT_VECTOR_SLOTS,
        c.ticks_per_slot,
        c.grace_ticks,
        c.critical_grace_ticks,
        c.max_strikes
    );
    timer::init(cmd.tick_hz, tsc_hz);
    #[cfg(feature = "model-process")]
    model::announce();
    sched::start()
}

/// The `crash=stack` command-line word: recursion with a 1 KiB frame
/// (written, so the stack really grows) until the kernel stack's guard page
/// stops it; returns only if a million frames (1 GiB) found no guard.
#[inline(never)]
fn overflow_on_purpose(depth: u64) -> u64 {
    let mut frame = [0u8; 1024];
    frame[0] = depth as u8;
    let frame = core::hint::black_box(frame);
    if depth >= 1 << 20 {
        return depth;
    }
    let below = overflow_on_purpose(core::hint::black_box(depth + 1));
    // The frame is still live after the call: no tail call reuses it.
    core::hint::black_box(&frame);
    below
}

/// The `crash` command-line word: a panic from a function of its own, so
/// the report's backtrace has a known frame to show.
#[inline(never)]
fn crash_on_purpose() -> ! {
    panic!("crash requested on the command line")
}
