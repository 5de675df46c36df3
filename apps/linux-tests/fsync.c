/* fsync and sync make data durable while its file stays open. The disk
   scenario `disk-fsync` cuts the power after this program's last line and
   reads the files back in a second boot: /fs/synced (20,000 bytes) by
   fsync, /fs2/all by sync, and /fs/late — written after both, never
   synced, never closed — empty, as the cut found it. fsync of what is
   not a file is EINVAL, of a bad descriptor EBADF. */
#define _GNU_SOURCE
#include "check.h"
#include <fcntl.h>
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
