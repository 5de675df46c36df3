/* Hostile: bad pointers into every kind of memory a Linux program must not
   name get -EFAULT from the personality, which keeps running. */
#define _GNU_SOURCE
#include "check.h"
#include <unistd.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <time.h>

/* Raw system call with no libc wrapper in the way. */
static long sys3(long nr, long a, long b, long c) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

int main(void) {
    /* Unmapped, kernel half, the personality's own image (1.75 GiB), the
       exposed tables, and a wrapping range. */
    long bad[] = {0x10, 0xffff800000000000L, 0x70000000L, 0x70001000L, 0x7f8000000000L, -4096L};
    const char *names[] = {"null-page", "kernel", "personality-text", "personality-data", "exposed", "wrap"};
    char name[64];
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(name, sizeof name, "write-%s", names[i]);
        CHECK(name, sys3(SYS_write, 1, bad[i], 16) == -EFAULT);
        snprintf(name, sizeof name, "read-%s", names[i]);
        CHECK(name, sys3(SYS_read, 0, bad[i], 16) == -EFAULT);
        snprintf(name, sizeof name, "stat-%s", names[i]);
        CHECK(name, sys3(SYS_stat, (long)"/dev/null", bad[i], 0) == -EFAULT);
        snprintf(name, sizeof name, "open-%s", names[i]);
        CHECK(name, sys3(SYS_open, bad[i], O_RDONLY, 0) == -EFAULT);
        snprintf(name, sizeof name, "clock-%s", names[i]);
        CHECK(name, sys3(SYS_clock_gettime, CLOCK_MONOTONIC, bad[i], 0) == -EFAULT);
    }
    /* Read-only memory: the program's own text, a PROT_READ mapping. */
    CHECK("read-into-text", sys3(SYS_read, 0, (long)main, 16) == -EFAULT);
    char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK("getrandom-readonly", sys3(SYS_getrandom, (long)ro, 16, 0) == -EFAULT);
    char *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK("write-protnone", sys3(SYS_write, 1, (long)none, 1) == -EFAULT);
    /* A range that starts valid and runs off the end of the stack. */
    char local[16];
    CHECK("write-past-stack", sys3(SYS_write, 1, (long)local, 0x100000000L) == -EFAULT);
    /* Mapping over the personality is refused. */
    CHECK("mmap-fixed-personality",
          mmap((void *)0x70000000L, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
              MAP_FAILED);
    CHECK("munmap-personality", munmap((void *)0x70000000L, 4096) == -1 && errno == EINVAL);
    CHECK("mprotect-personality", mprotect((void *)0x70000000L, 4096, PROT_READ | PROT_WRITE) == -1);
    return summary("lx-efault");
}
