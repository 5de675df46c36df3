/* A QEMU TCG plugin (plugin API version 1, QEMU 7.2) for `cargo xtask
   icount`: counts how often every translation block runs and writes, when
   QEMU exits, one line per block that ran: its guest virtual address (hex),
   its instructions, its executions and its first bytes (up to seven, packed
   little-endian with their number in the top byte: which program a block
   belongs to where two share addresses). The same address translated again
   (after a flush, or in another address space) gives another line; the
   reader sums them. Built by xtask with the host's C compiler; the few
   declarations of QEMU's plugin API it uses are written out here. Argument:
   out=FILE (default /tmp/tbcount.txt).

   With pages=FILE it also counts, between two writes of CR3 (address-space
   switches, each of which empties QEMU's emulated TLB and jump cache), the
   distinct pages the guest touched: code (blocks run) and data (loads and
   stores), each split into the kernel's (the upper half) and user pages.
   It writes to FILE the switches that ended a stretch with any page touched
   and the sums of the four counts over them:
     switches N
     pages KCODE KDATA UCODE UDATA
   A page counts once per stretch, however often it is touched. With
   pagelist=FILE it also writes, per page, how many stretches touched it:
     ADDRESS KIND STRETCHES   (hex page address; KIND 0 code, 1 data) */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef void (*tb_trans_cb)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*udata_cb)(qemu_plugin_id_t, void *);
extern void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, tb_trans_cb);
extern void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *, int op, void *ptr, uint64_t imm);
extern uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *);
extern size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
extern void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, udata_cb, void *);
struct qemu_plugin_insn;
typedef void (*vcpu_udata_cb)(unsigned int, void *);
typedef void (*vcpu_mem_cb)(unsigned int, uint32_t, uint64_t, void *);
extern struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *, size_t);
extern const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *);
extern size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *);
extern void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *, vcpu_udata_cb, int flags, void *);
extern void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *, vcpu_mem_cb, int flags, int rw, void *);
extern void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *, vcpu_udata_cb, int flags, void *);
__attribute__((visibility("default"))) int qemu_plugin_version = 1;
struct ent { uint64_t vaddr; uint64_t insns; uint64_t count; uint64_t sig; };
#define MAXE (1 << 22)
static struct ent *ents;
static size_t n;
static uint64_t dropped; /* blocks translated past MAXE: not counted */
static const char *out = "/tmp/tbcount.txt";
/* Pages touched since the last CR3 write: an open-addressing set whose
   slots carry the stretch they were filled in, so a new stretch starts
   empty without clearing it. */
#define PSET (1 << 18)
struct pslot { uint64_t page; uint64_t stretch; };
static struct pslot *pset;
static const char *pages_out;
static uint64_t stretch = 1, cur[4], sum[4], switches;
/* With pagelist=FILE: per page (and code/data), the stretches that touched it. */
#define PLIST (1 << 20)
struct pcount { uint64_t key; uint64_t n; };
static struct pcount *plist;
static const char *plist_out;
static void count_page(uint64_t key) {
  uint64_t h = (key * 0x9E3779B97F4A7C15ull) >> (64 - 20);
  for (uint64_t probes = 0; probes < PLIST; probes++, h = (h + 1) & (PLIST - 1)) {
    struct pcount *s = &plist[h];
    if (s->n == 0) { s->key = key; s->n = 1; return; }
    if (s->key == key) { s->n++; return; }
  }
}
static int first_touch(uint64_t key) {
  uint64_t h = (key * 0x9E3779B97F4A7C15ull) >> (64 - 18);
  for (uint64_t probes = 0; probes < PSET; probes++, h = (h + 1) & (PSET - 1)) {
    struct pslot *s = &pset[h];
    if (s->stretch != stretch) { s->page = key; s->stretch = stretch; if (plist) count_page(key); return 1; }
    if (s->page == key) return 0;
  }
  return 0; /* full: not counted */
}
/* kind: 0 kernel code, 1 kernel data, 2 user code, 3 user data. */
static void touch(uint64_t va, int data) {
  int kind = (va >> 63 ? 0 : 2) + data;
  if (first_touch((va >> 12) << 1 | (uint64_t)data)) cur[kind]++;
}
static void on_cr3(unsigned int v, void *u) {
  if (cur[0] + cur[1] + cur[2] + cur[3]) {
    switches++;
    for (int i = 0; i < 4; i++) sum[i] += cur[i];
  }
  memset(cur, 0, sizeof cur);
  stretch++;
}
static void on_block(unsigned int v, void *u) { touch((uint64_t)(uintptr_t)u, 0); }
static void on_mem(unsigned int v, uint32_t info, uint64_t va, void *u) { touch(va, 1); }
/* Whether `in` writes CR3: 0F 22 /3 after any REX prefix. */
static int writes_cr3(const struct qemu_plugin_insn *in) {
  const uint8_t *d = qemu_plugin_insn_data(in);
  size_t sz = qemu_plugin_insn_size(in), k = 0;
  while (k < sz && (d[k] & 0xf0) == 0x40) k++;
  return k + 2 < sz && d[k] == 0x0f && d[k + 1] == 0x22 && ((d[k + 2] >> 3) & 7) == 3;
}
static void trans_pages(struct qemu_plugin_tb *tb) {
  qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, 0, (void *)(uintptr_t)qemu_plugin_tb_vaddr(tb));
  for (size_t i = 0; i < qemu_plugin_tb_n_insns(tb); i++) {
    struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, i);
    if (writes_cr3(in)) qemu_plugin_register_vcpu_insn_exec_cb(in, on_cr3, 0 /* no registers */, NULL);
    qemu_plugin_register_vcpu_mem_cb(in, on_mem, 0, 3 /* loads and stores */, NULL);
  }
}
/* The block's first bytes, up to seven, and their number in the top byte. */
static uint64_t signature(const struct qemu_plugin_tb *tb) {
  uint64_t sig = 0, len = 0;
  for (size_t i = 0; i < qemu_plugin_tb_n_insns(tb) && len < 7; i++) {
    const struct qemu_plugin_insn *in = qemu_plugin_tb_get_insn(tb, i);
    const uint8_t *d = qemu_plugin_insn_data(in);
    for (size_t k = 0; k < qemu_plugin_insn_size(in) && len < 7; k++, len++) sig |= (uint64_t)d[k] << (8 * len);
  }
  return sig | len << 56;
}
static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  if (pages_out) trans_pages(tb);
  if (n >= MAXE) {
    dropped++;
    return;
  }
  struct ent *e = &ents[n++];
  e->vaddr = qemu_plugin_tb_vaddr(tb); e->insns = qemu_plugin_tb_n_insns(tb); e->count = 0;
  e->sig = signature(tb);
  qemu_plugin_register_vcpu_tb_exec_inline(tb, 0 /* INLINE_ADD_U64 */, &e->count, 1);
}
static void at_exit(qemu_plugin_id_t id, void *p) {
  FILE *f = fopen(out, "w"); if (!f) return;
  for (size_t i = 0; i < n; i++)
    if (ents[i].count) fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRIx64 "\n", ents[i].vaddr, ents[i].insns, ents[i].count, ents[i].sig);
  fprintf(f, "# dropped %" PRIu64 "\n", dropped);
  fclose(f);
  if (pages_out && (f = fopen(pages_out, "w"))) {
    fprintf(f, "switches %" PRIu64 "\npages %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", switches, sum[0], sum[1], sum[2], sum[3]);
    fclose(f);
  }
  if (plist && (f = fopen(plist_out, "w"))) {
    for (size_t i = 0; i < PLIST; i++)
      if (plist[i].n) fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", plist[i].key >> 1 << 12, plist[i].key & 1, plist[i].n);
    fclose(f);
  }
}
__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc, char **argv) {
  for (int i = 0; i < argc; i++) {
    if (!strncmp(argv[i], "out=", 4)) out = argv[i] + 4;
    if (!strncmp(argv[i], "pages=", 6)) pages_out = argv[i] + 6;
    if (!strncmp(argv[i], "pagelist=", 9)) plist_out = argv[i] + 9;
  }
  if (plist_out && !(plist = calloc(PLIST, sizeof *plist))) return -1;
  ents = calloc(MAXE, sizeof *ents);
  if (!ents) return -1;
  if (pages_out && !(pset = calloc(PSET, sizeof *pset))) return -1;
  qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
  qemu_plugin_register_atexit_cb(id, at_exit, NULL);
  return 0;
}
