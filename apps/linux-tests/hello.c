/* The smallest Linux program: musl's start-up, stdio, exit status. */
#include <stdio.h>

int main(int argc, char **argv) {
    printf("hello from Linux, argc=%d argv[0]=%s\n", argc, argv[0]);
    return 7;
}
