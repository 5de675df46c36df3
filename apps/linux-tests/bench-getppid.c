/* lx-bench-getppid OPS BATCHES: the Oxok side of the benchmark workload
   linux_getppid, run by the bench program under the Linux personality.
   Times the raw getppid system call (no libc in the way) exactly as
   bench/linux/bench.c times null_call on Linux: one warm-up batch, then
   BATCHES batches of OPS calls between `lfence; rdtsc`, and prints the
   median cycles per call. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

static uint64_t rdtsc(void) {
    uint32_t lo, hi;
    __asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
}

static uint64_t batch(unsigned ops) {
    uint64_t t0 = rdtsc();
    for (unsigned i = 0; i < ops; i++) {
        long ret = SYS_getppid;
        __asm__ volatile("syscall" : "+a"(ret) : : "rcx", "r11", "memory");
    }
    return rdtsc() - t0;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    unsigned ops = argc > 1 ? (unsigned)atoi(argv[1]) : 5000, batches = argc > 2 ? (unsigned)atoi(argv[2]) : 9;
    double per_op[64];
    if (ops == 0)
        ops = 1;
    if (batches == 0 || batches > 64)
        batches = batches ? 64 : 1;
    batch(ops);
    for (unsigned b = 0; b < batches; b++)
        per_op[b] = (double)batch(ops) / ops;
    qsort(per_op, batches, sizeof per_op[0], compare);
    double median = batches % 2 ? per_op[batches / 2] : (per_op[batches / 2 - 1] + per_op[batches / 2]) / 2;
    printf("bench: linux_getppid %.0f cycles\n", median);
    return 0;
}
