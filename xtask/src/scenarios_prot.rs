//! Scenarios of issue 10 (protection without holes) added after the first
//! round: the kernel heap charged per account, many sleepers, and the
//! export of an environment in the middle of a `page_batch`.
//! `scenarios.rs` lists them with the others.

use crate::scenario::Scenario;

/// Every scenario of this file, in the order `scenarios.rs` lists them.
pub(crate) const PROT_SCENARIOS: [Scenario; 7] =
    [HOSTILE_HEAP, MANY_SLEEPERS, STATE_BATCH, STATE_BATCH_KNOB, HOSTILE_ORPHAN, LOG_LINES, HOSTILE_RTPAGES];

const HOSTILE_HEAP: Scenario = Scenario {
    name: "hostile-heap",
    about: "kernel heap is charged to accounts: what an environment and a predicate cost the heap is covered by their \
            charge (account_info ACCOUNT_HEAP); a program under a 96 KiB heap limit (env_limit_heap) creating \
            environments full of predicates and deriving capabilities gets NoMemory, never holds more than its limit, \
            the kernel heap grows by no more; a victim keeps working; the leak check compares the kernel heap and the \
            accounts with the boot baseline",
    cmdline: "run=hostile-victim+hostile-heap&hostile-heap",
    expect: &[
        "hostile-heap: an environment costs * bytes of kernel heap, charged *; a predicate costs *, charged *",
        "hostile-heap: * environments and * predicates, then Some(NoMemory); account peak * of * bytes",
        "hostile-heap: * capabilities derived until the list was full",
        "hostile-heap: ok (",
        "victim: ok, * rounds, data intact, env_create and frame_alloc worked throughout",
        "frames: all * free again, none leaked",
        "kernel heap: * bytes in use, * at start, nothing charged: none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "destroyed:", "heap leaked", "KERNEL PANIC"],
    timeout_secs: 180,
    ..Scenario::DEFAULT
};

const MANY_SLEEPERS: Scenario = Scenario {
    name: "many-sleepers",
    about: "96 sleepers (24 on far deadlines, 72 watching a table row: more than a tick's budget of watchers) are not \
            woken while the program beside them sleeps 20 times on a near deadline and 20 times on a watched predicate \
            and wakes each time, never early (how late, in ticks, is printed); the watchers wake when it ends",
    cmdline: "run=many-sleepers",
    expect: &[
        "many-sleepers: 96 sleepers (24 on deadlines, 72 watched)",
        "many-sleepers: woken late by (ticks) deadline median * max *; watched median * max *",
        "many-sleepers: ok (",
        "frames: all * free again, none leaked",
        "kernel heap: * bytes in use, * at start, nothing charged: none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "heap leaked", "KERNEL PANIC"],
    timeout_secs: 240,
    ..Scenario::DEFAULT
};

const STATE_BATCH: Scenario = Scenario {
    name: "state-batch",
    about: "EnvState of an environment stopped in the middle of a page_batch (32768 unmap records) says the same call \
            on the syscall with rsi at the next record and rdx the records left; imported into a fresh environment \
            with the same memory, both finish the batch and exit 0, and no mapping is left",
    // Ticks every millisecond, so that one meets the batch several times.
    cmdline: "run=state-batch tick_hz=1000",
    expect: &[
        "state-batch: stopped after * of 32768 records (* left)",
        "state-batch: caught at 4 points, restart granularity 64 records",
        "state-batch: ok (",
        "frames: all * free again, none leaked",
        "kernel heap: * bytes in use, * at start, nothing charged: none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "destroyed:", "heap leaked", "KERNEL PANIC"],
    timeout_secs: 180,
    ..Scenario::DEFAULT
};

const STATE_BATCH_KNOB: Scenario = Scenario {
    name: "state-batch-restart100",
    about: "the restart granularity is a kernel word: with restart_records=100 a child's 32768-record page_batch, \
            caught 4 times, is stopped only at multiples of 100 records (one of them off the default's \
            64-record points), and its exported state still imports and finishes as in state-batch",
    cmdline: "run=state-batch restart_records=100 tick_hz=1000",
    expect: &[
        "restart points every 100 records",
        "state-batch: stopped after * of 32768 records (* left)",
        "state-batch: caught at 4 points, restart granularity 100 records",
        "state-batch: ok (",
        "frames: all * free again, none leaked",
    ],
    ..STATE_BATCH
};

const LOG_LINES: Scenario = Scenario {
    name: "log-lines",
    about: "kernel log lines never cut a program's console line: a child's exit logged while the program's line is \
            open comes out after the line ends; a line left open for 3 s lets them out after the 2 s hold, on \
            lines of their own",
    cmdline: "run=logline",
    expect: &[
        "logline: before after",
        "(true) exited with status 0",
        "logline: open",
        "(true) exited with status 0",
        "late",
        "logline: ok",
    ],
    forbid: &["FAIL", "KERNEL PANIC", "logline: before [", "logline: open ["],
    timeout_secs: 60,
    ..Scenario::DEFAULT
};

const HOSTILE_ORPHAN: Scenario = Scenario {
    name: "hostile-orphan",
    about: "orphaned frames stay charged to the account of the owner that ended: a program limited to 64 more frames \
            that loops create child / allocate 24 frames owned by it / map them / destroy it is refused with NoMemory \
            in the third round, and its account is back where it began once it unmaps them; a victim keeps working",
    cmdline: "run=hostile-victim+hostile-orphan&hostile-orphan",
    expect: &[
        "hostile-orphan: 2 rounds of 24 orphans, then Some(NoMemory); * mapped",
        "hostile-orphan: ok (",
        "victim: ok, * rounds, data intact, env_create and frame_alloc worked throughout",
        "frames: all * free again, none leaked",
        "kernel heap: * bytes in use, * at start, nothing charged: none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "destroyed:", "heap leaked", "KERNEL PANIC"],
    timeout_secs: 180,
    ..Scenario::DEFAULT
};

const HOSTILE_RTPAGES: Scenario = Scenario {
    name: "hostile-rtpages",
    about: "the libOS runtime vouches for every page it hands out by address: the program's own image, heap and stack \
            are never a shared page, a claimed page or guest memory (refused, and unchanged), nor are unmapped, \
            unaligned or read-only pages where writing is asked; a writable claim excludes every other; copies stop \
            at the page's end; every frame comes back",
    cmdline: "run=hostile-rtpages",
    expect: &[
        "hostile-rtpages: the runtime refused every page of the program's own memory",
        "hostile-rtpages: ok (",
        "frames: all * free again, none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "destroyed:", "KERNEL PANIC"],
    timeout_secs: 60,
    ..Scenario::DEFAULT
};
