/* Files through the personality and the file server: create, write, read,
   seek, stat, directories, rename, unlink, getcwd/chdir, dup, devices. */
#define _GNU_SOURCE
#include "check.h"
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/mman.h>
#include <sys/syscall.h>

/* A file's bytes move in one copy between the program's memory and the
   file server's buffer: a large write and read come back whole, and bad
   pointers (unmapped, the personality's image and data, the exposed
   tables, PROT_NONE, a read into read-only memory) are EFAULT, with the
   file and its position unchanged and the personality running; so are a
   path read from, and a struct stat written to, any of them (the call
   itself: musl's fstat writes the struct in the program). */
static void big_and_bad(void) {
    enum { BIG = 200 * 1024 + 123 };
    unsigned char *w = malloc(BIG), *r = malloc(BIG);
    for (long i = 0; i < BIG; i++) w[i] = (unsigned char)(i * 7 + i / 4096);
    int fd = open("/lx/big", O_CREAT | O_RDWR | O_TRUNC, 0644);
    CHECK("big-write", fd >= 0 && write(fd, w, BIG) == BIG);
    CHECK("big-read", lseek(fd, 0, SEEK_SET) == 0 && read(fd, r, BIG) == BIG && memcmp(w, r, BIG) == 0);
    CHECK("big-read-eof", read(fd, r, BIG) == 0);
    CHECK("big-pread", pread(fd, r, 70000, 5000) == 70000 && memcmp(w + 5000, r, 70000) == 0);
    char *none = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *ro = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    long bad[] = {0x10, 0x70000000L, 0x70001000L, 0x7f8000000000L, (long)none};
    const char *names[] = {"null-page", "personality-text", "personality-data", "exposed", "protnone"};
    char name[64];
    CHECK("big-seek", lseek(fd, 4096, SEEK_SET) == 4096);
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(name, sizeof name, "file-write-%s", names[i]);
        CHECK(name, write(fd, (void *)bad[i], 8192) == -1 && errno == EFAULT);
        snprintf(name, sizeof name, "file-read-%s", names[i]);
        CHECK(name, read(fd, (void *)bad[i], 8192) == -1 && errno == EFAULT);
        /* A path read from there, a struct written there. */
        snprintf(name, sizeof name, "path-%s", names[i]);
        CHECK(name, open((const char *)bad[i], O_RDONLY) == -1 && errno == EFAULT);
        snprintf(name, sizeof name, "fstat-%s", names[i]);
        CHECK(name, syscall(SYS_fstat, fd, bad[i]) == -1 && errno == EFAULT);
    }
    CHECK("file-read-readonly", read(fd, ro, 8192) == -1 && errno == EFAULT);
    CHECK("fstat-readonly", syscall(SYS_fstat, fd, ro) == -1 && errno == EFAULT);
    CHECK("file-read-text", read(fd, (void *)big_and_bad, 8192) == -1 && errno == EFAULT);
    CHECK("file-bad-position", lseek(fd, 0, SEEK_CUR) == 4096);
    struct stat st;
    memset(r, 0, BIG);
    CHECK("file-bad-unchanged", fstat(fd, &st) == 0 && st.st_size == BIG && pread(fd, r, BIG, 0) == BIG &&
                                    memcmp(w, r, BIG) == 0);
    CHECK("big-close", close(fd) == 0 && unlink("/lx/big") == 0);
    munmap(none, 8192);
    munmap(ro, 8192);
    free(w);
    free(r);
}

int main(void) {
    CHECK("mkdir", mkdir("/lx", 0755) == 0);
    CHECK("mkdir-exists", mkdir("/lx", 0755) == -1 && errno == EEXIST);
    int fd = open("/lx/f", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK("open-create", fd >= 3);
    CHECK("write", write(fd, "hello, file\n", 12) == 12);
    struct iovec iov[2] = {{"ab", 2}, {"cd\n", 3}};
    CHECK("writev", writev(fd, iov, 2) == 5);
    CHECK("close", close(fd) == 0);
    CHECK("close-bad", close(fd) == -1 && errno == EBADF);

    char buf[64] = {0};
    fd = open("/lx/f", O_RDONLY);
    CHECK("open-read", fd >= 0);
    CHECK("read", read(fd, buf, sizeof buf) == 17 && memcmp(buf, "hello, file\nabcd\n", 17) == 0);
    CHECK("read-eof", read(fd, buf, sizeof buf) == 0);
    CHECK("lseek", lseek(fd, 7, SEEK_SET) == 7 && read(fd, buf, 4) == 4 && memcmp(buf, "file", 4) == 0);
    CHECK("pread", pread(fd, buf, 5, 0) == 5 && memcmp(buf, "hello", 5) == 0 && lseek(fd, 0, SEEK_CUR) == 11);
    struct stat st;
    CHECK("fstat", fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 17);
    int fd2 = dup(fd);
    CHECK("dup", fd2 > fd && lseek(fd2, 0, SEEK_CUR) == 11);
    CHECK("dup2", dup2(fd, 20) == 20 && close(20) == 0);
    close(fd2);
    close(fd);

    CHECK("stat", stat("/lx/f", &st) == 0 && st.st_size == 17);
    CHECK("stat-dir", stat("/lx", &st) == 0 && S_ISDIR(st.st_mode));
    CHECK("stat-missing", stat("/lx/nope", &st) == -1 && errno == ENOENT);
    CHECK("access", access("/lx/f", R_OK) == 0 && access("/lx/nope", F_OK) == -1);

    FILE *f = fopen("/lx/g", "w");
    CHECK("fopen", f != NULL);
    if (f) {
        fprintf(f, "line %d\n", 2);
        fclose(f);
    }
    CHECK("rename", rename("/lx/g", "/lx/h") == 0 && stat("/lx/g", &st) == -1 && stat("/lx/h", &st) == 0);

    DIR *d = opendir("/lx");
    int seen = 0;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, "f") || !strcmp(e->d_name, "h") || !strcmp(e->d_name, "."))
                seen++;
        }
        closedir(d);
    }
    CHECK("readdir", d != NULL && seen == 3);

    char cwd[256];
    CHECK("chdir", chdir("/lx") == 0 && getcwd(cwd, sizeof cwd) != NULL && strcmp(cwd, "/lx") == 0);
    CHECK("relative-open", (fd = open("f", O_RDONLY)) >= 0 && close(fd) == 0);
    CHECK("openat", (fd = openat(AT_FDCWD, "h", O_RDONLY)) >= 0 && read(fd, buf, 7) == 7 && close(fd) == 0);
    CHECK("getcwd-small", getcwd(cwd, 2) == NULL && errno == ERANGE);

    big_and_bad();
    CHECK("unlink", unlink("/lx/f") == 0 && unlink("/lx/h") == 0 && unlink("/lx/h") == -1 && errno == ENOENT);
    CHECK("rmdir", chdir("/") == 0 && rmdir("/lx") == 0);

    fd = open("/dev/null", O_WRONLY);
    CHECK("dev-null", fd >= 0 && write(fd, "x", 1) == 1 && close(fd) == 0);
    unsigned char z[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    fd = open("/dev/zero", O_RDONLY);
    CHECK("dev-zero", fd >= 0 && read(fd, z, 8) == 8 && z[0] == 0 && z[7] == 0 && close(fd) == 0);
    fd = open("/dev/urandom", O_RDONLY);
    CHECK("dev-urandom", fd >= 0 && read(fd, z, 8) == 8 && close(fd) == 0);
    int p[2];
    CHECK("pipe", pipe(p) == 0 && write(p[1], "through", 7) == 7 && close(p[1]) == 0);
    CHECK("pipe-read", read(p[0], buf, sizeof buf) == 7 && memcmp(buf, "through", 7) == 0 && read(p[0], buf, 1) == 0);
    close(p[0]);
    struct stat pst;
    CHECK("pipe2-fstat", pipe2(p, O_CLOEXEC) == 0 && fstat(p[0], &pst) == 0 && S_ISFIFO(pst.st_mode) &&
                             fcntl(p[1], F_GETFD) == FD_CLOEXEC);
    close(p[0]);
    close(p[1]);
    return summary("lx-files");
}
