/* File attributes (calls/attr.rs): chown and utimensat check their object
   and arguments; chown accepts the owner root, utimensat sets the times the
   RAM file system keeps (stat shows the time of the last change of the
   content), chmod sets its modes (links.c checks what is kept); another
   owner is EPERM, a missing file ENOENT, a bad descriptor EBADF, a bad
   pointer EFAULT, a bad time EINVAL. */
#define _GNU_SOURCE
#include "check.h"
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>

int main(void) {
    mkdir("/lxa", 0755);
    int fd = open("/lxa/f", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK("create", fd >= 0 && write(fd, "x", 1) == 1);
    CHECK("fchown-root", fchown(fd, 0, 0) == 0);
    CHECK("fchown-unchanged", fchown(fd, -1, -1) == 0);
    CHECK("fchown-other-eperm", fchown(fd, 1000, 1000) == -1 && errno == EPERM);
    CHECK("fchown-badfd", fchown(77, 0, 0) == -1 && errno == EBADF);
    CHECK("chown-path", chown("/lxa/f", 0, -1) == 0);
    CHECK("lchown-path", lchown("/lxa/f", -1, 0) == 0);
    CHECK("chown-missing", chown("/lxa/none", 0, 0) == -1 && errno == ENOENT);
    CHECK("fchownat", fchownat(AT_FDCWD, "/lxa/f", 0, 0, 0) == 0);
    CHECK("fchownat-empty-path", fchownat(fd, "", 0, 0, AT_EMPTY_PATH) == 0);
    CHECK("fchownat-bad-flags", fchownat(AT_FDCWD, "/lxa/f", 0, 0, 0x40000) == -1 && errno == EINVAL);
    CHECK("chown-efault", chown((const char *)8, 0, 0) == -1 && errno == EFAULT);
    CHECK("chmod", chmod("/lxa/f", 0600) == 0);
    CHECK("fchmod", fchmod(fd, 0640) == 0);
    CHECK("fchmodat", fchmodat(AT_FDCWD, "/lxa/f", 0644, 0) == 0);
    CHECK("chmod-missing", chmod("/lxa/none", 0600) == -1 && errno == ENOENT);
    /* busybox cp -r passes a directory's whole st_mode, type bits too:
       Linux keeps the permission bits and ignores the rest. */
    CHECK("chmod-dir-with-type-bits", chmod("/lxa", S_IFDIR | 0755) == 0);
    struct stat st;
    CHECK("owner-root", fstat(fd, &st) == 0 && st.st_uid == 0 && st.st_gid == 0 && S_ISREG(st.st_mode));
    CHECK("utimensat-now", utimensat(AT_FDCWD, "/lxa/f", NULL, 0) == 0);
    struct timespec ts[2] = {{1, 0}, {2, UTIME_OMIT}};
    CHECK("utimensat-times", utimensat(AT_FDCWD, "/lxa/f", ts, 0) == 0);
    CHECK("futimens", futimens(fd, ts) == 0);
    struct timespec bad[2] = {{1, 2000000000}, {2, 0}};
    CHECK("utimensat-bad-nsec", utimensat(AT_FDCWD, "/lxa/f", bad, 0) == -1 && errno == EINVAL);
    CHECK("utimensat-missing", utimensat(AT_FDCWD, "/lxa/none", NULL, 0) == -1 && errno == ENOENT);
    CHECK("utimensat-efault", utimensat(AT_FDCWD, (const char *)8, NULL, 0) == -1 && errno == EFAULT);
    CHECK("futimens-badfd", futimens(77, NULL) == -1 && errno == EBADF);
    close(fd);
    /* The RAM file system keeps the time of the last change of a file's
       content, and utimensat sets it. */
    int t = open("/lxa/time", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    long now = (long)time(NULL);
    CHECK("mtime-written", t >= 0 && write(t, "abc", 3) == 3 && fstat(t, &st) == 0 && st.st_mtime > 0 &&
                               st.st_mtime >= now - 5 && st.st_mtime <= now + 5 && st.st_ctime == st.st_mtime);
    struct stat by_path;
    CHECK("mtime-by-path", stat("/lxa/time", &by_path) == 0 && by_path.st_mtime == st.st_mtime);
    struct timespec set[2] = {{1000, 0}, {1234567890, 0}};
    CHECK("utimensat-sets-mtime", utimensat(AT_FDCWD, "/lxa/time", set, 0) == 0 && stat("/lxa/time", &by_path) == 0 &&
                                      by_path.st_mtime == 1234567890);
    struct timespec omit[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
    CHECK("futimens-omit-keeps", futimens(t, omit) == 0 && fstat(t, &by_path) == 0 && by_path.st_mtime == 1234567890);
    CHECK("utimensat-null-is-now", utimensat(AT_FDCWD, "/lxa/time", NULL, 0) == 0 && stat("/lxa/time", &by_path) == 0 &&
                               by_path.st_mtime >= now - 5 && by_path.st_mtime <= now + 5);
    close(t);
    unlink("/lxa/time");
    return summary("lx-attrs");
}
