/* Process start-up, ids, memory, time, random and terminal calls through
   the Linux personality, one check each. */
#define _GNU_SOURCE
#include "check.h"
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/utsname.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <time.h>
#include <sys/time.h>
#include <signal.h>

static __thread int tls_value = 42;

int main(int argc, char **argv, char **envp) {
    (void)envp;
    CHECK("argv", argc == 3 && strcmp(argv[1], "one") == 0 && strcmp(argv[2], "two words") == 0);
    CHECK("tls", tls_value == 42 && (tls_value = 43) == 43);
    CHECK("auxv-pagesz", getauxval(AT_PAGESZ) == 4096);
    CHECK("auxv-random", getauxval(AT_RANDOM) != 0);
    CHECK("auxv-phdr", getauxval(AT_PHDR) != 0 && getauxval(AT_PHNUM) > 0);
    CHECK("auxv-execfn", getauxval(AT_EXECFN) != 0 && strstr((char *)getauxval(AT_EXECFN), "lx-basics") != NULL);
    CHECK("ids", getuid() == 0 && geteuid() == 0 && getgid() == 0 && getegid() == 0);
    CHECK("pid", getpid() > 0 && getppid() >= 0 && syscall(SYS_gettid) == getpid());

    struct utsname u;
    CHECK("uname", uname(&u) == 0 && strcmp(u.sysname, "Linux") == 0 && strcmp(u.machine, "x86_64") == 0);

    char *small = malloc(100), *big = malloc(1 << 20);
    CHECK("malloc", small && big);
    if (big) {
        memset(big, 0x5a, 1 << 20);
        CHECK("malloc-big-rw", big[0] == 0x5a && big[(1 << 20) - 1] == 0x5a);
    }
    free(small);
    free(big);

    /* musl's sbrk only reads the break; move it with the raw call. */
    char *brk0 = (char *)syscall(SYS_brk, 0);
    CHECK("brk-grow", (char *)syscall(SYS_brk, brk0 + 65536) == brk0 + 65536);
    brk0[65535] = 1;
    CHECK("brk-shrink", (char *)syscall(SYS_brk, brk0 + 4096) == brk0 + 4096 && brk0[100] == 0);
    CHECK("brk-refused", (char *)syscall(SYS_brk, (char *)0x70000000) == brk0 + 4096);

    char *m = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK("mmap-anon", m != MAP_FAILED && m[0] == 0 && m[3 * 4096 - 1] == 0);
    m[4096] = 7;
    CHECK("munmap-part", munmap(m, 4096) == 0 && m[4096] == 7);
    CHECK("mprotect", mprotect(m + 4096, 4096, PROT_READ) == 0 && m[4096] == 7);
    CHECK("munmap", munmap(m + 4096, 2 * 4096) == 0);
    char *fixed = mmap((void *)0x10000000, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK("mmap-fixed", fixed == (void *)0x10000000 && (fixed[10] = 3) == 3);
    CHECK("mmap-bad", mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED && errno == EINVAL);
    /* mremap: grow in place, move with the contents, shrink; refusals. */
    char *r = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    r[0] = 'a';
    r[4096] = 'b';
    char *g = mremap(r, 2 * 4096, 4 * 4096, 0);
    CHECK("mremap-grow-in-place", g == r && g[0] == 'a' && g[4096] == 'b' && (g[3 * 4096] = 'd') == 'd');
    char *blocker = mmap(g + 4 * 4096, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK("mremap-blocked-enomem", blocker == g + 4 * 4096 && mremap(g, 4 * 4096, 8 * 4096, 0) == MAP_FAILED &&
                                       errno == ENOMEM);
    char *mv = mremap(g, 4 * 4096, 8 * 4096, MREMAP_MAYMOVE);
    CHECK("mremap-move", mv != MAP_FAILED && mv != g && mv[0] == 'a' && mv[4096] == 'b' && mv[3 * 4096] == 'd' &&
                             mv[7 * 4096] == 0);
    CHECK("mremap-shrink", mremap(mv, 8 * 4096, 4096, 0) == mv && mv[0] == 'a');
    CHECK("mremap-unmapped-efault", mremap(g, 4096, 8192, MREMAP_MAYMOVE) == MAP_FAILED && errno == EFAULT);
    CHECK("mremap-bad-flags", mremap(mv, 4096, 8192, MREMAP_FIXED) == MAP_FAILED && errno == EINVAL);

    struct timespec t1, t2;
    CHECK("clock_gettime", clock_gettime(CLOCK_MONOTONIC, &t1) == 0);
    for (volatile int i = 0; i < 100000; i++) {
    }
    clock_gettime(CLOCK_MONOTONIC, &t2);
    CHECK("clock-advances", t2.tv_sec > t1.tv_sec || (t2.tv_sec == t1.tv_sec && t2.tv_nsec > t1.tv_nsec));
    struct timespec nap = {0, 20 * 1000 * 1000}, before, after;
    clock_gettime(CLOCK_MONOTONIC, &before);
    CHECK("nanosleep", nanosleep(&nap, NULL) == 0);
    clock_gettime(CLOCK_MONOTONIC, &after);
    long slept = (after.tv_sec - before.tv_sec) * 1000000000L + (after.tv_nsec - before.tv_nsec);
    CHECK("nanosleep-long-enough", slept >= 20 * 1000 * 1000);
    struct timeval tv;
    CHECK("gettimeofday", gettimeofday(&tv, NULL) == 0 && tv.tv_usec < 1000000);

    unsigned char r1[32] = {0}, r2[32] = {0};
    CHECK("getrandom", getrandom(r1, sizeof r1, 0) == 32 && getrandom(r2, sizeof r2, 0) == 32 && memcmp(r1, r2, 32) != 0);

    struct rlimit rl;
    CHECK("getrlimit", getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 2);

    struct winsize ws;
    CHECK("tiocgwinsz", ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col == 80);
    struct termios tio;
    CHECK("tcgetattr", tcgetattr(0, &tio) == 0);
    CHECK("isatty", isatty(1) == 1);

    struct sigaction sa = {0}, old;
    sa.sa_handler = SIG_IGN;
    CHECK("sigaction", sigaction(SIGUSR1, &sa, NULL) == 0 && sigaction(SIGUSR1, NULL, &old) == 0 &&
                           old.sa_handler == SIG_IGN);
    sigset_t set, oset;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    CHECK("sigprocmask", sigprocmask(SIG_BLOCK, &set, NULL) == 0 && sigprocmask(SIG_BLOCK, NULL, &oset) == 0 &&
                             sigismember(&oset, SIGUSR2));

    errno = 0;
    CHECK("unknown-enosys", syscall(400) == -1 && errno == ENOSYS);
    return summary("lx-basics");
}
