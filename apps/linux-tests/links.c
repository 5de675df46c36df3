/* Symbolic and hard links and kept modes (calls/fs.rs, calls/attr.rs over
   the RAM file system, crates/ramfs): symlink, readlink, lstat, link,
   linkat, chmod, the creation mode less the umask, O_NOFOLLOW, st_blocks
   of a sparse file, and the
   refusals a hostile or careless program meets — loops (ELOOP), a
   directory hard link (EPERM), readlink of a file (EINVAL), bad pointers
   (EFAULT), an empty target (ENOENT), a target too long (ENAMETOOLONG). */
#define _GNU_SOURCE
#include "check.h"
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static int put(const char *path, const char *text) {
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) return -1;
    int ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    close(fd);
    return ok ? 0 : -1;
}

static int holds(const char *path, const char *text) {
    char buf[64] = {0};
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n == (ssize_t)strlen(text) && memcmp(buf, text, n) == 0;
}

static int type_in_dir(const char *dir, const char *name) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int type = -1;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, name) == 0) type = e->d_type;
    if (d) closedir(d);
    return type;
}

int main(void) {
    struct stat st, lst;
    char buf[256];
    umask(022);
    mkdir("/lxl", 0755);
    mkdir("/lxl/d", 0755);
    CHECK("file", put("/lxl/d/f", "hello") == 0);

    /* Symbolic links: made as written, followed by open and stat, not by
       lstat and readlink; relative targets from the link's directory. */
    CHECK("symlink", symlink("d/f", "/lxl/rel") == 0);
    CHECK("symlink-abs", symlink("/lxl/d", "/lxl/abs") == 0);
    CHECK("open-follows", holds("/lxl/rel", "hello"));
    CHECK("dir-link-in-path", holds("/lxl/abs/f", "hello"));
    ssize_t n = readlink("/lxl/rel", buf, sizeof buf);
    CHECK("readlink", n == 3 && memcmp(buf, "d/f", 3) == 0);
    CHECK("readlink-short-buffer", readlink("/lxl/rel", buf, 2) == 2 && memcmp(buf, "d/", 2) == 0);
    CHECK("readlinkat", readlinkat(AT_FDCWD, "/lxl/abs", buf, sizeof buf) == 6 && memcmp(buf, "/lxl/d", 6) == 0);
    CHECK("stat-follows", stat("/lxl/rel", &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 5);
    CHECK("lstat-link", lstat("/lxl/rel", &lst) == 0 && S_ISLNK(lst.st_mode) && lst.st_size == 3 && lst.st_ino != st.st_ino);
    CHECK("fstatat-nofollow", fstatat(AT_FDCWD, "/lxl/abs", &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode));
    CHECK("stat-dir-link", stat("/lxl/abs", &st) == 0 && S_ISDIR(st.st_mode));
    CHECK("dtype-lnk", type_in_dir("/lxl", "rel") == DT_LNK && type_in_dir("/lxl", "d") == DT_DIR);
    CHECK("symlink-exists", symlink("x", "/lxl/rel") == -1 && errno == EEXIST);
    CHECK("open-nofollow", open("/lxl/rel", O_RDONLY | O_NOFOLLOW) == -1 && errno == ELOOP);
    /* A dangling link: lstat sees it, stat does not, O_CREAT makes its target. */
    CHECK("dangling", symlink("new", "/lxl/d/dangle") == 0 && stat("/lxl/d/dangle", &st) == -1 && errno == ENOENT &&
                          lstat("/lxl/d/dangle", &lst) == 0);
    CHECK("creat-through-dangling", put("/lxl/d/dangle", "made") == 0 && holds("/lxl/d/new", "made"));
    /* unlink and rename act on the link, not on its target. */
    CHECK("rename-link", rename("/lxl/rel", "/lxl/rel2") == 0 && holds("/lxl/rel2", "hello"));
    CHECK("unlink-link", unlink("/lxl/rel2") == 0 && holds("/lxl/d/f", "hello"));
    CHECK("rmdir-link-enotdir", rmdir("/lxl/abs") == -1 && errno == ENOTDIR && stat("/lxl/d", &st) == 0);

    /* Refusals. */
    CHECK("loop", symlink("/lxl/b", "/lxl/a") == 0 && symlink("/lxl/a", "/lxl/b") == 0 &&
                      open("/lxl/a", O_RDONLY) == -1 && errno == ELOOP);
    CHECK("self-loop-stat", symlink("self", "/lxl/self") == 0 && stat("/lxl/self", &st) == -1 && errno == ELOOP);
    CHECK("readlink-file-einval", readlink("/lxl/d/f", buf, sizeof buf) == -1 && errno == EINVAL);
    CHECK("readlink-missing", readlink("/lxl/none", buf, sizeof buf) == -1 && errno == ENOENT);
    CHECK("readlink-efault", readlink("/lxl/abs", (char *)8, sizeof buf) == -1 && errno == EFAULT);
    CHECK("symlink-efault", symlink((const char *)8, "/lxl/x") == -1 && errno == EFAULT);
    CHECK("symlink-empty", symlink("", "/lxl/x") == -1 && errno == ENOENT);
    static char longt[5000];
    memset(longt, 'a', sizeof longt - 1);
    CHECK("symlink-toolong", symlink(longt, "/lxl/x") == -1 && errno == ENAMETOOLONG);

    /* Hard links: one file, two names, a count of two. */
    CHECK("link", link("/lxl/d/f", "/lxl/hard") == 0 && stat("/lxl/hard", &st) == 0 && st.st_nlink == 2);
    CHECK("link-same-inode", stat("/lxl/d/f", &lst) == 0 && lst.st_ino == st.st_ino);
    CHECK("link-shares-data", put("/lxl/hard", "world") == 0 && holds("/lxl/d/f", "world"));
    CHECK("unlink-one-name", unlink("/lxl/d/f") == 0 && holds("/lxl/hard", "world") && stat("/lxl/hard", &st) == 0 &&
                                 st.st_nlink == 1);
    CHECK("link-dir-eperm", link("/lxl/d", "/lxl/d2") == -1 && errno == EPERM);
    CHECK("link-exists", link("/lxl/hard", "/lxl/abs") == -1 && errno == EEXIST);
    CHECK("link-of-symlink", link("/lxl/abs", "/lxl/abs2") == 0 && lstat("/lxl/abs2", &lst) == 0 && S_ISLNK(lst.st_mode));
    CHECK("linkat-follow", linkat(AT_FDCWD, "/lxl/d/dangle", AT_FDCWD, "/lxl/h2", AT_SYMLINK_FOLLOW) == 0 &&
                               lstat("/lxl/h2", &lst) == 0 && S_ISREG(lst.st_mode) && holds("/lxl/h2", "made"));
    CHECK("linkat-bad-flags", linkat(AT_FDCWD, "/lxl/hard", AT_FDCWD, "/lxl/h3", 0x40000) == -1 && errno == EINVAL);

    /* Modes: the creation mode less the umask, chmod, set-id bits kept. */
    int fd = open("/lxl/m", O_CREAT | O_WRONLY, 0666);
    CHECK("creat-mode-umask", fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0644);
    CHECK("fchmod-kept", fchmod(fd, 04755) == 0 && fstat(fd, &st) == 0 && (st.st_mode & 07777) == 04755);
    close(fd);
    CHECK("chmod-kept", chmod("/lxl/m", 0600) == 0 && stat("/lxl/m", &st) == 0 && (st.st_mode & 07777) == 0600 &&
                            S_ISREG(st.st_mode));
    CHECK("chmod-through-link", symlink("m", "/lxl/ml") == 0 && chmod("/lxl/ml", 0640) == 0 && stat("/lxl/m", &st) == 0 &&
                                    (st.st_mode & 07777) == 0640 && lstat("/lxl/ml", &lst) == 0 &&
                                    (lst.st_mode & 07777) == 0777);
    CHECK("mkdir-mode", mkdir("/lxl/md", 0777) == 0 && stat("/lxl/md", &st) == 0 && (st.st_mode & 07777) == 0755 &&
                            S_ISDIR(st.st_mode));
    umask(0);
    CHECK("mkdir-mode-no-umask", mkdir("/lxl/md2", 01777) == 0 && stat("/lxl/md2", &st) == 0 &&
                                     (st.st_mode & 07777) == 01777);
    /* renameat, and renameat2's RENAME_NOREPLACE (1). */
    CHECK("renameat", renameat(AT_FDCWD, "/lxl/h2", AT_FDCWD, "/lxl/h4") == 0 && holds("/lxl/h4", "made"));
    CHECK("renameat2-noreplace", syscall(SYS_renameat2, AT_FDCWD, "/lxl/h4", AT_FDCWD, "/lxl/hard", 1) == -1 &&
                                     errno == EEXIST && holds("/lxl/h4", "made"));
    CHECK("renameat2-exchange-einval", syscall(SYS_renameat2, AT_FDCWD, "/lxl/h4", AT_FDCWD, "/lxl/hard", 2) == -1 &&
                                           errno == EINVAL);
    /* st_blocks counts the pages a file holds, not its size. */
    int sp = open("/lxl/sparse", O_CREAT | O_WRONLY, 0644);
    CHECK("blocks-sparse", sp >= 0 && pwrite(sp, "x", 1, 1 << 20) == 1 && fstat(sp, &st) == 0 &&
                               st.st_size == (1 << 20) + 1 && st.st_blocks == 8);
    close(sp);
    return summary("lx-links");
}
