//! The checkpointer's scenarios (issue 16): `ckpt` (`apps/ckpt`) saves a
//! running process tree — a counter holding a pipe to a child, stopped
//! mid-sleep — and restores it in fresh environments; the output is the
//! uninterrupted run's. `scenarios.rs` lists them with the others.

use crate::scenario::Scenario;

/// Every checkpointer scenario, in the order `scenarios.rs` lists them.
pub(crate) const CKPT_SCENARIOS: [Scenario; 3] = [MOVE, TWICE, HOSTILE];

/// The counter's whole output for `ckpt-counter 12`, in order.
const COUNTER_12: &[&str] = &[
    "count 1", "count 2", "count 3", "count 4", "count 5", "count 6", "count 7", "count 8", "count 9", "count 10",
    "count 11", "count 12", "child sum 78 lines 12", "counter done 12 child 0",
];

const MOVE: Scenario = Scenario {
    name: "ckpt-move",
    about: "a counter with a pipe to a child is stopped mid-sleep, saved, destroyed and restored in fresh environments; it finishes with the uninterrupted run's output",
    cmdline: "run=ckpt+move+100+ckpt-counter+12+30",
    expect: &[
        "count 1",
        "ckpt: saved 2 processes, * frames, * bytes",
        "ckpt: restored 2 processes",
        "count 12",
        "child sum 78 lines 12",
        "counter done 12 child 0",
        "ckpt: restored tree ended with 0",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:", "refused", "failed"],
    timeout_secs: 90,
    ..Scenario::DEFAULT
};

const TWICE: Scenario = Scenario {
    name: "ckpt-twice",
    about: "one image restored twice gives two independent trees: each counts to the end with its own pipe and child",
    cmdline: "run=ckpt+twice+100+ckpt-counter+12+30",
    expect: &[
        "ckpt: saved 2 processes, * frames, * bytes",
        "ckpt: restored 2 processes",
        "ckpt: restored 2 processes",
        "child sum 78 lines 12",
        "child sum 78 lines 12",
        "ckpt: restored tree ended with 0",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "panic", "destroyed:", "refused", "failed"],
    timeout_secs: 90,
    ..Scenario::DEFAULT
};

const HOSTILE: Scenario = Scenario {
    name: "ckpt-hostile",
    about: "without write (call-only, read-only, none) a process cannot be stopped, read or have its capabilities copied; forged and truncated images are refused and nothing half-built is left",
    cmdline: "run=ckpt-hostile",
    expect: &["ckpt-hostile: ok (", "none leaked"],
    forbid: &["FAIL", "frames leaked", "panic"],
    timeout_secs: 90,
    ..Scenario::DEFAULT
};

#[allow(dead_code)]
const _COUNTER_12: &[&str] = COUNTER_12;
