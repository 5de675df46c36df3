/* epoll through the personality, written to Linux semantics: over pipes
   (readable, writable, hang-up, error, level-triggered repeats, MOD, DEL,
   ONESHOT, timeouts 0 and > 0, a closed descriptor leaving the interest
   list only with its last duplicate, many descriptors and maxevents
   taking turns, EINTR by a signal, epoll_pwait's mask, an instance
   inherited over fork and duplicated, EBADF/EINVAL/EEXIST/ENOENT/EPERM/
   EFAULT), then a TCP echo server on port 7 driven only by epoll_wait: the
   listener readable when a connection arrives, a connection readable when
   data arrives. It ends once a connection that said only "quit" closed. */
#define _GNU_SOURCE
#include "check.h"
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

static volatile int got_sig;
static void on_sig(int sig) {
    (void)sig;
    got_sig++;
}

static int add(int ep, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev = {.events = events, .data.u64 = data};
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static int mod(int ep, int fd, uint32_t events, uint64_t data) {
    struct epoll_event ev = {.events = events, .data.u64 = data};
    return epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
}

/* One wait for one event: its events (0 if none came in timeout_ms). */
static uint32_t one(int ep, int timeout_ms, uint64_t *data) {
    struct epoll_event ev;
    int n = epoll_wait(ep, &ev, 1, timeout_ms);
    if (n != 1) return 0;
    if (data) *data = ev.data.u64;
    return ev.events;
}

static void pipe_checks(void) {
    CHECK("create-size-zero-einval", syscall(SYS_epoll_create, 0) == -1 && errno == EINVAL);
    CHECK("create1-bad-flags-einval", epoll_create1(1) == -1 && errno == EINVAL);
    int ce = epoll_create1(EPOLL_CLOEXEC);
    CHECK("create1-cloexec", ce >= 0 && fcntl(ce, F_GETFD) == FD_CLOEXEC);
    close(ce);
    int ep = epoll_create(1);
    CHECK("create", ep >= 0 && fcntl(ep, F_GETFD) == 0);
    int p[2];
    pipe(p);
    CHECK("add", add(ep, p[0], EPOLLIN, 0x1234) == 0);
    CHECK("add-twice-eexist", add(ep, p[0], EPOLLIN, 0) == -1 && errno == EEXIST);
    struct epoll_event evs[32];
    CHECK("timeout-zero-empty", epoll_wait(ep, evs, 8, 0) == 0);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK("timeout-50ms", epoll_wait(ep, evs, 8, 50) == 0 && ms_since(&t0) >= 50);
    write(p[1], "x", 1);
    uint64_t data = 0;
    CHECK("readable", one(ep, -1, &data) == EPOLLIN && data == 0x1234);
    CHECK("level-triggered-again", one(ep, 0, NULL) == EPOLLIN);
    CHECK("raw-epoll-wait", syscall(SYS_epoll_wait, ep, evs, 8, 0) == 1 && evs[0].events == EPOLLIN);
    struct pollfd pf = {ep, POLLIN, 0};
    CHECK("poll-on-epoll-fd", poll(&pf, 1, 0) == 1 && pf.revents == POLLIN);
    char c;
    read(p[0], &c, 1);
    CHECK("drained-not-ready", epoll_wait(ep, evs, 8, 0) == 0 && poll(&pf, 1, 0) == 0);
    CHECK("add-writer", add(ep, p[1], EPOLLOUT, 7) == 0);
    CHECK("writable", one(ep, 0, &data) == EPOLLOUT && data == 7);
    CHECK("mod", mod(ep, p[1], EPOLLIN, 8) == 0 && epoll_wait(ep, evs, 8, 0) == 0);
    CHECK("del", epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL) == 0);
    CHECK("del-again-enoent", epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL) == -1 && errno == ENOENT);
    CHECK("mod-missing-enoent", mod(ep, p[1], EPOLLOUT, 0) == -1 && errno == ENOENT);

    CHECK("mod-oneshot", mod(ep, p[0], EPOLLIN | EPOLLONESHOT, 9) == 0);
    write(p[1], "y", 1);
    CHECK("oneshot-fires", one(ep, 1000, &data) == EPOLLIN && data == 9);
    CHECK("oneshot-disabled", epoll_wait(ep, evs, 8, 0) == 0);
    CHECK("oneshot-rearmed", mod(ep, p[0], EPOLLIN | EPOLLONESHOT, 10) == 0 && one(ep, 0, &data) == EPOLLIN && data == 10);
    CHECK("edge-triggered-accepted", mod(ep, p[0], EPOLLIN | EPOLLET, 11) == 0 && one(ep, 0, &data) == EPOLLIN);
    read(p[0], &c, 1);
    mod(ep, p[0], EPOLLIN, 12);
    close(p[1]);
    CHECK("hangup", one(ep, 1000, &data) & EPOLLHUP);
    close(p[0]);
    CHECK("closed-leaves", epoll_wait(ep, evs, 8, 0) == 0);

    pipe(p);
    add(ep, p[1], EPOLLOUT, 13);
    close(p[0]);
    CHECK("reader-gone-err", one(ep, 1000, &data) & EPOLLERR);
    close(p[1]);

    /* The watch keys on the open object: a duplicate keeps it alive. */
    pipe(p);
    add(ep, p[0], EPOLLIN, 14);
    int d = dup(p[0]);
    close(p[0]);
    write(p[1], "z", 1);
    CHECK("dup-keeps-watch", one(ep, 0, &data) == EPOLLIN && data == 14);
    close(d);
    CHECK("last-close-removes", epoll_wait(ep, evs, 8, 0) == 0);
    close(p[1]);

    int file = open("/epollfile", O_CREAT | O_RDWR, 0644);
    CHECK("regular-file-eperm", add(ep, file, EPOLLIN, 0) == -1 && errno == EPERM);
    close(file);
    unlink("/epollfile");
    int null = open("/dev/null", O_RDWR);
    CHECK("dev-null-eperm", add(ep, null, EPOLLIN, 0) == -1 && errno == EPERM);
    CHECK("self-einval", add(ep, ep, EPOLLIN, 0) == -1 && errno == EINVAL);
    CHECK("not-epoll-einval", add(null, ep, EPOLLIN, 0) == -1 && errno == EINVAL);
    CHECK("wait-not-epoll-einval", epoll_wait(null, evs, 1, 0) == -1 && errno == EINVAL);
    close(null);
    pipe(p);
    CHECK("bad-fd-ebadf", add(ep, 60, EPOLLIN, 0) == -1 && errno == EBADF);
    CHECK("bad-epfd-ebadf", add(60, p[0], EPOLLIN, 0) == -1 && errno == EBADF);
    CHECK("wait-bad-epfd-ebadf", epoll_wait(60, evs, 1, 0) == -1 && errno == EBADF);
    memset(evs, 0, sizeof evs);
    CHECK("bad-op-einval", epoll_ctl(ep, 99, p[0], &evs[0]) == -1 && errno == EINVAL);
    CHECK("maxevents-zero-einval", epoll_wait(ep, evs, 0, 0) == -1 && errno == EINVAL);
    CHECK("ctl-efault", epoll_ctl(ep, EPOLL_CTL_ADD, p[0], (struct epoll_event *)8) == -1 && errno == EFAULT);
    add(ep, p[1], EPOLLOUT, 15);
    CHECK("wait-efault", epoll_wait(ep, (struct epoll_event *)8, 1, 0) == -1 && errno == EFAULT);
    CHECK("wait-raw-efault", syscall(SYS_epoll_wait, ep, 8, 1, 0) == -1 && errno == EFAULT);

    /* A duplicate names the same instance. */
    int ep2 = dup(ep);
    close(ep);
    CHECK("dup-same-instance", one(ep2, 0, &data) == EPOLLOUT && data == 15);
    ep = ep2;
    epoll_ctl(ep, EPOLL_CTL_DEL, p[1], NULL);

    /* A signal ends a wait (setitimer's SIGALRM), with EINTR. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sig;
    sigaction(SIGALRM, &sa, NULL);
    add(ep, p[0], EPOLLIN, 16);
    struct itimerval it = {{0, 0}, {0, 50 * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
    int n = epoll_wait(ep, evs, 8, 5000);
    CHECK("eintr", n == -1 && errno == EINTR && got_sig == 1);

    /* A child inherits the instance; its epoll_pwait, given a mask that
       lets SIGUSR1 in, ends with EINTR and the mask comes back. */
    int ready[2];
    pipe(ready);
    fflush(stdout);
    pid_t k = fork();
    if (k == 0) {
        sigaction(SIGUSR1, &sa, NULL);
        sigset_t block, none, after;
        sigemptyset(&block);
        sigaddset(&block, SIGUSR1);
        sigprocmask(SIG_BLOCK, &block, NULL);
        sigemptyset(&none);
        write(p[1], "w", 1);
        int inherited = one(ep, 0, NULL) == EPOLLIN;
        read(p[0], &c, 1);
        write(ready[1], "r", 1);
        got_sig = 0;
        int r = epoll_pwait(ep, evs, 8, -1, &none);
        int e = errno;
        sigprocmask(SIG_BLOCK, NULL, &after);
        _exit(!inherited ? 2 : r == -1 && e == EINTR && got_sig == 1 && sigismember(&after, SIGUSR1) ? 0 : 1);
    }
    CHECK("child-ready", read(ready[0], &c, 1) == 1);
    CHECK("kill", kill(k, SIGUSR1) == 0);
    int st = -1;
    CHECK("fork-inherits-and-pwait-eintr", waitpid(k, &st, 0) == k && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(ready[0]);
    close(ready[1]);
    close(p[0]);
    close(p[1]);

    /* Many descriptors: 12 pipes, every other one written; all six come,
       and with maxevents 2 three waits take turns over them. */
    int many[12][2];
    int okp = 1;
    for (int i = 0; i < 12; i++) {
        okp &= pipe(many[i]) == 0 && add(ep, many[i][0], EPOLLIN, 100 + i) == 0;
        if (i % 2 == 0) write(many[i][1], "m", 1);
    }
    CHECK("many-added", okp);
    n = epoll_wait(ep, evs, 32, 0);
    unsigned seen = 0;
    for (int i = 0; i < n; i++) seen |= 1u << (evs[i].data.u64 - 100);
    CHECK("many-ready", n == 6 && seen == 0x555);
    seen = 0;
    for (int round = 0; round < 3; round++) {
        n = epoll_wait(ep, evs, 2, 0);
        for (int i = 0; i < n; i++) seen |= 1u << (evs[i].data.u64 - 100);
    }
    CHECK("maxevents-takes-turns", seen == 0x555);
    for (int i = 0; i < 12; i++) {
        close(many[i][0]);
        close(many[i][1]);
    }
    CHECK("all-closed-empty", epoll_wait(ep, evs, 32, 0) == 0);

    /* Watches are (descriptor, object) pairs: 14 read ends kept open at
       their own descriptors, and each free descriptor number pointed at
       each of them in turn and watched, 210 pairs. An instance may refuse
       some with ENOSPC (Oxok holds 128, Linux far more); every watch it
       took reports (the writers are gone), and closing ends them all. */
    int ends[14], base = -1;
    for (int i = 0; i < 14; i++) {
        pipe(p);
        close(p[1]);
        ends[i] = p[0];
        add(ep, p[0], EPOLLIN, (uint64_t)p[0]);
    }
    base = dup(ends[0]);
    close(base);
    int accepted = 14, refused = 0, other = 0;
    for (int f = base; f < base + 14; f++) {
        for (int i = 0; i < 14; i++) {
            if (dup2(ends[i], f) != f) { other++; continue; }
            if (add(ep, f, EPOLLIN, (uint64_t)f) == 0) accepted++;
            else if (errno == ENOSPC) refused++;
            else other++;
        }
    }
    static struct epoll_event big[512];
    n = epoll_wait(ep, big, 512, 0);
    CHECK("many-watches-all-report", other == 0 && accepted + refused == 210 && n == accepted);
    printf("lx-epoll: %d watches, %d refused with ENOSPC\n", accepted, refused);
    for (int f = 0; f < base + 14; f++)
        if (f != ep && f > 2) close(f);
    CHECK("many-watches-closed", epoll_wait(ep, big, 512, 0) == 0);
    close(ep);
}

/* The echo server: the listener and every connection in one instance. */
static int serve(void) {
    int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one_ = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one_, sizeof one_);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(7);
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    CHECK("tcp-listen", bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 8) == 0);
    int ep = epoll_create1(0);
    CHECK("tcp-add-listener", add(ep, l, EPOLLIN, (uint64_t)l) == 0);
    printf("lx-epoll: echoing on port 7\n");
    fflush(stdout);
    long bytes = 0, conns = 0, accept_failed = 0, empty_reads = 0;
    int quit = 0;
    char said[8];
    long said_len[64] = {0};
    while (!quit) {
        struct epoll_event evs[8];
        int n = epoll_wait(ep, evs, 8, 90000);
        if (n <= 0) {
            CHECK("tcp-wait", 0);
            return 1;
        }
        for (int i = 0; i < n; i++) {
            int fd = (int)evs[i].data.u64;
            if (fd == l) {
                int c = accept4(l, NULL, NULL, 0);
                if (c < 0 || c >= 64) {
                    accept_failed++;
                    continue;
                }
                if (conns++ == 0) CHECK("listener-readable-accepts", 1);
                said_len[c] = 0;
                add(ep, c, EPOLLIN | EPOLLRDHUP, (uint64_t)c);
                continue;
            }
            char buf[4096];
            ssize_t got = read(fd, buf, sizeof buf);
            if (got < 0 && errno == EAGAIN) {
                empty_reads++;
                continue;
            }
            if (got <= 0) {
                if (said_len[fd] == 4 && memcmp(said, "quit", 4) == 0) quit = 1;
                epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
                close(fd);
                continue;
            }
            if (bytes == 0) CHECK("connection-readable-has-data", got > 0);
            if (said_len[fd] == 0) memcpy(said, buf, got < 8 ? (size_t)got : 8);
            said_len[fd] += got;
            for (ssize_t off = 0; off < got;) {
                ssize_t w = write(fd, buf + off, (size_t)(got - off));
                if (w <= 0) break;
                off += w;
            }
            bytes += got;
        }
    }
    CHECK("no-accept-failed", accept_failed == 0);
    CHECK("no-empty-reads", empty_reads == 0);
    printf("lx-epoll: %ld connections, %ld bytes echoed\n", conns, bytes);
    close(ep);
    close(l);
    return 0;
}

int main(void) {
    pipe_checks();
    serve();
    return summary("lx-epoll");
}
