/* alarm, setitimer and getitimer (ITIMER_REAL): SIGALRM ends pause, a
   sleep and a wait on time, reaches a program making calls and one
   spinning without calls (so does a signal from another process), re-arms with
   an interval, kills by default; a fork child has no timer; bad arguments
   are EINVAL or EFAULT. */
#define _GNU_SOURCE
#include "check.h"
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t alarms;

static void on_alarm(int sig) {
    (void)sig;
    alarms++;
}

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

static void arm_ms(long ms, long interval_ms) {
    struct itimerval v = {{interval_ms / 1000, (interval_ms % 1000) * 1000}, {ms / 1000, (ms % 1000) * 1000}};
    setitimer(ITIMER_REAL, &v, NULL);
}

int main(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);

    CHECK("alarm-none-before", alarm(0) == 0);
    alarm(5);
    unsigned left = alarm(0);
    CHECK("alarm-returns-left", left >= 4 && left <= 5);

    long long t0 = now_ms();
    alarm(1);
    int r = pause();
    long long took = now_ms() - t0;
    CHECK("alarm-ends-pause", r == -1 && errno == EINTR && alarms == 1);
    CHECK("alarm-on-time", took >= 900 && took < 3000);

    alarms = 0;
    arm_ms(100, 0);
    struct itimerval cur;
    CHECK("getitimer-armed", getitimer(ITIMER_REAL, &cur) == 0 && cur.it_value.tv_sec == 0 &&
                                 cur.it_value.tv_usec > 0 && cur.it_value.tv_usec <= 100000);
    struct timespec two = {2, 0}, rem = {0, 0};
    t0 = now_ms();
    r = nanosleep(&two, &rem);
    took = now_ms() - t0;
    CHECK("itimer-ends-sleep", r == -1 && errno == EINTR && alarms == 1 && rem.tv_sec >= 1 && took < 1500);
    CHECK("getitimer-disarmed", getitimer(ITIMER_REAL, &cur) == 0 && cur.it_value.tv_sec == 0 &&
                                    cur.it_value.tv_usec == 0);

    alarms = 0;
    arm_ms(50, 50);
    sigset_t none;
    sigemptyset(&none);
    while (alarms < 3) sigsuspend(&none);
    struct itimerval old;
    struct itimerval off = {{0, 0}, {0, 0}};
    CHECK("itimer-periodic", setitimer(ITIMER_REAL, &off, &old) == 0 && alarms == 3 &&
                                 old.it_interval.tv_sec == 0 && old.it_interval.tv_usec == 50000);

    alarms = 0;
    arm_ms(100, 0);
    t0 = now_ms();
    while (!alarms && now_ms() - t0 < 5000) getppid();
    CHECK("alarm-while-calling", alarms == 1);

    /* Spinning without a single call: the personality delivers at the end
       of the time slice (its slot-end upcall). Without that, this loop
       never ends. */
    alarms = 0;
    arm_ms(100, 0);
    t0 = now_ms();
    while (!alarms) {
    }
    took = now_ms() - t0;
    CHECK("alarm-while-spinning", alarms == 1 && took >= 90 && took < 2000);

    /* A signal another process sends reaches a spinning handler too. */
    pid_t spinner = fork();
    if (spinner == 0) {
        alarms = 0;
        while (!alarms) {
        }
        _exit(alarms == 1 ? 0 : 1);
    }
    struct timespec tenth = {0, 100 * 1000 * 1000};
    nanosleep(&tenth, NULL);
    kill(spinner, SIGALRM);
    int sst;
    CHECK("signal-to-spinner", waitpid(spinner, &sst, 0) == spinner && WIFEXITED(sst) && WEXITSTATUS(sst) == 0);

    alarms = 0;
    int p[2];
    pipe(p);
    arm_ms(100, 0);
    char c;
    r = read(p[0], &c, 1);
    CHECK("alarm-ends-pipe-read", r == -1 && errno == EINTR && alarms == 1);

    pid_t kid = fork();
    if (kid == 0) {
        signal(SIGALRM, SIG_DFL);
        alarm(1);
        pause();
        _exit(0);
    }
    int st;
    CHECK("alarm-default-kills", waitpid(kid, &st, 0) == kid && WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM);

    arm_ms(10000, 0);
    kid = fork();
    if (kid == 0) {
        struct itimerval v;
        _exit(getitimer(ITIMER_REAL, &v) == 0 && v.it_value.tv_sec == 0 && v.it_value.tv_usec == 0 ? 0 : 1);
    }
    CHECK("fork-child-no-timer", waitpid(kid, &st, 0) == kid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK("parent-keeps-timer", getitimer(ITIMER_REAL, &cur) == 0 && cur.it_value.tv_sec >= 8);
    alarm(0);

    CHECK("itimer-bad-which", setitimer(7, &off, NULL) == -1 && errno == EINVAL);
    struct itimerval bad = {{0, 0}, {0, 1000000}};
    CHECK("itimer-bad-usec", setitimer(ITIMER_REAL, &bad, NULL) == -1 && errno == EINVAL);
    CHECK("itimer-efault", syscall(SYS_setitimer, ITIMER_REAL, (void *)8, NULL) == -1 && errno == EFAULT);
    CHECK("getitimer-efault", syscall(SYS_getitimer, ITIMER_REAL, (void *)8) == -1 && errno == EFAULT);
    return summary("lx-alarm");
}
