//! The Linux personality's process model (issue 12): fork, execve, wait,
//! signals. `scenarios.rs` lists them with the others.

use crate::scenario::Scenario;

/// Every process-model scenario, in the order `scenarios.rs` lists them.
pub(crate) const LXPROC_SCENARIOS: [Scenario; 9] =
    [PROC, SIGNAL, BUSYBOX_PIPES, FORKBOMB, PTHREAD, POLL, JOBS, TTYREAD, SH_INTERRUPT];

const FORBID: &[&str] = &["FAIL", "frames leaked", "destroyed:", "upcall: unhandled", "KERNEL PANIC"];

const PROC: Scenario = Scenario {
    name: "linux-proc",
    about: "a static musl program forks (copy-on-write, a read into a shared page), vforks, posix_spawns, execs \
            Linux programs in place keeping its pid (close-on-exec honoured) and a native Oxok program, runs #! \
            scripts (Linux's argument order, a script as another's interpreter; no execute bit or a directory EACCES, \
            a missing interpreter ENOENT, an empty line ENOEXEC, a loop ELOOP), waits with \
            wait4/waitid (one, any, WNOHANG, ECHILD), kills a child and sees it signalled (SIGTERM, and SIGSEGV from an \
            unhandled fault); getpid/getppid agree throughout; a glibc \
            static-pie loads at its own base from the shell and from busybox sh's execve; a #! script on the file \
            server runs from the Oxok prompt by its path (through the personality), one without an execute bit \
            does not (126)",
    cmdline: "run=init",
    input: "linux lx-proc\necho status $?\nlx-hello-pie x\necho pie status $?\n\
            busybox sh -c 'lx-hello-pie y; echo pie from sh $?'\n\
            busybox sh -c 'echo \"#!/bin/busybox sh\" > /hs.sh; echo \"echo script-args \\$0 \\$1\" >> /hs.sh'\n\
            busybox sh -c 'busybox cp /hs.sh /hs-nox.sh; busybox chmod 755 /hs.sh; busybox chmod 644 /hs-nox.sh'\n\
            /hs.sh one\necho hs status $?\n/hs-nox.sh\necho nox status $?\nexit 0\n",
    expect: &[
        "ok fork",
        "ok cow-isolated",
        "ok cow-read-into",
        "ok wait-any",
        "ok vfork",
        "ok killed-child-status",
        "ok segv-child-status",
        "ok execve-self",
        "hello from Linux, argc=2 argv[0]=lx-hello",
        "ok execve-linux",
        "native echo from execve",
        "ok execve-native",
        "ok script-argv",
        "ok script-of-script",
        "ok script-no-exec-bit",
        "ok execve-directory",
        "ok script-no-interpreter",
        "ok script-empty-line",
        "ok script-loop",
        "ok read-own-exe",
        "ok read-archive-program",
        "ok archive-program-not-writable",
        "ok posix_spawn-status",
        "lx-proc: * checks, 0 failed",
        "status 0",
        "hello from a static-pie, main at a high base, argc=2 argv[1]=x, tls=5, heap ok",
        "pie status 5",
        "hello from a static-pie, main at a high base, argc=2 argv[1]=y, tls=5, heap ok",
        "pie from sh 5",
        "oxok$ /hs.sh one",
        "script-args /hs.sh one",
        "hs status 0",
        "linux: /hs-nox.sh: not executable",
        "nox status 126",
        "env * (init) exited with status 0",
        "none leaked",
    ],
    forbid: FORBID,
    timeout_secs: 180,
    ..Scenario::DEFAULT
};

const SIGNAL: Scenario = Scenario {
    name: "linux-signal",
    about: "signals to a static musl program: handlers with Linux frames restore registers, xmm and MXCSR; mask, \
            pending, sigsuspend, SA_RESETHAND, SA_ONSTACK, a SIGSEGV handler leaving by siglongjmp, SIGCHLD, SIGPIPE \
            (default and ignored), a parent's signal interrupting a child's wait4 and pipe read (EINTR, or restarted \
            by SA_RESTART); bad \
            pointers are EFAULT and bad frames end only their program",
    cmdline: "run=init",
    input: "linux lx-signal\necho status $?\nexit 0\n",
    expect: &[
        "ok raise-handled",
        "ok siginfo",
        "ok fpu-restored",
        "ok regs-restored",
        "ok unblock-delivers",
        "ok sigsuspend",
        "ok segv-handled",
        "ok sigchld",
        "ok sigpipe-default",
        "ok sa-restart",
        "ok read-eintr",
        "ok read-restarted",
        "ok nanosleep-eintr",
        "ok bad-stack-frame-ends-it",
        "ok junk-sigreturn-ends-it",
        "lx-signal: * checks, 0 failed",
        "status 0",
        "env * (init) exited with status 0",
        "none leaked",
    ],
    forbid: FORBID,
    timeout_secs: 180,
    ..Scenario::DEFAULT
};

const BUSYBOX_PIPES: Scenario = Scenario {
    name: "linux-busybox-pipes",
    about: "busybox sh forks and execs external busybox applets: a pipeline of two, a loop piped into one, command \
            substitution, a script file with a loop, a function and $(...), exit statuses through wait; the native \
            shell recognises Linux programs and runs them without the `linux` prefix",
    cmdline: "run=init",
    input: "linux busybox sh -c 'echo a | busybox wc -c'\n\
            linux busybox sh -c 'echo abc | busybox wc -c | busybox sed s/^/chars=/'\n\
            linux busybox sh -c 'for i in 1 2 3; do echo line$i; done | busybox wc -l | busybox sed s/^/lines=/'\n\
            linux busybox sh -c 'X=$(busybox echo sub); echo got $X'\n\
            linux busybox sh -c 'busybox false; echo false gave $?; busybox true && echo true gave $?'\n\
            echo 'n=0' > /t.sh\n\
            echo 'f() { echo f$1; }' >> /t.sh\n\
            echo 'for w in x y z; do n=$((n+1)); f $w; done' >> /t.sh\n\
            echo 'c=$(busybox echo $n | busybox tr 3 T)' >> /t.sh\n\
            echo 'echo count $c' >> /t.sh\n\
            echo 'busybox seq 5 | busybox sort -r | busybox head -n 2' >> /t.sh\n\
            linux busybox sh /t.sh\n\
            echo status $?\n\
            busybox echo no prefix needed | busybox tr a-z A-Z\n\
            lx-hello direct\n\
            echo status $?\n\
            busybox sh -c 'busybox seq 3 | busybox wc -l' | wc -l\n\
            exit 0\n",
    expect: &[
        "oxok$ linux busybox sh -c 'echo a | busybox wc -c'",
        "chars=4",
        "lines=3",
        "got sub",
        "false gave 1",
        "true gave 0",
        // Whole lines, in order; a kernel log line may stand between two of
        // them (it waits for a program's open line, not for the next one).
        "\nfx\r",
        "\nfy\r",
        "\nfz\r",
        "count T",
        "\n5\r",
        "\n4\r",
        "status 0",
        "NO PREFIX NEEDED",
        "hello from Linux, argc=2 argv[0]=lx-hello",
        "status 7",
        "env * (init) exited with status 0",
        "none leaked",
    ],
    forbid: FORBID,
    timeout_secs: 240,
    ..Scenario::DEFAULT
};

const FORKBOMB: Scenario = Scenario {
    name: "linux-forkbomb",
    about: "hostile: a Linux fork bomb under RLIMIT_NPROC (the personality makes it the account's environment limit) \
            cannot hold more environments than the limit — set by itself, or by busybox sh's ulimit for the whole \
            subtree; forks past it fail with EAGAIN, everything ends, the shell survives and runs programs, no leak",
    cmdline: "run=init",
    input: "lx-forkbomb 12\necho status $?\nbusybox sh -c 'ulimit -u 6; lx-forkbomb; echo inner $?'\n\
            echo alive\nhello\nexit 0\n",
    expect: &[
        "ok setrlimit-nproc",
        "ok raise-refused",
        "ok fork-refused",
        "forkbomb: * processes besides the first",
        "ok bounded",
        "ok all-ended",
        "lx-forkbomb: * checks, 0 failed",
        "status 0",
        "ok fork-refused",
        "lx-forkbomb: * checks, 0 failed",
        "inner 0",
        "alive",
        "hello: ok",
        "env * (init) exited with status 0",
        "none leaked",
    ],
    forbid: FORBID,
    timeout_secs: 240,
    ..Scenario::DEFAULT
};

const PTHREAD: Scenario = Scenario {
    name: "linux-pthread",
    about: "musl pthreads on the personality's threads (clone CLONE_VM|CLONE_THREAD|CLONE_SETTLS|CLONE_CHILD_CLEARTID, \
            futex, set_tid_address): four threads contend for a mutex, a condition variable feeds three consumers, \
            TLS and tids are per thread, join returns values, a timed lock times out, a thread spinning without calls is preempted, bad futex pointers \
            are EFAULT",
    cmdline: "run=init",
    input: "lx-pthread\necho status $?\nexit 0\n",
    expect: &[
        "ok create",
        "ok join-values-tls",
        "ok mutex-counter",
        "ok tids-distinct",
        "ok condvar",
        "ok timedlock-timeout",
        "ok spinning-thread-preempted",
        "ok sleeper-wakes-while-main-spins",
        "ok futex-efault",
        "ok futex-timeout",
        "lx-pthread: * checks, 0 failed",
        "status 0",
        "env * (init) exited with status 0",
        "none leaked",
    ],
    forbid: FORBID,
    timeout_secs: 180,
    ..Scenario::DEFAULT
};

const POLL: Scenario = Scenario {
    name: "linux-poll",
    about: "poll, ppoll, select and pselect6 over pipes (data, room, hang-up, error read from the pipe's counters), \
            files and devices: timeouts, a writer in another process waking a sleeping poll, a parent's signal \
            ending a child's ppoll with EINTR under ppoll's mask; EBADF, POLLNVAL and EFAULT",
    cmdline: "run=init",
    input: "lx-poll\necho status $?\nexit 0\n",
    expect: &[
        "ok empty-not-ready",
        "ok poll-timeout",
        "ok data-ready",
        "ok hangup",
        "ok reader-gone",
        "ok woken-by-writer",
        "ok select-one-ready",
        "ok select-timeout",
        "ok pselect-write",
        "ok select-ebadf",
        "ok poll-efault",
        "ok ppoll-eintr",
        "lx-poll: * checks, 0 failed",
        "status 0",
        "env * (init) exited with status 0",
        "none leaked",
    ],
    forbid: FORBID,
    timeout_secs: 180,
    ..Scenario::DEFAULT
};

const JOBS: Scenario = Scenario {
    name: "linux-shell-signals",
    about: "signals from the Oxok shell reach Linux programs: the kill tool's SIGINT runs a Linux program's handler \
            (twice), its SIGTERM ends it by the default action (143); ^C ends busybox sleep (130) and a busybox sh \
            running a child; the shell goes on",
    cmdline: "run=init",
    input: "lx-sigwait &\nsleep 2\nkill -INT $!\nsleep 1\nkill -INT $!\nsleep 1\nkill -TERM $!\nsleep 1\n\
            jobs\necho next\nbusybox sleep 30\r\x03echo after ^C $?\r\
            busybox sh -c 'busybox sleep 30; X=went; echo $X on'\r\x03echo sh after ^C $?\r\
            hello\rexit 0\r",
    expect: &[
        "lx-sigwait: ready",
        "lx-sigwait: caught SIGINT (1)",
        "lx-sigwait: caught SIGINT (2)",
        "(linux) exited with status 143",
        "oxok$ echo next",
        "after ^C 130",
        "sh after ^C 130",
        "hello: ok",
        "env * (init) exited with status 0",
        "none leaked",
    ],
    forbid: &["FAIL", "frames leaked", "destroyed:", "upcall: unhandled", "KERNEL PANIC", "went on"],
    timeout_secs: 180,
    ..Scenario::DEFAULT
};

const TTYREAD: Scenario = Scenario {
    name: "linux-ttyread",
    about: "a Linux program that owns the console, typed at by a person (the typist): a console read SIGALRM \
            interrupts returns EINTR, one with an SA_RESTART handler restarts and returns the line typed two seconds \
            later, poll says half a line is not ready and the finished line is",
    cmdline: "run=init",
    input: "linux lx-ttyread\n",
    expect: &[
        "ok read-eintr",
        "ok read-restarted",
        "ok partial-line-not-ready",
        "ok line-ready",
        "ok line-read",
        "lx-ttyread: 5 checks, 0 failed",
        "none leaked",
    ],
    forbid: FORBID,
    timeout_secs: 120,
    typist: Some(crate::typist::tty_reads),
    ..Scenario::DEFAULT
};

const SH_INTERRUPT: Scenario = Scenario {
    name: "linux-sh-interrupt",
    about: "an interactive busybox sh that owns the console (`linux busybox sh`), typed at by a person: ^C during its \
            foreground `sleep 30` ends the job (status 130) though nobody reads the keyboard then — the waiting shell \
            watches the typing without taking it (console_peek) — and a line typed ahead during a job reaches the shell",
    cmdline: "run=init",
    expect: &["after ^C 130", "typed ahead", "env * (init) exited with status 0", "none leaked"],
    forbid: FORBID,
    timeout_secs: 120,
    typist: Some(crate::typist::busybox_sh_interrupt),
    ..Scenario::DEFAULT
};
