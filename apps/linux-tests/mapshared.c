/* MAP_SHARED anonymous mappings across fork: pages written by a child,
   touched or not before the fork, are the parent's too, both ways; an
   atomic counter two children increment adds up; mprotect and madvise
   keep the sharing; a child's munmap leaves the parent's pages; private
   mappings stay private. */
#define _GNU_SOURCE
#include "check.h"
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096

static int child_status(pid_t kid) {
    int st;
    return waitpid(kid, &st, 0) == kid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void) {
    volatile unsigned char *p = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK("mmap-shared", p != MAP_FAILED && p[0] == 0 && p[3 * PAGE - 1] == 0);
    p[0] = 1;
    pid_t kid = fork();
    if (kid == 0) {
        p[0] = 42;
        p[2 * PAGE + 5] = 7; /* a page neither side touched before the fork */
        _exit(0);
    }
    CHECK("child-writes-seen", child_status(kid) == 0 && p[0] == 42 && p[2 * PAGE + 5] == 7);

    kid = fork();
    if (kid == 0) {
        for (int i = 0; i < 2000 && p[100] != 9; i++) sched_yield();
        _exit(p[100] == 9 ? 0 : 1);
    }
    p[100] = 9;
    CHECK("parent-writes-seen", child_status(kid) == 0);

    volatile uint64_t *counter = (volatile uint64_t *)(p + PAGE);
    *counter = 0;
    pid_t a = fork();
    if (a == 0) {
        for (int i = 0; i < 1000; i++) __atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
        _exit(0);
    }
    pid_t b = fork();
    if (b == 0) {
        for (int i = 0; i < 1000; i++) __atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
        _exit(0);
    }
    CHECK("atomic-counter", child_status(a) == 0 && child_status(b) == 0 && *counter == 2000);

    CHECK("mprotect-ro", mprotect((void *)p, 3 * PAGE, PROT_READ) == 0);
    CHECK("mprotect-rw", mprotect((void *)p, 3 * PAGE, PROT_READ | PROT_WRITE) == 0);
    kid = fork();
    if (kid == 0) {
        p[200] = 5;
        _exit(0);
    }
    CHECK("mprotect-keeps-sharing", child_status(kid) == 0 && p[200] == 5);

    CHECK("madvise-keeps-shared", madvise((void *)p, PAGE, MADV_DONTNEED) == 0 && p[0] == 42);

    kid = fork();
    if (kid == 0) _exit(munmap((void *)p, 3 * PAGE) == 0 ? 0 : 1);
    CHECK("child-munmap-parent-keeps", child_status(kid) == 0 && p[0] == 42 && p[2 * PAGE + 5] == 7);

    volatile unsigned char *q = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    q[0] = 1;
    kid = fork();
    if (kid == 0) {
        q[0] = 2;
        _exit(0);
    }
    CHECK("private-stays-private", child_status(kid) == 0 && q[0] == 1);

    void *huge = mmap(NULL, (size_t)1 << 40, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK("huge-enomem", huge == MAP_FAILED && errno == ENOMEM);
    CHECK("munmap", munmap((void *)p, 3 * PAGE) == 0);
    return summary("lx-mapshared");
}
