// CPU feature detection with cpuid/xgetbv (x86-64) and the kernel's hwcaps (aarch64). Hand-rolled
// rather than cpuinfo so that the aarch64 build needs nothing from the sysroot beyond libc.
#include "kernels/cpu/cpu_features.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

namespace tessel {
namespace {

#if defined(__x86_64__)
uint64_t ReadXcr0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}

CpuFeatures Detect() {
  CpuFeatures f;
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return f;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const unsigned base_family = (a >> 8) & 0xf;
  const unsigned family = base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family;
  const bool amd_19h = std::strcmp(vendor, "AuthenticAMD") == 0 && family == 0x19;  // Zen 3, Zen 4
  if (amd_19h) {
    f.stream_prefetch = false;
    f.stream_prefetch_l2 = true;
    f.decode_streams = f.decode_streams_ymm = 2;
    f.row_streams_threaded = 4;
  }
  const bool osxsave = c & (1u << 27);
  const bool avx = c & (1u << 28);
  f.fma = c & (1u << 12);
  f.f16c = c & (1u << 29);
  if (!osxsave || !avx) return f;
  const uint64_t xcr0 = ReadXcr0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;
  const bool zmm_state = (xcr0 & 0xe6) == 0xe6;  // SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM
  if (!ymm_state) {
    f.fma = f.f16c = false;
    return f;
  }
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
  const unsigned max_subleaf = a;
  f.avx2 = b & (1u << 5);
  if (zmm_state) {
    f.avx512f = b & (1u << 16);
    f.avx512dq = b & (1u << 17);
    f.avx512bw = b & (1u << 30);
    f.avx512vl = b & (1u << 31);
    f.avx512vnni = c & (1u << 11);
    f.gfni = c & (1u << 8);  // with the ZMM state: the 512-bit form
    // Zen 4 (family 19h with AVX-512): the 256-bit kernels read 4 streams (cpu_features.h).
    if (amd_19h && f.avx512f) f.decode_streams_ymm = 4;
  }
  if (max_subleaf >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx_vnni = a & (1u << 4);
  return f;
}
#elif defined(__aarch64__)
// Bits from the kernel's asm/hwcap.h, spelled out so older sysroot headers still build.
constexpr unsigned long kHwcapAsimd = 1ul << 1;
constexpr unsigned long kHwcapAsimddp = 1ul << 20;
constexpr unsigned long kHwcapSve = 1ul << 22;
constexpr unsigned long kHwcap2Sve2 = 1ul << 1;
constexpr unsigned long kHwcap2SveI8mm = 1ul << 9;
constexpr unsigned long kHwcap2I8mm = 1ul << 13;
constexpr int kPrSveGetVl = 51;
constexpr int kPrSveVlLenMask = 0xffff;

CpuFeatures Detect() {
  CpuFeatures f;
  const unsigned long hw = getauxval(AT_HWCAP);
  const unsigned long hw2 = getauxval(AT_HWCAP2);
  f.neon = hw & kHwcapAsimd;
  f.dotprod = hw & kHwcapAsimddp;
  f.sve = hw & kHwcapSve;
  f.sve2 = f.sve && (hw2 & kHwcap2Sve2);
  f.i8mm = hw2 & kHwcap2I8mm;
  f.sve_i8mm = f.sve && (hw2 & kHwcap2SveI8mm);
  if (f.sve) {
    const int vl = prctl(kPrSveGetVl);
    if (vl > 0) f.sve_vector_bits = (vl & kPrSveVlLenMask) * 8;
  }
  return f;
}
#else
CpuFeatures Detect() { return CpuFeatures(); }
#endif

// TESSEL_STREAM_PREFETCH=0|1|2 (none, into L1, into L2) and TESSEL_DECODE_STREAMS=1|2|4 override the
// detected choices; TESSEL_GFNI=0 turns GFNI off; TESSEL_MAX_ISA caps the instruction sets.
CpuFeatures DetectWithOverrides() {
  CpuFeatures f = Detect();
  if (const char* v = std::getenv("TESSEL_MAX_ISA"); v != nullptr && v[0] != 0 && !CapCpuFeatures(v, &f)) {
    std::fprintf(stderr, "tessel: TESSEL_MAX_ISA=%s is not one of %s; running with every feature of this CPU\n", v,
                 IsaCapLevels());
  }
  if (const char* v = std::getenv("TESSEL_STREAM_PREFETCH"); v != nullptr && v[0] != 0) {
    if (v[0] >= '0' && v[0] <= '2' && v[1] == 0) {
      f.stream_prefetch = v[0] == '1';
      f.stream_prefetch_l2 = v[0] == '2';
    } else {
      std::fprintf(stderr, "tessel: TESSEL_STREAM_PREFETCH=%s is not 0, 1 or 2; keeping this CPU's choice\n", v);
    }
  }
  if (const char* v = std::getenv("TESSEL_DECODE_STREAMS"); v != nullptr && v[0] != 0) {
    if ((v[0] == '1' || v[0] == '2' || v[0] == '4') && v[1] == 0) {
      f.decode_streams = f.decode_streams_ymm = v[0] - '0';
      f.row_streams = f.row_streams_threaded = f.decode_streams == 4 ? 4 : 2;
    } else {
      std::fprintf(stderr, "tessel: TESSEL_DECODE_STREAMS=%s is not 1, 2 or 4; keeping this CPU's choice\n", v);
    }
  }
  if (const char* v = std::getenv("TESSEL_GFNI"); v != nullptr && std::strcmp(v, "0") == 0) f.gfni = false;
  return f;
}

}  // namespace

const char* IsaCapLevels() {
#if defined(__aarch64__)
  return "portable|neon|dotprod|i8mm|sve|sve2";
#else
  return "portable|avx2|avx2vnni|avx512|avx512vnni";
#endif
}

bool CapCpuFeatures(const char* level, CpuFeatures* f) {
  // What each level allows, as a CpuFeatures with those fields set; the cap is the intersection.
  CpuFeatures allow;
  const std::string l = level;
#if defined(__aarch64__)
  static const char* const kLevels[] = {"portable", "neon", "dotprod", "i8mm", "sve", "sve2"};
#else
  static const char* const kLevels[] = {"portable", "avx2", "avx2vnni", "avx512", "avx512vnni"};
#endif
  int rank = -1;
  for (int i = 0; i < static_cast<int>(sizeof(kLevels) / sizeof(kLevels[0])); ++i) {
    if (l == kLevels[i]) rank = i;
  }
  if (rank < 0) return false;
#if defined(__aarch64__)
  allow.neon = rank >= 1;
  allow.dotprod = rank >= 2;
  allow.i8mm = rank >= 3;
  allow.sve = rank >= 4;
  allow.sve_i8mm = rank >= 4;
  allow.sve2 = rank >= 5;
#else
  allow.avx2 = allow.fma = allow.f16c = rank >= 1;
  allow.avx_vnni = l == "avx2vnni";
  allow.avx512f = allow.avx512bw = allow.avx512vl = allow.avx512dq = rank >= 3;
  allow.avx512vnni = rank >= 4;
#endif
  // GFNI belongs to none of the levels (Skylake-X and Cascade Lake lack it).
  bool unmet = false;
  auto cap = [&unmet](bool allowed, bool* has) {
    if (allowed && !*has) unmet = true;
    *has = *has && allowed;
  };
  cap(allow.avx2, &f->avx2);
  cap(allow.fma, &f->fma);
  cap(allow.f16c, &f->f16c);
  cap(allow.avx512f, &f->avx512f);
  cap(allow.avx512bw, &f->avx512bw);
  cap(allow.avx512vl, &f->avx512vl);
  cap(allow.avx512dq, &f->avx512dq);
  cap(allow.avx512vnni, &f->avx512vnni);
  cap(allow.avx_vnni, &f->avx_vnni);
  cap(false, &f->gfni);
  cap(allow.neon, &f->neon);
  cap(allow.dotprod, &f->dotprod);
  cap(allow.i8mm, &f->i8mm);
  cap(allow.sve, &f->sve);
  // SVE's i8mm is optional within the SVE levels (A64FX lacks it): capped, never "unmet".
  f->sve_i8mm = f->sve_i8mm && allow.sve_i8mm;
  cap(allow.sve2, &f->sve2);
  if (!f->sve) f->sve_vector_bits = 0;
  f->sve_i8mm = f->sve_i8mm && f->sve;
  f->isa_cap = kLevels[rank];
  f->isa_cap_unmet = unmet;
  return true;
}

std::string CpuFeatures::ToString() const {
#if defined(__x86_64__)
  std::string s = "x86-64";
#elif defined(__aarch64__)
  std::string s = "aarch64";
#else
  std::string s = "generic";
#endif
  auto add = [&s](bool on, const char* name) {
    if (on) s += std::string(" ") + name;
  };
  add(avx2, "avx2");
  add(fma, "fma");
  add(f16c, "f16c");
  add(avx512f, "avx512f");
  add(avx512bw, "avx512bw");
  add(avx512vl, "avx512vl");
  add(avx512dq, "avx512dq");
  add(avx512vnni, "avx512vnni");
  add(avx_vnni, "avx_vnni");
  add(gfni, "gfni");
  add(neon, "neon");
  add(dotprod, "dotprod");
  add(i8mm, "i8mm");
  add(sve, "sve");
  add(sve2, "sve2");
  add(sve_i8mm, "sve_i8mm");
  if (sve) s += " sve_vl=" + std::to_string(sve_vector_bits);
  if (isa_cap != nullptr) {
    s += std::string(" (TESSEL_MAX_ISA=") + isa_cap + (isa_cap_unmet ? ", a level this CPU lacks in part)" : ")");
  }
  return s;
}

const CpuFeatures& GetCpuFeatures() {
  // Function-local static of a trivially destructible type: detected once, thread-safe.
  static const CpuFeatures features = DetectWithOverrides();
  return features;
}

}  // namespace tessel
