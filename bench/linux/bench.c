/*
 * The Linux benchmark program: runs every workload of bench/README.md and
 * prints one `bench: <workload> <value> <unit>` line per result, between
 * `bench: start` and `bench: done`. Argument `quick` selects the quick
 * iteration counts of bench_params.h.
 *
 * Build: musl-gcc -O2 -static -Wall -Wextra bench.c vm.c ipc.c proc.c
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

#define MAX_BATCHES 64

void report(const char *name, double value, const char *unit)
{
	char line[160];
	int n = snprintf(line, sizeof line, "bench: %s %.0f %s\n", name, value, unit);
	if (n > 0)
		(void)!write(1, line, (size_t)n);
}

void skip(const char *name, const char *reason)
{
	char line[160];
	int n = snprintf(line, sizeof line, "bench: skip %s %s\n", name, reason);
	if (n > 0)
		(void)!write(1, line, (size_t)n);
}

static uint64_t random_state = RANDOM_SEED;

uint64_t next_random(void)
{
	uint64_t x = random_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	random_state = x;
	return x;
}

char *touched_region(size_t pages)
{
	char *p = mmap(NULL, pages * PG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	for (size_t i = 0; i < pages; i++)
		p[i * PG] = 1;
	return p;
}

/* The raw system call, without libc: getppid has no cache anywhere. */
static uint64_t w_null_call(unsigned ops)
{
	uint64_t t0 = rdtsc();
	for (unsigned i = 0; i < ops; i++) {
		long ret = SYS_getppid;
		__asm__ volatile("syscall"
				 : "+a"(ret)
				 :
				 : "rcx", "r11", "memory");
	}
	return rdtsc() - t0;
}

/* Linux's side of linux_getppid: the same raw getppid (Oxok runs it in a
   static Linux program under its Linux personality). */
static uint64_t w_linux_getppid(unsigned ops)
{
	return w_null_call(ops);
}

/* libc's getpid (musl does not cache it: one system call). */
static uint64_t w_libos_call(unsigned ops)
{
	uint64_t t0 = rdtsc();
	for (unsigned i = 0; i < ops; i++) {
		pid_t volatile pid = getpid();
		(void)pid;
	}
	return rdtsc() - t0;
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/*
 * Runs one warm-up batch and then `batches` batches of `ops` operations and
 * reports the median cycles per operation.
 */
static void measure(const char *name, workload_fn fn, unsigned ops, unsigned batches)
{
	double per_op[MAX_BATCHES];
	if (batches > MAX_BATCHES)
		batches = MAX_BATCHES;
	if (fn(ops) == 0)
		return;
	for (unsigned b = 0; b < batches; b++) {
		uint64_t cycles = fn(ops);
		if (cycles == 0)
			return;
		per_op[b] = (double)cycles / ops;
	}
	qsort(per_op, batches, sizeof per_op[0], compare_double);
	double median = batches % 2 ? per_op[batches / 2]
				    : (per_op[batches / 2 - 1] + per_op[batches / 2]) / 2;
	report(name, median, "cycles");
}

struct workload {
	const char *name;
	workload_fn fn;
	unsigned ops, ops_quick;
	void (*finish)(void); /* run after the workload's batches, if set */
};

/*
 * A workload named `n` with counts N_OPS / N_OPS_QUICK of bench_params.h and
 * a clean-up `f` run after its batches (NULL: none). The clean-ups unmap the
 * workload's memory and stop its partner processes, so every workload
 * starts from the same small process.
 */
#define W(n, N, f) {#n, w_##n, N##_OPS, N##_OPS_QUICK, f}

/* Every cycle-timed workload, in the order they run. */
static const struct workload workloads[] = {
	W(null_call, NULL_CALL, NULL),
	W(libos_call, LIBOS_CALL, NULL),
	W(linux_getppid, NULL_CALL, NULL),
	W(exception_upcall, EXCEPTION_UPCALL, vm_finish),
	W(appel_dirty, APPEL_DIRTY, vm_finish),
	W(appel_prot1, APPEL_PROT1, vm_finish),
	W(appel_prot100, APPEL_PROT100, vm_finish),
	W(appel_unprot100, APPEL_UNPROT100, vm_finish),
	W(appel_trap, APPEL_TRAP, vm_finish),
	W(appel_appel1, APPEL_APPEL1, vm_finish),
	W(appel_appel2, APPEL_APPEL2, vm_finish),
	W(rpc_roundtrip, RPC_ROUNDTRIP, ipc_finish),
	W(pipe_pingpong, PIPE_PINGPONG, ipc_finish),
	W(shm_pingpong, SHM_PINGPONG, ipc_finish),
	W(fork_exit_wait, FORK_EXIT_WAIT, NULL),
	W(fork_4mb_exit_wait, FORK_4MB_EXIT_WAIT, proc_finish),
	W(demand_zero_fault, DEMAND_ZERO_FAULT, NULL),
	W(spawn_exec, SPAWN_EXEC, NULL),
	W(cat_10mb, CAT_10MB, cat_finish),
};

int main(int argc, char **argv)
{
	static const char start[] = "bench: start\n", done[] = "bench: done\n";
	(void)!write(1, start, sizeof start - 1);
	int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
	unsigned batches = quick ? BATCHES_QUICK : BATCHES;
	/* First, while the process holds only its image, stack and libc state. */
	kernel_mem_per_env(quick ? KERNEL_MEM_ENVS_QUICK : KERNEL_MEM_ENVS);
	for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++) {
		const struct workload *w = &workloads[i];
		measure(w->name, w->fn, quick ? w->ops_quick : w->ops, batches);
		if (w->finish)
			w->finish();
	}
	linux_programs(quick);
	(void)!write(1, done, sizeof done - 1);
	return 0;
}
