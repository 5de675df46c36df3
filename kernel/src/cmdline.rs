//! The kernel command line (grammar in `oxok_abi::boot`).

use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// A program to start at boot: its name in the boot archive and its argv.
#[derive(Debug, Clone)]
pub struct Program {
    /// argv; `argv[0]` is the program's name.
    pub argv: Vec<String>,
}

/// What the command line asks for.
#[derive(Debug)]
pub struct Cmdline {
    /// Boot programs in steps: each step's programs start together, and a
    /// step starts once every environment of the one before has ended.
    pub run: Vec<Vec<Program>>,
    /// Run the kernel self tests first.
    pub ktest: bool,
    /// `crash` or `crash=stack`: fail on purpose once boot is done, to show
    /// (and test) the panic report and its symbolised backtrace, or the
    /// kernel stack's guard page.
    pub crash: Option<Crash>,
    /// Timer interrupts per second.
    pub tick_hz: u64,
    /// The slot clock's parameters (`slot_ticks=`, `slot_grace=`,
    /// `critical_grace=`, `strikes=`).
    pub slots: oxok_slots::Config,
    /// Slots in the vector (`slots=N`, 1..=32).
    pub slot_count: usize,
}

/// A deliberate failure the command line asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crash {
    /// `crash`: a panic.
    Panic,
    /// `crash=stack`: a kernel recursion that runs into the stack's guard
    /// page (the double fault must report the overflow).
    StackOverflow,
}

/// Parses the whole line. Unknown words are logged and ignored.
pub fn parse(line: &str) -> Cmdline {
    // The timer's rate first (the last valid `tick_hz=`): the slot clock's
    // defaults depend on it, and the loop below may change them.
    let hz = line
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("tick_hz=").and_then(tick_hz))
        .next_back()
        .unwrap_or(crate::timer::DEFAULT_HZ);
    let mut c = Cmdline {
        run: Vec::new(),
        ktest: false,
        crash: None,
        tick_hz: hz,
        slots: crate::slots::defaults_at(hz),
        slot_count: oxok_abi::layout::SLOT_VECTOR_SLOTS,
    };
    let mut saw_run = false;
    for word in line.split_whitespace() {
        if let Some(list) = word.strip_prefix("run=") {
            saw_run = true;
            for step in list.split(',').filter(|p| !p.is_empty()) {
                let programs = step
                    .split('&')
                    .filter(|p| !p.is_empty())
                    .map(|prog| Program { argv: prog.split('+').map(|s| s.to_string()).collect() })
                    .collect();
                c.run.push(programs);
            }
        } else if let Some(value) = word.strip_prefix("tick_hz=") {
            if tick_hz(value).is_none() {
                log::warn!("cmdline: tick_hz must be 10..=10000; ignoring {value:?} (the rate is {})", c.tick_hz);
            }
        } else if let Some(n) = word.strip_prefix("slots=") {
            match n.parse::<usize>() {
                Ok(n) if (1..=oxok_abi::layout::SLOT_VECTOR_SLOTS).contains(&n) => c.slot_count = n,
                _ => log::warn!(
                    "cmdline: slots must be 1..={}; keeping {}",
                    oxok_abi::layout::SLOT_VECTOR_SLOTS,
                    c.slot_count
                ),
            }
        } else if crate::slots::config_word(&mut c.slots, word) {
            // A slot-clock parameter, taken (or refused with a warning).
        } else if word == "halt_status" {
            crate::sched::HALT_WITH_STATUS.store(true, core::sync::atomic::Ordering::Relaxed);
        } else if let Some(n) = word.strip_prefix("gen_limit=") {
            match n.parse::<u32>() {
                Ok(n) if n >= 2 => crate::env::set_gen_limit(n),
                _ => log::warn!("cmdline: gen_limit must be a number >= 2"),
            }
        } else if let Some(n) = word.strip_prefix("frame_gen_limit=") {
            match n.parse::<u32>() {
                Ok(n) if n >= 2 => crate::mem::frame::set_gen_limit(n),
                _ => log::warn!("cmdline: frame_gen_limit must be a number >= 2"),
            }
        } else if crate::restart::config_word(word) {
            // `restart_records=N`, taken (or refused with a warning).
        } else if cfg!(feature = "model-process") && model_word(word) {
            // The process model's `restart_every`.
        } else if crate::fpu::config_word(word) {
            // `fpu=eager|lazy`, taken (or refused with a warning).
        } else if word == "ktest" {
            c.ktest = true;
        } else if word == "crash" {
            c.crash = Some(Crash::Panic);
        } else if word == "crash=stack" {
            c.crash = Some(Crash::StackOverflow);
        } else if !word.starts_with("log=") {
            log::warn!("cmdline: ignoring unknown word {word:?}");
        }
    }
    if !saw_run {
        c.run.push(alloc::vec![Program { argv: alloc::vec!["init".to_string()] }]);
    }
    c
}

/// The timer rate a `tick_hz=` value asks for, if it is one the timer
/// takes (10 to 10,000 Hz).
fn tick_hz(value: &str) -> Option<u64> {
    value.parse::<u64>().ok().filter(|hz| (10..=10_000).contains(hz))
}

#[cfg(feature = "model-process")]
fn model_word(word: &str) -> bool {
    crate::model::config_word(word)
}

#[cfg(not(feature = "model-process"))]
fn model_word(_: &str) -> bool {
    false
}
