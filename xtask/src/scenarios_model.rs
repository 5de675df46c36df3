//! Scenarios of the execution models (issue 16, point 3). `scenarios.rs`
//! lists [`MODEL_SCENARIOS`] with the others; `cargo xtask test` reruns
//! [`PROCESS_SUBSET`] and [`PROCESS_ONLY`] on the process-model kernel
//! (`cargo xtask test --model process` runs every scenario there).

use crate::scenario::Scenario;

/// Every scenario of this file that runs in both models.
pub(crate) const MODEL_SCENARIOS: [Scenario; 1] = [LONGCALL];

/// Scenarios that only make sense on the process-model kernel.
pub(crate) const PROCESS_ONLY: [Scenario; 1] = [MODEL_RESUME];

/// What the default `cargo xtask test` also runs on the process-model
/// kernel: the scenarios of long calls, preemption, PCT, fork, accounts,
/// checkpoints and the fuzzer (the whole suite: `--model process`).
pub(crate) const PROCESS_SUBSET: &[&str] = &[
    "boot-banner",
    "preempt",
    "batch",
    "longcall",
    "upcalls",
    "state",
    "revoke-comply",
    "pct",
    "pct-restart",
    "sleep-clock",
    "fork",
    "hostile-forkbomb-limited",
    "hostile-ptcharge",
    "hostile-envcycle",
    "slots-hostile",
    "directed-yield",
    "pipe",
    "ckpt-move",
    "ckpt-wait",
    "fuzz-short",
];

const LONGCALL: Scenario = Scenario {
    name: "longcall",
    about: "long page_batch calls (2048 records, 32 restart points each) beside a computing neighbour: every call \
            does all its records (checked in the exposed page tables), the neighbour's checksums never change, no \
            frame leaked",
    cmdline: "run=longcall+batch&longcall+spin",
    expect: &["longcall batch: ok (", "longcall spin: ok (", "none leaked"],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
    timeout_secs: 120,
    ..Scenario::DEFAULT
};

const MODEL_RESUME: Scenario = Scenario {
    name: "model-resume",
    about: "process model: a long call whose slot ends at a restart point is blocked on its own kernel stack while the \
            neighbour runs, then resumed in the kernel where it stopped; the calls and the neighbour stay correct",
    // 1 ms ticks, so that slots end often enough to catch a long call.
    cmdline: "run=longcall+batch&longcall+spin tick_hz=1000",
    expect: &[
        "execution model: process",
        "model: a call blocked at a restart point",
        "model: a blocked call resumed in the kernel",
        "longcall batch: ok (",
        "longcall spin: ok (",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
    timeout_secs: 120,
    ..Scenario::DEFAULT
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_subset_names_listed_scenarios() {
        let all = crate::scenarios::SCENARIOS;
        for name in PROCESS_SUBSET {
            assert!(all.iter().any(|s| s.name == *name), "no scenario {name:?}");
        }
        for s in PROCESS_ONLY {
            assert!(!all.iter().any(|t| t.name == s.name), "{:?} runs in both models", s.name);
        }
    }
}
