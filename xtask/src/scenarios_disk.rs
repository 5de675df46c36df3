//! The disk scenarios (issue 15): each boots with a fresh raw image as a
//! virtio-blk disk; `disk-persist` boots a second time on the same image.
//! `scenarios.rs` lists them with the others.

use crate::hostdisk::{DiskSpec, Reboot, poke};
use crate::scenario::Scenario;
use std::path::Path;

/// Every disk scenario, in the order `scenarios.rs` lists them.
pub(crate) const DISK_SCENARIOS: [Scenario; 6] = [NONE, BASIC, PERSIST, HOSTILE, VIEW, DUPLICATE];

const FORBID: &[&str] = &["FAIL", "frames leaked", "heap leaked", "panic", "destroyed:", "xn: request"];

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
    about: "XN over virtio-blk: register, root, allocate, write through a binding, taint ordering, flush, evict and read back, will-free; a burst of adjacent writes goes in fewer device requests than blocks and reads back intact",
    cmdline: "run=xntest+basic",
    expect: &["xn: disk of 16320 blocks", "xntest basic: ok (", "none leaked"],
    forbid: FORBID,
    timeout_secs: 90,
    disk: Some(DiskSpec { mib: 64, reboot: None, fsck: false }),
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
            patch: None,
            input: "",
        }),
        fsck: false,
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
    disk: Some(DiskSpec { mib: 2, reboot: None, fsck: false }),
    ..Scenario::DEFAULT
};

const VIEW: Scenario = Scenario {
    name: "disk-view",
    about: "the shell's `xn` view shows the disk, the free map, the roots, per-file-system usage, the registry and the block writes with the device requests they went in; the disk's completion interrupt collected some of xntest's requests",
    cmdline: "run=xntest+basic,init",
    input: "xn\nexit\n",
    expect: &[
        "xntest basic: ok (",
        "disk 16320 blocks",
        "device requests",
        "completion interrupts collected",
        "root 1: fs 0 type 1, 27 blocks",
        "fs 0: 1 templates, 27 blocks",
        "BLOCK",
    ],
    forbid: FORBID,
    timeout_secs: 120,
    disk: Some(DiskSpec { mib: 64, reboot: None, fsck: false }),
    ..Scenario::DEFAULT
};

/// Between the boots, the first entry of root 5 (XN block 5, disk block
/// 64 + 5, entries from byte 64) is made to claim block 12, which root 3
/// owns: damage no program could cause through XN.
fn claim_twice(image: &Path) -> Result<(), String> {
    let mut entry = [0u8; 16];
    entry[..4].copy_from_slice(&12u32.to_le_bytes());
    entry[4..8].copy_from_slice(&1u32.to_le_bytes());
    poke(image, (64 + 5) * 4096 + 64, &entry)
}

const DUPLICATE: Scenario = Scenario {
    name: "disk-duplicate",
    about: "two roots claiming one block on disk (damaged between boots): recovery reports the duplicate, follows it once, and the second claim cannot free it",
    cmdline: "run=xntest+dup-write",
    expect: &["xntest dup-write: ok ("],
    forbid: FORBID,
    timeout_secs: 90,
    disk: Some(DiskSpec {
        mib: 64,
        reboot: Some(Reboot {
            cmdline: "run=xntest+dup-read",
            expect: &[
                "xn: recovered 6 blocks from 2 roots of 1 file systems; 1 duplicates",
                "xn: block 12 claimed twice",
                "xntest dup-read: ok (",
            ],
            patch: Some(claim_twice),
            input: "",
        }),
        fsck: false,
    }),
    ..Scenario::DEFAULT
};
