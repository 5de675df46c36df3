/* Processes through the personality: fork, vfork, posix_spawn (clone with
   CLONE_VM|CLONE_VFORK), execve of Linux and native programs keeping the
   pid, wait4/waitid (one child, any child, WNOHANG, ECHILD), exit_group,
   getpid/getppid across them, kill of a child, copy-on-write isolation;
   execve of `#!` scripts (the interpreter's arguments as Linux builds
   them, a script run by a script) and its refusals (no execute bit or a
   directory EACCES, a missing interpreter ENOENT, an empty line ENOEXEC,
   a script its own interpreter ELOOP). */
#define _GNU_SOURCE
#include "check.h"
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <stdint.h>
#include <sys/stat.h>

extern char **environ;

static int shared_value = 1;
static char cow_buffer[8192];

/* Mode of the execve test: runs as the new program in the same process. */
static int exec_child(char **argv) {
    int ok = getpid() == atoi(argv[2]) && getppid() == atoi(argv[3]);
    int closed = fcntl(atoi(argv[4]), F_GETFD) == -1 && errno == EBADF;
    int kept = fcntl(atoi(argv[5]), F_GETFD) == 0;
    if (!ok) printf("exec-child: pid %d (want %s) ppid %d (want %s)\n", getpid(), argv[2], getppid(), argv[3]);
    if (!closed) printf("exec-child: close-on-exec descriptor still open\n");
    if (!kept) printf("exec-child: kept descriptor lost\n");
    return ok && closed && kept ? 42 : 1;
}

/* Mode of the script tests: run as a `#!` line's interpreter; 43 if the
   arguments after the first, joined by commas, are $LXP_WANT. */
static int script_child(int argc, char **argv) {
    char got[512] = "";
    for (int i = 1; i < argc; i++) {
        if (i > 1) strncat(got, ",", sizeof got - strlen(got) - 1);
        strncat(got, argv[i], sizeof got - strlen(got) - 1);
    }
    const char *want = getenv("LXP_WANT");
    if (want && strcmp(got, want) == 0) return 43;
    printf("script-child: got %s, want %s\n", got, want ? want : "(unset)");
    return 1;
}

/* Writes a file of `text` with `mode` (after the umask, set again). */
static int make_file(const char *path, const char *text, mode_t mode) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return -1;
    int ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text) && fchmod(fd, mode) == 0;
    return close(fd) == 0 && ok ? 0 : -1;
}

/* Forks a child that execve's `path` with `args` and $LXP_WANT=`want`;
   its exit status (-1 if it did not exit). */
static int run_script(const char *path, char **args, const char *want) {
    char env[600];
    snprintf(env, sizeof env, "LXP_WANT=%s", want);
    char *envp[] = {env, NULL};
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        execve(path, args, envp);
        _exit(99);
    }
    int st = -1;
    return waitpid(c, &st, 0) == c && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Forks a child that runs f and exits with its result. */
static pid_t spawn_fn(int (*f)(void)) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) _exit(f());
    return pid;
}

static int exit_three(void) { return 3; }
static int exit_five(void) { return 5; }
static int touch_shared(void) {
    shared_value = 2;
    return shared_value;
}
static int segv(void) {
    volatile int *nowhere = (int *)16;
    return *nowhere;
}
static int wait_forever(void) {
    for (;;) pause();
    return 0;
}
static pid_t parent_of_grandchild;
static int grandchild_checks(void) {
    fflush(stdout);
    pid_t me = getpid();
    pid_t g = fork();
    if (g == 0) _exit(getppid() == me ? 0 : 1);
    int st = -1;
    if (waitpid(g, &st, 0) != g) return 2;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 && getppid() == parent_of_grandchild ? 0 : 3;
}

int main(int argc, char **argv) {
    if (argc >= 6 && strcmp(argv[1], "--exec-child") == 0) return exec_child(argv);
    if (argc >= 2 && strcmp(argv[1], "--script-child") == 0) return script_child(argc, argv);
    pid_t me = getpid(), parent = getppid();
    CHECK("ids", me > 0 && parent > 0 && me != parent);

    int st = -1;
    pid_t c = spawn_fn(exit_three);
    CHECK("fork", c > 0 && c != me);
    CHECK("wait4-one", wait4(c, &st, 0, NULL) == c && WIFEXITED(st) && WEXITSTATUS(st) == 3);
    CHECK("wait-echild", wait(&st) == -1 && errno == ECHILD);
    CHECK("wait-not-mine", waitpid(parent, &st, 0) == -1 && errno == ECHILD);

    c = spawn_fn(touch_shared);
    CHECK("cow-isolated", waitpid(c, &st, 0) == c && WEXITSTATUS(st) == 2 && shared_value == 1);

    parent_of_grandchild = me;
    c = spawn_fn(grandchild_checks);
    CHECK("grandchild-ppid", waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);

    /* A pipe between parent and child; the child reads into a page it
       shares copy-on-write with the parent (the personality must copy it
       before writing). */
    int p[2], q[2];
    CHECK("pipe", pipe(p) == 0 && pipe(q) == 0);
    memset(cow_buffer, 'x', sizeof cow_buffer);
    fflush(stdout);
    c = fork();
    if (c == 0) {
        close(p[1]);
        close(q[0]);
        ssize_t n = read(p[0], cow_buffer + 4000, 200);
        int good = n == 5 && memcmp(cow_buffer + 4000, "ping\n", 5) == 0;
        write(q[1], good ? "pong" : "bad!", 4);
        _exit(good ? 0 : 1);
    }
    close(p[0]);
    close(q[1]);
    /* The child is blocked reading: WNOHANG finds nothing yet. */
    CHECK("wnohang-running", waitpid(c, &st, WNOHANG) == 0);
    CHECK("pipe-to-child", write(p[1], "ping\n", 5) == 5);
    char reply[8] = {0};
    CHECK("pipe-from-child", read(q[0], reply, 4) == 4 && memcmp(reply, "pong", 4) == 0);
    CHECK("cow-read-into", waitpid(c, &st, 0) == c && WEXITSTATUS(st) == 0 && cow_buffer[4000] == 'x');
    close(p[1]);
    close(q[0]);

    /* Two children, waited for in any order. */
    pid_t a = spawn_fn(exit_three), b = spawn_fn(exit_five);
    int seen = 0;
    for (int i = 0; i < 2; i++) {
        pid_t w = wait(&st);
        if (w == a && WEXITSTATUS(st) == 3) seen |= 1;
        if (w == b && WEXITSTATUS(st) == 5) seen |= 2;
    }
    CHECK("wait-any", seen == 3);

    siginfo_t si;
    c = spawn_fn(exit_five);
    memset(&si, 0, sizeof si);
    CHECK("waitid", waitid(P_PID, c, &si, WEXITED) == 0 && si.si_pid == c && si.si_code == CLD_EXITED &&
                        si.si_status == 5 && si.si_signo == SIGCHLD);

    fflush(stdout);
    c = vfork();
    if (c == 0) _exit(9);
    CHECK("vfork", c > 0 && waitpid(c, &st, 0) == c && WEXITSTATUS(st) == 9);

    fflush(stdout);
    c = fork();
    if (c == 0) syscall(SYS_exit_group, 300);
    CHECK("exit_group", waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == (300 & 0xff));

    c = spawn_fn(wait_forever);
    CHECK("kill-child", kill(c, SIGTERM) == 0);
    CHECK("killed-child-status", waitpid(c, &st, 0) == c && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
    /* A fault nobody handles ends the child as Linux's default action
       does: the parent sees the signal, not an exit code. */
    c = spawn_fn(segv);
    CHECK("segv-child-status", waitpid(c, &st, 0) == c && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    CHECK("kill-zero", kill(me, 0) == 0);
    CHECK("kill-gone", kill(c, 0) == -1 && errno == ESRCH);

    /* execve keeps the pid; close-on-exec descriptors close, others stay. */
    int gone = open("/dev/null", O_RDONLY | O_CLOEXEC), kept = open("/dev/null", O_RDONLY);
    fflush(stdout);
    c = fork();
    if (c == 0) {
        char pid[16], ppid[16], fd1[16], fd2[16];
        snprintf(pid, sizeof pid, "%d", getpid());
        snprintf(ppid, sizeof ppid, "%d", me);
        snprintf(fd1, sizeof fd1, "%d", gone);
        snprintf(fd2, sizeof fd2, "%d", kept);
        char *args[] = {"lx-proc", "--exec-child", pid, ppid, fd1, fd2, NULL};
        execve("/proc/self/exe", args, environ);
        _exit(99);
    }
    CHECK("execve-self", waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 42);
    close(gone);
    close(kept);

    fflush(stdout);
    c = fork();
    if (c == 0) {
        char *args[] = {"lx-hello", "from-execve", NULL};
        execve("/bin/lx-hello", args, environ);
        _exit(99);
    }
    CHECK("execve-linux", waitpid(c, &st, 0) == c && WEXITSTATUS(st) == 7);

    fflush(stdout);
    c = fork();
    if (c == 0) {
        char *args[] = {"echo", "native", "echo", "from", "execve", NULL};
        execve("/bin/echo", args, environ);
        _exit(99);
    }
    CHECK("execve-native", waitpid(c, &st, 0) == c && WEXITSTATUS(st) == 0);

    char *none[] = {"x", NULL};
    CHECK("execve-enoent", execve("/no/such/program", none, environ) == -1 && errno == ENOENT);

    /* Scripts: the interpreter gets its name as written, the line's one
       argument, the script's path as given, then the arguments after the
       first; a script may be another's interpreter. */
    char *sa[] = {"ignored", "a1", "two words", NULL};
    CHECK("script-files", make_file("/lxps", "#!/bin/lx-proc --script-child\necho never\n", 0755) == 0 &&
                              make_file("/lxps2", "#!  /lxps  x  y \t\n", 0755) == 0 &&
                              make_file("/lxps-nox", "#!/bin/lx-proc --script-child\n", 0644) == 0 &&
                              make_file("/lxps-none", "#!/no/such/interpreter\n", 0755) == 0 &&
                              make_file("/lxps-empty", "#!  \n", 0755) == 0 &&
                              make_file("/lxps-loop", "#!/lxps-loop\n", 0755) == 0);
    CHECK("script-argv", run_script("/lxps", sa, "--script-child,/lxps,a1,two words") == 43);
    CHECK("script-of-script", run_script("/lxps2", sa, "--script-child,/lxps,x  y,/lxps2,a1,two words") == 43);
    CHECK("script-no-exec-bit", execve("/lxps-nox", none, environ) == -1 && errno == EACCES);
    CHECK("execve-directory", execve("/", none, environ) == -1 && errno == EACCES);
    CHECK("script-no-interpreter", execve("/lxps-none", none, environ) == -1 && errno == ENOENT);
    CHECK("script-empty-line", execve("/lxps-empty", none, environ) == -1 && errno == ENOEXEC);
    CHECK("script-loop", execve("/lxps-loop", none, environ) == -1 && errno == ELOOP);
    /* The boot archive's programs read as files, read-only: its own image
       through /proc/self/exe, another by its /bin path, whole. */
    char magic[4];
    int ef = open("/proc/self/exe", O_RDONLY);
    CHECK("read-own-exe", ef >= 0 && read(ef, magic, 4) == 4 && memcmp(magic, "\x7f" "ELF", 4) == 0);
    close(ef);
    struct stat hs;
    int hf = open("/bin/lx-hello", O_RDONLY);
    long total = 0, got;
    static char chunk[65536];
    while (hf >= 0 && (got = read(hf, chunk, sizeof chunk)) > 0) total += got;
    CHECK("read-archive-program", hf >= 0 && stat("/bin/lx-hello", &hs) == 0 && total == hs.st_size && total > 0);
    close(hf);
    CHECK("archive-program-not-writable", open("/bin/lx-hello", O_WRONLY) == -1);
    CHECK("scripts-removed", unlink("/lxps") == 0 && unlink("/lxps2") == 0 && unlink("/lxps-nox") == 0 &&
                                 unlink("/lxps-none") == 0 && unlink("/lxps-empty") == 0 && unlink("/lxps-loop") == 0);
    CHECK("execve-efault", syscall(SYS_execve, 8, none, environ) == -1 && errno == EFAULT);
    volatile uintptr_t bad_argv = 16;
    CHECK("execve-efault-argv", execve("/bin/lx-hello", (char **)bad_argv, environ) == -1 && errno == EFAULT);

    char *sargs[] = {"lx-hello", "spawned", NULL};
    pid_t sp = -1;
    fflush(stdout);
    CHECK("posix_spawn", posix_spawn(&sp, "/bin/lx-hello", NULL, NULL, sargs, environ) == 0 && sp > 0);
    CHECK("posix_spawn-status", waitpid(sp, &st, 0) == sp && WEXITSTATUS(st) == 7);
    CHECK("posix_spawn-missing", posix_spawn(&sp, "/no/such", NULL, NULL, sargs, environ) == ENOENT);
    /* Bad pointers in the process calls are EFAULT, never the
       personality's end; the child is then reaped or still waitable. */
    volatile uintptr_t bad = 8;
    c = spawn_fn(exit_three);
    CHECK("wait4-status-efault", syscall(SYS_wait4, c, bad, 0, 0) == -1 && errno == EFAULT);
    pid_t wr = waitpid(c, &st, 0);
    CHECK("reaped-or-waitable", (wr == c && WEXITSTATUS(st) == 3) || (wr == -1 && errno == ECHILD));
    c = spawn_fn(exit_three);
    CHECK("wait4-rusage-efault", syscall(SYS_wait4, c, 0, 0, bad) == -1 && errno == EFAULT);
    waitpid(c, &st, 0);
    c = spawn_fn(exit_three);
    CHECK("waitid-info-efault", syscall(SYS_waitid, P_PID, c, bad, WEXITED, 0) == -1 && errno == EFAULT);
    waitpid(c, &st, 0);
    CHECK("prlimit-efault", syscall(SYS_prlimit64, 0, RLIMIT_NPROC, bad, 0) == -1 && errno == EFAULT);
    CHECK("sigsuspend-efault", syscall(SYS_rt_sigsuspend, bad, 8) == -1 && errno == EFAULT);
    char *badargs[] = {"lx-hello", (char *)bad, NULL};
    CHECK("execve-efault-arg", execve("/bin/lx-hello", badargs, environ) == -1 && errno == EFAULT);
    CHECK("execve-efault-env", syscall(SYS_execve, "/bin/lx-hello", none, bad) == -1 && errno == EFAULT);
    CHECK("ids-unchanged", getpid() == me && getppid() == parent);
    return summary("lx-proc");
}
