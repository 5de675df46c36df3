/* A QEMU TCG plugin (plugin API version 1, QEMU 7.2) for `cargo xtask
   icount`: counts how often every translation block runs and writes, when
   QEMU exits, one line per block that ran: its guest virtual address (hex),
   its instructions and its executions. The same address translated again
   (after a flush, or in another address space) gives another line; the
   reader sums them. Built by xtask with the host's C compiler; the few
   declarations of QEMU's plugin API it uses are written out here. Argument:
   out=FILE (default /tmp/tbcount.txt). */
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
__attribute__((visibility("default"))) int qemu_plugin_version = 1;
struct ent { uint64_t vaddr; uint64_t insns; uint64_t count; };
#define MAXE (1 << 22)
static struct ent *ents;
static size_t n;
static uint64_t dropped; /* blocks translated past MAXE: not counted */
static const char *out = "/tmp/tbcount.txt";
static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  if (n >= MAXE) {
    dropped++;
    return;
  }
  struct ent *e = &ents[n++];
  e->vaddr = qemu_plugin_tb_vaddr(tb); e->insns = qemu_plugin_tb_n_insns(tb); e->count = 0;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, 0 /* INLINE_ADD_U64 */, &e->count, 1);
}
static void at_exit(qemu_plugin_id_t id, void *p) {
  FILE *f = fopen(out, "w"); if (!f) return;
  for (size_t i = 0; i < n; i++)
    if (ents[i].count) fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", ents[i].vaddr, ents[i].insns, ents[i].count);
  fprintf(f, "# dropped %" PRIu64 "\n", dropped);
  fclose(f);
}
__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc, char **argv) {
  for (int i = 0; i < argc; i++) if (!strncmp(argv[i], "out=", 4)) out = argv[i] + 4;
  ents = calloc(MAXE, sizeof *ents);
  if (!ents) return -1;
  qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
  qemu_plugin_register_atexit_cb(id, at_exit, NULL);
  return 0;
}
