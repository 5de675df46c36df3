/*
 * Round trips between two processes on one CPU: an RPC over two pipes, a
 * one-byte pipe ping-pong and a shared-memory counter with sched_yield.
 * Each workload forks its partner on first use, runs the warm-up and all
 * batches against it, and ipc_finish() stops it so that it does not compete
 * for the CPU with later workloads.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* A forked partner process and the pipes to and from it. */
struct partner {
	pid_t pid;
	int to, from; /* our ends: write requests to `to`, read replies from `from` */
};

/* Stops the partner (it exits on end of file) and reaps it. */
static void stop(struct partner *p)
{
	close(p->to);
	close(p->from);
	waitpid(p->pid, NULL, 0);
	p->pid = 0;
}

/* Forks a partner that echoes `size`-byte messages, adding 1 to the first byte
 * or word; returns 0 on failure. */
static int start(struct partner *p, unsigned size)
{
	int req[2], rep[2];
	if (pipe(req) != 0 || pipe(rep) != 0)
		return 0;
	pid_t pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		close(req[1]);
		close(rep[0]);
		uint64_t msg = 0;
		while (read(req[0], &msg, size) == (ssize_t)size) {
			msg += 1;
			if (write(rep[1], &msg, size) != (ssize_t)size)
				break;
		}
		_exit(0);
	}
	close(req[0]);
	close(rep[1]);
	p->pid = pid;
	p->to = req[1];
	p->from = rep[0];
	return 1;
}

/* `ops` round trips of `size`-byte messages; checks every reply. */
static uint64_t round_trips(struct partner *p, const char *name, unsigned size, unsigned ops)
{
	if (!p->pid && !start(p, size)) {
		skip(name, "fork-failed");
		return 0;
	}
	uint64_t t0 = rdtsc();
	for (unsigned i = 0; i < ops; i++) {
		uint64_t msg = i & 0x7f, reply = 0;
		if (write(p->to, &msg, size) != (ssize_t)size ||
		    read(p->from, &reply, size) != (ssize_t)size || reply != msg + 1) {
			skip(name, "bad-reply");
			stop(p);
			return 0;
		}
	}
	return rdtsc() - t0;
}

/* RPC: an 8-byte argument; the server replies with the argument plus one. */
static struct partner server, echo;

uint64_t w_rpc_roundtrip(unsigned ops)
{
	return round_trips(&server, "rpc_roundtrip", 8, ops);
}

/* A one-byte token over a pipe and back. */
uint64_t w_pipe_pingpong(unsigned ops)
{
	return round_trips(&echo, "pipe_pingpong", 1, ops);
}

/* The shared page: a counter (odd: the partner's turn) and a stop flag. */
struct shared {
	volatile uint64_t counter;
	volatile uint64_t stop;
};

/*
 * Shared-memory ping-pong: the parent makes the counter odd, the partner
 * makes it even; whoever waits calls sched_yield.
 */
static struct shared *sh;
static pid_t sh_pid;

uint64_t w_shm_pingpong(unsigned ops)
{
	if (!sh) {
		sh = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (sh == MAP_FAILED) {
			sh = NULL;
			skip("shm_pingpong", "mmap-failed");
			return 0;
		}
		pid_t pid = fork();
		if (pid < 0) {
			skip("shm_pingpong", "fork-failed");
			return 0;
		}
		if (pid == 0) {
			while (!sh->stop) {
				uint64_t c = __atomic_load_n(&sh->counter, __ATOMIC_ACQUIRE);
				if (c & 1)
					__atomic_store_n(&sh->counter, c + 1, __ATOMIC_RELEASE);
				else
					sched_yield();
			}
			_exit(0);
		}
		sh_pid = pid;
	}
	uint64_t t0 = rdtsc();
	for (unsigned i = 0; i < ops; i++) {
		uint64_t c = __atomic_load_n(&sh->counter, __ATOMIC_ACQUIRE);
		__atomic_store_n(&sh->counter, c + 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&sh->counter, __ATOMIC_ACQUIRE) != c + 2)
			sched_yield();
	}
	return rdtsc() - t0;
}

void ipc_finish(void)
{
	if (server.pid)
		stop(&server);
	if (echo.pid)
		stop(&echo);
	if (sh_pid) {
		sh->stop = 1;
		waitpid(sh_pid, NULL, 0);
		sh_pid = 0;
		munmap((void *)sh, PG);
		sh = NULL;
	}
}
