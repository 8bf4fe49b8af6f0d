/* The lab smoke test's aarch64 kernel: two loops of known shape and trip count, each in a phase of
 * its own (the executor's getpid mark), so the test knows exactly what the profile must hold.
 *   phase 0: N iterations of 8 dependent FMLAs + subs + b.ne (one accumulator: a latency chain)
 *   phase 1: N iterations of 8 independent FMLAs + subs + b.ne (eight accumulators: throughput) */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static void mark(long label) { syscall(SYS_getpid, 0x7e55e1abL, label); }

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  long i = n;
  mark(0);
  __asm__ volatile(
      "movi v0.4s, #0\n"
      "1:\n"
      "fmla v0.4s, v8.4s, v9.4s\n fmla v0.4s, v8.4s, v9.4s\n fmla v0.4s, v8.4s, v9.4s\n fmla v0.4s, v8.4s, v9.4s\n"
      "fmla v0.4s, v8.4s, v9.4s\n fmla v0.4s, v8.4s, v9.4s\n fmla v0.4s, v8.4s, v9.4s\n fmla v0.4s, v8.4s, v9.4s\n"
      "subs %0, %0, #1\n"
      "b.ne 1b\n"
      : "+r"(i)
      :
      : "v0", "cc");
  i = n;
  mark(1);
  __asm__ volatile(
      "movi v0.4s, #0\n"
      "1:\n"
      "fmla v0.4s, v8.4s, v9.4s\n fmla v1.4s, v8.4s, v9.4s\n fmla v2.4s, v8.4s, v9.4s\n fmla v3.4s, v8.4s, v9.4s\n"
      "fmla v4.4s, v8.4s, v9.4s\n fmla v5.4s, v8.4s, v9.4s\n fmla v6.4s, v8.4s, v9.4s\n fmla v7.4s, v8.4s, v9.4s\n"
      "subs %0, %0, #1\n"
      "b.ne 1b\n"
      : "+r"(i)
      :
      : "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "cc");
  mark(-1);
  return 0;
}
