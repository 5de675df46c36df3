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
const BANNER: &[&str] = &["Oxok", "init: environment"];

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
