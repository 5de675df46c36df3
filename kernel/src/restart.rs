//! Restart granularity (Fluke's restart rule): how much work a long call
//! does in one kernel entry before it reaches a restart point — where the
//! interrupt model returns to user mode with the call's arguments advanced
//! and `rip` back on the `syscall`, and the process model lets a pending
//! tick in and goes on, blocks, or returns.
//!
//! The cmdline word `restart_records=N` sets it: `page_batch` applies `N`
//! records between restart points (default [`BATCH_STEP`], 1..=[`MAX`]),
//! `page_protect_range` changes `N * PAGES_PER_RECORD` pages. The value in
//! force is published as `SysInfo::restart_records`. Finer points bound the
//! time a slot owner waits behind a neighbour's long call; coarser ones
//! save the restarts' bookkeeping (`cargo xtask bench --fluke`, table (c)).

use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use oxok_abi::BATCH_STEP;

/// Most records per restart step (keeps one kernel entry bounded).
pub const MAX: u64 = 4096;
/// Pages `page_protect_range` changes per record of the step: a protect
/// of a present page costs about an eighth of a batch record.
pub const PAGES_PER_RECORD: u64 = 8;

static RECORDS: AtomicU64 = AtomicU64::new(BATCH_STEP);

/// Records `page_batch` applies between restart points.
pub fn records() -> u64 {
    RECORDS.load(Relaxed)
}

/// Pages `page_protect_range` changes between restart points.
pub fn pages() -> u64 {
    records() * PAGES_PER_RECORD
}

/// Takes `restart_records=N`; true if `word` was that word (a value out of
/// range is refused with a warning, keeping the default).
pub fn config_word(word: &str) -> bool {
    let Some(n) = word.strip_prefix("restart_records=") else { return false };
    match n.parse::<u64>() {
        Ok(n) if (1..=MAX).contains(&n) => {
            RECORDS.store(n, Relaxed);
            crate::mem::exposed::update_sysinfo(|i| i.restart_records = n);
            log::info!("restart points every {n} records");
        }
        _ => log::warn!("cmdline: restart_records must be 1..={MAX}; keeping {}", records()),
    }
    true
}
