/* The Linux test programs' helpers: each check prints "ok NAME" or
   "FAIL NAME (detail)", and the program ends with a summary line; and the
   milliseconds since a moment, for timeouts. */
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <time.h>

static int checks_failed, checks_run;

#define CHECK(name, cond)                                                          \
    do {                                                                           \
        int ok_ = (cond);                                                          \
        checks_run++;                                                              \
        if (ok_) {                                                                 \
            printf("ok %s\n", name);                                               \
        } else {                                                                   \
            checks_failed++;                                                       \
            printf("FAIL %s (errno %d: %s)\n", name, errno, strerror(errno));      \
        }                                                                          \
    } while (0)

static int summary(const char *prog) {
    printf("%s: %d checks, %d failed\n", prog, checks_run, checks_failed);
    fflush(stdout);
    return checks_failed != 0;
}

/* Milliseconds of CLOCK_MONOTONIC since `t0`. */
static inline long ms_since(struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}
