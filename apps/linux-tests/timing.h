/* Timing for the drivers' `--bench` modes (lua/driver.c, sqlite/driver.c):
   the cycle counter as bench/linux/bench.h reads it, and the median of a
   few rounds. */
#include <stdint.h>
#include <stdlib.h>

static inline uint64_t rdtsc(void) {
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

static int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The median of the `n` values at `t` (sorts them). */
static inline uint64_t median(uint64_t *t, int n) {
    qsort(t, n, sizeof t[0], by_value);
    return t[n / 2];
}
