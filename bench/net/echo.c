/*
 * echo [PORT]: the TCP echo server of the network benchmark's Linux guest
 * (cargo xtask bench --http), the counterpart of Oxok's `tcpecho`: one
 * connection at a time, every byte echoed as it comes; a connection whose
 * whole content is "quit" ends the server. Default port 7.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int port = argc > 1 ? atoi(argv[1]) : 7;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    struct sockaddr_in a;
    static char buf[65536];

    if (s < 0) {
        perror("echo: socket");
        return 1;
    }
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 16) < 0) {
        perror("echo: bind/listen");
        return 1;
    }
    printf("echo: listening on port %d\n", port);
    fflush(stdout);
    for (;;) {
        int c = accept(s, NULL, NULL);
        size_t total = 0;
        char head[4];
        ssize_t n;

        if (c < 0)
            continue;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        while ((n = read(c, buf, sizeof buf)) > 0) {
            for (ssize_t i = 0; i < n && total + (size_t)i < sizeof head; i++)
                head[total + (size_t)i] = buf[i];
            total += (size_t)n;
            if (write_all(c, buf, (size_t)n) < 0)
                break;
        }
        close(c);
        if (total == 4 && memcmp(head, "quit", 4) == 0)
            break;
    }
    printf("echo: quit\n");
    return 0;
}
