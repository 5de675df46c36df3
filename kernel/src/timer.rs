//! The periodic timer: counts ticks, keeps the clock page current, and
//! gives the scheduler its preemption points.

use crate::arch::apic::{self, DISK_VECTOR, NET_VECTOR, SPURIOUS_VECTOR, TIMER_VECTOR};
use crate::arch::trapframe::TrapFrame;
use crate::mem::exposed;
use crate::{sched, state};
use core::sync::atomic::{AtomicU64, Ordering};

static TICKS: AtomicU64 = AtomicU64::new(0);
static HZ: AtomicU64 = AtomicU64::new(0);

/// Default timer frequency: Debian's Linux kernels' (`CONFIG_HZ_250`).
/// Under QEMU's TCG each timer interrupt costs the guest some 40 µs of the
/// host's time whatever its handler does (a busy loop runs about 3 % slower
/// at 1000 Hz: `bench/README.md`, "The timer at Linux's rate…"), so Oxok ticks no
/// more often than the Linux it is measured against. A slot is one tick
/// (4 ms) by default; `tick_hz=` sets another rate.
pub const DEFAULT_HZ: u64 = 250;

/// Starts the APIC timer at `hz`.
pub fn init(hz: u64, tsc_hz: u64) {
    let rate = apic::start_timer(hz, tsc_hz);
    HZ.store(hz, Ordering::Relaxed);
    exposed::update_clock(|c| c.tick_hz = hz);
    log::info!("timer: {hz} Hz (APIC timer input {} MHz)", rate / 1_000_000);
}

/// Milliseconds as timer ticks at the running rate, rounded up.
pub fn ms_to_ticks(ms: u64) -> u64 {
    ms.saturating_mul(HZ.load(Ordering::Relaxed).max(1)).div_ceil(1000)
}

/// Timer ticks since the timer started.
pub fn ticks() -> u64 {
    TICKS.load(Ordering::Relaxed)
}

/// Handles interrupt vector `frame.vector` (≥ 32). Taken in user mode it
/// advances the slot clock (or takes the NIC's packets) and may switch
/// environments; taken in kernel mode (the idle loop, which holds the kernel
/// lock) it only counts (or flags), and the idle loop hands the ticks (and
/// the flag) to the scheduler.
pub fn interrupt(frame: &mut TrapFrame) {
    let vector = frame.vector as u8;
    if vector == TIMER_VECTOR {
        let now = TICKS.fetch_add(1, Ordering::Relaxed) + 1;
        exposed::update_clock(|c| c.ticks = now);
        apic::eoi();
        crate::console::poll();
        crate::logline::tick(now);
        if frame.is_user() {
            state::with(|k| sched::tick(k, frame));
        }
    } else if vector == NET_VECTOR || vector == DISK_VECTOR {
        // The NIC received or the disk completed: flag it; the scheduler
        // takes the packets or completions under the kernel lock, now if
        // this interrupted user mode, else when the idle loop wakes from
        // this interrupt.
        if vector == NET_VECTOR {
            crate::net::IRQ.raise();
        } else {
            crate::xn::IRQ.raise();
        }
        apic::eoi();
        if frame.is_user() {
            state::with(|k| sched::tick(k, frame));
        }
    } else if vector != SPURIOUS_VECTOR {
        // Spurious legacy-PIC vectors (32–47; every line is masked) and
        // anything unexpected carry no work.
        log::debug!("spurious interrupt on vector {vector}");
    }
}
