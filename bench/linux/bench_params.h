/*
 * Iteration counts of every benchmark workload: the shared contract between
 * the Linux benchmark program (bench.c) and Oxok's `bench` program, which
 * mirrors these numbers in Rust. Change them on both sides together and in
 * bench/README.md.
 *
 * Each timed workload runs BATCHES batches of <NAME>_OPS operations. A batch
 * yields one figure (rdtsc cycles of the batch divided by its operations);
 * the program prints the median of the batches. Quick mode (`bench quick`)
 * uses the *_QUICK counts.
 */
#ifndef OXOK_BENCH_PARAMS_H
#define OXOK_BENCH_PARAMS_H

/* Batches per workload (the figure printed is their median). */
#define BATCHES 9
#define BATCHES_QUICK 3

/* Operations per batch, full / quick. */
#define NULL_CALL_OPS 5000
#define NULL_CALL_OPS_QUICK 500
#define LIBOS_CALL_OPS 5000
#define LIBOS_CALL_OPS_QUICK 500
#define EXCEPTION_UPCALL_OPS 300
#define EXCEPTION_UPCALL_OPS_QUICK 50

/* Appel-Li: the region is APPEL_PAGES pages (every page touched first). */
#define APPEL_PAGES 100
#define APPEL_DIRTY_OPS 2000
#define APPEL_DIRTY_OPS_QUICK 200
/* prot1 ops are a multiple of APPEL_PAGES (each page protected once). */
#define APPEL_PROT1_OPS 300
#define APPEL_PROT1_OPS_QUICK 100
#define APPEL_PROT100_OPS 100
#define APPEL_PROT100_OPS_QUICK 10
#define APPEL_UNPROT100_OPS 100
#define APPEL_UNPROT100_OPS_QUICK 10
#define APPEL_TRAP_OPS 300
#define APPEL_TRAP_OPS_QUICK 50
#define APPEL_APPEL1_OPS 300
#define APPEL_APPEL1_OPS_QUICK 50
/* appel2: one op is one page; a batch is whole passes of APPEL_PAGES. */
#define APPEL_APPEL2_OPS 300
#define APPEL_APPEL2_OPS_QUICK 100

/* IPC between two processes (round trips per batch). */
#define RPC_ROUNDTRIP_OPS 500
#define RPC_ROUNDTRIP_OPS_QUICK 50
#define PIPE_PINGPONG_OPS 500
#define PIPE_PINGPONG_OPS_QUICK 50
#define SHM_PINGPONG_OPS 500
#define SHM_PINGPONG_OPS_QUICK 50

/* Processes. */
#define FORK_EXIT_WAIT_OPS 30
#define FORK_EXIT_WAIT_OPS_QUICK 5
#define FORK_4MB_EXIT_WAIT_OPS 15
#define FORK_4MB_EXIT_WAIT_OPS_QUICK 3
#define FORK_4MB_BYTES (4u << 20)
#define SPAWN_EXEC_OPS 30
#define SPAWN_EXEC_OPS_QUICK 5

/* Files: cat_10mb reads a CAT_BYTES file to the end in CAT_CHUNK reads. */
#define CAT_10MB_OPS 1
#define CAT_10MB_OPS_QUICK 1
#define CAT_BYTES (10u << 20)
#define CAT_CHUNK (64u << 10)

/* Memory. */
#define DEMAND_ZERO_FAULT_OPS 512
#define DEMAND_ZERO_FAULT_OPS_QUICK 64
/* kernel_mem_per_env: this many extra processes, measured once, first. */
#define KERNEL_MEM_ENVS 64
#define KERNEL_MEM_ENVS_QUICK 64

/* Seed of the xorshift64 generator choosing "random" pages (both sides). */
#define RANDOM_SEED 0x9E3779B97F4A7C15ull

#endif
