/* Waits for signals from the Oxok shell: SIGINT has a handler (each one
   is reported), SIGTERM keeps its default action (the process ends with
   status 143). */
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile int caught;
static void on_int(int sig) {
    (void)sig;
    caught++;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_int;
    sigaction(SIGINT, &sa, NULL);
    printf("lx-sigwait: ready\n");
    fflush(stdout);
    for (int seen = 0;;) {
        pause();
        if (caught != seen) {
            seen = caught;
            printf("lx-sigwait: caught SIGINT (%d)\n", seen);
            fflush(stdout);
        }
    }
}
