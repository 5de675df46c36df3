/* Process groups and sessions (groups.rs): a program started from the
   Oxok shell leads a session and a group; setsid and setpgid refuse a
   leader; children inherit the group, move to their own (from either
   side), are signalled and waited for as a group; the terminal's
   foreground group (tcgetpgrp/tcsetpgrp on /dev/tty) is the session's,
   seen by parent and child alike. */
#define _GNU_SOURCE
#include "check.h"
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static void wait_forever(void) {
    for (;;) pause();
}

int main(void) {
    pid_t me = getpid();
    CHECK("own-group-and-session", getpgrp() == me && getpgid(0) == me && getsid(0) == me);
    CHECK("setsid-leader-eperm", setsid() == -1 && errno == EPERM);
    CHECK("setpgid-leader-eperm", setpgid(0, 0) == -1 && errno == EPERM);
    CHECK("getpgid-unknown-esrch", getpgid(999999) == -1 && errno == ESRCH);

    int p[2];
    pipe(p);
    pid_t kid = fork();
    if (kid == 0) {
        close(p[0]);
        char ok = getpgrp() == me && getsid(0) == me ? 'y' : 'n';
        write(p[1], &ok, 1);
        _exit(setsid() == getpid() && getsid(0) == getpid() && getpgrp() == getpid() ? 0 : 1);
    }
    close(p[1]);
    char got = 0;
    read(p[0], &got, 1);
    close(p[0]);
    int st;
    CHECK("child-inherits-group", got == 'y');
    CHECK("child-setsid", waitpid(kid, &st, 0) == kid && WIFEXITED(st) && WEXITSTATUS(st) == 0);

    pid_t a = fork();
    if (a == 0) {
        setpgid(0, 0);
        wait_forever();
    }
    CHECK("setpgid-child", setpgid(a, a) == 0 && getpgid(a) == a && getsid(a) == me);
    pid_t b = fork();
    if (b == 0) wait_forever();
    CHECK("setpgid-join-group", setpgid(b, a) == 0 && getpgid(b) == a);
    CHECK("setpgid-foreign-group-eperm", setpgid(b, 999999) == -1 && errno == EPERM);

    int tty = open("/dev/tty", O_RDWR);
    CHECK("tcgetpgrp-own", tty >= 0 && tcgetpgrp(tty) == me);
    CHECK("tcsetpgrp-child-group", tcsetpgrp(tty, a) == 0 && tcgetpgrp(tty) == a);
    pid_t c = fork();
    if (c == 0) _exit(tcgetpgrp(tty) == a ? 0 : 1);
    CHECK("foreground-seen-by-child", waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    signal(SIGTTOU, SIG_IGN); /* as a job-control shell does, to take the terminal back */
    CHECK("tcsetpgrp-back", tcsetpgrp(tty, me) == 0 && tcgetpgrp(tty) == me);
    CHECK("tcsetpgrp-none-esrch", tcsetpgrp(tty, 999999) == -1 && errno == ESRCH);

    CHECK("kill-group", kill(-a, SIGTERM) == 0);
    int n = 0;
    pid_t w;
    while ((w = waitpid(-a, &st, 0)) > 0)
        if ((w == a || w == b) && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM)
            n++;
    CHECK("wait-group", n == 2 && errno == ECHILD);
    CHECK("kill-empty-group-esrch", kill(-999999, SIGTERM) == -1 && errno == ESRCH);
    CHECK("kill-own-group-zero", kill(0, 0) == 0);
    return summary("lx-pgroups");
}
