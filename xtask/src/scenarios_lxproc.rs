//! The Linux personality's process model (issue 12): fork, execve, wait,
//! signals. `scenarios.rs` lists them with the others.

use crate::scenario::Scenario;

/// Every process-model scenario, in the order `scenarios.rs` lists them.
pub(crate) const LXPROC_SCENARIOS: [Scenario; 2] = [PROC, SIGNAL];

const FORBID: &[&str] = &["FAIL", "frames leaked", "destroyed:", "upcall: unhandled", "KERNEL PANIC"];

const PROC: Scenario = Scenario {
    name: "linux-proc",
    about: "a static musl program forks (copy-on-write, a read into a shared page), vforks, posix_spawns, execs \
            Linux programs in place keeping its pid (close-on-exec honoured) and a native Oxok program, waits with \
            wait4/waitid (one, any, WNOHANG, ECHILD), kills a child; getpid/getppid agree throughout",
    cmdline: "run=init",
    input: "linux lx-proc\necho status $?\nexit 0\n",
    expect: &[
        "ok fork",
        "ok cow-isolated",
        "ok cow-read-into",
        "ok wait-any",
        "ok vfork",
        "ok killed-child-status",
        "ok execve-self",
        "hello from Linux, argc=2 argv[0]=lx-hello",
        "ok execve-linux",
        "native echo from execve",
        "ok execve-native",
        "ok posix_spawn-status",
        "lx-proc: * checks, 0 failed",
        "status 0",
        "env * (init) exited with status 0",
        "none leaked",
    ],
    forbid: FORBID,
    timeout_secs: 100,
    ..Scenario::DEFAULT
};

const SIGNAL: Scenario = Scenario {
    name: "linux-signal",
    about: "signals to a static musl program: handlers with Linux frames restore registers, xmm and MXCSR; mask, \
            pending, sigsuspend, SA_RESETHAND, SA_ONSTACK, a SIGSEGV handler leaving by siglongjmp, SIGCHLD, SIGPIPE \
            (default and ignored), a parent's signal interrupting a child's wait4 restarted by SA_RESTART; bad \
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
