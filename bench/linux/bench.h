/*
 * Shared declarations of the Linux benchmark program (see bench/README.md).
 *
 * A workload is a function that performs `ops` operations and returns the
 * rdtsc cycles they took, or 0 when the workload cannot run (it then prints
 * a `bench: skip <workload> <reason>` line itself).
 */
#ifndef OXOK_BENCH_H
#define OXOK_BENCH_H

#include <stdint.h>
#include <stddef.h>

#include "bench_params.h"

#define PG 4096u

/* Reads the time-stamp counter, ordered after earlier instructions. */
static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

/* One workload: performs `ops` operations, returns their cycles (0: skip). */
typedef uint64_t (*workload_fn)(unsigned ops);

/* Prints `bench: <name> <value> <unit>` with one write(2). */
void report(const char *name, double value, const char *unit);
/* Prints `bench: skip <name> <reason>`. */
void skip(const char *name, const char *reason);
/* Next value of the shared xorshift64 generator (seeded with RANDOM_SEED). */
uint64_t next_random(void);
/* Maps `pages` private anonymous pages and writes every one (NULL: fail). */
char *touched_region(size_t pages);

/* vm.c: exceptions, Appel-Li, demand-zero faults. */
uint64_t w_exception_upcall(unsigned ops);
uint64_t w_appel_dirty(unsigned ops);
uint64_t w_appel_prot1(unsigned ops);
uint64_t w_appel_prot100(unsigned ops);
uint64_t w_appel_unprot100(unsigned ops);
uint64_t w_appel_trap(unsigned ops);
uint64_t w_appel_appel1(unsigned ops);
uint64_t w_appel_appel2(unsigned ops);
uint64_t w_demand_zero_fault(unsigned ops);
/* Unmaps the region of the exception and Appel-Li workloads. */
void vm_finish(void);

/* ipc.c: two-process round trips. */
uint64_t w_rpc_roundtrip(unsigned ops);
uint64_t w_pipe_pingpong(unsigned ops);
uint64_t w_shm_pingpong(unsigned ops);
/* Stops the partner processes of the IPC workloads. */
void ipc_finish(void);

/* proc.c: processes and kernel memory. */
uint64_t w_fork_exit_wait(unsigned ops);
uint64_t w_fork_4mb_exit_wait(unsigned ops);
uint64_t w_spawn_exec(unsigned ops);
/* Reads a 10 MiB file of the root to the end (created on first use). */
uint64_t w_cat_10mb(unsigned ops);
/* Removes cat_10mb's file. */
void cat_finish(void);
/* Unmaps the 4 MiB region of fork_4mb_exit_wait. */
void proc_finish(void);
/* Runs the Lua and SQLite drivers' benchmarks (lua_sort, sqlite_insert). */
void linux_programs(int quick);
/* Measures and reports kernel_mem_per_env itself (bytes per process). */
void kernel_mem_per_env(unsigned envs);

#endif
