/* LD_PRELOAD shim for the lab's x86-64 validation: XNNPACK picks its microkernels from cpuinfo's
 * feature flags, and qemu-x86_64 (7.2) emulates no AVX-512, so an estimate made under qemu describes
 * XNNPACK's AVX2 kernels. Clearing cpuinfo's AVX-512 flags right after it initializes makes the native
 * run take those same kernels (Tessel's own kernels follow TESSEL_MAX_ISA=avx2). */
#define _GNU_SOURCE
#include <cpuinfo.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

bool cpuinfo_initialize(void) {
  bool (*real)(void) = (bool (*)(void))dlsym(RTLD_NEXT, "cpuinfo_initialize");
  struct cpuinfo_x86_isa *isa = (struct cpuinfo_x86_isa *)dlsym(RTLD_DEFAULT, "cpuinfo_isa");
  if (!real || !isa) {
    fprintf(stderr, "cpuinfo_avx2_only: libcpuinfo not found\n");
    abort();
  }
  const bool ok = real();
  isa->avx512f = isa->avx512pf = isa->avx512er = isa->avx512cd = isa->avx512dq = isa->avx512bw = false;
  isa->avx512vl = isa->avx512ifma = isa->avx512vbmi = isa->avx512vbmi2 = isa->avx512bitalg = false;
  isa->avx512vpopcntdq = isa->avx512vnni = isa->avx512bf16 = isa->avx512vp2intersect = false;
  isa->avx512_4vnniw = isa->avx512_4fmaps = false;
  return ok;
}
