//! The disk scenarios (issue 15): each boots with a fresh raw image as a
//! virtio-blk disk; `disk-persist` boots a second time on the same image.
//! `scenarios.rs` lists them with the others.

use crate::hostdisk::{DiskSpec, Reboot};
use crate::scenario::Scenario;

/// Every disk scenario, in the order `scenarios.rs` lists them.
pub(crate) const DISK_SCENARIOS: [Scenario; 5] = [NONE, BASIC, PERSIST, HOSTILE, VIEW];

const FORBID: &[&str] = &["FAIL", "frames leaked", "panic", "destroyed:", "xn: request"];

const NONE: Scenario = Scenario {
    name: "disk-none",
    about: "without a disk the kernel boots as before and XN programs are told there is none",
    cmdline: "run=xntest+basic",
    expect: &["xn: no disk", "xntest: no disk"],
    forbid: &["panic"],
    ..Scenario::DEFAULT
};

const BASIC: Scenario = Scenario {
    name: "disk-basic",
    about: "XN over virtio-blk: register, root, allocate, write through a binding, taint ordering, flush, evict and read back, will-free",
    cmdline: "run=xntest+basic",
    expect: &["xn: disk of 16320 blocks", "xntest basic: ok (", "none leaked"],
    forbid: FORBID,
    timeout_secs: 90,
    disk: Some(DiskSpec { mib: 64, reboot: None }),
    ..Scenario::DEFAULT
};

const PERSIST: Scenario = Scenario {
    name: "disk-persist",
    about: "data written and flushed before a reboot is recovered (free map from the catalogued roots with owns) and read back after it",
    cmdline: "run=xntest+persist-write",
    expect: &["no catalogue: fresh", "xntest: persisted root 3", "xntest persist-write: ok ("],
    forbid: FORBID,
    timeout_secs: 90,
    disk: Some(DiskSpec {
        mib: 64,
        reboot: Some(Reboot {
            cmdline: "run=xntest+persist-read",
            expect: &[
                "xn: recovered 5 blocks from 1 roots of 1 file systems; 0 duplicates",
                "xntest persist-read: ok (",
            ],
        }),
    }),
    ..Scenario::DEFAULT
};

const HOSTILE: Scenario = Scenario {
    name: "disk-hostile",
    about: "another principal writing, allocating, freeing or claiming the victim's blocks, forged metadata, tainted pointers, bad UDFs, disk full: refused; the victim passes fsck",
    cmdline: "run=xntest+hostile",
    expect: &["xntest attack: ok (", "xntest hostile: ok (", "none leaked"],
    forbid: FORBID,
    timeout_secs: 120,
    disk: Some(DiskSpec { mib: 2, reboot: None }),
    ..Scenario::DEFAULT
};

const VIEW: Scenario = Scenario {
    name: "disk-view",
    about: "the shell's `xn` view shows the disk, the free map, the roots, per-file-system usage and the registry",
    cmdline: "run=xntest+basic,init",
    input: "xn\nexit\n",
    expect: &["xntest basic: ok (", "disk 16320 blocks", "fs 0: 1 templates, 3 blocks", "BLOCK"],
    forbid: FORBID,
    timeout_secs: 120,
    disk: Some(DiskSpec { mib: 64, reboot: None }),
    ..Scenario::DEFAULT
};
