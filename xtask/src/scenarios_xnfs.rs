//! The disk file system from Oxok itself (issue 15 point 3): with a disk,
//! init starts `dfsd` (C-FFS over XN), `/` is on the disk and `/tmp` stays
//! in the RAM server. Each scenario boots twice on one fresh image — what
//! the shell tools, the Linux personality or the victim wrote before the
//! reboot is read back after it — and then the host's `fsck` checks the
//! image (`cargo xtask fsck`). `scenarios.rs` lists them at the end.

use crate::hostdisk::{DiskSpec, Reboot};
use crate::scenario::{Exit, Scenario};

/// Every scenario of this file, in the order `scenarios.rs` lists them.
pub(crate) const XNFS_SCENARIOS: [Scenario; 12] =
    [TOOLS, LINUX, HOSTILE, XCP, FSYNC, PRINCIPAL, WRITE_BACK, FULL, AHEAD, CLOSES, BEHIND, HELD];

const FORBID: &[&str] =
    &["FAIL", "frames leaked", "heap leaked", "panic", "destroyed:", "dfsd: no file system", "does not answer"];

const TOOLS: Scenario = Scenario {
    name: "disk-fs-tools",
    about: "files and directories made with echo >, >>, mkdir, cp, mv, rm on the disk's `/` are there after a reboot; `/tmp` (RAM) is not; the image passes the host's fsck",
    cmdline: "run=init",
    input: "echo hello disk > /a.txt\nmkdir /d\nmkdir /d/e\necho line one > /d/one\necho line two >> /d/one\n\
            cp /a.txt /d/copy\nmv /d/copy /d/e/moved\necho doomed > /doomed\nrm /doomed\n\
            echo scratch > /tmp/scratch\ncat /tmp/scratch\nls /\nexit\n",
    expect: &[
        "dfsd: C-FFS on a disk of 16320 blocks: made file system",
        "scratch",
        "a.txt",
        "d",
        "tmp",
        "dfsd: stopped",
    ],
    forbid: FORBID,
    timeout_secs: 300,
    disk: Some(DiskSpec::init_again(
        "cat /a.txt\ncat /d/one\nls /d/e\ncat /d/e/moved\nls /d\ncat /doomed\ncat /tmp/scratch\nexit\n",
        &[
            "dfsd: C-FFS on a disk of 16320 blocks: mounted file system",
            "hello disk",
            "line one",
            "line two",
            "moved",
            "hello disk",
            "e",
            "one",
            "/doomed: no such file",
            "/tmp/scratch: no such file",
            "dfsd: stopped",
        ],
    )),
    ..Scenario::DEFAULT
};

const LINUX: Scenario = Scenario {
    name: "disk-fs-linux",
    about: "busybox (the Linux personality) writes, copies, renames and lists files on the disk, and reads a native tool's file; a written file's time is the clock's, touch -t sets one; mkdir -p makes a path (mkdir of / is EEXIST, as Linux's); df lists the disk's C-FFS at / (its size from XN's blocks) and the RAM file system at /tmp, which stat tells apart by device; a hard link shares the file (one inode number, link count 2) and keeps it when the first name goes; symbolic links, absolute and relative, are followed (a file made through one), listed as links, a loop of them refused and a chain of 40 followed but not of 41; chmod, mkdir -m and the umask give files and directories their permission bits, a script with its execute bit runs and one without is refused; after a reboot both read them back, the set time, the bits and the link are there; fsck passes",
    cmdline: "run=init",
    input: "busybox sh -c 'echo from linux > /lx.txt'\nbusybox mkdir /lxd\nbusybox cp /lx.txt /lxd/copy\n\
            busybox mv /lxd/copy /lxd/moved\nbusybox ls /lxd\necho native words > /native.txt\n\
            busybox cat /native.txt\nbusybox dd if=/dev/zero of=/big bs=4096 count=600\n\
            busybox seq 1 200000 > /nums\ncp /nums /nums2\nbusybox cmp /nums /nums2 && echo same-bytes\n\
            rm /big && echo big-removed\n\
            busybox cat /nums /nums /nums /nums /nums /nums /nums /nums /nums /nums /nums /nums /nums /nums > /huge\n\
            busybox md5sum /huge\nbusybox touch -t 200109090146.40 /when\nbusybox mkdir -p /p/q/r\n\
            busybox sh -c 'echo linked words > /p/q/r/f'\nbusybox ln /p/q/r/f /p/g\n\
            busybox stat -c 'links %h' /p/g\nbusybox sh -c '[ $(busybox stat -c %i /p/g) = $(busybox stat -c %i /p/q/r/f) ] && echo same \"inode\"'\n\
            busybox ln /p /p2\nbusybox rm /p/q/r/f\nbusybox df / /tmp\n\
            busybox stat -f -c 'names up to %l, blocks of %S' /\nbusybox stat -c 'device %d' / /tmp\n\
            busybox ln -s /p/g /sl\nbusybox ln -s q/r /p/lr\nbusybox sh -c 'echo through > /p/lr/t'\n\
            busybox wc -c /p/q/r/t\nbusybox ls -l /sl\nbusybox wc -c /sl\nbusybox ln -s /lp /lp\nbusybox cat /lp\n\
            busybox sh -c 'i=0; while [ $i -lt 41 ]; do busybox ln -s /ch$((i + 1)) /ch$i; i=$((i + 1)); done'\n\
            busybox sh -c 'echo end > /ch41'\nbusybox wc -c /ch1\nbusybox wc -c /ch0\n\
            busybox sh -c 'a=$(busybox stat -c %Y /lx.txt); b=$(busybox date +%s); \
            [ $a -gt 1700000000 ] && [ $((b - a)) -lt 120 ] && echo \"mtime\" \"of the clock\"'\n\
            busybox sh -c 'echo \"#!/bin/busybox sh\" > /s.sh; echo \"echo script ran\" >> /s.sh'\n\
            busybox sh -c 'busybox cp /s.sh /s-nox.sh; busybox chmod 755 /s.sh; busybox chmod 640 /s-nox.sh'\n\
            busybox mkdir -m 700 /priv\nbusybox sh -c 'umask 027; echo x > /um'\n\
            busybox stat -c 'mode %a %n' /s.sh /s-nox.sh /priv /um\n/s.sh\n/s-nox.sh\necho nox status $?\nexit\n",
    expect: &[
        "dfsd: C-FFS on a disk of * cache window 16 MiB",
        "moved",
        "native words",
        "600+0 records out",
        "same-bytes",
        "big-removed",
        // A file larger than dfsd's window of bound blocks (16 MiB on a
        // machine of 96 MiB): 14 copies of `seq 1 200000` (18,044,530
        // bytes), md5sum on the host.
        "c4fe2b06f2d27fcfa69c532a7f68cd5e  /huge",
        "links 2",
        "same inode",
        "ln: /p2: Operation not permitted",
        "c-ffs * 65280 *% /",
        "ramfs *% /tmp",
        "names up to 42, blocks of 4096",
        "device 2",
        "device 1",
        "8 /p/q/r/t",
        "/sl -> /p/g",
        "13 /sl",
        "Too many levels of symbolic links",
        // 40 links to the file are followed; 41 are a loop (as Linux's).
        "4 /ch1",
        "wc: /ch0: Too many levels of symbolic links",
        "mtime of the clock",
        "mode 755 /s.sh",
        "mode 640 /s-nox.sh",
        "mode 700 /priv",
        "mode 640 /um",
        "script ran",
        "linux: /s-nox.sh: not executable",
        "nox status 126",
        "dfsd: stopped",
    ],
    forbid: FORBID,
    timeout_secs: 300,
    memory: Some("96M"),
    disk: Some(DiskSpec::init_again(
        "busybox cat /lxd/moved\ncat /lx.txt\nbusybox wc -c /native.txt\nbusybox md5sum /nums2\nbusybox ls /big\n\
                    busybox md5sum /huge\nbusybox stat -c 'set %Y' /when\nbusybox cat /p/g\n\
                    busybox stat -c 'links now %h' /p/g\nbusybox ls /p/q/r\nbusybox ls -l /sl\nbusybox wc -c /p/lr/t\n\
                    busybox stat -c 'kept %a %n' /s.sh /s-nox.sh /priv /um\n/s.sh\nexit\n",
        &[
            "mounted file system",
            "from linux",
            "from linux",
            "13 /native.txt",
            // `seq 1 200000 | md5sum` on the host.
            "0e10426a1d5bddffcef02f1345787128  /nums2",
            "/big: No such file or directory",
            "c4fe2b06f2d27fcfa69c532a7f68cd5e  /huge",
            "set 1000000000",
            "linked words",
            "links now 1",
            "/sl -> /p/g",
            "8 /p/lr/t",
            "kept 755 /s.sh",
            "kept 640 /s-nox.sh",
            "kept 700 /priv",
            "kept 640 /um",
            "script ran",
            "dfsd: stopped",
        ],
    )),
    ..Scenario::DEFAULT
};

const HOSTILE: Scenario = Scenario {
    name: "disk-fs-hostile",
    about: "another principal attacks the disk file system through XN directly (binding its data, rewriting its superblock and directories, allocating and freeing in them, a forged file system claiming its blocks): refused; the victim's files read back after a reboot and the image passes fsck",
    cmdline: "run=init",
    input: "echo victim data > /v.txt\nmkdir /vd\necho more > /vd/w\nxnfs-attack\ncat /v.txt\nexit\n",
    expect: &[
        "dfsd: C-FFS on a disk of",
        "xnfs-attack: victim file system",
        "xnfs-attack: ok (",
        "victim data",
        "dfsd: stopped",
    ],
    forbid: FORBID,
    timeout_secs: 300,
    disk: Some(DiskSpec::init_again(
        "cat /v.txt\ncat /vd/w\nexit\n",
        &["mounted file system", "victim data", "more", "dfsd: stopped"],
    )),
    ..Scenario::DEFAULT
};

const XCP: Scenario = Scenario {
    name: "disk-xcp",
    about: "xcp copies a tree (nested directories, empty, small and 1.3 MB files) on the disk with every data block written from the source's cache frame; byte-identical after a reboot (md5sum, cmp); xcp-attack's copies against the victim (its blocks as source or destination, tainted sources, metadata, bad numbers) are refused; fsck passes",
    cmdline: "run=init",
    input: "mkdir /src\nmkdir /src/sub\nmkdir /src/sub/deep\necho small > /src/a\nbusybox seq 1 200000 > /src/nums\n\
            busybox dd if=/dev/zero of=/src/sub/zeros bs=4096 count=100\ntouch /src/sub/empty\n\
            echo deep words > /src/sub/deep/d\nxcp /src /dst\nmkdir /into\nxcp /src/sub /into\n\
            xcp /src /tmp/x\nxcp /nothing /y\nxcp /src/a /dst/a\nbusybox cmp /src/nums /dst/nums && echo same-nums\n\
            xcp-attack\nexit\n",
    expect: &[
        "dfsd: C-FFS on a disk of 16320 blocks: made file system",
        "xcp: 5 files, 1698512 bytes, 417 blocks",
        "xcp: 3 files, 409611 bytes, 101 blocks",
        "xcp: /src: operation not supported",
        "xcp: /nothing: no such file or directory",
        "xcp: /src/a: file exists",
        "same-nums",
        "xcp-attack: victim file system",
        "xcp-attack: ok (",
        "dfsd: stopped",
    ],
    forbid: FORBID,
    timeout_secs: 300,
    disk: Some(DiskSpec::init_again(
        "busybox md5sum /dst/nums /dst/a /dst/sub/zeros /dst/sub/deep/d /into/sub/zeros\n\
                    busybox cmp /src/nums /dst/nums && echo same-after-reboot\nbusybox wc -c /dst/sub/empty\n\
                    ls /dst/sub\nexit\n",
        &[
            "mounted file system",
            // md5sum of the same bytes on the host.
            "0e10426a1d5bddffcef02f1345787128  /dst/nums",
            "d15dbfcb847653913855e21370d83af1  /dst/a",
            "a5dc382d75ec46434b313e289c281d8c  /dst/sub/zeros",
            "f097e4a52fa2e3df4b5df61be28594b6  /dst/sub/deep/d",
            "a5dc382d75ec46434b313e289c281d8c  /into/sub/zeros",
            "same-after-reboot",
            "0 /dst/sub/empty",
            "deep",
            "dfsd: stopped",
        ],
    )),
    ..Scenario::DEFAULT
};

const AHEAD: Scenario = Scenario {
    name: "disk-fs-ahead",
    about: "fs-ahead over dfsd (C-FFS, the directory's own order): files opened along with the one before them \
            read right with a request for every three or more, and never stand for a name that changed since",
    cmdline: "run=init",
    input: "fs-ahead routed\nexit\n",
    expect: &["dfsd: C-FFS on a disk of", "files read with", "fs-ahead: ok ("],
    forbid: FORBID,
    timeout_secs: 120,
    disk: Some(DiskSpec { mib: 64, reboot: None, fsck: false }),
    ..Scenario::DEFAULT
};

const BEHIND: Scenario = Scenario {
    name: "disk-fs-behind",
    about: "fs-behind over dfsd (C-FFS, writes gathered): a small file's first write waits behind in the client's \
            buffer and every other process sees it at once; forged records change nothing",
    cmdline: "run=init",
    input: "fs-behind routed\nexit\n",
    expect: &["dfsd: C-FFS on a disk of", "fs-behind: ok ("],
    forbid: FORBID,
    timeout_secs: 120,
    disk: Some(DiskSpec { mib: 64, reboot: None, fsck: false }),
    ..Scenario::DEFAULT
};

const HELD: Scenario = Scenario {
    name: "disk-fs-held",
    about: "fs-held over dfsd: a created file's record and a removed file's free wait in dfsd's disk for the next \
            change of their block; names change at once, a removal reaches XN by the end of the next request, and \
            once synced the free blocks are as before; removals synced with their frees held stay removed after a \
            reboot; the image passes the host's fsck",
    cmdline: "run=init",
    input: "fs-held\nexit\n",
    expect: &["dfsd: C-FFS on a disk of", "fs-held: ok ("],
    forbid: FORBID,
    timeout_secs: 180,
    disk: Some(DiskSpec {
        mib: 64,
        reboot: Some(Reboot {
            cmdline: "run=init",
            input: "fs-held reboot\nexit\n",
            expect: &["dfsd: C-FFS on a disk of 16320 blocks: mounted file system", "fs-held: ok ("],
            patch: None,
        }),
        fsck: true,
    }),
    ..Scenario::DEFAULT
};

const CLOSES: Scenario = Scenario {
    name: "disk-fs-closes",
    about: "fs-closes over dfsd (C-FFS, writes gathered): a written file's close waits, and this process and a \
            forked child read every byte of it and its status says its length while the close waits",
    cmdline: "run=init",
    input: "fs-closes routed\nexit\n",
    expect: &["dfsd: C-FFS on a disk of", "fs-closes: ok ("],
    forbid: FORBID,
    timeout_secs: 120,
    disk: Some(DiskSpec { mib: 64, reboot: None, fsck: false }),
    ..Scenario::DEFAULT
};

const FSYNC: Scenario = Scenario {
    name: "disk-fsync",
    about: "a Linux program writes files on the disk and keeps them open: one made durable by sync, then one by \
            fsync, then a third by nothing; a file unlinked while open is read, written, stated (no link) and \
            truncated through its descriptor, apart from a new file under its name, and one closed after its unlink \
            is freed, as is a file renamed over while open (its reader keeps the old bytes); the harness cuts the power (kills QEMU); the second boot reads the fsynced and synced files \
            back whole and the third empty, mount frees the open unlinked file (1 orphan), and the image passes fsck",
    cmdline: "run=init",
    input: "lx-fsync\n",
    expect: &[
        "dfsd: C-FFS on a disk of",
        "ok syncfs",
        "ok gone-read",
        "ok gone-fstat",
        "ok gone-no-link",
        "ok gone-new-file-apart",
        "ok closed-unlink",
        "ok renamed-over-read",
        "ok fsync",
        "ok fsync-pipe-einval",
        "lx-fsync: * checks, 0 failed",
    ],
    forbid: FORBID,
    exit: Exit::Cut("lx-fsync: files still open; cut the power now"),
    timeout_secs: 120,
    disk: Some(DiskSpec::init_again(
        "busybox md5sum /fs/synced\nbusybox cat /fs2/all\nbusybox wc -c /fs/late\nbusybox ls /fs\nexit\n",
        &[
            // /fs/gone, open when the power went, no name reaching it.
            "mounted file system * (1 orphans, 0 link counts repaired)",
            // 20,000 bytes 'a' + i % 26, md5sum on the host.
            "0639c48c809d178c95b56a4079a26763  /fs/synced",
            "sync made me durable",
            "0 /fs/late",
            "dfsd: stopped",
        ],
    )),
    ..Scenario::DEFAULT
};

/// Nothing is durable at once: the `update` daemon has `dfsd` write back
/// what waited 5 s. A file written, then 7 s of sleep, then a second file
/// written and the power cut at once: after the reboot the first is there
/// (written back by `update`, no sync asked for), the second is not.
const WRITE_BACK: Scenario = Scenario {
    name: "disk-writeback",
    about: "the shell writes /wb, sleeps 7 s, writes /late and the harness cuts the power at once: the second boot \
            finds /wb (the update daemon had dfsd write it back after 5 s) and no /late (not 5 s old at the cut)",
    cmdline: "run=init",
    input: "echo kept > /wb\nsleep 7\necho lost > /late\nbusybox tr a-z A-Z < /wb\n",
    expect: &["dfsd: C-FFS on a disk of", "KEPT"],
    forbid: FORBID,
    exit: Exit::Cut("KEPT"),
    timeout_secs: 120,
    disk: Some(DiskSpec::init_again(
        "cat /wb\ncat /late\nexit\n",
        &["mounted file system", "kept", "cat: /late: *", "dfsd: stopped"],
    )),
    ..Scenario::DEFAULT
};

/// A disk filled through `dfsd` by a Linux program: the write that does
/// not fit is refused at once (`ENOSPC`), though `dfsd` gathers
/// consecutive writes (`crates/gather`, which stops gathering
/// when space runs low); the file system keeps serving, and after the
/// file is removed and another written, a reboot finds it and fsck passes.
const FULL: Scenario = Scenario {
    name: "disk-full-linux",
    about: "busybox dd fills the 64 MiB disk through dfsd: dd reports `No space left on device` at the write that does not \
            fit; the file is removed, another written; the second boot reads it back and fsck passes",
    cmdline: "run=init",
    input: "busybox dd if=/dev/zero of=/fill bs=65536 count=2000\nbusybox rm /fill\necho after > /after\ncat /after\nexit\n",
    expect: &["dfsd: C-FFS on a disk of", "No space left on device", "after", "dfsd: stopped"],
    forbid: FORBID,
    timeout_secs: 300,
    disk: Some(DiskSpec::init_again(
        "cat /after\nbusybox ls /\nexit\n",
        &["mounted file system", "after", "dfsd: stopped"],
    )),
    ..Scenario::DEFAULT
};

/// The file system belongs to `dfsd`'s principal (`/8/1`, which init
/// grants it), not to its environment id: the second boot starts other
/// boot programs first — three at once, which use the environment table's
/// rows 0–2, so `dfsd` (row 2 again) has generation 2, environment 2050,
/// not 1026 as in the first boot (both lines show it) — and `dfsd` still
/// mounts and serves the first boot's files. The step before init,
/// `xnfs-attack`, holds `/8` as a boot program and starts itself again
/// with a principal of its own (3), which attacks the file system right
/// after XN's recovery and tries to mint principals it may not: all
/// refused.
const PRINCIPAL: Scenario = Scenario {
    name: "disk-fs-principal",
    about: "the disk's file system is dfsd's principal's, not its environment id's: rebooted in another order (boot programs before init, so dfsd gets another environment id) dfsd mounts it and serves the first boot's files; the first program's attacker child, given a principal of its own, and its attempts to mint principals it may not, are refused; fsck passes",
    cmdline: "run=init",
    input: "echo hello principal > /p.txt\nmkdir /pd\nbusybox seq 1 50000 > /pd/nums\nbusybox md5sum /pd/nums\nexit\n",
    expect: &[
        // The line names the principal and the environment id: `*` spans
        // "0; principal 1" (a build with environment-id principals passes
        // this boot and fails the next).
        "dfsd: C-FFS on a disk of 16320 blocks: made file system *, environment 1026",
        // `seq 1 50000 | md5sum` on the host.
        "c1d4ba52c72ac7bcc71ff2d6c083e684  /pd/nums",
        "dfsd: stopped",
    ],
    forbid: FORBID,
    timeout_secs: 300,
    disk: Some(DiskSpec {
        mib: 64,
        reboot: Some(Reboot {
            cmdline: "run=hello&hello&hello,xnfs-attack,init",
            input: "cat /p.txt\nbusybox md5sum /pd/nums\nexit\n",
            expect: &[
                "I am principal 3, environment 2049",
                "xnfs-attack: ok (",
                "dfsd: C-FFS on a disk of 16320 blocks: mounted file system *; principal 1, environment 2050",
                "hello principal",
                "c1d4ba52c72ac7bcc71ff2d6c083e684  /pd/nums",
                "dfsd: stopped",
            ],
            patch: None,
        }),
        fsck: true,
    }),
    ..Scenario::DEFAULT
};
