//! The QEMU scenarios `cargo xtask test` runs. Add one by copying an entry:
//!
//! ```text
//! Scenario {
//!     name: "hostile-map",                      // unique; log in <target>/oxok/logs/hostile-map.log
//!     about: "an env cannot map a frame it does not own",
//!     cmdline: "run=victim,hostile-map",        // kernel command line (default "run=init")
//!     expect: &["hostile-map: denied", "victim: * ok"],  // in this order; `*` = any text in a line
//!     forbid: &["victim: corrupted"],           // never; "KERNEL PANIC" always forbidden
//!     ..Scenario::DEFAULT                       // exit: Exit::Halt, timeout_secs: 30,
//! },                                            // boot: Boot::Pvh, memory: None
//! ```
//!
//! `Exit::Panic` is for a deliberate kernel panic (QEMU status 35);
//! `Boot::IsoBios` / `Boot::IsoUefi` boot the GRUB ISO instead of PVH.

use crate::scenario::{Boot, Scenario};

/// What init prints once it runs; shared by the boot scenarios.
const BANNER: &[&str] = &["Oxok * an exokernel for x86-64", "init: environment * memory * MiB usable"];

/// Every scenario, in the order they are started.
pub(crate) const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "boot-banner",
        about: "the kernel boots by PVH, starts init, and halts cleanly",
        cmdline: "run=init",
        expect: BANNER,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "ktest",
        about: "kernel self tests: frame allocator, page tables, checked user copies, teardown",
        cmdline: "ktest run=hello",
        expect: &["ktest: 7 passed, 0 failed", "hello: ok", "none leaked"],
        forbid: &["FAILED"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-priv",
        about: "privileged instructions from ring 3 kill only their environment; the next one runs",
        cmdline: "run=hostile-priv+cli,hostile-priv+hlt,hostile-priv+cr3,hostile-priv+wrmsr,hostile-priv+rdmsr,\
                  hostile-priv+outb,hostile-priv+inb,hostile-priv+lgdt,hostile-priv+invlpg,hostile-priv+int80,hello",
        expect: &[
            "hostile-priv: trying cli",
            "env * (hostile-priv) destroyed: general protection fault",
            "hostile-priv: trying hlt",
            "destroyed: general protection fault",
            "hostile-priv: trying cr3",
            "destroyed: general protection fault",
            "hostile-priv: trying wrmsr",
            "destroyed: general protection fault",
            "hostile-priv: trying rdmsr",
            "destroyed: general protection fault",
            "hostile-priv: trying outb",
            "destroyed: general protection fault",
            "hostile-priv: trying inb",
            "destroyed: general protection fault",
            "hostile-priv: trying lgdt",
            "destroyed: general protection fault",
            "hostile-priv: trying invlpg",
            "destroyed: general protection fault",
            "hostile-priv: trying int80",
            "destroyed: general protection fault",
            "hello: ok",
            "none leaked",
        ],
        forbid: &["did not fault", "FAIL"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-jump",
        about: "jumps into and reads/writes kernel, direct-map, non-canonical, null and text addresses",
        cmdline: "run=hostile-jump+call-kernel,hostile-jump+read-kernel,hostile-jump+write-direct-map,\
                  hostile-jump+jump-noncanonical,hostile-jump+read-null,hostile-jump+write-text,hello",
        expect: &[
            "destroyed: page fault * instruction fetch of 0xffffffff80201000, protection violation",
            "destroyed: page fault * read of 0xffffffff80201000, protection violation",
            "destroyed: page fault * write of 0xffff800000100000, protection violation",
            "hostile-jump: trying jump-noncanonical",
            "destroyed: general protection fault",
            "destroyed: page fault * read of 0x0, not mapped",
            "destroyed: page fault * write of 0x400000, protection violation",
            "hello: ok",
            "none leaked",
        ],
        forbid: &["did not fault", "FAIL"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-args",
        about: "kernel, unmapped, wrapping and oversized pointers to calls come back as error codes",
        cmdline: "run=hostile-args,hello",
        expect: &["hostile-args: ok", "env * (hostile-args) exited with status 0", "hello: ok", "none leaked"],
        forbid: &["oops", "FAIL"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-calls",
        about: "unknown Oxok call numbers return BadCall; a foreign call with no handler kills only the caller",
        cmdline: "run=hostile-calls,hello",
        expect: &["hostile-calls: ok", "destroyed: foreign system call 39 * no handler registered", "hello: ok"],
        forbid: &["survived", "FAIL"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-stack",
        about: "runaway recursion runs off the stack into an unmapped page: the environment dies alone",
        cmdline: "run=hostile-stack,hello",
        expect: &[
            "hostile-stack: recursing",
            "destroyed: page fault * write of * not mapped",
            "hello: ok",
            "none leaked",
        ],
        forbid: &["returned", "FAIL"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "preempt",
        about: "the APIC timer preempts spinning environments: a third one runs while two spin",
        cmdline: "run=spin+a+400,spin+b+400,hello",
        expect: &[
            "timer: 1000 Hz",
            "spin a: start",
            "spin b: start",
            "hello: ok",
            "spin a: done",
            "spin b: done",
            "none leaked",
        ],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "iso-bios",
        about: "the GRUB ISO boots under BIOS (Multiboot2) to init",
        expect: BANNER,
        boot: Boot::IsoBios,
        timeout_secs: 60,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "iso-uefi",
        about: "the GRUB ISO boots under UEFI (OVMF, Multiboot2) to init",
        expect: BANNER,
        boot: Boot::IsoUefi,
        timeout_secs: 90,
        ..Scenario::DEFAULT
    },
];

#[cfg(test)]
mod tests {
    use super::SCENARIOS;

    #[test]
    fn names_are_unique_and_usable_as_file_names() {
        for (i, s) in SCENARIOS.iter().enumerate() {
            assert!(!s.name.is_empty() && !s.about.is_empty(), "scenario {i} needs a name and an about");
            assert!(
                s.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
                "scenario name {:?}: use letters, digits, - and _",
                s.name
            );
            assert!(!SCENARIOS[..i].iter().any(|t| t.name == s.name), "duplicate scenario {:?}", s.name);
            assert!(s.timeout_secs > 0);
        }
    }
}
