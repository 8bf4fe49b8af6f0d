/* A qemu TCG plugin (user mode, plugin API version 1) that counts how often each translation block
 * runs and, at exit, writes every block that ran: guest address, executions, instruction count, the
 * file and offset its code was mapped from, and its instruction bytes. lab/estimate.py turns
 * this into cycles per symbol for a core model.
 *
 *   qemu-aarch64 -plugin libtb_profile.so,out=PROFILE ./program
 *
 * Phases: a program may mark them with getpid(kMarkMagic, label) (getpid ignores its arguments; the
 * runtime's executor does this before every op and after the last when TESSEL_LAB_MARKS=1). What runs
 * between two marks is counted for the first one's label, summed over every visit of that label, so
 * one inference splits into its ops.
 *
 * Debian ships no qemu-plugin.h, so the few API functions used here are declared below, with the
 * signatures of qemu 7.2's include/qemu/qemu-plugin.h. Counting is one inline 64-bit add per executed
 * block (no call into C), the cheapest instrumentation qemu offers; the adds are not atomic, which is
 * exact for the single-threaded runs the lab makes. */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct {
  const char *target_name; /* the first member; the rest of qemu_info_t is not needed */
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_syscall_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_index, int64_t num, uint64_t a1,
                                              uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                                              uint64_t a7, uint64_t a8);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_vcpu_syscall_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_syscall_cb_t cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void *qemu_plugin_insn_haddr(const struct qemu_plugin_insn *insn);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* Must match kLabMarkMagic in runtime/lab_marks.h. */
static const uint64_t kMarkMagic = 0x7e55e1ab;

/* One distinct block. A block retranslated at the same address (after a code-cache flush) keeps its
 * entry, so its count accumulates; blocks live until exit because qemu writes to `executions`. */
struct block {
  uint64_t executions;
  uint64_t at_last_mark; /* `executions` when the current phase began */
  uint64_t vaddr;
  uintptr_t haddr; /* where qemu read the first instruction: names the mapped file at exit */
  uint32_t n_insns;
  uint32_t n_bytes;
  uint32_t id; /* its row in the output */
  unsigned char *bytes;
};

/* Executions of one block in one phase (a label's visits may repeat a block; the reader sums). */
struct phase_count {
  int64_t label;
  struct block *block;
  uint64_t executions;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct block **table; /* open addressing on (vaddr, n_insns, n_bytes) */
static size_t table_size, table_used;
static struct phase_count *phases;
static size_t phases_used, phases_cap;
static bool marked;          /* a mark was seen: the counts since the last one form a phase */
static int64_t current_label; /* the label of the phase running now */
static uint64_t marks;
static char *out_path;
static const char *target = "unknown";
static int64_t getpid_number = -1;

static size_t slot_of(uint64_t vaddr, uint32_t n_insns, uint32_t n_bytes) {
  uint64_t h = (vaddr ^ ((uint64_t)n_insns << 48) ^ ((uint64_t)n_bytes << 32)) * 0x9e3779b97f4a7c15ull;
  return (size_t)(h >> 17) & (table_size - 1);
}

static void grow(void) {
  struct block **old = table;
  size_t old_size = table_size;
  table_size = old_size ? old_size * 2 : 1 << 16;
  table = calloc(table_size, sizeof *table);
  if (!table) abort();
  for (size_t i = 0; i < old_size; ++i) {
    struct block *b = old[i];
    if (!b) continue;
    size_t s = slot_of(b->vaddr, b->n_insns, b->n_bytes);
    while (table[s]) s = (s + 1) & (table_size - 1);
    table[s] = b;
  }
  free(old);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  const size_t n = qemu_plugin_tb_n_insns(tb);
  if (n == 0) return;
  const uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
  size_t n_bytes = 0;
  for (size_t i = 0; i < n; ++i) n_bytes += qemu_plugin_insn_size(qemu_plugin_tb_get_insn(tb, i));
  pthread_mutex_lock(&lock);
  if (2 * (table_used + 1) > table_size) grow();
  size_t s = slot_of(vaddr, (uint32_t)n, (uint32_t)n_bytes);
  struct block *b;
  while ((b = table[s]) && !(b->vaddr == vaddr && b->n_insns == n && b->n_bytes == n_bytes)) {
    s = (s + 1) & (table_size - 1);
  }
  if (!b) {
    b = calloc(1, sizeof *b);
    unsigned char *bytes = malloc(n_bytes);
    if (!b || !bytes) abort();
    size_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      const struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
      const size_t size = qemu_plugin_insn_size(insn);
      memcpy(bytes + at, qemu_plugin_insn_data(insn), size);
      at += size;
    }
    b->vaddr = vaddr;
    b->haddr = (uintptr_t)qemu_plugin_insn_haddr(qemu_plugin_tb_get_insn(tb, 0));
    b->n_insns = (uint32_t)n;
    b->n_bytes = (uint32_t)n_bytes;
    b->bytes = bytes;
    table[s] = b;
    ++table_used;
  }
  pthread_mutex_unlock(&lock);
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->executions, 1);
}

/* Closes the running phase: every block's executions since the last mark go to its label. */
static void close_phase(void) {
  for (size_t i = 0; i < table_size; ++i) {
    struct block *b = table[i];
    if (!b || b->executions == b->at_last_mark) continue;
    if (phases_used == phases_cap) {
      phases_cap = phases_cap ? 2 * phases_cap : 1 << 16;
      phases = realloc(phases, phases_cap * sizeof *phases);
      if (!phases) abort();
    }
    phases[phases_used++] = (struct phase_count){current_label, b, b->executions - b->at_last_mark};
    b->at_last_mark = b->executions;
  }
}

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu_index, int64_t num, uint64_t a1, uint64_t a2,
                       uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8) {
  if (num != getpid_number || a1 != kMarkMagic) return;
  pthread_mutex_lock(&lock);
  if (marked) {
    close_phase();
  } else {
    /* Everything before the first mark is the "init" phase: keep it out of the labelled ones. */
    current_label = INT64_MIN;
    close_phase();
    marked = true;
  }
  current_label = (int64_t)a2;
  ++marks;
  pthread_mutex_unlock(&lock);
}

/* The host's file mappings: in user mode the guest's memory is host memory, so the host address a
 * block was read from names the ELF file (executable or shared library) and the offset in it. */
struct mapping {
  uintptr_t start, end;
  uint64_t offset;
  char path[512];
};

static struct mapping *read_maps(size_t *count) {
  FILE *f = fopen("/proc/self/maps", "r");
  struct mapping *m = NULL;
  size_t n = 0, cap = 0;
  char line[1024];
  while (f && fgets(line, sizeof line, f)) {
    struct mapping x = {0};
    unsigned long long start, end, offset;
    int path_at = 0;
    if (sscanf(line, "%llx-%llx %*s %llx %*s %*s%n", &start, &end, &offset, &path_at) != 3) continue;
    const char *p = line + path_at;
    while (*p == ' ') ++p;
    if (*p != '/') continue;
    x.start = (uintptr_t)start;
    x.end = (uintptr_t)end;
    x.offset = offset;
    snprintf(x.path, sizeof x.path, "%s", p);
    x.path[strcspn(x.path, "\n")] = 0;
    if (n == cap) {
      cap = cap ? 2 * cap : 256;
      m = realloc(m, cap * sizeof *m);
      if (!m) abort();
    }
    m[n++] = x;
  }
  if (f) fclose(f);
  *count = n;
  return m;
}

static int by_instructions(const void *a, const void *b) {
  const struct block *x = *(struct block *const *)a, *y = *(struct block *const *)b;
  const uint64_t ix = x->executions * x->n_insns, iy = y->executions * y->n_insns;
  return ix < iy ? 1 : ix > iy ? -1 : (x->vaddr > y->vaddr) - (x->vaddr < y->vaddr);
}

static void on_exit_cb(qemu_plugin_id_t id, void *userdata) {
  pthread_mutex_lock(&lock);
  if (marked) close_phase();
  size_t n_maps = 0;
  struct mapping *maps = read_maps(&n_maps);
  size_t n = 0;
  struct block **ran = malloc((table_used + 1) * sizeof *ran);
  uint64_t total = 0;
  for (size_t i = 0; i < table_size; ++i) {
    if (table[i] && table[i]->executions) {
      ran[n++] = table[i];
      total += table[i]->executions * table[i]->n_insns;
    }
  }
  qsort(ran, n, sizeof *ran, by_instructions);
  FILE *f = fopen(out_path, "w");
  if (!f) {
    fprintf(stderr, "tb_profile: cannot write %s\n", out_path);
    pthread_mutex_unlock(&lock);
    return;
  }
  fprintf(f, "# tb_profile 1\n# target %s\n# instructions %" PRIu64 "\n# blocks %zu\n# marks %" PRIu64 "\n", target,
          total, n, marks);
  fprintf(f, "# B id vaddr executions instructions file_offset file bytes\n");
  fprintf(f, "# P label id executions (label init: before the first mark)\n");
  for (size_t i = 0; i < n; ++i) {
    struct block *b = ran[i];
    b->id = (uint32_t)i;
    const struct mapping *m = NULL;
    for (size_t k = 0; k < n_maps && !m; ++k) {
      if (b->haddr >= maps[k].start && b->haddr < maps[k].end) m = &maps[k];
    }
    fprintf(f, "B\t%zu\t%" PRIx64 "\t%" PRIu64 "\t%u\t", i, b->vaddr, b->executions, b->n_insns);
    if (m) {
      fprintf(f, "%" PRIx64 "\t%s\t", (uint64_t)(b->haddr - m->start + m->offset), m->path);
    } else {
      fprintf(f, "-\t-\t");
    }
    for (uint32_t k = 0; k < b->n_bytes; ++k) fprintf(f, "%02x", b->bytes[k]);
    fputc('\n', f);
  }
  for (size_t i = 0; i < phases_used; ++i) {
    const struct phase_count *p = &phases[i];
    if (p->label == INT64_MIN) {
      fprintf(f, "P\tinit\t%u\t%" PRIu64 "\n", p->block->id, p->executions);
    } else {
      fprintf(f, "P\t%" PRId64 "\t%u\t%" PRIu64 "\n", p->label, p->block->id, p->executions);
    }
  }
  fclose(f);
  free(ran);
  free(maps);
  pthread_mutex_unlock(&lock);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                                               int argc, char **argv) {
  for (int i = 0; i < argc; ++i) {
    if (strncmp(argv[i], "out=", 4) == 0) {
      out_path = strdup(argv[i] + 4);
    } else {
      fprintf(stderr, "tb_profile: unknown argument '%s' (expected out=PATH)\n", argv[i]);
      return -1;
    }
  }
  if (!out_path) {
    fprintf(stderr, "tb_profile: give the output file, e.g. -plugin libtb_profile.so,out=profile.tsv\n");
    return -1;
  }
  if (info && info->target_name) target = info->target_name;
  /* getpid's number in each target's Linux syscall table. */
  if (strcmp(target, "aarch64") == 0) getpid_number = 172;
  if (strcmp(target, "x86_64") == 0) getpid_number = 39;
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
  qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
  return 0;
}
