/* Hostile: overwrites every page of the personality it can write (they
   share the address space, so it can), found through the page tables the
   kernel exposes read-only, then makes a system call. Whatever that does
   to the personality, it harms only this environment. */
#include <stdio.h>
#include <unistd.h>

#define UVPT 0x7f0000000000UL

/* Where the exposed page tables hold the entry that maps `va`. */
static unsigned long pte_addr(unsigned long va) {
    return UVPT | ((va >> 9) & 0x7ffffffff8UL);
}

static unsigned long entry(unsigned long at) {
    return *(volatile unsigned long *)at;
}

/* True if `va` is mapped present, writable and user. */
static int writable(unsigned long va) {
    unsigned long l1 = pte_addr(va), l2 = pte_addr(l1), l3 = pte_addr(l2), l4 = pte_addr(l3);
    if (!(entry(l4) & 1) || !(entry(l3) & 1) || !(entry(l2) & 1))
        return 0;
    return (entry(l1) & 7) == 7;
}

int main(void) {
    unsigned long pages = 0;
    printf("lx-scribble: scribbling over the personality\n");
    fflush(stdout);
    for (unsigned long va = 0x70000000UL; va < 0x80000000UL; va += 4096) {
        if (!writable(va))
            continue;
        pages++;
        for (volatile unsigned long *p = (unsigned long *)va; p < (unsigned long *)(va + 4096); p++)
            *p = 0xdeadbeefdeadbeefUL;
    }
    /* Only a dead personality could not answer this. */
    write(1, "lx-scribble: still here\n", 24);
    return (int)pages;
}
