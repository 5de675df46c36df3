/* fsync and sync make data durable while its file stays open. The disk
   scenario `disk-fsync` cuts the power after this program's last line and
   reads the files back in a second boot: /fs/synced (20,000 bytes) by
   fsync, /fs2/all by sync, and /fs/late — written after both, never
   synced, never closed — empty, as the cut found it. fsync of what is
   not a file is EINVAL, of a bad descriptor EBADF. Files unlinked while
   open: below. */
#define _GNU_SOURCE
#include "check.h"
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

static char data[20000];

int main(void) {
    for (int i = 0; i < (int)sizeof data; i++) data[i] = 'a' + i % 26;
    mkdir("/fs", 0755);
    mkdir("/fs2", 0755); /* C-FFS keeps inodes in their directory: fsync's
                            writes for /fs must not carry /fs2/all's. */
    /* Made first, so the sync below makes their names durable: what is
       left for fsync and sync to carry is data. */
    int a = open("/fs/synced", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    int b = open("/fs2/all", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    int c = open("/fs/late", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK("open", a >= 0 && b >= 0 && c >= 0);
    static const char all[] = "sync made me durable\n";
    CHECK("write-all", write(b, all, sizeof all - 1) == (ssize_t)sizeof all - 1);
    sync();
    CHECK("syncfs", syncfs(b) == 0);
    /* A file whose name goes while it is open lives on through its
       descriptors (POSIX) and is freed at its last close: /fs/closed is,
       /fs/gone is still open at the cut, and the second boot's mount
       frees it ("1 orphans"). */
    int g = open("/fs/gone", O_CREAT | O_RDWR | O_TRUNC, 0644);
    int h = open("/fs/closed", O_CREAT | O_RDWR | O_TRUNC, 0644);
    CHECK("gone-write", g >= 0 && h >= 0 && write(g, data, 5000) == 5000 && write(h, data, 3000) == 3000);
    CHECK("gone-unlink", unlink("/fs/gone") == 0 && access("/fs/gone", F_OK) == -1 && errno == ENOENT);
    CHECK("gone-write-after", pwrite(g, "tail", 4, 5000) == 4);
    static char back[5004];
    CHECK("gone-read", pread(g, back, sizeof back, 0) == 5004 && memcmp(back, data, 5000) == 0 &&
                           memcmp(back + 5000, "tail", 4) == 0);
    struct stat gs;
    CHECK("gone-fstat", fstat(g, &gs) == 0 && gs.st_size == 5004);
    CHECK("gone-no-link", gs.st_nlink == 0);
    CHECK("gone-ftruncate", ftruncate(g, 100) == 0 && fstat(g, &gs) == 0 && gs.st_size == 100);
    CHECK("gone-name-free", (h = (close(h), open("/fs/gone", O_CREAT | O_RDWR, 0644))) >= 0 &&
                                fstat(h, &gs) == 0 && gs.st_size == 0);
    CHECK("gone-new-file-apart", close(h) == 0 && unlink("/fs/gone") == 0 && pread(g, back, 100, 0) == 100 &&
                                     memcmp(back, data, 100) == 0);
    int k = open("/fs/closed", O_RDONLY);
    CHECK("closed-unlink", k >= 0 && unlink("/fs/closed") == 0 && read(k, back, 3000) == 3000 &&
                               memcmp(back, data, 3000) == 0 && close(k) == 0);
    /* Renamed over while open (an editor's save): the reader keeps the
       old bytes, a new open finds the new; the old is freed at its close. */
    int r = open("/fs/ren", O_CREAT | O_RDWR | O_TRUNC, 0644);
    int w = open("/fs/ren.new", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK("renamed-over", r >= 0 && w >= 0 && write(r, "old!", 4) == 4 && write(w, "new!", 4) == 4 &&
                              close(w) == 0 && rename("/fs/ren.new", "/fs/ren") == 0);
    w = open("/fs/ren", O_RDONLY);
    CHECK("renamed-over-read", pread(r, back, 4, 0) == 4 && memcmp(back, "old!", 4) == 0 && w >= 0 &&
                                   read(w, back, 4) == 4 && memcmp(back, "new!", 4) == 0 && close(w) == 0 &&
                                   close(r) == 0);
    sync();
    /* After the sync: only fsync can make these durable. */
    CHECK("write", write(a, data, sizeof data) == (ssize_t)sizeof data);
    CHECK("fsync", fsync(a) == 0);
    CHECK("fdatasync", fdatasync(a) == 0);
    int p[2];
    CHECK("pipe", pipe(p) == 0);
    CHECK("fsync-pipe-einval", fsync(p[1]) == -1 && errno == EINVAL);
    CHECK("fsync-console-einval", fsync(1) == -1 && errno == EINVAL);
    CHECK("fsync-badfd", fsync(99) == -1 && errno == EBADF);
    CHECK("syncfs-badfd", syncfs(99) == -1 && errno == EBADF);
    CHECK("write-late", write(c, "lost\n", 5) == 5);
    summary("lx-fsync");
    printf("lx-fsync: files still open; cut the power now\n");
    fflush(stdout);
    for (;;) pause();
}
