/* Sockets through the Linux personality: a TCP and UDP echo server on
   port 7 for the host (the scenario's host program sends datagrams and
   TCP streams through QEMU's forwarded ports and checks every byte), with
   checks of the calls around it. It ends once a TCP connection that said
   only "quit" has closed and a datagram "quit" has come. */
#define _GNU_SOURCE
#include "check.h"
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>

static int tcp_quit, udp_quit;
static long echoed_bytes, echoed_datagrams, connections;

/* Echoes one TCP connection until the peer closes, with read/write. */
/* Echoes a stream; with `more`, every write says more follows (MSG_MORE):
   whole segments go at once, the rest by the 200 ms ceiling. */
static void echo_stream(int c, int more) {
    char buf[4096], first[8];
    long total = 0;
    for (;;) {
        ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0)
            break;
        if (total < 8)
            memcpy(first + total, buf, (size_t)(n < 8 - total ? n : 8 - total));
        total += n;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = more ? send(c, buf + off, (size_t)(n - off), MSG_MORE) : write(c, buf + off, (size_t)(n - off));
            if (w <= 0)
                return;
            off += w;
        }
        echoed_bytes += n;
    }
    if (total == 4 && memcmp(first, "quit", 4) == 0)
        tcp_quit = 1;
}

/* Echoes every datagram waiting on u, with recvmsg/sendmsg. */
static void echo_datagrams(int u) {
    for (;;) {
        char buf[2048];
        struct sockaddr_in from;
        struct iovec iov = {buf, sizeof buf};
        struct msghdr m = {0};
        m.msg_name = &from;
        m.msg_namelen = sizeof from;
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        ssize_t n = recvmsg(u, &m, MSG_DONTWAIT);
        if (n < 0)
            return;
        iov.iov_len = (size_t)n;
        if (sendmsg(u, &m, 0) == n)
            echoed_datagrams++;
        if (n == 4 && memcmp(buf, "quit", 4) == 0)
            udp_quit = 1;
    }
}

int main(void) {
    int bad = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK("socket-af-unix-refused", bad < 0 && errno == EAFNOSUPPORT);
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK("socket-tcp", l >= 0);
    int one = 1;
    CHECK("setsockopt-reuseaddr", setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0);
    int type = 0;
    socklen_t tl = sizeof type;
    CHECK("getsockopt-type", getsockopt(l, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_STREAM);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons(7);
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    CHECK("bind", bind(l, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK("listen", listen(l, 8) == 0);
    struct sockaddr_in got = {0};
    socklen_t gl = sizeof got;
    CHECK("getsockname", getsockname(l, (struct sockaddr *)&got, &gl) == 0 && gl == sizeof got &&
                             ntohs(got.sin_port) == 7 && got.sin_addr.s_addr == inet_addr("10.0.2.15"));
    int l2 = socket(AF_INET, SOCK_STREAM, 0);
    CHECK("bind-twice-refused", bind(l2, (struct sockaddr *)&a, sizeof a) < 0 && errno == EADDRINUSE);
    close(l2);
    CHECK("fcntl-nonblock", fcntl(l, F_SETFL, O_NONBLOCK) == 0 && (fcntl(l, F_GETFL) & O_NONBLOCK));
    CHECK("accept-nonblocking-eagain", accept(l, NULL, NULL) < 0 && errno == EAGAIN);

    int u = socket(AF_INET, SOCK_DGRAM, 0);
    CHECK("socket-udp", u >= 0);
    CHECK("bind-udp", bind(u, (struct sockaddr *)&a, sizeof a) == 0);
    char tmp[8];
    CHECK("recv-dontwait-eagain", recv(u, tmp, sizeof tmp, MSG_DONTWAIT) < 0 && errno == EAGAIN);
    struct sockaddr_in nine = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = inet_addr("10.0.2.2")};
    CHECK("udp-msg-more-refused",
          sendto(u, "x", 1, MSG_MORE, (struct sockaddr *)&nine, sizeof nine) < 0 && errno == EOPNOTSUPP);

    /* A connection the gateway refuses (nothing listens on the host's port 1). */
    int c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in gw = {0};
    gw.sin_family = AF_INET;
    gw.sin_port = htons(1);
    gw.sin_addr.s_addr = inet_addr("10.0.2.2");
    CHECK("connect-refused",
          connect(c, (struct sockaddr *)&gw, sizeof gw) < 0 && (errno == ECONNREFUSED || errno == ETIMEDOUT));
    close(c);
    /* A socket nobody sends to: select with a zero timeout finds nothing
       ready to read, and it is writable. */
    int q = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in qa = {.sin_family = AF_INET, .sin_port = htons(9)};
    fd_set none, out;
    FD_ZERO(&none);
    FD_ZERO(&out);
    FD_SET(q, &none);
    FD_SET(q, &out);
    struct timeval zero = {0, 0};
    CHECK("select-nothing-ready", q >= 0 && bind(q, (struct sockaddr *)&qa, sizeof qa) == 0 &&
                                      select(q + 1, &none, &out, NULL, &zero) == 1 && !FD_ISSET(q, &none) &&
                                      FD_ISSET(q, &out));
    close(q);
    printf("lx-sockets: echoing on port 7\n");
    fflush(stdout);

    /* The loop waits with poll and select in turn. */
    long rounds = 0, selected = 0;
    while (!(tcp_quit && udp_quit)) {
        struct pollfd p[2] = {{l, POLLIN, 0}, {u, POLLIN, 0}};
        int n;
        if (rounds % 2) {
            fd_set r;
            FD_ZERO(&r);
            FD_SET(l, &r);
            FD_SET(u, &r);
            struct timeval t = {1, 0};
            n = select((l > u ? l : u) + 1, &r, NULL, NULL, &t);
            p[0].revents = n > 0 && FD_ISSET(l, &r) ? POLLIN : 0;
            p[1].revents = n > 0 && FD_ISSET(u, &r) ? POLLIN : 0;
            if (n > 0 && selected++ == 0)
                CHECK("select-ready", (p[0].revents | p[1].revents) == POLLIN);
        } else {
            n = poll(p, 2, 1000);
        }
        if (n < 0) {
            CHECK("poll-select", 0);
            break;
        }
        rounds++;
        if (p[1].revents & POLLIN)
            echo_datagrams(u);
        if (p[0].revents & POLLIN) {
            struct sockaddr_in peer;
            socklen_t pl = sizeof peer;
            int s = accept4(l, (struct sockaddr *)&peer, &pl, SOCK_CLOEXEC);
            if (s < 0)
                continue;
            connections++;
            if (connections == 1) {
                struct sockaddr_in pn;
                socklen_t pnl = sizeof pn;
                CHECK("accept4-peer", pl == sizeof peer && peer.sin_family == AF_INET &&
                                          peer.sin_addr.s_addr == inet_addr("10.0.2.2"));
                CHECK("getpeername", getpeername(s, (struct sockaddr *)&pn, &pnl) == 0 &&
                                         pn.sin_port == peer.sin_port);
                CHECK("tcp-nodelay", setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0);
                CHECK("accepted-blocking", !(fcntl(s, F_GETFL) & O_NONBLOCK));
            }
            /* The second connection is echoed corked, by TCP_CORK and
               MSG_MORE; the host checks every byte. */
            if (connections == 2) {
                int cork = 0;
                socklen_t cl = sizeof cork;
                CHECK("tcp-cork", setsockopt(s, IPPROTO_TCP, TCP_CORK, &one, sizeof one) == 0 &&
                                      getsockopt(s, IPPROTO_TCP, TCP_CORK, &cork, &cl) == 0 && cork == 1);
            }
            echo_stream(s, connections == 2);
            CHECK("shutdown-close", shutdown(s, SHUT_WR) == 0 && close(s) == 0);
        }
    }
    /* Resent datagrams still get their echo for a moment. */
    struct pollfd p = {u, POLLIN, 0};
    while (poll(&p, 1, 1500) > 0)
        echo_datagrams(u);
    close(u);
    close(l);
    /* Every other wait was a select: some of them woke for a socket. */
    CHECK("select-served", selected > 0);
    printf("lx-sockets: %ld connections, %ld bytes echoed, %ld datagrams echoed (%ld waits, %ld by select ready)\n",
           connections, echoed_bytes, echoed_datagrams, rounds, selected);
    return summary("lx-sockets");
}
