/* A static-pie (glibc, gcc -static-pie): the personality loads it at its
   own base and it relocates itself; TLS, the heap and stdio work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __thread int tls = 5;

int main(int argc, char **argv) {
    char *heap = malloc(64);
    if (!heap) return 1;
    strcpy(heap, "heap ok");
    printf("hello from a static-pie, main at %s base, argc=%d argv[1]=%s, tls=%d, %s\n",
           (unsigned long)main >= 0x1000000000UL ? "a high" : "a low", argc, argc > 1 ? argv[1] : "-", tls, heap);
    free(heap);
    return 5;
}
