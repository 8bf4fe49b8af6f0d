// CPU feature detection with cpuid/xgetbv (x86-64) and the kernel's hwcaps (aarch64). Hand-rolled
// rather than cpuinfo so that the aarch64 build needs nothing from the sysroot beyond libc.
#include "kernels/cpu/cpu_features.h"

#include <cstdint>
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
  if (std::strcmp(vendor, "AuthenticAMD") == 0 && family == 0x19) {
    f.stream_prefetch = false;
    f.decode_streams = 2;
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
  f.avx2 = b & (1u << 5);
  if (zmm_state) {
    f.avx512f = b & (1u << 16);
    f.avx512dq = b & (1u << 17);
    f.avx512bw = b & (1u << 30);
    f.avx512vl = b & (1u << 31);
    f.avx512vnni = c & (1u << 11);
    f.gfni = c & (1u << 8);  // with the ZMM state: the 512-bit form
  }
  return f;
}
#elif defined(__aarch64__)
// Bits from the kernel's asm/hwcap.h, spelled out so older sysroot headers still build.
constexpr unsigned long kHwcapAsimd = 1ul << 1;
constexpr unsigned long kHwcapAsimddp = 1ul << 20;
constexpr unsigned long kHwcapSve = 1ul << 22;
constexpr unsigned long kHwcap2Sve2 = 1ul << 1;
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
  if (f.sve) {
    const int vl = prctl(kPrSveGetVl);
    if (vl > 0) f.sve_vector_bits = (vl & kPrSveVlLenMask) * 8;
  }
  return f;
}
#else
CpuFeatures Detect() { return CpuFeatures(); }
#endif

// TESSEL_STREAM_PREFETCH=0|1 and TESSEL_DECODE_STREAMS=1|2|4 override the detected choices; TESSEL_GFNI=0
// turns GFNI off; TESSEL_AVX512=0 hides AVX-512 (and with it VNNI and GFNI's 512-bit form), so an
// AVX-512 host runs the AVX2 kernels that qemu-x86_64 runs (tools/lab validates its estimates on them).
CpuFeatures DetectWithOverrides() {
  CpuFeatures f = Detect();
  if (const char* v = std::getenv("TESSEL_STREAM_PREFETCH"); v != nullptr && (v[0] == '0' || v[0] == '1')) {
    f.stream_prefetch = v[0] == '1';
  }
  if (const char* v = std::getenv("TESSEL_DECODE_STREAMS");
      v != nullptr && (v[0] == '1' || v[0] == '2' || v[0] == '4') && v[1] == 0) {
    f.decode_streams = v[0] - '0';
    f.row_streams = f.row_streams_threaded = f.decode_streams == 4 ? 4 : 2;
  }
  if (const char* v = std::getenv("TESSEL_GFNI"); v != nullptr && std::strcmp(v, "0") == 0) f.gfni = false;
  if (const char* v = std::getenv("TESSEL_AVX512"); v != nullptr && std::strcmp(v, "0") == 0) {
    f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = f.avx512vnni = f.gfni = false;
  }
  return f;
}

}  // namespace

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
  add(gfni, "gfni");
  add(neon, "neon");
  add(dotprod, "dotprod");
  add(i8mm, "i8mm");
  add(sve, "sve");
  add(sve2, "sve2");
  if (sve) s += " sve_vl=" + std::to_string(sve_vector_bits);
  return s;
}

const CpuFeatures& GetCpuFeatures() {
  // Function-local static of a trivially destructible type: detected once, thread-safe.
  static const CpuFeatures features = DetectWithOverrides();
  return features;
}

}  // namespace tessel
