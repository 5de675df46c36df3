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

use crate::scenario::{Boot, Exit, Scenario};

/// What init prints once it runs; shared by the boot scenarios.
const BANNER: &[&str] = &["Oxok * an exokernel for x86-64", "init: environment * memory * MiB usable"];

/// Forbidden in every protection-core scenario: a failed check, a leak, or
/// any environment dying where none should.
const F: &[&str] = &["FAIL", "frames leaked", "destroyed:", "heap leaked"];

/// The fuzzer's short fixed-seed run (`fuzz-short`).
pub(crate) const FUZZ_SHORT: &str = "run=fuzz-victim&fuzz+drive+10000+1";

/// What every fuzzer run must print (`fuzz-short`, `cargo xtask fuzz`).
pub(crate) const FUZZ_EXPECT: &[&str] = &[
    "fuzz: * random calls, seed ",
    "fuzz: * calls in * sandboxes",
    "fuzz: outcomes: ok ",
    "fuzz: per call: ",
    "fuzz: undocumented errors 0",
    "fuzz: probe map-many: ",
    "fuzz: probe create-destroy: ",
    "fuzz: probe preds: ",
    "fuzz: probe grant-chain: ",
    "fuzz: isolation breaks 0",
    "fuzz: ok (",
    "fuzz-victim: * rounds, 0 checksum changes, longest pause",
    "fuzz-victim: ok (",
    "none leaked",
];

/// Never in a fuzzer run: a failed check, a leak, the victim harmed.
pub(crate) const FUZZ_FORBID: &[&str] = &["FAIL", "frames leaked", "(fuzz-victim) destroyed", "CHANGED", "deadlock"];

/// Every scenario, in the order they are started.
pub(crate) const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "boot-banner",
        about: "the kernel boots by PVH, init prints the banner and starts the shell, which answers typed commands",
        cmdline: "run=init",
        input: "help\nps\nframes\nmem\nhello from the shell\necho status $?\n\
                V='quoted words'; echo \"$V\" ok\nnosuch-program || echo recovered $?\n\
                hello two && echo after hello\necho a | wc\nexit 0\n",
        expect: &[
            "Oxok * an exokernel for x86-64",
            "init: environment * memory * MiB usable",
            "Oxok shell",
            "oxok$ help",
            "ps, envs",
            "oxok$ ps",
            "ID  PARENT NAME",
            " init ",
            " shell ",
            "oxok$ frames",
            "frames of 4 KiB in the frame table",
            "oxok$ mem",
            "MiB usable",
            "hello: environment * running, argv = hello from the shell",
            "oxok$ echo status $?",
            "status 0",
            "quoted words ok",
            "nosuch-program: not found",
            "recovered 127",
            "hello: environment * running, argv = hello two",
            "after hello",
            "      1       1       2",
            "env * (shell) exited with status 0",
            "env * (init) exited with status 0",
            "none leaked",
        ],
        forbid: &["FAIL", "syntax error"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "shell-pipes",
        about: "the shell's pipelines (two and three stages, built-ins in them), redirections to and from files of \
                the server (<, >, >>, 2>), cd/pwd/ls, exit codes through a pipeline, and /dev/null (a builtin's \
                and a spawned program's output into it, read from it)",
        cmdline: "run=init",
        input: "echo hello world | wc\necho one two three | cat | wc -w\n\
                echo hi > /f; cat /f\ncat < /f | wc\necho again >> /f; cat /f\nwc -l < /f\n\
                mkdir /dir; cd /dir; pwd; echo x > inside; ls\ncat inside | wc -c\npwd | cat | wc -c\ncd; pwd\n\
                cd /nosuch\ncat /nosuch\necho status $?\ncat < /nosuch\necho status $?\n\
                cat /nosuch 2> /err; wc -c < /err\necho hi | nosuch; echo status $?\nnosuch | wc\necho status $?\n\
                echo x | cat /nosuch; echo status $?\n\
                echo quiet 2>/dev/null; echo devnull $?\necho via-program | cat > /dev/null; echo catnull $?\n\
                cat /dev/null | wc -c\nexit 0\n",
        expect: &[
            "Oxok shell",
            "\n      1       2      12\r",
            "\n      3\r",
            "oxok$ echo hi > /f; cat /f",
            "\nhi\r",
            "\n      1       1       3\r",
            "\nhi\r",
            "\nagain\r",
            "\n      2\r",
            "\n/dir\r",
            "\ninside\r",
            "\n      2\r",
            "\n      5\r",
            "oxok$ cd; pwd",
            "\n/\r",
            "cd: /nosuch: no such file or directory",
            "cat: /nosuch: no such file or directory",
            "status 1",
            "shell: /nosuch: no such file or directory",
            "status 1",
            "\n     40\r",
            "nosuch: not found",
            "status 127",
            "nosuch: not found",
            "\n      0       0       0\r",
            "status 0",
            "cat: /nosuch: no such file or directory",
            "status 1",
            "\nquiet\r",
            "devnull 0",
            "catnull 0",
            "\n      0\r",
            "env * (shell) exited with status 0",
            "fsd: stopped after",
            "none leaked",
        ],
        forbid: &[
            "FAIL",
            "syntax error",
            "destroyed:",
            "frames leaked",
            "broken pipe",
            "/dev/null: no such",
            "\nvia-program\r",
        ],
        timeout_secs: 90,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "shell-kill",
        about: "kill from the prompt: the target (a background job) refuses its sibling, the shell forwards the signal, \
                the job ends with 128+15",
        cmdline: "run=init",
        // init 1024, fsd 1025, shell 1026: the job is 1027 on a fresh boot.
        typist: Some(crate::typist::kill_started_job),
        expect: &[
            "[1] 1027",
            "spin bg: start",
            "env 1027 (spin) exited with status 143",
            "(status 143)",
            "none leaked",
        ],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "shell-kill-job",
        about: "kill %N signals every program of a background job by its job number (a two-stage pipeline ends with \
                128+15), and an unknown job is refused by the shell without running kill",
        cmdline: "run=init",
        input: "spin bg 100000 | spin bg2 100000 &\nkill %7\necho refused $?\nkill %1\nwait\nexit 0\n",
        expect: &["[1] *", "kill: %7: no such job", "refused 1", "(status 143)", "none leaked"],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "shell-top",
        about: "top: two redraws 200 ms apart show the slot vector and a busy background job with its CPU share; \
                bad options give the usage line and status 2",
        cmdline: "run=init",
        input: "spin bg 100000 &\ntop -x\necho usage $?\ntop -n 2 -d 200\necho top $?\nkill %1\nwait\nexit 0\n",
        expect: &[
            "usage: top [-n FRAMES] [-d MS]",
            "usage 2",
            "top: frame 1, up * s, timer * Hz",
            "slot vector: round *, slot * of * now",
            "ID NAME",
            " spin ",
            "top: frame 2,",
            "top 0",
            "(status 143)",
            "none leaked",
        ],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "shell-functions",
        about: "shell functions typed at the prompt: arguments as $1 $# $@, return N out of a loop, a definition over \
                several lines, redefinition, recursion bounded with an error, and a function refused in a pipeline",
        cmdline: "run=init",
        input: "greet() { echo hello $1, $# args: $@; }\ngreet world a b\n\
                find3() { for x in $@; do if test $x = 3; then return 7; fi; echo saw $x; done; return 1; }\n\
                find3 1 2 3 4\necho found $?\nfind3 5\necho missing $?\n\
                twice()\n{\n$1 $2\n$1 $2\n}\ntwice echo hi\n\
                greet() { echo bye $1; }\ngreet you\n\
                deep() { deep; }\ndeep\necho deep $?\n\
                greet x | wc -l\necho piped $?\nreturn 3\necho outside $?\nexit 0\n",
        expect: &[
            "hello world, 3 args: world a b",
            "saw 1",
            "saw 2",
            "found 7",
            "saw 5",
            "missing 1",
            "hi",
            "hi",
            "bye you",
            "shell: functions nested more than 32 deep",
            "deep 2",
            "greet: a function runs only as a whole command",
            "piped 2",
            "return: not inside a function",
            "outside 2",
        ],
        forbid: &["FAIL", "frames leaked", "destroyed:", "saw 4", "syntax error", "KERNEL PANIC"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "shell-views",
        about: "the shell's views of the exposed tables (ps with ticks, frames by owner, the slot vector) and a \
                background job that runs while the shell takes commands, listed by jobs and reaped by wait",
        cmdline: "run=init",
        // `slots` is typed only once the stride job donates slots (its start lines are then
        // printed), so no job output lands between the prompt and the echoed `slots`.
        input: "ps\nframes\nslots\nslots | wc -l\nspin bg 1500 &\necho started\njobs\nwait\necho status $?\n\
                stride 300 &\nuntil slots | grep -c donated; do spin w 20; done\nslots\nwait\nexit 0\n",
        expect: &[
            "Oxok shell",
            "oxok$ ps",
            "ID  PARENT NAME             STATUS     FRAMES     RUNS    TICKS",
            " shell ",
            "oxok$ frames",
            "frames of 4 KiB in the frame table",
            "OWNER",
            "free ",
            "kernel ",
            "(init)",
            "(shell)",
            "oxok$ slots",
            "slot vector: * slots of * ticks",
            "SLOT  OWNER",
            "  0",
            "owned, * free",
            "NAME",
            "TICKS",
            "OWNED",
            " shell ",
            "oxok$ slots | wc -l",
            "[1] ",
            "started",
            "[1] running  envs ",
            "spin bg 1500",
            "[1] done (status 0)  spin bg 1500",
            "status 0",
            "oxok$ stride 300 &",
            "[1] ",
            "oxok$ slots",
            " (stride) ",
            "8 owned, 24 free",
            "[1] done (status 0)  stride 300",
            "env * (shell) exited with status 0",
            "none leaked",
        ],
        forbid: &["FAIL", "syntax error", "destroyed:", "frames leaked"],
        timeout_secs: 90,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "ktest",
        about: "kernel self tests: frame allocator, page tables, checked user copies, teardown, the stacks' guard pages",
        cmdline: "ktest run=hello",
        expect: &["ktest: 13 passed, 0 failed", "hello: ok", "none leaked"],
        forbid: &["FAILED"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-priv",
        about: "privileged instructions and ways into ring 0 (a 32-bit `syscall`, `sysenter`) from ring 3 kill only their environment; the next one runs",
        cmdline: "run=hostile-priv+cli,hostile-priv+hlt,hostile-priv+cr3,hostile-priv+wrmsr,hostile-priv+rdmsr,\
                  hostile-priv+outb,hostile-priv+inb,hostile-priv+lgdt,hostile-priv+invlpg,hostile-priv+int80,\
                  hostile-priv+compat,hostile-priv+sysenter,hostile-priv+sgdt,hostile-priv+smsw,hello",
        expect: &[
            // Ring 0 never runs a user page; PCT tickets are random.
            "cpu: SMEP on, UMIP on; call tickets from rdrand",
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
            // No 32-bit user code segment: the far return itself faults.
            "hostile-priv: trying compat",
            "destroyed: general protection fault",
            "hostile-priv: trying sysenter",
            "destroyed:",
            "hostile-priv: trying sgdt",
            "destroyed: general protection fault",
            "hostile-priv: trying smsw",
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
        about: "kernel, unmapped, wrapping and oversized pointers to calls come back as error codes; every \
                argument class refuses what it does not hold, and frame_alloc with a full list takes nothing",
        cmdline: "run=hostile-args,hostile-classes,hello",
        expect: &[
            "hostile-args: ok",
            "env * (hostile-args) exited with status 0",
            "hostile-classes: ok (",
            "env * (hostile-classes) exited with status 0",
            "hello: ok",
            "none leaked",
        ],
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
        name: "nostack-slot",
        about: "code whose slot ends while it has no stack (rsp 0, as at the PCT entry) is preempted in place, not handed a \
                slot-end upcall it could not resume from",
        cmdline: "run=nostack-slot,hello",
        expect: &["nostack-slot: spinning with rsp 0", "nostack-slot: * alive", "nostack-slot: ok", "hello: ok"],
        forbid: &["FAIL", "destroyed:"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "preempt",
        about: "the APIC timer preempts spinning environments: a third one runs while two spin",
        cmdline: "run=spin+a+400&spin+b+400&hello",
        expect: &[
            "timer: 250 Hz",
            // Either may print first, and both spinners' first lines may come
            // after hello's: a first 4 ms turn can end before a program
            // reaches its first line under a loaded TCG host. What counts:
            // hello finishes while both spinners are still spinning.
            "spin * start <&> spin * start <&> hello: ok",
            "spin * done",
            "spin * done",
            "none leaked",
        ],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "frames",
        about: "frames by number: alloc any/specific, map, frame table, free; Busy/BadCap/Invalid",
        cmdline: "run=frames",
        expect: &["frames: ok (", "env * (frames) exited with status 0", "none leaked"],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-caps",
        about: "no cap, wrong kind, widening, no grant right, read-only caps, stale caps, kernel/exposed/unaligned addresses",
        cmdline: "run=hostile-caps",
        expect: &["hostile-caps: ok (", "env * (hostile-caps) exited with status 0", "none leaked"],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "batch",
        about: "page_batch: restart past BATCH_STEP, precise progress at a bad record, bad record pointers change nothing, copy records refuse sources the caller cannot read (kernel half, unmapped, misaligned)",
        cmdline: "run=batch",
        expect: &["batch: ok (", "env * (batch) exited with status 0", "none leaked"],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "upcalls",
        about: "libOS upcall runtime: demand-zero faults, ud2/int3, foreign syscall, registers/flags/red zone kept, nesting",
        cmdline: "run=upcalls",
        expect: &["upcalls: ok (", "env * (upcalls) exited with status 0", "none leaked"],
        forbid: &["FAIL", "frames leaked", "destroyed:", "upcall: unhandled"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "upcalls-unhandled",
        about: "an exception with no handler ends the program through the runtime",
        cmdline: "run=upcalls+unhandled",
        expect: &[
            "upcalls: ud2 with no handler",
            "upcall: unhandled invalid opcode",
            "env * (upcalls) exited with status 132",
            "none leaked",
        ],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "backtrace-user",
        about: "a program ended by an exception nobody handled prints its backtrace (rip, then the frame-pointer \
                chain), and the log shows each frame's function from the program's symbol table",
        cmdline: "run=upcalls+unhandled",
        expect: &[
            "upcall: unhandled invalid opcode",
            "backtrace (program upcalls):",
            "  #0: 0x* upcalls::main+0x",
            "  #1: 0x* oxok_libos::start::start+0x",
            "  #2: 0x* oxok_main+0x",
            "  #3: 0x* oxok_rt::entry::start+0x",
            "  #4: 0x* _start+0x",
            "env * (upcalls) exited with status 132",
            "none leaked",
        ],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "backtrace-kernel",
        about: "a kernel panic (the `crash` test word) prints its report; the log shows the backtrace's functions from \
                kernel.elf's symbol table, the panicking function among them",
        cmdline: "crash",
        expect: &[
            "KERNEL PANIC at kernel/src/main.rs:*: crash requested on the command line",
            "backtrace (return addresses):",
            "  #*: 0x* oxok_kernel::crash_on_purpose+0x",
        ],
        exit: Exit::Panic,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "kernel-stack-guard",
        about: "the kernel stack has an unmapped guard page below it: a kernel recursion (the `crash=stack` test word) \
                ends in a double fault reported as a kernel stack overflow, not in memory written over",
        cmdline: "crash=stack",
        expect: &[
            "crash=stack: recursing until the kernel stack overflows",
            "KERNEL PANIC at kernel/src/trap.rs:*: kernel stack overflow: double fault in kernel mode (vector 8",
        ],
        exit: Exit::Panic,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "upcalls-bad-stack",
        about: "exception stack in unmapped memory: the environment is destroyed, the kernel is fine",
        cmdline: "run=upcalls+bad-stack,hello",
        expect: &[
            "upcalls: ud2 with the exception stack in unmapped memory",
            "env * (upcalls) destroyed: invalid opcode * exception stack not writable",
            "hello: ok",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "upcalls-readonly-stack",
        about: "exception stack in program text: the environment is destroyed",
        cmdline: "run=upcalls+readonly-stack",
        expect: &[
            "upcalls: ud2 with the exception stack in read-only program text",
            "env * (upcalls) destroyed: invalid opcode * exception stack not writable",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "upcalls-recurse",
        about: "a handler that faults forever runs down its stack and is destroyed",
        cmdline: "run=upcalls+recurse",
        expect: &[
            "upcalls: ud2 in a handler that faults again",
            "env * (upcalls) destroyed: * exception stack not writable",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "state",
        about: "Fluke state export: set/get identical, copy into a fresh env, hostile slots/rights/rip/buffers",
        cmdline: "run=state",
        expect: &[
            "state: ok (",
            "state-child: r12=0x0123456789abcdef r15=0xfedcba9876543210",
            "state-child: r12=0x0123456789abcdef r15=0xfedcba9876543210",
            "state-fpu: ok (",
            "state-fpu: sleep=0x0000000000000000 xmm0=0x1122334455667788 fs0=0x000000005eedf500 gs0=0x000000005eed6500 mxcsr=0x0000000000007f80",
            "state-fpu: sleep=0x0000000000000000 xmm0=0x1122334455667788 fs0=0x000000005eedf500 gs0=0x000000005eed6500 mxcsr=0x0000000000007f80",
            // The woken sleeper may print before or after its parent's
            // verdict (whichever the scheduler runs first).
            "state-sleeper: ok ( <&> \
             state-fpu: sleep=0x0000000000000000 xmm0=0x1122334455667788 fs0=0x000000005eedf500 gs0=0x000000005eed6500 mxcsr=0x0000000000007f80",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "destroyed:", "exited with status 1"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-env-destroy",
        about: "destroying a child that maps the parent's frame; stale env caps refused; 100 create/destroy rounds",
        cmdline: "run=hostile-env-destroy",
        expect: &["hostile-env-destroy: ok (", "env * (hostile-env-destroy) exited with status 0", "none leaked"],
        forbid: &["FAIL", "frames leaked", "(hostile-env-destroy) destroyed:"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "revoke-ignore",
        about: "abort protocol: listed frames first, shared frame skipped, recorded in the app area",
        cmdline: "run=revoke+ignore",
        expect: &[
            "(revoke): asked to give back 3 frames",
            "(revoke): revocation deadline passed; abort protocol took 3 of 3 frames",
            "revoke: mode ignore: gave back 0, repossessed 3",
            "revoke: ok (",
            "env * (revoke) exited with status 0",
            "none leaked",
        ],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "revoke-ignore-upcall",
        about: "revocation upcall delivered and ignored: the abort protocol takes the frames",
        cmdline: "run=revoke+ignore-upcall",
        expect: &[
            "(revoke): asked to give back 3 frames",
            "abort protocol took 3 of 3 frames",
            "revoke: mode ignore-upcall: gave back 0, repossessed 3",
            "revoke: ok (",
            "none leaked",
        ],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "revoke-comply",
        about: "the revocation handler frees the frames itself: nothing is repossessed",
        cmdline: "run=revoke+comply",
        expect: &[
            "(revoke): asked to give back 3 frames",
            "revoke: mode comply: gave back 3, repossessed 0",
            "revoke: ok (",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "destroyed:", "abort protocol took"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "revoke-partial",
        about: "the handler frees one frame: the kernel takes the two listed ones",
        cmdline: "run=revoke+partial",
        expect: &[
            "(revoke): asked to give back 3 frames",
            "abort protocol took 2 of 2 frames",
            "revoke: mode partial: gave back 1, repossessed 2",
            "revoke: ok (",
            "none leaked",
        ],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "bench-program",
        about: "the Oxok bench program runs every workload it has (numbers not judged)",
        cmdline: "run=bench+quick",
        expect: &[
            "bench: start",
            "bench: null_call * cycles",
            "bench: libos_call * cycles",
            "bench: linux_getppid * cycles",
            "bench: exception_upcall * cycles",
            "bench: demand_zero_fault * cycles",
            "bench: page_map * cycles",
            "bench: page_unmap * cycles",
            "bench: page_batch_100 * cycles",
            "bench: done",
            "env * (bench) exited with status 0",
            "none leaked",
        ],
        forbid: &["bench: skip * error", "frames leaked", "destroyed:"],
        timeout_secs: 90,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "pct",
        about: "protected control transfer: sync round trips with the caller id from the kernel, a stale remembered call slot retried, async stop, refusals",
        cmdline: "run=pct+server&pct+client,hello",
        expect: &[
            "pct client: round trip * cycles",
            "pct server: stopped after 202 calls",
            "pct client: ok (",
            "hello: ok",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "(pct) destroyed:"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "sleep-clock",
        about: "wakeup predicate on the clock page; a parameter change takes effect without reinstalling; hostile reads refused",
        cmdline: "run=pred-sleep+clock,hello",
        expect: &["sleep: woke at tick", "sleep: woke again at tick", "sleep: ok (", "hello: ok", "none leaked"],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "sleep-watch",
        about: "a predicate wakes its sleeper when the watched word (another env's table row) changes",
        cmdline: "run=pred-sleep+watch&spin+x+300",
        expect: &[
            "sleep watch: watching env table row",
            "spin x: done",
            "sleep watch: watched word changed",
            "sleep watch: ok (",
            "none leaked",
        ],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "fork",
        about: "libOS fork: copy-on-write isolation (static data, heap, stack, regions), nested forks, 64 forked children reaped with frames back at the baseline, demand-zero regions, the Appel-Li trap",
        cmdline: "run=fork",
        expect: &["fork: copy-on-write faults: * copied, * re-enabled", "fork: ok (", "none leaked"],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-forkbomb",
        about: "a fork bomb is refused by the kernel (NoMemory), an unrelated victim keeps computing, and every frame is free after the bomb",
        cmdline: "run=hostile-forkbomb+victim&hostile-forkbomb",
        expect: &[
            "hostile-forkbomb: refused with: ",
            "hostile-forkbomb: the root reaped its * children; the bomb is over",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "KERNEL PANIC"],
        // 20 s on an idle machine; 120 s was reached beside two other QEMUs
        // and a build (issue 18's 20-round run). A hang detector, not a bound.
        timeout_secs: 360,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-forkbomb-limited",
        about: "a fork bomb that limited itself (env_limit: 3000 frames, 40 environments) never holds more, gets NoMemory, and cannot escape its budget by raising limits, limiting a child or charging an outsider; a victim keeps computing; no frame leaks",
        cmdline: "run=hostile-forkbomb+victim&hostile-forkbomb-limited",
        expect: &[
            "hostile-forkbomb-limited: raised its own limit, still refused after * frames",
            "hostile-forkbomb-limited escape: ok (",
            "hostile-forkbomb-limited: bomb refused with: ",
            "hostile-forkbomb-limited: bomb root took * more frames, then NoMemory",
            "hostile-forkbomb-limited bomb: ok (",
            "hostile-forkbomb-limited: peak * processes, * frames in the bomb's account",
            "hostile-forkbomb-limited: ok (",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "KERNEL PANIC"],
        timeout_secs: 120,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-selfcorrupt",
        about: "a program that overwrites its own libOS state harms only itself: its parent keeps working, the kernel answers, no frame is lost",
        cmdline: "run=hostile-selfcorrupt",
        expect: &["hostile-selfcorrupt: corrupted", "hostile-selfcorrupt: ok (", "none leaked"],
        forbid: &["FAIL", "frames leaked", "KERNEL PANIC"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "spawn",
        about: "libOS exec: spawn from the boot archive with argv and wait; 64 children leave nothing behind; refusals; a crashing child",
        cmdline: "run=spawn",
        expect: &[
            "hello: environment * running, argv = hello a b",
            "spawn: 64 children started and waited for",
            "hostile-jump: trying call-kernel",
            "(hostile-jump) destroyed: page fault",
            "spawn: the parent goes on after its child crashed",
            "hello: environment * running, argv = hello after crash",
            "spawn: ok (",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "(spawn) destroyed:", "did not fault"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "heap",
        about: "the libOS heap grows with frames from the kernel, reuses freed memory, and leaks nothing at exit",
        cmdline: "run=heap",
        expect: &["heap: ok (", "env * (heap) exited with status 0", "none leaked"],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "typing",
        about: "console input: typed bytes reach a program asleep on a wakeup predicate over the input counter",
        cmdline: "run=typing",
        input: "hello oxok\nsecond line\nquit\n",
        expect: &[
            "typing: ready",
            "typing: line \"hello oxok\"",
            "typing: line \"second line\"",
            "typing: ok (2 lines)",
        ],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-exhaust",
        about: "an environment that creates environments and predicates until refused: NoMemory, and the kernel goes on",
        cmdline: "run=hostile-exhaust,hello",
        expect: &[
            "hostile-exhaust: created * environments, then refused with Some(NoMemory)",
            "hostile-exhaust: ok (",
            "hello: ok",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked"],
        timeout_secs: 120,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "iso-bios",
        about: "the GRUB ISO boots under BIOS (Multiboot2) to init",
        cmdline: "run=init+banner",
        expect: BANNER,
        boot: Boot::IsoBios,
        timeout_secs: 60,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "iso-uefi",
        about: "the GRUB ISO boots under UEFI (OVMF, Multiboot2) to init",
        cmdline: "run=init+banner",
        expect: BANNER,
        boot: Boot::IsoUefi,
        timeout_secs: 90,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "slots-share",
        about: "CPU shares follow slot ownership: spinners owning 3 and 1 slots (no spare time) run 3:1 ± 20% of ticks",
        cmdline: "run=slots-share+a+3&slots-share+b+1",
        expect: &[
            "slots-share: a ran * ticks, b ran * ticks in 2 s: ratio",
            "slots-share a: ok (",
            "slots-share b: done",
            "slots-share b: ok (",
            "none leaked",
        ],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "slots-count",
        about: "the slot count is set at boot (slots=6): shares still follow ownership, slots beyond the count do not exist",
        cmdline: "slots=6 run=slots-share+a+3&slots-share+b+1",
        expect: &[
            "slots-share: a ran * ticks, b ran * ticks in 2 s: ratio",
            "slots-share a: ok (",
            "slots-share b: ok (",
            "none leaked",
        ],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "slots-hostile",
        about: "a spinner without slots gets no tick while an owner holds every slot; an env ignoring its \
                slot ends is charged then destroyed; a critical section cannot hold the CPU; a program cannot \
                take slots beyond its account's slot quota, alone or through a child",
        cmdline: "run=slots-hostile+owner&slots-hostile+lazy,slots-hostile+ignore&slots-hostile+fair+ignore,\
                  slots-hostile+critical&slots-hostile+fair+critical,slots-hostile+quota,hello",
        expect: &[
            "slots-hostile owner: ran * ticks in 1 s; the lazy spinner ran 0",
            "slots-hostile owner: ok (",
            "slots-hostile lazy: ran after the owner exited",
            "slots-hostile ignore: ignoring slot ends",
            "(slots-hostile) ignored its slot end: preempted, * ticks charged, strike 1",
            "(slots-hostile) destroyed: ignored its slot end 3 times in a row",
            "slots-hostile fair: ok (",
            // critical and fair run at once: either may finish first.
            "slots-hostile critical: ok ( <&> slots-hostile fair: ok (",
            "slots-hostile quota: ok (",
            "hello: ok",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "destroyed: general", "destroyed: page"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "directed-yield",
        about: "directed yield donates the rest of the slot to a named env; the yielder's registers come back intact",
        cmdline: "run=directed-yield+a&directed-yield+b",
        expect: &[
            "directed-yield: b received * donations",
            "directed-yield: ok (",
            "directed-yield b: done",
            "none leaked",
        ],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "stride",
        about: "a user-level stride scheduler runs three children (no spare time) only by directed yield; \
                their ticks follow their tickets 3:2:1 within ±10% of each share (measured 99–100%)",
        cmdline: "run=stride",
        expect: &["stride: child 0 tickets 3 got * ticks", "stride: ok (", "none leaked"],
        forbid: &["FAIL", "frames leaked"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "files",
        about: "the file server over PCT: files, seek, append, directories, long names and paths, errors, cwd; \
                a child reads the parent's file; an inherited open file shares its position",
        cmdline: "run=files",
        expect: &[
            "fsd: serving files",
            "files: the API works through the server",
            "files: two processes shared a file",
            "files: a child inherited an open file",
            "fsd: stopped after",
            "files: ok (",
            "none leaked",
        ],
        forbid: F,
        timeout_secs: 60,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-fsd",
        about: "forged and foreign handles, garbage messages, quota hoarding, clients destroyed mid-call: the file server \
                keeps serving a victim, reclaims dead clients' handles and leaves no orphan inode",
        cmdline: "run=hostile-fsd",
        expect: &[
            "fsd: serving files",
            "hostile-fsd forge: ok (",
            "hostile-fsd garbage: ok (",
            "hostile-fsd hoard: ok (",
            "hostile-fsd: 12 clients destroyed while calling",
            "fsd-victim: * rounds through the attacks",
            "fsd-victim: ok (",
            "fsd: stopped after",
            "hostile-fsd: ok (",
            "none leaked",
        ],
        forbid: &[
            "FAIL",
            "frames leaked",
            "(fsd) destroyed",
            "(fsd-victim) destroyed",
            "(hostile-fsd) destroyed",
            "panic",
        ],
        timeout_secs: 90,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "files-tools",
        about: "ls, cat, echo, wc, mkdir, rm, touch, mv run with arguments, stdin and stdout on files of the server: \
                output and exit codes as POSIX's",
        cmdline: "run=files-tools",
        expect: &[
            "fsd: serving files",
            "-       12 shown.txt",
            "fsd: stopped after",
            "files-tools: ok (",
            "none leaked",
        ],
        forbid: F,
        timeout_secs: 60,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "pipe",
        about: "libOS pipes over a shared frame with directed yield, and descriptors passed across spawn: a child's stdout through a pipe, inherited tables, end of file when the writer ends or is killed, broken pipe, 1 MiB each way, ping-pong",
        cmdline: "run=pipe",
        expect: &[
            "pipe: child stdout through a pipe: 5 lines and end of file",
            "pipe: descriptors inherited (all: true), grandchild included",
            "pipe: descriptors inherited (all: false), grandchild included",
            "pipe: killed writer: end of file",
            "pipe: reader gone: broken pipe after * bytes",
            "pipe: 1 MiB child to parent in * ms",
            "pipe: 1 MiB parent to child in * ms",
            "pipe: 200 round trips over two pipes",
            "pipe: a child of fork wrote into the pipe",
            "pipe: ok (",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "panic", "pipe-writer: "],
        timeout_secs: 90,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "pipe-hostile",
        about: "a partner scribbling over a pipe's shared frame cannot crash or hang the other end (end of file / broken pipe once it is gone, even with forged holders naming a live bystander) nor touch another pipe",
        cmdline: "run=pipe-hostile",
        expect: &[
            "pipe-scribbler: 1 pipe frame(s) within reach",
            "pipe-hostile: reader survived: * end of file",
            "pipe-scribbler: 1 pipe frame(s) within reach",
            "pipe-hostile: writer survived: * broken pipe",
            "pipe-hostile: the parent goes on",
            "pipe-hostile: ok (",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "panic", "pipe-writer: wrong", "pipe-writer: read"],
        timeout_secs: 120,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "signals",
        about: "signals over PCT: TERM ends a sleeping child with 143 through its exit path (descriptors closed), handlers run before kill returns and the child goes on, KILL cannot be caught, a sibling is refused, the kill tool works only through a forwarding parent, destroy by capability",
        cmdline: "run=signals,hello",
        expect: &["signals attacker: ok (", "signals: ok (", "hello: ok", "none leaked"],
        forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
        timeout_secs: 90,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "lrpc",
        about: "lightweight RPC over PCT: arguments and results in registers, the caller id from the kernel, typed errors for bad procedures and failures, signals and pct::serve on the same entry, a server dying mid-call gives an error, not a hang",
        cmdline: "run=lrpc,hello",
        expect: &["lrpc server: serving", "lrpc: round trip * cycles", "lrpc: ok (", "hello: ok", "none leaked"],
        forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
        timeout_secs: 60,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "shm-pingpong",
        about: "two processes alternately increment a counter in a shared page (MapEntry::share) with directed yield between turns; a read-only share cannot be widened",
        cmdline: "run=shm-pingpong,hello",
        expect: &[
            "shm-pingpong: 2000 rounds, * cycles per round trip",
            "shm-pingpong: ok (",
            "hello: ok",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "panic", "destroyed:", "shm-pingpong child:"],
        timeout_secs: 60,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-scribble",
        about: "a process scribbles over every shared page it can write, writes every exposed table (faults caught), signals, destroys and sends garbage transfers to an unrelated process: the victim finishes with correct results and its row intact",
        cmdline: "run=scribble-victim&hostile-scribble",
        expect: &[
            "hostile-scribble: * shared pages scribbled, 11 faults caught, * signals refused, * garbage transfers",
            "hostile-scribble: ok (",
            "scribble-victim: * ping-pong sessions, * signals refused, * garbage calls answered",
            "scribble-victim: ok (",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "panic", "destroyed:"],
        timeout_secs: 120,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-revoke-bomb",
        about: "a program maps one of its frames 1,200,000 times and revokes it from itself: the abort protocol takes it in bounded, restartable steps (no allocation, no freeze), removes every mapping; the kernel keeps running, a victim keeps working, no frame leaks",
        cmdline: "run=hostile-victim+hostile-revoke-bomb&hostile-revoke-bomb",
        expect: &[
            "hostile-revoke-bomb: frame * mapped 1200000 times",
            "(hostile-revoke-bomb): revocation deadline passed; abort protocol took 1 of 1 frames",
            "hostile-revoke-bomb: all 1200000 mappings removed",
            "hostile-revoke-bomb: ok (",
            "victim: ok, * rounds, data intact",
            "none leaked",
        ],
        forbid: F,
        timeout_secs: 400,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-envcycle",
        about: "a program limited to its frames + 8 and 2 environments loops env_create/env_destroy 20,000 times: teardown stays charged to its account until done, so free frames never fall by more than it allows, the dying queue stays within its reservation, and a victim's env_create keeps working",
        cmdline: "run=hostile-victim+hostile-envcycle&hostile-envcycle",
        expect: &[
            "hostile-envcycle: * of 20000 create/destroy cycles; free frames fell by at most",
            "hostile-envcycle: ok (",
            "victim: ok, * rounds, data intact, env_create and frame_alloc worked throughout",
            "none leaked",
        ],
        forbid: F,
        timeout_secs: 300,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-segs",
        about: "DS and ES carry nothing across environments: one program loads them with selectors of its own and yields, over and over; the one beside it reads both null after every return (it once read the other's)",
        cmdline: "run=hostile-segs+set&hostile-segs+read",
        expect: &["hostile-segs read: ok (", "hostile-segs set: done", "none leaked"],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-zombies",
        about: "a program limited to 2 children lets them die unreaped: a zombie stays charged to its creator's account until reaped, so two unreaped zombies fill the account, reaping one frees one, and dropping each dead child's capability unreaped gets one more child, not the whole environment table; a victim's env_create keeps working",
        cmdline: "run=hostile-victim+hostile-zombies&hostile-zombies",
        expect: &[
            "hostile-zombies: 1 of 1100 children dropped unreaped",
            "hostile-zombies: ok (",
            "victim: ok, * rounds, data intact, env_create and frame_alloc worked throughout",
            "none leaked",
        ],
        // Only its children die (at rip 0, by design): three of them.
        forbid: &[
            "FAIL",
            "frames leaked",
            "heap leaked",
            "(hostile-zombies) destroyed:",
            "(hostile-victim) destroyed:",
        ],
        timeout_secs: 300,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-batch",
        about: "page_batch's fresh and copy records out of budget mid-batch: refused at the record with rsi/rdx there, the records before applied, the refused page not mapped (a replaced one kept with its bytes), no table made, account and table row exact; a victim keeps working",
        cmdline: "run=hostile-victim+hostile-batch&hostile-batch",
        expect: &[
            "hostile-batch: six fresh records with room for two: status *, 4 left",
            "hostile-batch: ok (",
            "victim: ok, * rounds, data intact, env_create and frame_alloc worked throughout",
            "none leaked",
        ],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-ptcharge",
        about: "page-table frames are charged to the account whose mappings made them: one frame mapped 1 GiB apart under a 48-frame limit is refused with NoMemory once the tables fill the limit; account_info and the table row count them; a victim keeps working",
        cmdline: "run=hostile-victim+hostile-ptcharge&hostile-ptcharge",
        expect: &[
            "hostile-ptcharge: * mappings 1 GiB apart, then Some(NoMemory)",
            "hostile-ptcharge: ok (",
            "victim: ok, * rounds, data intact, env_create and frame_alloc worked throughout",
            "none leaked",
        ],
        forbid: F,
        timeout_secs: 120,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-genwrap",
        about: "names are never reused while a capability could match: with the generation limits narrowed to 64 (gen_limit=, frame_gen_limit=), an environment-table row and a frame are retired at the limit and stale capabilities match nothing; a victim keeps working",
        cmdline: "gen_limit=64 frame_gen_limit=64 run=hostile-victim+hostile-genwrap&hostile-genwrap+64",
        expect: &[
            "hostile-genwrap: row * reused * times in * cycles, highest generation seen * of 64",
            "hostile-genwrap: frame * reallocated * times, then Some(",
            "hostile-genwrap: ok (",
            "victim: ok, * rounds, data intact, env_create and frame_alloc worked throughout",
            "none leaked",
        ],
        forbid: F,
        timeout_secs: 120,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-revoke-dodge",
        about: "revocation cannot be dodged: a target that never runs, and a forked child asleep for good, both sharing frames with an accomplice, lose them at the deadline, enforced from the timer, with every mapping (the accomplice's too) removed, and the sleeper's packet ring unbound with its frames (none left a pinned orphan); a victim keeps working",
        cmdline: "run=hostile-victim+hostile-revoke-dodge&hostile-revoke-dodge",
        expect: &[
            "(hostile-revoke-dodge.child): revocation deadline passed; abort protocol took 4 of 4 frames",
            "hostile-revoke-dodge: target * never ran; repossessed Some(4) of 4",
            "hostile-revoke-dodge: sleeping child * repossessed Some(*) of",
            "hostile-revoke-dodge: ok (",
            "victim: ok, * rounds, data intact, env_create and frame_alloc worked throughout",
            "none leaked",
        ],
        forbid: F,
        timeout_secs: 120,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-fpu-leak",
        about: "x87/SSE state does not leak: a program leaves 1234567.875 on the x87 stack, markers in every XMM register and its own MXCSR; the next finds the clean state",
        cmdline: "run=hostile-fpu-leak+plant,hostile-fpu-leak+probe",
        expect: &["hostile-fpu-leak: planted (own state holds)", "hostile-fpu-leak: ok (", "none leaked"],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-fpu-leak-lazy",
        about: "as hostile-fpu-leak, with lazy FPU switching (CR0.TS, #NM)",
        cmdline: "run=hostile-fpu-leak+plant,hostile-fpu-leak+probe fpu=lazy",
        expect: &[
            "lazy switching",
            "hostile-fpu-leak: planted (own state holds)",
            "hostile-fpu-leak: ok (",
            "none leaked",
        ],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "fpu-isolation",
        about: "two environments compute with x87 and SSE under one-tick preemption; each keeps its registers, MXCSR and results",
        cmdline: "run=fpu-isolation+a+3&fpu-isolation+b+8 slot_ticks=1",
        expect: &[
            "fpu-isolation * ok (150 rounds, preempted",
            "fpu-isolation * ok (150 rounds, preempted",
            "none leaked",
        ],
        forbid: F,
        timeout_secs: 90,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "fpu-isolation-lazy",
        about: "as fpu-isolation, with lazy FPU switching (CR0.TS, #NM)",
        cmdline: "run=fpu-isolation+a+3&fpu-isolation+b+8 slot_ticks=1 fpu=lazy",
        expect: &[
            "fpu-isolation * ok (150 rounds, preempted",
            "fpu-isolation * ok (150 rounds, preempted",
            "none leaked",
        ],
        forbid: F,
        timeout_secs: 90,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "fsbase",
        about: "FS and GS bases per environment: two programs read %fs:0 and %gs:0 under one-tick preemption and always see their own; bad bases refused",
        cmdline: "run=fsbase+0&fsbase+1 slot_ticks=1",
        expect: &["fsbase *: ok (", "fsbase *: ok (", "none leaked"],
        forbid: F,
        timeout_secs: 60,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "pct-restart",
        about: "Fluke's restart rule for PCT: a waiting caller exports pct_wait(callee, ticket); imported elsewhere it gets the reply; replaced, it is not clobbered; forged and duplicate waits refused",
        cmdline: "run=pct-restart",
        expect: &["pct-restart: ok (", "none leaked"],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-derive",
        about: "cap_derive narrows only (widening, grant without grant, too deep refused); cap_revoke takes every derived and granted copy from every list; the holder keeps running",
        cmdline: "run=hostile-derive",
        expect: &[
            "hostile-derive holder: ok (",
            "hostile-derive: ok (",
            "env * (hostile-derive) exited with status 0",
            "none leaked",
        ],
        forbid: F,
        timeout_secs: 120,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-pct",
        about: "pct_call, pct_send and directed yield need a call capability for the target: a sibling without one (or with a read-only one) is refused, the victim served none of it and keeps answering",
        cmdline: "run=hostile-pct",
        expect: &[
            "hostile-pct attacker: ok (",
            "hostile-pct victim: served * transfers, 0 from the attacker",
            "hostile-pct: ok (",
            "env * (hostile-pct) exited with status 0",
            "none leaked",
        ],
        forbid: F,
        timeout_secs: 120,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "hostile-guards",
        about: "executable mappings need execute on the environment capability (map, protect, batch, share); reaping needs write; \
                console output and input need a console capability; zero-length console ranges, rsp == USER_TOP and \
                transfers to never-run environments answer as documented",
        cmdline: "run=hostile-guards",
        expect: &["mute?", "hostile-guards: ok (", "env * (hostile-guards) exited with status 0", "none leaked"],
        forbid: &["FAIL", "frames leaked", "destroyed:", "leak!"],
        timeout_secs: 120,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "linux-hello",
        about: "the Linux personality runs unmodified static musl programs from the shell: hello world with its exit \
                status, then start-up, ids, memory, time, random, terminal and signal-bookkeeping checks",
        cmdline: "run=init",
        input: "linux lx-hello a b\necho status $?\nlinux lx-basics one 'two words'\necho status $?\n\
                linux --calls | wc -l\nexit 0\n",
        expect: &[
            "hello from Linux, argc=3 argv[0]=lx-hello",
            "status 7",
            "ok tls",
            "ok mmap-anon",
            "ok mremap-grow-in-place",
            "ok mremap-move",
            "ok mremap-unmapped-efault",
            "ok nanosleep-long-enough",
            "ok getrandom",
            "linux: unknown system call 400: ENOSYS",
            "ok unknown-enosys",
            "lx-basics: * checks, 0 failed",
            "status 0",
            "env * (init) exited with status 0",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "destroyed:", "upcall: unhandled", "killed by signal"],
        timeout_secs: 120,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "linux-lua",
        about: "Lua 5.4 (the C sources of the crate lua-src, built musl-gcc -static with our driver) runs on the \
                personality: arithmetic, float formatting, a 20,000-element sort, closures, coroutines, errors \
                through longjmp, deep recursion, patterns, 2 MB strings, the collector, files, time, metatables",
        cmdline: "run=init",
        input: "linux lx-lua\necho status $?\nlinux lx-lua -e \"return 6 * 7\"\nexit 0\n",
        expect: &[
            "ok arithmetic",
            "ok sort",
            "ok coroutines",
            "ok deep-recursion",
            "ok files",
            "ok metatables",
            "lx-lua: Lua 5.4.*, 14 checks, 0 failed",
            "status 0",
            "42",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "destroyed:", "upcall: unhandled", "killed by signal"],
        timeout_secs: 180,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "wall-clock",
        about: "the kernel reads the real-time clock at boot (QEMU's is pinned to 2026-11-24 05:13:16 UTC here): `date` \
                shows it, `date +%s` the seconds, and a Linux program's time() and Lua's os.time/os.date agree",
        cmdline: "run=init",
        qemu_args: &["-rtc", "base=2026-11-24T05:13:16"],
        input: "date\ndate +%s\nlinux lx-lua -e \"return os.date('!%Y-%m-%d', os.time())\"\ndate -x\necho usage $?\nexit 0\n",
        // The minute's tens digit only: a loaded host can take more than a few seconds
        // from the pinned boot time to the first prompt.
        expect: &["Tue Nov 24 05:1*:* UTC 2026", "oxok$ date +%s", "17954971", "2026-11-24", "usage 2", "none leaked"],
        forbid: F,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "linux-sqlite",
        about: "SQLite 3 (the amalgamation of the crate libsqlite3-sys, built musl-gcc -static with our driver) runs on \
                the personality: 10,000 inserts in a transaction, an index, group/order/join, update/delete, JSON, \
                and a database file on the file server that keeps its commits, drops its rollbacks and passes \
                integrity_check after reopening",
        cmdline: "run=init",
        input: "linux lx-sqlite\necho status $?\nlinux lx-sqlite -e \"select 6 * 7, 'x'\"\nexit 0\n",
        expect: &[
            "ok 10000-inserts",
            "ok index",
            "ok file-create",
            "ok file-rollback",
            "ok file-reopen",
            "ok integrity",
            "lx-sqlite: SQLite 3.*, 14 checks, 0 failed",
            "status 0",
            "42|x",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "destroyed:", "upcall: unhandled", "killed by signal"],
        timeout_secs: 240,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "linux-files",
        about: "a static musl program works with the file server's files through the personality: create, write, \
                read, seek, stat, directories, rename, unlink, cwd, dup, /dev devices, pipes; 200 KiB written and read \
                back in one call each (straight between its memory and the server's buffer), and bad pointers to a \
                file's read and write, a path and a struct the call writes (unmapped, the personality's image, the \
                exposed tables, PROT_NONE, read-only memory) EFAULT with the file and its position unchanged",
        cmdline: "run=init",
        input: "linux lx-files\necho status $?\nexit 0\n",
        expect: &[
            "ok open-create",
            "ok readdir",
            "ok big-read",
            "ok file-write-personality-data",
            "ok path-exposed",
            "ok file-read-readonly",
            "ok fstat-readonly",
            "ok file-bad-unchanged",
            "ok rmdir",
            "ok dev-zero",
            "ok pipe-read",
            "lx-files: * checks, 0 failed",
            "status 0",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "destroyed:", "upcall: unhandled", "killed by signal"],
        timeout_secs: 120,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "linux-busybox",
        about: "Debian's busybox-static runs unmodified under the Linux personality: echo, ls (-l) of the file server's \
                files, a file written by a native tool read by busybox cat and wc, busybox in pipelines with native tools, \
                uname, seq, tr, sleep, and busybox sh -c with a loop and arithmetic",
        cmdline: "run=init",
        input: "linux busybox echo hi from busybox\necho status $?\nmkdir /bb; echo native > /bb/n\n\
                linux busybox ls /\nlinux busybox cat /bb/n\nlinux busybox sh -c 'echo a; echo b'\nlinux busybox uname -a\n\
                linux busybox wc /bb/n\nlinux busybox cat /bb/n | wc\necho xyz | linux busybox tr x q\nlinux busybox ls -l /bb\n\
                linux busybox seq 3\nlinux busybox sh -c 'for i in 1 2 3; do echo n$i; done; X=$((6*7)); echo $X'\n\
                linux busybox sleep 0.05 && echo slept\nexit 0\n",
        expect: &[
            "hi from busybox",
            "status 0",
            "oxok$ linux busybox ls /",
            "bb",
            "oxok$ linux busybox cat /bb/n",
            "native",
            "oxok$ linux busybox sh -c 'echo a; echo b'",
            // Line by line: a kernel log line may come between two.
            "a\r\n",
            "b\r\n",
            "Linux oxok 6.1.0-oxok * x86_64",
            "        1         1         7 /bb/n",
            "      1       1       7",
            "qyz",
            "-rw-r--r--    1 0        0                7 * n",
            "n1\r\n",
            "n2\r\n",
            "n3\r\n",
            "42\r\n",
            "slept",
            "env * (init) exited with status 0",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "destroyed:", "upcall: unhandled", "killed by signal"],
        timeout_secs: 180,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "linux-busybox-sh",
        about: "busybox's interactive shell (ash, with line editing) reads typed commands through the personality's \
                console and poll: built-ins, arithmetic, a loop, a function, exit status",
        cmdline: "run=linux+busybox+sh",
        input: ": warm up\necho inside $((2+3))\nfor w in x y; do echo w=$w; done\nf() { echo f got $1; }; f 9\nexit 3\n",
        expect: &[
            "built-in shell (ash)",
            "inside 5",
            "w=x\r\nw=y",
            "f got 9",
            "(linux) exited with status 3",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "destroyed:", "upcall: unhandled", "killed by signal"],
        timeout_secs: 120,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "linux-hostile",
        about: "a Linux program passing bad pointers (unmapped, kernel, the personality's own image, exposed tables, \
                read-only and PROT_NONE memory, wrapping ranges) gets -EFAULT and the personality goes on; one that \
                scribbles over its personality ends only itself: a spinner beside it finishes, the kernel answers, \
                no frame leaks",
        cmdline: "run=spin+bystander+15000&linux+lx-scribble,linux+lx-efault,hello",
        expect: &[
            "spin bystander: start",
            "lx-scribble: scribbling over the personality",
            "(linux) destroyed: ",
            "spin bystander: done",
            "ok write-null-page",
            "ok read-personality-data",
            "ok stat-exposed",
            "ok open-wrap",
            "ok write-protnone",
            "ok mmap-fixed-personality",
            "lx-efault: * checks, 0 failed",
            "hello: ok",
            "none leaked",
        ],
        forbid: &["FAIL", "frames leaked", "lx-scribble: still here", "KERNEL PANIC"],
        timeout_secs: 120,
        ..Scenario::DEFAULT
    },
    // The network (issue 13): `scenarios_net.rs`.
    crate::scenarios_net::NET_SCENARIOS[0],
    crate::scenarios_net::NET_SCENARIOS[1],
    crate::scenarios_net::NET_SCENARIOS[2],
    crate::scenarios_net::NET_SCENARIOS[3],
    crate::scenarios_net::NET_SCENARIOS[4],
    crate::scenarios_net::NET_SCENARIOS[5],
    crate::scenarios_net::NET_SCENARIOS[6],
    crate::scenarios_net::NET_SCENARIOS[7],
    crate::scenarios_net::NET_SCENARIOS[8],
    crate::scenarios_net::NET_SCENARIOS[9],
    crate::scenarios_net::NET_SCENARIOS[10],
    crate::scenarios_net::NET_SCENARIOS[11],
    crate::scenarios_net::NET_SCENARIOS[12],
    crate::scenarios_net::NET_SCENARIOS[13],
    crate::scenarios_net::NET_SCENARIOS[14],
    // The checkpointer (issue 16): `scenarios_ckpt.rs`.
    crate::scenarios_ckpt::CKPT_SCENARIOS[0],
    crate::scenarios_ckpt::CKPT_SCENARIOS[1],
    crate::scenarios_ckpt::CKPT_SCENARIOS[2],
    crate::scenarios_ckpt::CKPT_SCENARIOS[3],
    crate::scenarios_ckpt::CKPT_SCENARIOS[4],
    crate::scenarios_ckpt::CKPT_SCENARIOS[5],
    // File data by the page (issue 11) and batched closes: `scenarios_vocab.rs`.
    crate::scenarios_vocab::VOCAB_SCENARIOS[0],
    crate::scenarios_vocab::VOCAB_SCENARIOS[1],
    crate::scenarios_vocab::VOCAB_SCENARIOS[2],
    crate::scenarios_vocab::VOCAB_SCENARIOS[3],
    crate::scenarios_vocab::VOCAB_SCENARIOS[4],
    Scenario {
        name: "console-quiet",
        about: "at the kernel's default log level (what `cargo xtask run` shows) the console carries only what \
                programs print: no [info] line after a command or inside a pipeline",
        cmdline: "run=init",
        log: None,
        input: "echo quiet\nls | wc -l\nhello from the shell\nexit 0\n",
        expect: &[
            "Oxok shell",
            "oxok$ echo quiet",
            "quiet",
            "oxok$ ls | wc -l",
            "hello: environment * running",
            "oxok$ exit 0",
        ],
        forbid: &["[info]", "[debug]", "FAIL"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "log-subsystem",
        about: "a per-subsystem log level (log=warn,env=info): the environment calls' info lines show, the boot's \
                and the scheduler's do not",
        cmdline: "log=warn,env=info run=hello",
        expect: &["hello: ok", "[info] env * (hello) exited with status 0"],
        forbid: &["[info] Oxok", "[info] clock:", "none leaked", "[debug]"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "console-keys",
        about: "control keys typed on the serial console: Enter is CR and gives a new line, DEL erases, ^D ends a \
                program's input (cat, wc), ^C interrupts the foreground job (SIGINT, status 130) whether it reads \
                the keyboard or not, and the prompt still answers",
        cmdline: "run=init",
        input: "cat\rline one\rtypo\x7f\x7fo\r\x04echo after cat $?\r\
                spin k 100000000\r\x03echo alive $?\r\
                wc\rsome words here\r\x04\
                cat\rpartial\x03echo interrupted $?\r\
                echo typed ahead\rexit 0\r",
        expect: &[
            "oxok$ cat",
            "line one",
            "line one",
            "\ntyo\r",
            "oxok$ echo after cat $?",
            "after cat 0",
            "oxok$ spin k 100000000",
            "^C",
            "alive 130",
            "oxok$ wc",
            "      1       3      16",
            "oxok$ cat",
            "^C",
            "interrupted 130",
            "typed ahead",
            "env * (shell) exited with status 0",
            "none leaked",
        ],
        forbid: &["FAIL", "destroyed:", "frames leaked"],
        timeout_secs: 60,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "console-eof",
        about: "end of console input (^D at the prompt, what `cargo xtask run < /dev/null` types) ends the shell \
                and the machine halts instead of waiting",
        cmdline: "run=init",
        input: "echo before eof\n\x04",
        expect: &[
            "before eof",
            "env * (shell) exited with status 0",
            "env * (init) exited with status 0",
            "none leaked",
        ],
        forbid: &["FAIL"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "console-exit-status",
        about: "with halt_status (added by `cargo xtask run`), `exit 3` in the shell ends QEMU with the status the \
                host tool turns into 3",
        cmdline: "run=init halt_status",
        input: "exit 3\n",
        expect: &["env * (shell) exited with status 3", "env * (init) exited with status 3"],
        exit: crate::scenario::Exit::Status(3),
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "shell-small",
        about: "the first hour's small things: touch without a file is a usage error, $$ and $!, one `syntax error` \
                prefix, sleep is a tool, programs lists tools with a line each (tests hidden), and a line over \
                1,024 bytes is refused whole, never cut and run",
        cmdline: "run=init",
        // shell 1026: the first job is 1027 on a fresh boot.
        input: "echo pid $$\nspin b 10 &\necho last $!\nwait\ntouch\necho touch $?\n\
                echo a | | b\nsleep 0.2\necho slept $?\nsleep x\necho bad $?\nprograms\n\
                echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\
             xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\
             xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\
             xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\
             xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\
             xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\
             xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\
             xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\
             xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\
             xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\
             xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n\
                echo still here\nexit 0\n",
        expect: &[
            "pid 1026",
            "[1] 1027",
            "last 1027",
            "usage: touch file...",
            "touch 2",
            "syntax error at byte",
            "slept 0",
            "sleep: invalid time interval 'x'",
            "bad 2",
            "  sleep      wait a number of seconds",
            "test programs not shown: programs -a",
            "shell: line refused: 1105 bytes, the limit is 1024; nothing was run",
            "still here",
            "env * (shell) exited with status 0",
            "none leaked",
        ],
        forbid: &["syntax error: syntax error", "\nxxxxxxxxxx", "  hostile-priv", "FAIL", "destroyed:"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "tools-text",
        about: "the text tools people expect: sort (-u), uniq -c, head/tail -n, grep (-c -v, status 1 when nothing \
                matches), cp, true/false, env, source FILE",
        cmdline: "run=init",
        input: "echo b > /f; echo a >> /f; echo b >> /f; echo c >> /f\nsort /f\nsort -u /f | wc -l\n\
                head -n 2 /f\ntail -n 1 /f\ngrep -c b /f\ngrep -v b /f\ngrep zzz /f; echo none $?\n\
                sort /f | uniq -c\ncp /f /g; cat /g | wc -l\nmkdir /d; cp /f /g /d; ls /d\n\
                true && echo yes\nfalse || echo no $?\nexport K=v; env\nhead -n x /f; echo usage $?\n\
                echo 'echo from a script $?' > /script; echo false >> /script\nsource /script\n\
                echo script status $?\nexit 0\n",
        expect: &[
            "oxok$ sort /f",
            "\na\r",
            "\nb\r",
            "\nb\r",
            "\nc\r",
            "oxok$ sort -u /f | wc -l",
            "      3",
            "oxok$ head -n 2 /f",
            "\nb\r",
            "\na\r",
            "oxok$ tail -n 1 /f",
            "\nc\r",
            "oxok$ grep -c b /f",
            "\n2\r",
            "oxok$ grep -v b /f",
            "\na\r",
            "\nc\r",
            "none 1",
            "oxok$ sort /f | uniq -c",
            "      1 a",
            "      2 b",
            "      1 c",
            "oxok$ cp /f /g; cat /g | wc -l",
            "      4",
            "oxok$ mkdir /d; cp /f /g /d; ls /d",
            "f",
            "g",
            "yes",
            "no 1",
            "K=v",
            "head: x: not a number",
            "usage 2",
            "oxok$ source /script",
            "from a script 0",
            "script status 1",
            "env * (shell) exited with status 0",
            "none leaked",
        ],
        forbid: &["FAIL", "destroyed:"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "shell-jobs",
        about: "job control from the keyboard: ^Z stops the foreground job (its CPU time withdrawn), jobs lists it \
                stopped, bg continues it, fg brings it back and ^C ends it; a stopped cat keeps its keyboard feed \
                and reads on after fg",
        cmdline: "run=init",
        // shell 1026: the first job is 1027 on a fresh boot. `spin -` prints nothing, so no
        // line of the job can land inside the shell's echo of `fg` (a race under host load).
        input: "spin - 100000000\r\x1ajobs\rbg %1\rjobs\rfg\r\x03echo back $?\r\
                cat\rone\r\x1afg %1\rtwo\r\x04echo done $?\rexit 0\r",
        expect: &[
            "oxok$ spin - 100000000",
            "^Z",
            "[1] stopped  spin - 100000000",
            "oxok$ jobs",
            "[1] stopped  envs 1027  spin - 100000000",
            "oxok$ bg %1",
            "[1] spin - 100000000 &",
            "oxok$ jobs",
            "[1] running  envs 1027  spin - 100000000",
            "oxok$ fg",
            "spin - 100000000",
            "^C",
            "back 130",
            "oxok$ cat",
            // The echo; cat's own "one" may come before or after the stop.
            "one",
            "[1] stopped  cat",
            "oxok$ fg %1",
            "two",
            "two",
            "done 0",
            "env * (shell) exited with status 0",
            "none leaked",
        ],
        forbid: &["FAIL", "destroyed:", "no such job"],
        timeout_secs: 60,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "shell-script",
        about: "compound commands: for over words, if/elif/else on statuses, until and while with test, lines \
                continued while a compound command is open, a script file with a loop, ^C ends a loop of built-ins",
        cmdline: "run=init",
        input: "for x in a \"b c\" $UNSET d; do echo item $x; done\n\
                if false; then echo wrong; elif test 1 -lt 2; then echo right; else echo wrong2; fi\n\
                until test -e /stop; do touch /stop; echo once; done\n\
                while test -e /stop\ndo rm /stop; echo removed\ndone\n\
                echo 'for y in 1 2; do' > /s; echo '  if test $y = 2; then echo two; fi' >> /s; echo done >> /s\n\
                source /s\n\
                while true; do echo spinning > /dev-null-file; done\n\x03echo stopped $?\nexit 0\n",
        expect: &[
            "item a",
            "item b c",
            "item d",
            "right",
            "once",
            "> do rm /stop; echo removed",
            "removed",
            "oxok$ source /s",
            "two",
            "stopped 130",
            "env * (shell) exited with status 0",
            "none leaked",
        ],
        forbid: &["\nwrong", "FAIL", "syntax error", "destroyed:"],
        timeout_secs: 60,
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "shell-interrupt-race",
        about: "a person types ^C into a shell loop of programs (`while true; …`) 40 times, each at another moment \
                (0-300 ms after the loop starts): every loop ends with status 130 and the shell answers again",
        cmdline: "run=init",
        expect: &["stopped 39 130", "env * (shell) exited with status 0", "none leaked"],
        forbid: &["FAIL", "destroyed:", "syntax error"],
        timeout_secs: 300,
        typist: Some(crate::typist::interrupt_loops),
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "shell-tab",
        about: "Tab completes a command, a path (a directory with /), and lists the candidates when several match",
        cmdline: "run=init",
        input: "ech\thi\nmkdir /tabdir; touch /tabdir/somefile\nls /tabd\t\nsl\t\x15echo listed\nexit 0\n",
        expect: &[
            "oxok$ echo hi",
            "\nhi\r",
            "oxok$ ls /tabdir/",
            "somefile",
            "sleep  slots",
            "listed",
            "env * (shell) exited with status 0",
        ],
        forbid: &["FAIL", "not found"],
        ..Scenario::DEFAULT
    },
    Scenario {
        name: "fuzz-short",
        about: "the system-call fuzzer, fixed seed: 10000 random calls from the call table with hostile arguments by a \
                sandbox under a small account, then directed probes (one frame mapped 10000 times and revoked, \
                create/destroy cycles, predicate churn, a grant chain); the victim's checksum holds, it is never \
                frozen, the kernel stays up, nothing leaks (`cargo xtask fuzz` runs longer ones)",
        cmdline: FUZZ_SHORT,
        expect: FUZZ_EXPECT,
        forbid: FUZZ_FORBID,
        timeout_secs: 240,
        ..Scenario::DEFAULT
    },
    // The disk (issue 15): `scenarios_disk.rs`.
    crate::scenarios_disk::DISK_SCENARIOS[0],
    crate::scenarios_disk::DISK_SCENARIOS[1],
    crate::scenarios_disk::DISK_SCENARIOS[2],
    crate::scenarios_disk::DISK_SCENARIOS[3],
    crate::scenarios_disk::DISK_SCENARIOS[4],
    crate::scenarios_disk::DISK_SCENARIOS[5],
    // Cheetah (issue 14): `scenarios_cheetah.rs`.
    crate::scenarios_cheetah::CHEETAH_SCENARIOS[0],
    crate::scenarios_cheetah::CHEETAH_SCENARIOS[1],
    crate::scenarios_cheetah::CHEETAH_SCENARIOS[2],
    crate::scenarios_cheetah::CHEETAH_SCENARIOS[3],
    crate::scenarios_cheetah::CHEETAH_SCENARIOS[4],
    // The Linux personality's process model (issue 12): `scenarios_lxproc.rs`.
    crate::scenarios_lxproc::LXPROC_SCENARIOS[0],
    crate::scenarios_lxproc::LXPROC_SCENARIOS[1],
    crate::scenarios_lxproc::LXPROC_SCENARIOS[2],
    crate::scenarios_lxproc::LXPROC_SCENARIOS[3],
    crate::scenarios_lxproc::LXPROC_SCENARIOS[4],
    crate::scenarios_lxproc::LXPROC_SCENARIOS[5],
    crate::scenarios_lxproc::LXPROC_SCENARIOS[6],
    crate::scenarios_lxproc::LXPROC_SCENARIOS[7],
    crate::scenarios_lxproc::LXPROC_SCENARIOS[8],
    // Sockets and HTTP (issues 13, 14): `scenarios_http.rs`.
    crate::scenarios_http::HTTP_SCENARIOS[0],
    crate::scenarios_http::HTTP_SCENARIOS[1],
    crate::scenarios_http::HTTP_SCENARIOS[2],
    crate::scenarios_http::HTTP_SCENARIOS[3],
    crate::scenarios_http::HTTP_SCENARIOS[4],
    crate::scenarios_http::HTTP_SCENARIOS[5],
    // The disk file system from Oxok (issue 15 point 3): `scenarios_xnfs.rs`.
    crate::scenarios_xnfs::XNFS_SCENARIOS[0],
    crate::scenarios_xnfs::XNFS_SCENARIOS[1],
    crate::scenarios_xnfs::XNFS_SCENARIOS[2],
    crate::scenarios_xnfs::XNFS_SCENARIOS[3],
    crate::scenarios_xnfs::XNFS_SCENARIOS[4],
    crate::scenarios_xnfs::XNFS_SCENARIOS[5],
    crate::scenarios_xnfs::XNFS_SCENARIOS[6],
    crate::scenarios_xnfs::XNFS_SCENARIOS[7],
    crate::scenarios_xnfs::XNFS_SCENARIOS[8],
    crate::scenarios_xnfs::XNFS_SCENARIOS[9],
    crate::scenarios_xnfs::XNFS_SCENARIOS[10],
    crate::scenarios_xnfs::XNFS_SCENARIOS[11],
    // Debian's busybox test suite on Oxok and on Linux (issue 12): `scenarios_bbsuite.rs`.
    crate::scenarios_bbsuite::BBSUITE_SCENARIOS[0],
    crate::scenarios_bbsuite::BBSUITE_SCENARIOS[1],
    crate::scenarios_bbsuite::ATTRS,
    crate::scenarios_bbsuite::LINKS,
    crate::scenarios_bbsuite::BENCH_SH,
    crate::scenarios_bbsuite::ALARM,
    crate::scenarios_bbsuite::MAPSHARED,
    crate::scenarios_bbsuite::PGROUPS,
    // Execution models (issue 16, point 3): `scenarios_model.rs`.
    crate::scenarios_model::MODEL_SCENARIOS[0],
    // Checkpointer: a transfer in progress between members, from the shell (issue 16).
    crate::scenarios_ckpt::CKPT_SCENARIOS[6],
    crate::scenarios_ckpt::CKPT_SCENARIOS[7],
    // Checkpointer: a shared open-file record and a directory cursor (issue 16).
    crate::scenarios_ckpt::CKPT_SCENARIOS[8],
    // Protection without holes, second round (issue 10): `scenarios_prot.rs`.
    crate::scenarios_prot::PROT_SCENARIOS[0],
    crate::scenarios_prot::PROT_SCENARIOS[1],
    crate::scenarios_prot::PROT_SCENARIOS[2],
    crate::scenarios_prot::PROT_SCENARIOS[3],
    // Restart granularity as a kernel word (issue 16).
    crate::scenarios_prot::PROT_SCENARIOS[4],
    // Kernel log lines only at the console's line boundaries.
    crate::scenarios_prot::PROT_SCENARIOS[5],
    // The libOS runtime vouches for the pages it hands out (issue 11).
    crate::scenarios_prot::PROT_SCENARIOS[6],
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
