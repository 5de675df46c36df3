/* Console reads as a terminal gives them (the program owns the console:
   `linux lx-ttyread`; the scenario's typist types with pauses): a read a
   signal interrupts returns EINTR, or restarts after an SA_RESTART
   handler and then returns the line typed later; poll says a partial
   line is not ready (canonical mode) and a finished one is. */
#define _GNU_SOURCE
#include "check.h"
#include <poll.h>
#include <signal.h>
#include <unistd.h>

static volatile int alarms;
static void on_alarm(int sig) {
    (void)sig;
    alarms++;
}

static void say(const char *what) {
    printf("lx-ttyread: %s\n", what);
    fflush(stdout);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    char buf[64];
    say("nobody types yet");
    alarm(1);
    ssize_t n = read(0, buf, sizeof buf);
    CHECK("read-eintr", n == -1 && errno == EINTR && alarms == 1);

    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    alarm(1);
    say("type hello in two seconds");
    n = read(0, buf, sizeof buf);
    CHECK("read-restarted", n == 6 && memcmp(buf, "hello\n", 6) == 0 && alarms == 2);

    say("type half a line");
    struct pollfd p = {0, POLLIN, 0};
    usleep(1500 * 1000);
    CHECK("partial-line-not-ready", poll(&p, 1, 0) == 0);
    say("finish the line");
    CHECK("line-ready", poll(&p, 1, 10000) == 1 && (p.revents & POLLIN));
    n = read(0, buf, sizeof buf);
    CHECK("line-read", n == 8 && memcmp(buf, "partial\n", 8) == 0);
    return summary("lx-ttyread");
}
