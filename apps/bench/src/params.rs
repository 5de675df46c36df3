//! Iteration counts: `bench/linux/bench_params.h` in Rust, for the
//! workloads both sides run; Oxok-only workloads (`exception_upcall_ud2`,
//! `page_map`, `page_unmap`, `page_batch_100`) have their own.

/// Batches per workload (the figure printed is their median).
const BATCHES: u32 = 9;
const BATCHES_QUICK: u32 = 3;
const NULL_CALL_OPS: [u32; 2] = [5000, 500];
const LIBOS_CALL_OPS: [u32; 2] = [5000, 500];
const EXCEPTION_UPCALL_OPS: [u32; 2] = [300, 50];
const DEMAND_ZERO_FAULT_OPS: [u32; 2] = [512, 64];
const KERNEL_MEM_ENVS: [u32; 2] = [64, 64];
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
    pub demand_zero_fault: u32,
    pub kernel_mem_envs: u32,
    pub page_map: u32,
    pub page_batch: u32,
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
            demand_zero_fault: DEMAND_ZERO_FAULT_OPS[q],
            kernel_mem_envs: KERNEL_MEM_ENVS[q],
            page_map: PAGE_MAP_OPS[q],
            page_batch: PAGE_BATCH_OPS[q],
        }
    }
}
