/* Signals through the personality: handlers with Linux frames (siginfo,
   ucontext, registers and FPU state restored by rt_sigreturn), the mask,
   pending signals, SIG_IGN, SA_RESETHAND, SA_ONSTACK, rt_sigsuspend,
   SIGSEGV handled with siglongjmp, SIGCHLD, SIGPIPE, a signal from the
   parent interrupting a wait that SA_RESTART restarts, and hostile frames
   that end only the program that made them. */
#define _GNU_SOURCE
#include "check.h"
#include <stdlib.h>
#include <unistd.h>
#include <signal.h>
#include <setjmp.h>
#include <fenv.h>
#include <stdint.h>
#include <time.h>
#include <sys/wait.h>
#include <sys/syscall.h>

static volatile int usr1_count, usr1_signo, usr1_pid, usr2_count, chld_count, segv_count, onstack_ok;
static volatile void *segv_addr;
static sigjmp_buf segv_jump;
static char altstack[16384];

static void on_usr1(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    usr1_count++;
    usr1_signo = si->si_signo;
    usr1_pid = si->si_pid;
    (void)sig;
}

static void on_usr2(int sig) {
    (void)sig;
    /* Clobber what the interrupted code had in xmm7 and the rounding mode. */
    __asm__ volatile("movq %0, %%xmm7" ::"r"(0x1111111111111111ULL) : "xmm7");
    fesetround(FE_UPWARD);
    usr2_count++;
}

static void on_chld(int sig) {
    (void)sig;
    chld_count++;
}

static void on_segv(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    segv_count++;
    segv_addr = si->si_addr;
    siglongjmp(segv_jump, 1);
}

static void on_stack(int sig) {
    char here;
    (void)sig;
    onstack_ok = &here >= altstack && &here < altstack + sizeof altstack;
}

static int handler_ran;
static void mark(int sig) {
    (void)sig;
    handler_ran++;
}

static struct sigaction action(void (*h)(int), int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    return sa;
}

/* The child of the restart test: a wait4 for a grandchild is interrupted
   by SIGUSR1 from the parent; SA_RESTART restarts it. The grandchild ends
   only once the parent has sent the signal (it writes to `gate`). */
static int restart_child(int ready_fd, int gate_fd) {
    struct sigaction sa = action(mark, SA_RESTART);
    sigaction(SIGUSR1, &sa, NULL);
    pid_t g = fork();
    if (g == 0) {
        char b;
        read(gate_fd, &b, 1);
        _exit(5);
    }
    write(ready_fd, "r", 1);
    int st = -1;
    pid_t w = wait4(g, &st, 0, NULL);
    if (w != g) return 10 + errno;
    return handler_ran == 1 && WEXITSTATUS(st) == 5 ? 0 : 2;
}

static int status_of(pid_t c) {
    int st = -1;
    if (waitpid(c, &st, 0) != c) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void) {
    pid_t me = getpid();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    CHECK("sigaction", sigaction(SIGUSR1, &sa, NULL) == 0);
    CHECK("raise-handled", raise(SIGUSR1) == 0 && usr1_count == 1);
    CHECK("siginfo", usr1_signo == SIGUSR1 && usr1_pid == me);
    CHECK("kill-self-handled", kill(me, SIGUSR1) == 0 && usr1_count == 2);

    /* Registers and FPU state survive a handler that clobbers them. */
    sa = action(on_usr2, 0);
    sigaction(SIGUSR2, &sa, NULL);
    unsigned long long before = 0x4242424242424242ULL, after = 0, r8 = 0, r9 = 0, r10 = 0;
    long ret;
    __asm__ volatile("movq %[b], %%xmm7\n\t"
                     "mov $0x8888, %%r8\n\t"
                     "mov $0x9999, %%r9\n\t"
                     "mov $0xaaaa, %%r10\n\t"
                     "syscall\n\t"
                     "movq %%xmm7, %[a]\n\t"
                     "mov %%r8, %[r8]\n\t"
                     "mov %%r9, %[r9]\n\t"
                     "mov %%r10, %[r10]\n\t"
                     : [a] "=m"(after), [r8] "=m"(r8), [r9] "=m"(r9), [r10] "=m"(r10), "=a"(ret)
                     : [b] "r"(before), "a"((long)SYS_kill), "D"((long)me), "S"((long)SIGUSR2)
                     : "rcx", "r11", "r8", "r9", "r10", "memory", "xmm7");
    CHECK("handler-ran", usr2_count == 1 && ret == 0);
    CHECK("fpu-restored", after == before && fegetround() == FE_TONEAREST);
    CHECK("regs-restored", r8 == 0x8888 && r9 == 0x9999 && r10 == 0xaaaa);

    /* Blocked signals wait; unblocking delivers them. */
    sigset_t set, old, pend;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    CHECK("block", sigprocmask(SIG_BLOCK, &set, &old) == 0);
    raise(SIGUSR1);
    CHECK("blocked-waits", usr1_count == 2 && sigpending(&pend) == 0 && sigismember(&pend, SIGUSR1));
    CHECK("unblock-delivers", sigprocmask(SIG_SETMASK, &old, NULL) == 0 && usr1_count == 3);

    /* rt_sigsuspend: the handler runs, -1 EINTR, the mask comes back. */
    sigprocmask(SIG_BLOCK, &set, NULL);
    raise(SIGUSR1);
    sigset_t empty, now;
    sigemptyset(&empty);
    CHECK("sigsuspend", sigsuspend(&empty) == -1 && errno == EINTR && usr1_count == 4);
    CHECK("sigsuspend-mask", sigprocmask(SIG_BLOCK, NULL, &now) == 0 && sigismember(&now, SIGUSR1));
    sigprocmask(SIG_UNBLOCK, &set, NULL);

    sa = action(SIG_IGN, 0);
    sigaction(SIGUSR2, &sa, NULL);
    CHECK("ignored", raise(SIGUSR2) == 0 && usr2_count == 1);

    sa = action(mark, SA_RESETHAND);
    sigaction(SIGHUP, &sa, NULL);
    struct sigaction back;
    CHECK("resethand", raise(SIGHUP) == 0 && handler_ran == 1 && sigaction(SIGHUP, NULL, &back) == 0 &&
                           back.sa_handler == SIG_DFL);
    handler_ran = 0;

    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    CHECK("sigaltstack", sigaltstack(&ss, NULL) == 0);
    sa = action(on_stack, SA_ONSTACK);
    sigaction(SIGWINCH, &sa, NULL);
    CHECK("onstack", raise(SIGWINCH) == 0 && onstack_ok);

    /* A fault the program handles, leaving by siglongjmp. */
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    volatile uintptr_t bad = 16;
    if (sigsetjmp(segv_jump, 1) == 0) {
        *(volatile int *)bad = 1;
    }
    CHECK("segv-handled", segv_count == 1 && segv_addr == (void *)16);
    sa = action(SIG_DFL, 0);
    sigaction(SIGSEGV, &sa, NULL);

    /* SIGCHLD when a child ends. */
    sa = action(on_chld, SA_RESTART);
    sigaction(SIGCHLD, &sa, NULL);
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) _exit(0);
    CHECK("sigchld", status_of(c) == 0 && chld_count == 1);
    sa = action(SIG_DFL, 0);
    sigaction(SIGCHLD, &sa, NULL);

    /* SIGPIPE: the default ends the writer; ignored, write says EPIPE. */
    int p[2], go[2];
    pipe(p);
    pipe(go);
    fflush(stdout);
    c = fork();
    if (c == 0) {
        close(p[0]);
        close(go[1]);
        char g;
        read(go[0], &g, 1); /* until the parent has closed its read end */
        write(p[1], "x", 1);
        _exit(0);
    }
    close(p[0]);
    close(p[1]);
    close(go[0]);
    write(go[1], "g", 1);
    close(go[1]);
    CHECK("sigpipe-default", status_of(c) == 128 + SIGPIPE);
    pipe(p);
    close(p[0]);
    signal(SIGPIPE, SIG_IGN);
    CHECK("sigpipe-ignored", write(p[1], "x", 1) == -1 && errno == EPIPE);
    close(p[1]);

    /* Default action of a signal to itself. */
    fflush(stdout);
    c = fork();
    if (c == 0) {
        raise(SIGTERM);
        _exit(0);
    }
    CHECK("default-terminates", status_of(c) == 128 + SIGTERM);

    /* A signal from the parent interrupts the child's wait4; SA_RESTART
       restarts it after the handler. */
    int gate[2];
    pipe(p);
    pipe(gate);
    fflush(stdout);
    c = fork();
    if (c == 0) {
        close(p[0]);
        close(gate[1]);
        _exit(restart_child(p[1], gate[0]));
    }
    close(p[1]);
    close(gate[0]);
    char r;
    CHECK("restart-ready", read(p[0], &r, 1) == 1);
    struct timespec t = {0, 50 * 1000 * 1000};
    nanosleep(&t, NULL); /* most likely the child is in wait4 by now */
    CHECK("kill-child-usr1", kill(c, SIGUSR1) == 0);
    write(gate[1], "g", 1);
    CHECK("sa-restart", status_of(c) == 0);
    close(p[0]);
    close(gate[1]);

    /* A read of an empty pipe: the parent's signal ends it with EINTR, or,
       with SA_RESTART, the read goes on and gets what the parent writes. */
    for (int restart = 0; restart < 2; restart++) {
        int data[2], ready2[2];
        pipe(data);
        pipe(ready2);
        fflush(stdout);
        c = fork();
        if (c == 0) {
            close(data[1]);
            close(ready2[0]);
            struct sigaction sr = action(mark, restart ? SA_RESTART : 0);
            sigaction(SIGUSR1, &sr, NULL);
            handler_ran = 0;
            write(ready2[1], "r", 1);
            char got[4];
            ssize_t n = read(data[0], got, sizeof got);
            int ok = restart ? n == 3 && memcmp(got, "abc", 3) == 0 && handler_ran == 1
                             : n == -1 && errno == EINTR && handler_ran == 1;
            _exit(ok ? 0 : 1);
        }
        close(data[0]);
        close(ready2[1]);
        char rr;
        read(ready2[0], &rr, 1);
        struct timespec nap = {0, 50 * 1000 * 1000};
        nanosleep(&nap, NULL); /* most likely the child is in read by now */
        kill(c, SIGUSR1);
        nanosleep(&nap, NULL);
        write(data[1], "abc", 3);
        CHECK(restart ? "read-restarted" : "read-eintr", status_of(c) == 0);
        close(data[1]);
        close(ready2[0]);
    }

    /* A signal ends a long nanosleep with EINTR and the time left. */
    {
        int ready3[2];
        pipe(ready3);
        fflush(stdout);
        c = fork();
        if (c == 0) {
            close(ready3[0]);
            struct sigaction sn = action(mark, SA_RESTART);
            sigaction(SIGUSR1, &sn, NULL);
            handler_ran = 0;
            write(ready3[1], "r", 1);
            struct timespec longnap = {30, 0}, left = {0, 0};
            int n = nanosleep(&longnap, &left);
            _exit(n == -1 && errno == EINTR && handler_ran == 1 && left.tv_sec > 0 && left.tv_sec <= 30 ? 0 : 1);
        }
        close(ready3[1]);
        char rr;
        read(ready3[0], &rr, 1);
        struct timespec nap = {0, 50 * 1000 * 1000};
        nanosleep(&nap, NULL);
        kill(c, SIGUSR1);
        CHECK("nanosleep-eintr", status_of(c) == 0);
        close(ready3[0]);
    }

    /* Hostile: bad pointers are EFAULT; a frame that cannot be pushed or a
       garbage rt_sigreturn ends only the program that made it. */
    CHECK("sigaction-efault", syscall(SYS_rt_sigaction, SIGUSR1, 8, 0, 8) == -1 && errno == EFAULT);
    CHECK("sigaction-old-efault", syscall(SYS_rt_sigaction, SIGUSR1, 0, 8, 8) == -1 && errno == EFAULT);
    CHECK("sigprocmask-efault", syscall(SYS_rt_sigprocmask, SIG_BLOCK, 8, 0, 8) == -1 && errno == EFAULT);
    CHECK("sigaltstack-efault", syscall(SYS_sigaltstack, 8, 0) == -1 && errno == EFAULT);
    CHECK("sigpending-efault", syscall(SYS_rt_sigpending, 8, 8) == -1 && errno == EFAULT);
    fflush(stdout);
    c = fork();
    if (c == 0) {
        sa = action(mark, 0);
        sigaction(SIGUSR1, &sa, NULL);
        __asm__ volatile("mov $0x10, %%rsp\n\tsyscall" ::"a"((long)SYS_kill), "D"((long)getpid()), "S"((long)SIGUSR1)
                         : "rcx", "r11", "memory");
        _exit(0);
    }
    CHECK("bad-stack-frame-ends-it", status_of(c) == 128 + SIGSEGV);
    fflush(stdout);
    c = fork();
    if (c == 0) {
        __asm__ volatile("mov $0x10, %%rsp\n\tsyscall" ::"a"((long)SYS_rt_sigreturn) : "rcx", "r11", "memory");
        _exit(0);
    }
    CHECK("bad-sigreturn-ends-it", status_of(c) == 128 + SIGSEGV);
    fflush(stdout);
    c = fork();
    if (c == 0) {
        /* A readable frame of garbage: whatever rip it names faults. */
        static unsigned long junk[128];
        for (int i = 0; i < 128; i++) junk[i] = 0xdeadbeefdeadbeefUL;
        __asm__ volatile("mov %0, %%rsp\n\tsyscall" ::"r"(&junk[1]), "a"((long)SYS_rt_sigreturn) : "rcx", "r11", "memory");
        _exit(0);
    }
    int junk_status = status_of(c);
    CHECK("junk-sigreturn-ends-it", junk_status == 128 + SIGSEGV || junk_status == 128 + SIGILL);
    CHECK("still-here", getpid() == me);
    return summary("lx-signal");
}
