/*
 * Virtual-memory workloads: the exception upcall, the Appel-Li benchmarks
 * (Appel & Li, ASPLOS 1991; the Aegis paper's table 10) and demand-zero
 * page faults. "Protect" means read-protect (PROT_READ); accesses are
 * writes, so an access to a protected page traps.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

/* What the SIGSEGV handler does with the faulting page. */
enum fault_mode {
	/* Make the faulting page read-write. */
	FAULT_FIXUP,
	/* appel1: protect the previously unprotected page, unprotect this one. */
	FAULT_APPEL1,
};

static volatile enum fault_mode fault_mode;
static char *region;            /* APPEL_PAGES touched pages */
static volatile long unprotected = -1; /* appel1: the one writable page */
static int handler_installed;

static void on_segv(int sig, siginfo_t *info, void *context)
{
	(void)sig;
	(void)context;
	char *page = (char *)((uintptr_t)info->si_addr & ~(uintptr_t)(PG - 1));
	if (fault_mode == FAULT_APPEL1) {
		if (unprotected >= 0)
			mprotect(region + (size_t)unprotected * PG, PG, PROT_READ);
		unprotected = (page - region) / PG;
	}
	mprotect(page, PG, PROT_READ | PROT_WRITE);
}

/* Installs the handler and the region once; false if that fails. */
static int setup(const char *name)
{
	if (!handler_installed) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_segv;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGSEGV, &sa, NULL) != 0) {
			skip(name, "sigaction-failed");
			return 0;
		}
		handler_installed = 1;
	}
	if (!region && !(region = touched_region(APPEL_PAGES))) {
		skip(name, "mmap-failed");
		return 0;
	}
	fault_mode = FAULT_FIXUP;
	return 1;
}

void vm_finish(void)
{
	if (region)
		munmap(region, APPEL_PAGES * PG);
	region = NULL;
}

static void set_region(int prot)
{
	mprotect(region, APPEL_PAGES * PG, prot);
}

/* One page is protected with `prot`, then written: fault, fix up, return. */
static uint64_t trap_loop(const char *name, int prot, unsigned ops)
{
	if (!setup(name))
		return 0;
	uint64_t total = 0;
	for (unsigned i = 0; i < ops; i++) {
		mprotect(region, PG, prot);
		uint64_t t0 = rdtsc();
		*(volatile char *)region = 1;
		total += rdtsc() - t0;
	}
	return total;
}

uint64_t w_exception_upcall(unsigned ops)
{
	return trap_loop("exception_upcall", PROT_NONE, ops);
}

uint64_t w_appel_trap(unsigned ops)
{
	return trap_loop("appel_trap", PROT_READ, ops);
}

/* Query whether a random page is dirty: its /proc/self/pagemap entry. */
uint64_t w_appel_dirty(unsigned ops)
{
	static int fd = -2;
	if (!setup("appel_dirty"))
		return 0;
	if (fd == -2)
		fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0) {
		skip("appel_dirty", "no-pagemap");
		return 0;
	}
	uint64_t entry, dirty = 0;
	uint64_t t0 = rdtsc();
	for (unsigned i = 0; i < ops; i++) {
		uintptr_t page = (uintptr_t)region / PG + next_random() % APPEL_PAGES;
		if (pread(fd, &entry, sizeof entry, (off_t)(page * sizeof entry)) != sizeof entry) {
			skip("appel_dirty", "pagemap-read-failed");
			return 0;
		}
		dirty += (entry >> 55) & 1; /* soft-dirty */
	}
	uint64_t cycles = rdtsc() - t0;
	(void)dirty;
	return cycles;
}

/* Protect one page at a time, every page of the region once per pass. */
uint64_t w_appel_prot1(unsigned ops)
{
	if (!setup("appel_prot1"))
		return 0;
	uint64_t total = 0;
	for (unsigned pass = 0; pass < ops / APPEL_PAGES; pass++) {
		uint64_t t0 = rdtsc();
		for (unsigned i = 0; i < APPEL_PAGES; i++)
			mprotect(region + (size_t)i * PG, PG, PROT_READ);
		total += rdtsc() - t0;
		set_region(PROT_READ | PROT_WRITE);
	}
	return total;
}

/* Protect all APPEL_PAGES pages with one call. */
uint64_t w_appel_prot100(unsigned ops)
{
	if (!setup("appel_prot100"))
		return 0;
	uint64_t total = 0;
	for (unsigned i = 0; i < ops; i++) {
		uint64_t t0 = rdtsc();
		set_region(PROT_READ);
		total += rdtsc() - t0;
		set_region(PROT_READ | PROT_WRITE);
	}
	return total;
}

/* Unprotect all APPEL_PAGES pages with one call. */
uint64_t w_appel_unprot100(unsigned ops)
{
	if (!setup("appel_unprot100"))
		return 0;
	uint64_t total = 0;
	for (unsigned i = 0; i < ops; i++) {
		set_region(PROT_READ);
		uint64_t t0 = rdtsc();
		set_region(PROT_READ | PROT_WRITE);
		total += rdtsc() - t0;
	}
	return total;
}

/*
 * prot1+trap+unprot: every page protected but one; write a random protected
 * page; the handler protects the previously writable page and unprotects
 * the faulting one.
 */
uint64_t w_appel_appel1(unsigned ops)
{
	if (!setup("appel_appel1"))
		return 0;
	set_region(PROT_READ);
	unprotected = -1;
	fault_mode = FAULT_APPEL1;
	uint64_t t0 = rdtsc();
	for (unsigned i = 0; i < ops; i++) {
		long page;
		do
			page = (long)(next_random() % APPEL_PAGES);
		while (page == unprotected);
		*(volatile char *)(region + (size_t)page * PG) = 1;
	}
	uint64_t cycles = rdtsc() - t0;
	fault_mode = FAULT_FIXUP;
	set_region(PROT_READ | PROT_WRITE);
	return cycles;
}

/*
 * protN+trap+unprot: protect all pages with one call, write each page once
 * in a random order; the handler unprotects the faulting page. One op is
 * one page.
 */
uint64_t w_appel_appel2(unsigned ops)
{
	if (!setup("appel_appel2"))
		return 0;
	unsigned order[APPEL_PAGES];
	uint64_t total = 0;
	for (unsigned pass = 0; pass < ops / APPEL_PAGES; pass++) {
		for (unsigned i = 0; i < APPEL_PAGES; i++)
			order[i] = i;
		for (unsigned i = APPEL_PAGES - 1; i > 0; i--) {
			unsigned j = (unsigned)(next_random() % (i + 1)), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		uint64_t t0 = rdtsc();
		set_region(PROT_READ);
		for (unsigned i = 0; i < APPEL_PAGES; i++)
			*(volatile char *)(region + (size_t)order[i] * PG) = 1;
		total += rdtsc() - t0;
	}
	return total;
}

/* First write to each page of a fresh anonymous mapping (4 KiB pages). */
uint64_t w_demand_zero_fault(unsigned ops)
{
	char *p = mmap(NULL, (size_t)ops * PG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		skip("demand_zero_fault", "mmap-failed");
		return 0;
	}
	madvise(p, (size_t)ops * PG, MADV_NOHUGEPAGE);
	uint64_t t0 = rdtsc();
	for (unsigned i = 0; i < ops; i++)
		*(volatile char *)(p + (size_t)i * PG) = 1;
	uint64_t cycles = rdtsc() - t0;
	munmap(p, (size_t)ops * PG);
	return cycles;
}
