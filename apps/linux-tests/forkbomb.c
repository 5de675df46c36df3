/* A fork bomb under RLIMIT_NPROC (which the personality turns into the
   account's limit on environments): every process forks as fast as it can
   and keeps its children; once the account is full every fork fails with
   EAGAIN, the bomb is released and everything ends. With an argument N the
   program sets the limit itself; without, it relies on its parent's. */
#define _GNU_SOURCE
#include "check.h"
#include <stdlib.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* Most forks one process tries (so the bomb ends even if slots churn). */
#define TRIES 64

int main(int argc, char **argv) {
    if (argc > 1) {
        struct rlimit rl = {atoi(argv[1]), atoi(argv[1])};
        CHECK("setrlimit-nproc", setrlimit(RLIMIT_NPROC, &rl) == 0);
        struct rlimit back;
        CHECK("getrlimit-nproc", getrlimit(RLIMIT_NPROC, &back) == 0 && back.rlim_cur == rl.rlim_cur);
        rl.rlim_cur = rl.rlim_max = rl.rlim_cur + 10;
        CHECK("raise-refused", setrlimit(RLIMIT_NPROC, &rl) == -1 && errno == EPERM);
    }
    int release[2], report[2];
    CHECK("pipes", pipe(release) == 0 && pipe(report) == 0);
    fflush(stdout);
    pid_t top = getpid();
    int children = 0, failed_errno = 0;
    /* Each fork that succeeds is reported by its parent ('c'); each process
       but the first reports its own failure ('f') and then waits for the
       release. When every created process has failed, nothing can fork any
       more, and all of them are alive at once. */
    for (int i = 0; i < TRIES; i++) {
        pid_t c = fork();
        if (c == 0) {
            children = 0; /* a new process: it forks on too */
            continue;
        }
        if (c < 0) {
            failed_errno = errno;
            break;
        }
        children++;
        write(report[1], "c", 1);
    }
    if (getpid() != top) {
        close(release[1]);
        write(report[1], "f", 1);
        char b;
        read(release[0], &b, 1);
        while (wait(NULL) > 0) {
        }
        _exit(failed_errno == EAGAIN ? 0 : 1);
    }
    CHECK("fork-refused", failed_errno == EAGAIN);
    int created = 0, failed = 0;
    char b;
    while (children > 0 && (failed < created || created == 0)) {
        if (read(report[0], &b, 1) != 1) break;
        if (b == 'c') created++;
        if (b == 'f') failed++;
    }
    int others = created;
    close(report[1]);
    close(release[1]);
    close(release[0]);
    int all_ok = 1, st;
    while (wait(&st) > 0) all_ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
    printf("forkbomb: %d processes besides the first, %d direct children\n", others, children);
    if (argc > 1) CHECK("bounded", others + 1 <= atoi(argv[1]) && others >= 1);
    CHECK("all-ended", all_ok);
    return summary("lx-forkbomb");
}
