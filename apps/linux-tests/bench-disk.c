/* lx-bench-disk: the disk workloads of `cargo xtask bench --disk` (issue
   15), the same static file on Oxok (C-FFS through dfsd, under the Linux
   personality) and in the bench's Linux guest (ext4 on the same
   virtio-blk device settings).
     lx-bench-disk DIR [quick] [xcp] [small | seq] [create | read | write] [reread]
   Works under DIR (made fresh). Each phase prints a marker, does its work
   and its sync, then its time:
     bench: phase <name> <ops> <op unit>   (the host counts disk requests from here)
     bench: <name> <microseconds> us       (... to here)
   Phases, in this order: smallfile_create, smallfile_read,
   smallfile_unlink (N files of 1 KiB in one directory; full 1,000, quick
   250), copy_cp (`busybox cp -r` of a tree of 100 files in 4 directories,
   full 20 MiB, quick 5 MiB, then sync) and, with `xcp`, copy_xcp (Oxok's
   `xcp SRC DST`, then sync), seq_write (full 64 MiB, quick 8 MiB, in
   1 MiB writes, fsync, close) and seq_read (the same file read back).
   Nothing is dropped from caches on either side. A failed check prints
   `bench: skip <name> <reason>`. `small` runs only the small-file
   phases, `create` only their first and `read` their first two (for
   profiling one phase: `cargo xtask icount --disk 256 --program dfsd
   "linux lx-bench-disk /dbench quick small create"` against a full-size
   run, and `read` against `create`); `reread` runs the read phase 200
   times (for a host profile of QEMU in which it is most of the time).
   `seq` runs only the sequential phases, `seq write` only the write
   (`seq` against `seq write` counts the read). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define SMALL_BYTES 1024
#define CHUNK (1 << 20)
#define TREE_FILES 100
#define TREE_DIRS 4

static char buf[CHUNK];
static char path[512];
/* Times the read phase runs (`reread`: 200). */
static int rereads = 1;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* The marker, on the wire before the phase's first request (tcdrain waits
   until the console has sent it; where it cannot, the write was
   synchronous). Anything the previous phase left is synced first. */
static long long phase(const char *name, long ops, const char *unit) {
    sync();
    printf("bench: phase %s %ld %s\n", name, ops, unit);
    fflush(stdout);
    tcdrain(1);
    return now_ns();
}

static void result(const char *name, long long t0) {
    long long us = (now_ns() - t0) / 1000;
    printf("bench: %s %lld us\n", name, us);
    fflush(stdout);
    tcdrain(1);
}

static int skip(const char *name, const char *what) {
    printf("bench: skip %s %s: %s\n", name, what, strerror(errno));
    fflush(stdout);
    return 1;
}

/* The byte at offset `i` of file number `f` (checked when read back). */
static char pattern(long f, long i) {
    return (char)('a' + (f * 7 + i) % 26);
}

static void fill(long f, long off, long n) {
    for (long i = 0; i < n; i++) buf[i] = pattern(f, off + i);
}

/* All of `n` bytes (a write may take fewer). */
static int write_all(int fd, const char *b, long n) {
    while (n > 0) {
        long w = write(fd, b, n);
        if (w <= 0) return -1;
        b += w;
        n -= w;
    }
    return 0;
}

static int write_file(const char *p, long f, long size) {
    int fd = open(p, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return -1;
    for (long off = 0; off < size;) {
        long n = size - off < CHUNK ? size - off : CHUNK;
        fill(f, off, n);
        if (write_all(fd, buf, n) != 0) {
            close(fd);
            return -1;
        }
        off += n;
    }
    return close(fd);
}

static int smallfile(const char *dir, long n, int phases) {
    snprintf(path, sizeof path, "%s/small", dir);
    if (mkdir(path, 0755) != 0) return skip("smallfile_create", "mkdir");
    long long t = phase("smallfile_create", n, "file");
    for (long i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/small/f%05ld", dir, i);
        if (write_file(path, i, SMALL_BYTES) != 0) return skip("smallfile_create", path);
    }
    sync();
    result("smallfile_create", t);
    if (phases == 1) return 0;
    for (int r = 0; r < rereads; r++) {
        t = phase("smallfile_read", n, "file");
        for (long i = 0; i < n; i++) {
            snprintf(path, sizeof path, "%s/small/f%05ld", dir, i);
            int fd = open(path, O_RDONLY);
            if (fd < 0) return skip("smallfile_read", path);
            long got = read(fd, buf, SMALL_BYTES);
            close(fd);
            if (got != SMALL_BYTES || buf[0] != pattern(i, 0) || buf[SMALL_BYTES - 1] != pattern(i, SMALL_BYTES - 1)) {
                errno = EIO;
                return skip("smallfile_read", path);
            }
        }
        result("smallfile_read", t);
    }
    if (phases == 2) return 0;
    t = phase("smallfile_unlink", n, "file");
    for (long i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/small/f%05ld", dir, i);
        if (unlink(path) != 0) return skip("smallfile_unlink", path);
    }
    sync();
    result("smallfile_unlink", t);
    snprintf(path, sizeof path, "%s/small", dir);
    rmdir(path);
    return 0;
}

static int sequential(const char *dir, long mib, int write_only) {
    snprintf(path, sizeof path, "%s/seq", dir);
    long long t = phase("seq_write", mib, "MiB");
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return skip("seq_write", "open");
    for (long m = 0; m < mib; m++) {
        fill(m, 0, CHUNK);
        if (write_all(fd, buf, CHUNK) != 0) return skip("seq_write", "write");
    }
    if (fsync(fd) != 0 || close(fd) != 0) return skip("seq_write", "fsync");
    result("seq_write", t);
    if (write_only) return 0;
    t = phase("seq_read", mib, "MiB");
    fd = open(path, O_RDONLY);
    if (fd < 0) return skip("seq_read", "open");
    for (long m = 0; m < mib; m++) {
        long got = 0;
        while (got < CHUNK) {
            long r = read(fd, buf + got, CHUNK - got);
            if (r <= 0) return skip("seq_read", "short read");
            got += r;
        }
        if (buf[0] != pattern(m, 0) || buf[CHUNK - 1] != pattern(m, CHUNK - 1)) {
            errno = EIO;
            return skip("seq_read", "content");
        }
    }
    close(fd);
    result("seq_read", t);
    unlink(path);
    return 0;
}

/* The tree: TREE_DIRS directories, TREE_FILES files totalling `bytes`
   (sizes from 1/2 to 3/2 of the mean, the last one takes the rest). */
static int make_tree(const char *dir, long bytes) {
    snprintf(path, sizeof path, "%s/tree", dir);
    if (mkdir(path, 0755) != 0) return -1;
    for (int d = 0; d < TREE_DIRS; d++) {
        snprintf(path, sizeof path, "%s/tree/d%d", dir, d);
        if (mkdir(path, 0755) != 0) return -1;
    }
    long mean = bytes / TREE_FILES, left = bytes;
    for (long f = 0; f < TREE_FILES; f++) {
        long size = f == TREE_FILES - 1 ? left : mean / 2 + (mean * ((f * 37) % 100)) / 100;
        left -= size;
        snprintf(path, sizeof path, "%s/tree/d%ld/f%03ld", dir, f % TREE_DIRS, f);
        if (write_file(path, f, size) != 0) return -1;
    }
    return 0;
}

/* 0 if file `f` of the copy under `dst` has the source's size and bytes
   at both ends. */
static int check_copy(const char *dst, long f, const char *dir) {
    struct stat a, b;
    char src[512];
    snprintf(src, sizeof src, "%s/tree/d%ld/f%03ld", dir, f % TREE_DIRS, f);
    snprintf(path, sizeof path, "%s/d%ld/f%03ld", dst, f % TREE_DIRS, f);
    if (stat(src, &a) != 0 || stat(path, &b) != 0 || a.st_size != b.st_size || b.st_size == 0) return -1;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    char first, last;
    int ok = pread(fd, &first, 1, 0) == 1 && pread(fd, &last, 1, b.st_size - 1) == 1;
    close(fd);
    return ok && first == pattern(f, 0) && last == pattern(f, b.st_size - 1) ? 0 : -1;
}

/* Times `argv` (a child; the copy of tree/ to `dst`) and the sync after it;
   then checks every file of the copy. A non-zero exit status is printed
   (busybox `cp -r` on Oxok cannot set directory modes and says so) but
   only a wrong copy fails the phase. */
static int copy(const char *name, const char *dir, char *const argv[], const char *dst) {
    long long t = phase(name, TREE_FILES, "file");
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return skip(name, "fork");
    sync();
    result(name, t);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) printf("bench: %s: %s exited with status %#x\n", name, argv[0], status);
    for (long f = 0; f < TREE_FILES; f++) {
        if (check_copy(dst, f, dir) != 0) {
            printf("bench: %s copied wrong: %s\n", name, path);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: lx-bench-disk DIR [quick] [xcp]\n");
        return 2;
    }
    const char *dir = argv[1];
    int quick = 0, xcp = 0, small = 0, seq = 0, phases = 3;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "quick") == 0) quick = 1;
        if (strcmp(argv[i], "xcp") == 0) xcp = 1;
        if (strcmp(argv[i], "small") == 0) small = 1;
        if (strcmp(argv[i], "create") == 0) small = 1, phases = 1;
        if (strcmp(argv[i], "read") == 0) small = 1, phases = 2;
        if (strcmp(argv[i], "reread") == 0) rereads = 200;
        if (strcmp(argv[i], "seq") == 0) seq = 1;
        if (strcmp(argv[i], "write") == 0) phases = 1;
    }
    long files = quick ? 250 : 1000, seq_mib = quick ? 8 : 64, tree_mib = quick ? 5 : 20;
    printf("bench: start\n");
    fflush(stdout);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return skip("smallfile_create", dir);
    if (seq) {
        int bad = sequential(dir, seq_mib, phases == 1);
        printf("bench: done\n");
        fflush(stdout);
        return bad;
    }
    int bad = smallfile(dir, files, phases);
    if (small) {
        printf("bench: done\n");
        fflush(stdout);
        return bad;
    }
    if (make_tree(dir, tree_mib << 20) != 0) {
        bad |= skip("copy_cp", "making the tree");
    } else {
        char src[256], dst[256];
        snprintf(src, sizeof src, "%s/tree", dir);
        snprintf(dst, sizeof dst, "%s/copy-cp", dir);
        char *cp[] = {"/bin/busybox", "cp", "-r", src, dst, NULL};
        bad |= copy("copy_cp", dir, cp, dst);
        if (xcp) {
            snprintf(dst, sizeof dst, "%s/copy-xcp", dir);
            char *x[] = {"/bin/xcp", src, dst, NULL};
            bad |= copy("copy_xcp", dir, x, dst);
        }
    }
    /* Last: a file system that fails a large write fails no other phase. */
    bad |= sequential(dir, seq_mib, 0);
    printf("bench: done\n");
    fflush(stdout);
    return bad;
}
