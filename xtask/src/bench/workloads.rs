//! The workloads, in table order. Every one appears in every report: a
//! figure a side did not produce is shown as missing. The exact work and
//! iteration counts are in `bench/README.md` and `bench/linux/bench_params.h`.

/// One workload of the benchmark protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Workload {
    /// The name both benchmark programs print.
    pub name: &'static str,
    /// The unit both sides report it in.
    pub unit: &'static str,
    /// A few words for tables and plots.
    pub what: &'static str,
}

/// Measured by the harness, not by the programs: host time from QEMU's
/// start to the `bench: start` line.
pub(crate) const BOOT_TO_USER: &str = "boot_to_user";

const fn w(name: &'static str, unit: &'static str, what: &'static str) -> Workload {
    Workload { name, unit, what }
}

/// Every workload, in the order of the table.
pub(crate) const ALL: &[Workload] = &[
    w("null_call", "cycles", "null system call"),
    w("libos_call", "cycles", "getpid (Oxok: libOS procedure call)"),
    w("linux_getppid", "cycles", "raw getppid of a static Linux program (Oxok: Linux personality upcall)"),
    w("exception_upcall", "cycles", "exception to user handler and back"),
    w("appel_dirty", "cycles", "Appel-Li dirty: query a page's dirty bit"),
    w("appel_prot1", "cycles", "Appel-Li prot1: protect 1 page"),
    w("appel_prot100", "cycles", "Appel-Li prot100: protect 100 pages"),
    w("appel_unprot100", "cycles", "Appel-Li unprot100: unprotect 100 pages"),
    w("appel_trap", "cycles", "Appel-Li trap: protection fault, handler unprotects"),
    w("appel_appel1", "cycles", "Appel-Li appel1: prot1+trap+unprot"),
    w("appel_appel2", "cycles", "Appel-Li appel2: protN+trap+unprot, per page"),
    w("rpc_roundtrip", "cycles", "RPC round trip (Oxok: PCT; Linux: pipes)"),
    w("pipe_pingpong", "cycles", "pipe ping-pong round trip"),
    w("shm_pingpong", "cycles", "shared-memory + yield ping-pong round trip"),
    w("fork_exit_wait", "cycles", "fork + exit + wait, tiny process"),
    w("fork_4mb_exit_wait", "cycles", "fork + exit + wait after touching 4 MiB"),
    w("demand_zero_fault", "cycles", "demand-zero page fault"),
    w("spawn_exec", "cycles", "spawn a tiny program + wait"),
    w("cat_10mb", "cycles", "read a 10 MiB file to the end in 64 KiB reads (Oxok: file server)"),
    w("lua_sort", "cycles", "Lua 5.4: sort 20,000 numbers (Oxok: through the Linux personality)"),
    w("sqlite_insert", "cycles", "SQLite: 10,000 inserts in a transaction, in memory (Oxok: Linux personality)"),
    w(
        "busybox_sh",
        "cycles",
        "busybox sh: 1,000-iteration loop into sort | uniq -c | wc, 100 files (Oxok: Linux personality)",
    ),
    w(BOOT_TO_USER, "us", "QEMU start to first user instruction"),
    w("kernel_mem_per_env", "bytes", "kernel memory per process/environment"),
];

/// The workload called `name`, if it is one.
pub(crate) fn find(name: &str) -> Option<&'static Workload> {
    ALL.iter().find(|w| w.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_valid() {
        for (i, a) in ALL.iter().enumerate() {
            assert!(ALL[i + 1..].iter().all(|b| b.name != a.name), "{} twice", a.name);
            let line = format!("bench: {} 1 {}", a.name, a.unit);
            assert!(super::super::parse::parse_line(&line).is_some(), "{line}");
        }
        assert_eq!(find("boot_to_user").unwrap().unit, "us");
        assert!(find("nope").is_none());
    }

    /// The Linux program, its parameter header and the README name every
    /// workload the programs measure.
    #[test]
    fn linux_program_and_readme_cover_every_workload() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap_or_default();
        let sources = read("bench/linux/bench.c")
            + &read("bench/linux/proc.c")
            + &read("apps/linux-tests/lua/driver.c")
            + &read("apps/linux-tests/sqlite/driver.c")
            + &read("apps/linux-tests/bench-sh.c");
        let readme = read("bench/README.md");
        for w in ALL {
            assert!(readme.contains(&format!("`{}`", w.name)), "README lacks `{}`", w.name);
            if w.name != BOOT_TO_USER {
                assert!(sources.contains(w.name), "bench/linux lacks {}", w.name);
            }
        }
    }
}
