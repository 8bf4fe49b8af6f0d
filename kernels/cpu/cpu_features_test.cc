// Checks detection against the compiler's view of the target and the kernel's /proc/cpuinfo flags.
#include "kernels/cpu/cpu_features.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace tessel {
namespace {

#if defined(__x86_64__)
// The "flags" (x86) or "Features" (arm64) line of /proc/cpuinfo, an independent source of truth.
std::string ProcCpuFlags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0) return line + " ";
  }
  return "";
}

bool HasFlag(const std::string& flags, const std::string& f) { return flags.find(" " + f + " ") != std::string::npos; }
#endif

TEST(CpuFeaturesTest, AgreesWithProcCpuinfo) {
  const CpuFeatures& f = GetCpuFeatures();
#if defined(__x86_64__)
  const std::string flags = ProcCpuFlags();
  if (flags.empty()) GTEST_SKIP() << "/proc/cpuinfo has no flags line";
  EXPECT_EQ(f.avx2, HasFlag(flags, "avx2"));
  EXPECT_EQ(f.fma, HasFlag(flags, "fma"));
  EXPECT_EQ(f.avx512f, HasFlag(flags, "avx512f"));
  EXPECT_EQ(f.avx512bw, HasFlag(flags, "avx512bw"));
  EXPECT_EQ(f.avx512vl, HasFlag(flags, "avx512vl"));
  EXPECT_EQ(f.avx512vnni, HasFlag(flags, "avx512_vnni"));
  EXPECT_FALSE(f.neon);
#elif defined(__aarch64__)
  // Under qemu-user /proc/cpuinfo is the host's, so compare with what the target must have instead.
  EXPECT_TRUE(f.neon) << "every AArch64 CPU has Advanced SIMD";
  if (f.sve) {
    EXPECT_GE(f.sve_vector_bits, 128);
    EXPECT_EQ(f.sve_vector_bits % 128, 0);
  }
  EXPECT_FALSE(f.avx2);
#endif
  EXPECT_EQ(&f, &GetCpuFeatures()) << "detected once";
  EXPECT_FALSE(f.ToString().empty());
  std::printf("cpu: %s\n", f.ToString().c_str());
}

// The decode streaming choice: 4 streams with prefetch or 2 without (by CPU), or what the environment
// forces (cpu_features_override_test sets TESSEL_DECODE_STREAMS=1 and TESSEL_STREAM_PREFETCH=1).
TEST(CpuFeaturesTest, DecodeStreamsFollowCpuOrEnvironment) {
  const CpuFeatures& f = GetCpuFeatures();
  const char* streams = std::getenv("TESSEL_DECODE_STREAMS");
  const char* prefetch = std::getenv("TESSEL_STREAM_PREFETCH");
  if (streams != nullptr) {
    EXPECT_EQ(f.decode_streams, std::atoi(streams));
    // The F16 / BF16 row kernels have 4- and 2-stream forms only: 1 reads as 2.
    const int rows = std::atoi(streams) == 4 ? 4 : 2;
    EXPECT_EQ(f.row_streams, rows);
    EXPECT_EQ(f.row_streams_threaded, rows);
  } else {
    EXPECT_TRUE(f.decode_streams == 4 || f.decode_streams == 2) << f.decode_streams;
    EXPECT_EQ(f.row_streams, 4);
    // 4 per thread where the Panel16 kernels run 2 streams (Zen 4), else 2.
    EXPECT_EQ(f.row_streams_threaded, f.decode_streams == 2 ? 4 : 2);
  }
  if (prefetch != nullptr) {
    EXPECT_EQ(f.stream_prefetch, std::strcmp(prefetch, "1") == 0);
  } else {
    EXPECT_EQ(f.stream_prefetch, f.decode_streams == 4) << "the detected layouts are 4 + prefetch or 2 without";
  }
  std::printf("decode streams %d (F16/BF16 rows %d, %d per thread), software prefetch %s\n", f.decode_streams,
              f.row_streams, f.row_streams_threaded, f.stream_prefetch ? "on" : "off");
}

// TESSEL_AVX512=0 (cpu_features_no_avx512_test) hides every AVX-512 feature but keeps AVX2, as qemu-x86_64's
// CPU does.
TEST(CpuFeaturesTest, Avx512CanBeHidden) {
  const char* avx512 = std::getenv("TESSEL_AVX512");
  if (avx512 == nullptr || std::strcmp(avx512, "0") != 0) GTEST_SKIP() << "TESSEL_AVX512=0 not set";
  const CpuFeatures& f = GetCpuFeatures();
  EXPECT_FALSE(f.avx512f || f.avx512bw || f.avx512vl || f.avx512dq || f.avx512vnni || f.gfni) << f.ToString();
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 5))) EXPECT_TRUE(f.avx2) << "AVX2 stays";
#endif
}

}  // namespace
}  // namespace tessel
