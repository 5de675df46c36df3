//! The Linux personality's compatibility scenarios of issue 12 (part 2).
//! Debian's busybox test suite on Oxok and, as its reference, in the
//! bench's Linux guest under the same QEMU (`bbsuite.rs`): each asserts a
//! floor of passed tests measured on its side (`bbsuite::OXOK_FLOOR`,
//! `bbsuite::LINUX_FLOOR`), and `cargo xtask test` prints both counts
//! (`bbsuite::print_counts`). Then the attribute calls, the bench's shell
//! workload and the real-time timer, each with its C test program.

use crate::scenario::{Boot, Exit, Scenario};

/// Both, in the order `scenarios.rs` lists them.
pub(crate) const BBSUITE_SCENARIOS: [Scenario; 2] = [OXOK, LINUX];

/// The long run of `bc`'s tests with its two number sweeps
/// (`bbsuite::LONG_BC_TESTS`), on both sides: only with `cargo xtask test
/// --long`, for it takes about 30 minutes.
pub(crate) const LONG_SCENARIOS: [Scenario; 2] = [OXOK_LONG, LINUX_LONG];

/// What the Oxok side types: the suite unpacked, busybox linked where
/// runtest's applet links and popen look, then `suite.sh` with `$1`.
macro_rules! oxok_suite_input {
    ($args:literal) => {
        concat!(
            "busybox tar xf /boot/bbsuite.tar -C /\necho untar $?\nbusybox ln -s /bin/busybox /bb/busybox\n",
            "echo link $?\nmkdir /bin\nbusybox ln -s /bin/busybox /bin/sh\necho sh $?\n",
            "busybox sh /bb/suite.sh ",
            $args,
            "\necho status $?\necho alive\nexit 0\n"
        )
    };
}

const OXOK: Scenario = Scenario {
    name: "linux-bbsuite",
    about: "Debian's busybox test suite (testsuite/runtest, static flavour's .config) on 90 of its 91 applets \
            (bc's two number sweeps skipped for time) runs under busybox sh on Oxok, unpacked from the boot archive \
            by busybox tar, with /bb/busybox a symbolic link to the archive's busybox as runtest's applet links are \
            to it, and /bin/sh one as in the Linux guest (popen runs it); at least the measured floor of its tests \
            pass, and the shell and file server survive",
    cmdline: "run=init",
    input: oxok_suite_input!("oxok"),
    expect: &[
        "untar 0",
        "link 0",
        "sh 0",
        "bbsuite: oxok pass * fail * skip *",
        "bbsuite: floor * met",
        "status 0",
        "alive",
        "none leaked",
    ],
    forbid: &["KERNEL PANIC", "frames leaked", "upcall: unhandled"],
    timeout_secs: 900,
    ..Scenario::DEFAULT
};

const LINUX: Scenario = Scenario {
    name: "linux-bbsuite-ref",
    about: "the same busybox suite and applets in the bench's Linux guest (Debian's kernel, same QEMU settings): \
            the reference figure for linux-bbsuite",
    cmdline: "",
    boot: Boot::Linux,
    exit: Exit::PowerOff,
    log: None,
    expect: &["bbsuite: linux pass * fail * skip *", "bbsuite: floor * met"],
    timeout_secs: 600,
    ..Scenario::DEFAULT
};

const OXOK_LONG: Scenario = Scenario {
    name: "linux-bbsuite-bc-long",
    about: "every one of the busybox suite's bc tests, its two number sweeps included (millions of lines through \
            two bc's in a pipe), passes on Oxok",
    input: oxok_suite_input!("oxok long"),
    expect: &[
        "untar 0",
        "link 0",
        "sh 0",
        "PASS: bc parsing of numbers",
        "PASS: bc printing of numbers",
        "bbsuite: oxok.long pass * fail 0 skip 0",
        "bbsuite: floor * met",
        "status 0",
        "alive",
        "none leaked",
    ],
    timeout_secs: 3000,
    ..OXOK
};

const LINUX_LONG: Scenario = Scenario {
    name: "linux-bbsuite-bc-long-ref",
    about: "every one of the busybox suite's bc tests, its number sweeps included, in the bench's Linux guest",
    cmdline: "bbsuite=long",
    expect: &[
        "PASS: bc parsing of numbers",
        "PASS: bc printing of numbers",
        "bbsuite: linux.long pass * fail 0 skip 0",
        "bbsuite: floor * met",
    ],
    timeout_secs: 3600,
    ..LINUX
};

/// The attribute calls (`apps/linux/src/calls/attr.rs`).
pub(crate) const ATTRS: Scenario = Scenario {
    name: "linux-attrs",
    about: "chmod, chown (SQLite's fchown) and utimensat on a file system with one user: the owner root and any \
            mode or time accepted, another owner EPERM, missing files ENOENT, bad descriptors \
            EBADF, bad pointers EFAULT, bad times EINVAL; stat shows the time of a file's last write and utimensat \
            sets it (the RAM file system keeps times); busybox touch creates a file",
    cmdline: "run=init",
    input: "lx-attrs\necho status $?\nbusybox touch /t1\nbusybox ls /t1\nexit 0\n",
    expect: &[
        "ok fchown-root",
        "ok fchown-other-eperm",
        "ok chown-missing",
        "ok fchownat-empty-path",
        "ok chown-efault",
        "ok chmod",
        "ok owner-root",
        "ok utimensat-times",
        "ok utimensat-bad-nsec",
        "ok futimens-badfd",
        "ok mtime-written",
        "ok mtime-by-path",
        "ok utimensat-sets-mtime",
        "ok futimens-omit-keeps",
        "ok utimensat-null-is-now",
        "lx-attrs: * checks, 0 failed",
        "status 0",
        "oxok$ busybox ls /t1",
        "/t1",
        "none leaked",
    ],
    forbid: &["FAIL", "KERNEL PANIC", "frames leaked", "upcall: unhandled"],
    timeout_secs: 180,
    ..Scenario::DEFAULT
};

/// Symbolic and hard links and kept modes (`apps/linux-tests/links.c`).
pub(crate) const LINKS: Scenario = Scenario {
    name: "linux-links",
    about: "symbolic links (made as written, followed by open and stat and in the middle of paths, relative to \
            their directory, not by lstat, readlink, unlink, rename), hard links (one inode, a link count), modes \
            kept (creation mode less the umask, chmod, fchmod, set-id bits), st_blocks of a sparse file, and the refusals: loops ELOOP, \
            O_NOFOLLOW ELOOP, a directory hard link EPERM, readlink of a file EINVAL, bad pointers EFAULT, an empty \
            target ENOENT, a long one ENAMETOOLONG; busybox ln -s and readlink over them; links from the file \
            server to what the personality serves, followed by it: a program of the boot archive run by its link \
            (`ln -s /bin/busybox`), /dev/null written and read through one; a read of /dev/zero fills 1 MiB",
    cmdline: "run=init",
    input: "lx-links\necho status $?\nbusybox ln -s /lxl/hard /lxl/bl\nbusybox readlink /lxl/bl\n\
            busybox cat /lxl/bl\nbusybox ls -l /lxl/bl\nbusybox ln -s /bin/busybox /lxl/echo\n\
            busybox sh -c '/lxl/echo via-link'\nbusybox ln -s /dev/null /lxl/null\n\
            busybox sh -c 'echo lost > /lxl/null; echo wc=$(busybox wc -c < /lxl/null); busybox ls -lL /lxl/null'\n\
            busybox dd if=/dev/zero of=/lxl/mb bs=1M count=1\nexit 0\n",
    expect: &[
        "ok open-follows",
        "ok dir-link-in-path",
        "ok readlink",
        "ok lstat-link",
        "ok dtype-lnk",
        "ok open-nofollow",
        "ok creat-through-dangling",
        "ok unlink-link",
        "ok rmdir-link-enotdir",
        "ok loop",
        "ok self-loop-stat",
        "ok readlink-file-einval",
        "ok readlink-efault",
        "ok symlink-toolong",
        "ok link",
        "ok link-shares-data",
        "ok unlink-one-name",
        "ok link-dir-eperm",
        "ok link-of-symlink",
        "ok linkat-follow",
        "ok creat-mode-umask",
        "ok fchmod-kept",
        "ok chmod-kept",
        "ok chmod-through-link",
        "ok mkdir-mode",
        "ok renameat2-noreplace",
        "ok blocks-sparse",
        "lx-links: * checks, 0 failed",
        "status 0",
        "oxok$ busybox readlink /lxl/bl",
        "/lxl/hard",
        "oxok$ busybox cat /lxl/bl",
        "world",
        "/lxl/bl -> /lxl/hard",
        "oxok$ busybox sh -c '/lxl/echo via-link'",
        "via-link",
        "wc=0",
        "crw-rw-rw- * 1, * 3 * /lxl/null",
        "1+0 records in",
        "none leaked",
    ],
    forbid: &["FAIL", "KERNEL PANIC", "frames leaked", "upcall: unhandled"],
    timeout_secs: 180,
    ..Scenario::DEFAULT
};

/// The busybox shell workload of the bench row `busybox_sh`, checked.
pub(crate) const BENCH_SH: Scenario = Scenario {
    name: "linux-bench-sh",
    about: "the bench's busybox shell workload (busybox sh -c: a 1,000-iteration arithmetic loop into sort | uniq -c \
            | wc, 100 files created, read and removed) gives the right output under the personality",
    cmdline: "run=init",
    input: "lx-bench-sh\necho status $?\nexit 0\n",
    expect: &["ok busybox-sh-output", "lx-bench-sh: 1 checks, 0 failed", "status 0", "none leaked"],
    forbid: &["FAIL", "KERNEL PANIC", "frames leaked", "upcall: unhandled"],
    timeout_secs: 300,
    ..Scenario::DEFAULT
};

/// The real-time timer (`apps/linux/src/timers.rs`, `calls/itimer.rs`).
pub(crate) const ALARM: Scenario = Scenario {
    name: "linux-alarm",
    about: "alarm and setitimer(ITIMER_REAL): SIGALRM ends pause, nanosleep (time left) and a pipe read on time, \
            reaches a program making calls and one spinning without calls (as does kill from another process), re-arms with an interval, kills by default; getitimer reads what is \
            left; a fork child has no timer; bad which/usec EINVAL, bad pointers EFAULT",
    cmdline: "run=init",
    input: "lx-alarm\necho status $?\nexit 0\n",
    expect: &[
        "ok alarm-returns-left",
        "ok alarm-ends-pause",
        "ok alarm-on-time",
        "ok getitimer-armed",
        "ok itimer-ends-sleep",
        "ok itimer-periodic",
        "ok alarm-while-calling",
        "ok alarm-while-spinning",
        "ok signal-to-spinner",
        "ok alarm-ends-pipe-read",
        "ok alarm-default-kills",
        "ok fork-child-no-timer",
        "ok parent-keeps-timer",
        "ok itimer-efault",
        "lx-alarm: * checks, 0 failed",
        "status 0",
        "none leaked",
    ],
    forbid: &["FAIL", "KERNEL PANIC", "frames leaked", "upcall: unhandled"],
    timeout_secs: 180,
    ..Scenario::DEFAULT
};

/// `MAP_SHARED` anonymous mappings across fork (`apps/linux/src/mem.rs`).
pub(crate) const MAPSHARED: Scenario = Scenario {
    name: "linux-mapshared",
    about: "MAP_SHARED anonymous memory is shared with fork children both ways (pages touched before the fork or \
            not), an atomic counter two children increment adds up, mprotect and madvise keep the sharing, a \
            child's munmap leaves the parent's pages, MAP_PRIVATE stays private, an impossible size is ENOMEM",
    cmdline: "run=init",
    input: "lx-mapshared\necho status $?\nexit 0\n",
    expect: &[
        "ok mmap-shared",
        "ok child-writes-seen",
        "ok parent-writes-seen",
        "ok atomic-counter",
        "ok mprotect-keeps-sharing",
        "ok madvise-keeps-shared",
        "ok child-munmap-parent-keeps",
        "ok private-stays-private",
        "ok huge-enomem",
        "lx-mapshared: * checks, 0 failed",
        "status 0",
        "none leaked",
    ],
    forbid: &["FAIL", "KERNEL PANIC", "frames leaked", "upcall: unhandled"],
    timeout_secs: 180,
    ..Scenario::DEFAULT
};

/// Process groups, sessions and the terminal's foreground group
/// (`apps/linux/src/groups.rs`).
pub(crate) const PGROUPS: Scenario = Scenario {
    name: "linux-pgroups",
    about: "process groups and sessions: a Linux program from the Oxok shell leads both; setsid/setpgid refuse a \
            leader; children inherit, move (from either side), are killed and waited for as a group; the \
            foreground group is the session's (a child sees it); then a busybox sh with job control (set -m): a \
            SIGINT sent to the shell while a job is in the foreground reaches the job (which ends at once: 130), \
            not the shell, which goes on (Linux's ash would then re-raise SIGINT for its own trap, seeing the job \
            killed by a signal; here the job's status reads as exit 130, so it does not)",
    cmdline: "run=init",
    input: "lx-pgroups\necho status $?\n\
            busybox sh -c 'set -m; trap \"echo shell got INT\" INT; busybox sleep 8; echo survived $?' &\n\
            sleep 3\nkill -INT $!\nsleep 2\necho next\nexit 0\n",
    expect: &[
        "ok own-group-and-session",
        "ok setsid-leader-eperm",
        "ok child-setsid",
        "ok setpgid-join-group",
        "ok tcsetpgrp-child-group",
        "ok foreground-seen-by-child",
        "ok tcsetpgrp-back",
        "ok kill-group",
        "ok wait-group",
        "lx-pgroups: * checks, 0 failed",
        "status 0",
        "survived 130",
        "oxok$ echo next",
        "none leaked",
    ],
    forbid: &["FAIL", "KERNEL PANIC", "frames leaked", "upcall: unhandled", "survived 0"],
    timeout_secs: 180,
    ..Scenario::DEFAULT
};
