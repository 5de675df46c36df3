/*
 * Process workloads: fork+exit+wait (tiny, and after touching 4 MiB),
 * posix_spawn of a tiny static program + wait, kernel memory per process,
 * and cat_10mb (reading a file to the end).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

/* The tiny program spawned by spawn_exec (tiny.c, in the initramfs root). */
#define TINY_PATH "/tiny"

static uint64_t fork_loop(const char *name, unsigned ops)
{
	uint64_t t0 = rdtsc();
	for (unsigned i = 0; i < ops; i++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, NULL, 0) != pid) {
			skip(name, "fork-failed");
			return 0;
		}
	}
	return rdtsc() - t0;
}

uint64_t w_fork_exit_wait(unsigned ops)
{
	return fork_loop("fork_exit_wait", ops);
}

/* The parent has written every page of a private 4 MiB mapping. */
static char *touched;

uint64_t w_fork_4mb_exit_wait(unsigned ops)
{
	if (!touched && !(touched = touched_region(FORK_4MB_BYTES / PG))) {
		skip("fork_4mb_exit_wait", "mmap-failed");
		return 0;
	}
	return fork_loop("fork_4mb_exit_wait", ops);
}

void proc_finish(void)
{
	if (touched)
		munmap(touched, FORK_4MB_BYTES);
	touched = NULL;
}

#define CAT_PATH "/cat10mb"

/* Writes the CAT_BYTES file once; 0 on success. */
static int cat_fill(void)
{
	static int filled;
	static char chunk[CAT_CHUNK];
	if (filled)
		return 0;
	int fd = open(CAT_PATH, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	for (unsigned i = 0; i < CAT_CHUNK; i++)
		chunk[i] = (char)(i % 251);
	for (unsigned left = CAT_BYTES; left > 0;) {
		unsigned want = left < CAT_CHUNK ? left : CAT_CHUNK;
		ssize_t n = write(fd, chunk, want);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		left -= (unsigned)n;
	}
	close(fd);
	filled = 1;
	return 0;
}

uint64_t w_cat_10mb(unsigned ops)
{
	static char buf[CAT_CHUNK];
	if (cat_fill() != 0) {
		skip("cat_10mb", "write-failed");
		return 0;
	}
	uint64_t t0 = rdtsc();
	for (unsigned i = 0; i < ops; i++) {
		int fd = open(CAT_PATH, O_RDONLY);
		size_t total = 0;
		ssize_t n;
		if (fd < 0) {
			skip("cat_10mb", "open-failed");
			return 0;
		}
		while ((n = read(fd, buf, sizeof buf)) > 0)
			total += (size_t)n;
		close(fd);
		if (total != CAT_BYTES) {
			skip("cat_10mb", "short-read");
			return 0;
		}
	}
	return rdtsc() - t0;
}

void cat_finish(void)
{
	unlink(CAT_PATH);
}

uint64_t w_spawn_exec(unsigned ops)
{
	char *argv[] = {TINY_PATH, NULL};
	uint64_t t0 = rdtsc();
	for (unsigned i = 0; i < ops; i++) {
		pid_t pid;
		int status;
		if (posix_spawn(&pid, TINY_PATH, NULL, NULL, argv, environ) != 0 ||
		    waitpid(pid, &status, 0) != pid || status != 0) {
			skip("spawn_exec", "spawn-failed");
			return 0;
		}
	}
	return rdtsc() - t0;
}

/*
 * Kernel memory in bytes: Slab + KernelStack + PageTables of /proc/meminfo,
 * after flushing the per-CPU counters through /proc/sys/vm/stat_refresh.
 */
static long kernel_bytes(void)
{
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);
	if (fd >= 0) {
		(void)!write(fd, "1", 1);
		close(fd);
	}
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	char line[128];
	long total = 0, kb;
	int found = 0;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "Slab: %ld kB", &kb) == 1 ||
		    sscanf(line, "KernelStack: %ld kB", &kb) == 1 ||
		    sscanf(line, "PageTables: %ld kB", &kb) == 1) {
			total += kb;
			found++;
		}
	}
	fclose(f);
	return found == 3 ? total * 1024 : -1;
}

/*
 * Forks `envs` children that each report ready and block in read(2), and
 * reports the growth of kernel memory divided by `envs`.
 */
void kernel_mem_per_env(unsigned envs)
{
	int ready[2], gate[2];
	if (pipe(ready) != 0 || pipe(gate) != 0) {
		skip("kernel_mem_per_env", "pipe-failed");
		return;
	}
	long before = kernel_bytes();
	unsigned started = 0;
	for (; started < envs; started++) {
		pid_t pid = fork();
		if (pid < 0)
			break;
		if (pid == 0) {
			char c;
			close(gate[1]);
			(void)!write(ready[1], "r", 1);
			(void)!read(gate[0], &c, 1);
			_exit(0);
		}
	}
	char c;
	for (unsigned i = 0; i < started; i++)
		(void)!read(ready[0], &c, 1);
	long after = kernel_bytes();
	close(gate[1]);
	while (wait(NULL) > 0)
		;
	close(gate[0]);
	close(ready[0]);
	close(ready[1]);
	if (started < envs || before < 0 || after < 0) {
		skip("kernel_mem_per_env", "fork-or-meminfo-failed");
		return;
	}
	report("kernel_mem_per_env", (double)(after - before) / envs, "bytes");
}

/*
 * lua_sort, sqlite_insert and busybox_sh: the Lua and SQLite drivers and
 * the busybox shell workload (the same files
 * Oxok runs through its Linux personality) print their own `bench:` lines;
 * a driver that cannot run is reported as skipped.
 */
void linux_programs(int quick)
{
	static const struct {
		const char *path, *workload;
	} programs[] = {{"/lx-lua", "lua_sort"}, {"/lx-sqlite", "sqlite_insert"}, {"/lx-bench-sh", "busybox_sh"}};
	for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++) {
		char *argv[] = {(char *)programs[i].path, "--bench", quick ? "quick" : NULL, NULL};
		pid_t pid;
		int status;
		fflush(stdout);
		if (posix_spawn(&pid, programs[i].path, NULL, NULL, argv, environ) != 0 ||
		    waitpid(pid, &status, 0) != pid || status != 0)
			skip(programs[i].workload, "program-failed");
	}
}
