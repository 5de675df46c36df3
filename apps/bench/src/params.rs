//! Iteration counts: `bench/linux/bench_params.h` in Rust, for the
//! workloads both sides run; Oxok-only workloads (`exception_upcall_ud2`,
//! `page_map`, `page_unmap`, `page_batch_100`) have their own.

/// Batches per workload (the figure printed is their median).
const BATCHES: u32 = 9;
const BATCHES_QUICK: u32 = 3;
const NULL_CALL_OPS: [u32; 2] = [5000, 500];
const LIBOS_CALL_OPS: [u32; 2] = [5000, 500];
const EXCEPTION_UPCALL_OPS: [u32; 2] = [300, 50];
/// Appel-Li: pages in the region (every one written first).
pub const APPEL_PAGES: u32 = 100;
const APPEL_DIRTY_OPS: [u32; 2] = [2000, 200];
/// prot1: a multiple of `APPEL_PAGES` (each page protected once per pass).
const APPEL_PROT1_OPS: [u32; 2] = [300, 100];
const APPEL_PROT100_OPS: [u32; 2] = [100, 10];
const APPEL_UNPROT100_OPS: [u32; 2] = [100, 10];
const APPEL_TRAP_OPS: [u32; 2] = [300, 50];
const APPEL_APPEL1_OPS: [u32; 2] = [300, 50];
/// appel2: one op is one page; a batch is whole passes of `APPEL_PAGES`.
const APPEL_APPEL2_OPS: [u32; 2] = [300, 100];
const _: () = {
    let mut q = 0;
    while q < 2 {
        assert!(APPEL_PROT1_OPS[q].is_multiple_of(APPEL_PAGES) && APPEL_APPEL2_OPS[q].is_multiple_of(APPEL_PAGES));
        q += 1;
    }
};
/// IPC between two environments (round trips per batch).
const RPC_ROUNDTRIP_OPS: [u32; 2] = [500, 50];
const PIPE_PINGPONG_OPS: [u32; 2] = [500, 50];
const SHM_PINGPONG_OPS: [u32; 2] = [500, 50];
/// Predicate wakes per batch (Oxok only: each waits up to a timer tick).
const PREDICATE_WAKE_OPS: [u32; 2] = [20, 5];
const SPAWN_EXEC_OPS: [u32; 2] = [30, 5];
const FORK_EXIT_WAIT_OPS: [u32; 2] = [30, 5];
const FORK_4MB_EXIT_WAIT_OPS: [u32; 2] = [15, 3];
/// The private mapping the parent has written before fork_4mb_exit_wait.
pub const FORK_4MB_BYTES: u64 = 4 << 20;
const DEMAND_ZERO_FAULT_OPS: [u32; 2] = [512, 64];
const KERNEL_MEM_ENVS: [u32; 2] = [64, 64];
/// Seed of the xorshift64 generator choosing "random" pages (both sides).
pub const RANDOM_SEED: u64 = 0x9E37_79B9_7F4A_7C15;
/// cat_10mb: whole reads of the file per batch; the file's size and the
/// size of one read.
const CAT_10MB_OPS: [u32; 2] = [1, 1];
pub const CAT_BYTES: usize = 10 << 20;
pub const CAT_CHUNK: usize = 64 << 10;
/// Oxok only: single maps (and unmaps) per batch.
const PAGE_MAP_OPS: [u32; 2] = [1000, 100];
/// Oxok only: 100-record batches per batch.
const PAGE_BATCH_OPS: [u32; 2] = [100, 10];

/// The counts of one run.
pub struct Counts {
    pub batches: u32,
    pub null_call: u32,
    pub libos_call: u32,
    pub exception_upcall: u32,
    pub appel_dirty: u32,
    pub appel_prot1: u32,
    pub appel_prot100: u32,
    pub appel_unprot100: u32,
    pub appel_trap: u32,
    pub appel_appel1: u32,
    pub appel_appel2: u32,
    pub rpc_roundtrip: u32,
    pub pipe_pingpong: u32,
    pub shm_pingpong: u32,
    /// Wakeup-predicate wakes per batch.
    pub predicate_wake: u32,
    pub spawn_exec: u32,
    pub fork_exit_wait: u32,
    pub fork_4mb_exit_wait: u32,
    pub demand_zero_fault: u32,
    pub kernel_mem_envs: u32,
    pub page_map: u32,
    pub page_batch: u32,
    pub cat_10mb: u32,
}

impl Counts {
    /// Full counts, or the quick ones.
    pub fn new(quick: bool) -> Counts {
        let q = usize::from(quick);
        Counts {
            batches: if quick { BATCHES_QUICK } else { BATCHES },
            null_call: NULL_CALL_OPS[q],
            libos_call: LIBOS_CALL_OPS[q],
            exception_upcall: EXCEPTION_UPCALL_OPS[q],
            appel_dirty: APPEL_DIRTY_OPS[q],
            appel_prot1: APPEL_PROT1_OPS[q],
            appel_prot100: APPEL_PROT100_OPS[q],
            appel_unprot100: APPEL_UNPROT100_OPS[q],
            appel_trap: APPEL_TRAP_OPS[q],
            appel_appel1: APPEL_APPEL1_OPS[q],
            appel_appel2: APPEL_APPEL2_OPS[q],
            rpc_roundtrip: RPC_ROUNDTRIP_OPS[q],
            pipe_pingpong: PIPE_PINGPONG_OPS[q],
            shm_pingpong: SHM_PINGPONG_OPS[q],
            predicate_wake: PREDICATE_WAKE_OPS[q],
            spawn_exec: SPAWN_EXEC_OPS[q],
            fork_exit_wait: FORK_EXIT_WAIT_OPS[q],
            fork_4mb_exit_wait: FORK_4MB_EXIT_WAIT_OPS[q],
            demand_zero_fault: DEMAND_ZERO_FAULT_OPS[q],
            kernel_mem_envs: KERNEL_MEM_ENVS[q],
            page_map: PAGE_MAP_OPS[q],
            page_batch: PAGE_BATCH_OPS[q],
            cat_10mb: CAT_10MB_OPS[q],
        }
    }
}
