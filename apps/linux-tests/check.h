/* The Linux test programs' one helper: each check prints "ok NAME" or
   "FAIL NAME (detail)", and the program ends with a summary line. */
#include <stdio.h>
#include <string.h>
#include <errno.h>

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
