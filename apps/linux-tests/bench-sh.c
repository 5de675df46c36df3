/* lx-bench-sh: the busybox shell workload of issue 12 (bench row
   busybox_sh), the same file on Oxok (under the personality) and in the
   bench's Linux guest. It runs `busybox sh -c SCRIPT` — a loop of 1,000
   iterations with arithmetic feeding `sort | uniq -c | wc`, then 100
   small files created, read with cat and removed — captures its output
   and checks it.
     lx-bench-sh                 one run: "ok busybox-sh-output" or FAIL
     lx-bench-sh --bench [quick] median cycles of 3 runs (quick: 1):
                                 "bench: busybox_sh N cycles" */
#define _GNU_SOURCE
#include "check.h"
#include "timing.h"
#include <spawn.h>
#include <unistd.h>
#include <sys/wait.h>

extern char **environ;

static const char SCRIPT[] =
    "i=0; s=0\n"
    "{ while [ $i -lt 1000 ]; do s=$((s + i * i % 7)); echo $((i * 7 % 13)); i=$((i + 1)); done;"
    " echo sum $s; } | sort | uniq -c | wc\n"
    "mkdir -p /tmp/bsh\n"
    "n=0; while [ $n -lt 100 ]; do echo file $n > /tmp/bsh/f$n; n=$((n + 1)); done\n"
    "cat /tmp/bsh/f* | wc -l\n"
    "rm -r /tmp/bsh\n";

/* 13 residues and the sum line: 14 lines, 29 words, 150 characters (the
   sum, 2001, is among them); then the 100 files' lines. */
static const char WANT[] = "       14        29       150\n100\n";

/* Runs the script once; 0 if its output and status are right. */
static int run_once(void) {
    int p[2];
    if (pipe(p) != 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    posix_spawn_file_actions_addclose(&fa, p[1]);
    char *argv[] = {"busybox", "sh", "-c", (char *)SCRIPT, NULL};
    pid_t pid;
    int err = posix_spawn(&pid, "/bin/busybox", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (err != 0) {
        close(p[0]);
        return -1;
    }
    static char out[256];
    size_t got = 0;
    ssize_t n;
    while (got < sizeof out - 1 && (n = read(p[0], out + got, sizeof out - 1 - got)) > 0) got += n;
    out[got] = 0;
    close(p[0]);
    int status;
    if (waitpid(pid, &status, 0) != pid || status != 0) return -1;
    if (strcmp(out, WANT) != 0) {
        printf("lx-bench-sh: got \"%s\"\n", out);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "--bench") == 0) {
        int rounds = argc > 2 && strcmp(argv[2], "quick") == 0 ? 1 : 3;
        uint64_t t[3];
        for (int i = 0; i < rounds; i++) {
            uint64_t t0 = rdtsc();
            if (run_once() != 0) {
                printf("bench: busybox_sh 0 cycles\n");
                return 1;
            }
            t[i] = rdtsc() - t0;
        }
        printf("bench: busybox_sh %llu cycles\n", (unsigned long long)median(t, rounds));
        return 0;
    }
    CHECK("busybox-sh-output", run_once() == 0);
    return summary("lx-bench-sh");
}
