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
    }
    if (getpid() != top) {
        /* One byte per process in the bomb, then wait for the release. */
        close(release[1]);
        write(report[1], "p", 1);
        char b;
        read(release[0], &b, 1);
        while (wait(NULL) > 0) {
        }
        _exit(failed_errno == EAGAIN ? 0 : 1);
    }
    close(report[1]);
    CHECK("fork-refused", failed_errno == EAGAIN);
    /* Count the others: each wrote a byte before blocking on the release.
       The count cannot exceed the limit, whoever forked whom. */
    int others = 0;
    char buf[64];
    /* Release everyone, then read until every writer has gone. */
    close(release[1]);
    close(release[0]);
    ssize_t n;
    while ((n = read(report[0], buf, sizeof buf)) > 0) others += n;
    int all_ok = 1, st;
    while (wait(&st) > 0) all_ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
    printf("forkbomb: %d processes besides the first, %d direct children\n", others, children);
    if (argc > 1) CHECK("bounded", others + 1 <= atoi(argv[1]) && others >= 1);
    CHECK("all-ended", all_ok);
    return summary("lx-forkbomb");
}
