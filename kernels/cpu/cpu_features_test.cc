// Checks detection against the compiler's view of the target and the kernel's /proc/cpuinfo flags.
#include "kernels/cpu/cpu_features.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/registry/registry.h"

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
  if (f.isa_cap != nullptr) GTEST_SKIP() << "TESSEL_MAX_ISA caps the features (IsaCapFromEnvironment checks them)";
#if defined(__x86_64__)
  const std::string flags = ProcCpuFlags();
  if (flags.empty()) GTEST_SKIP() << "/proc/cpuinfo has no flags line";
  EXPECT_EQ(f.avx_vnni, HasFlag(flags, "avx_vnni"));
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
    EXPECT_EQ(f.decode_streams_ymm, std::atoi(streams));
    // The F16 / BF16 row kernels have 4- and 2-stream forms only: 1 reads as 2.
    const int rows = std::atoi(streams) == 4 ? 4 : 2;
    EXPECT_EQ(f.row_streams, rows);
    EXPECT_EQ(f.row_streams_threaded, rows);
  } else {
    EXPECT_TRUE(f.decode_streams == 4 || f.decode_streams == 2) << f.decode_streams;
    // The 256-bit kernels' count is never below the 512-bit ones' (4 on Zen 4 where those read 2).
    EXPECT_GE(f.decode_streams_ymm, f.decode_streams);
    EXPECT_EQ(f.row_streams, 4);
    // 4 per thread where the Panel16 kernels run 2 streams (Zen 4), else 2.
    EXPECT_EQ(f.row_streams_threaded, f.decode_streams == 2 ? 4 : 2);
  }
  if (prefetch != nullptr) {
    EXPECT_EQ(f.stream_prefetch, std::strcmp(prefetch, "1") == 0);
    EXPECT_EQ(f.stream_prefetch_l2, std::strcmp(prefetch, "2") == 0);
  } else {
    EXPECT_EQ(f.stream_prefetch, f.decode_streams == 4) << "the detected layouts are 4 + prefetch or 2 without";
    // AMD family 19h (the 2-stream CPUs) prefetches the 256-bit k-quant and group kernels into L2.
    EXPECT_EQ(f.stream_prefetch_l2, f.decode_streams == 2);
  }
  std::printf("decode streams %d (256-bit kernels %d; F16/BF16 rows %d, %d per thread), software prefetch %s\n",
              f.decode_streams, f.decode_streams_ymm, f.row_streams, f.row_streams_threaded,
              f.stream_prefetch ? "on" : f.stream_prefetch_l2 ? "into L2 (256-bit k-quant and group kernels)" : "off");
}

// Every field CapCpuFeatures may touch, as a vector of flags, so that a test can compare them all.
std::vector<bool> Flags(const CpuFeatures& f) {
  return {f.avx2, f.fma,  f.f16c, f.avx512f, f.avx512bw, f.avx512vl, f.avx512dq, f.avx512vnni,
          f.avx_vnni, f.gfni, f.neon, f.dotprod, f.i8mm, f.sve, f.sve2, f.sve_i8mm};
}

CpuFeatures Everything() {
  CpuFeatures f;
  f.avx2 = f.fma = f.f16c = f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = f.avx512vnni = f.avx_vnni = f.gfni = true;
  f.neon = f.dotprod = f.i8mm = f.sve = f.sve2 = f.sve_i8mm = true;
  f.sve_vector_bits = 256;
  return f;
}

// Each level keeps exactly its features of a CPU that has everything, and only removes: capping any
// CPU gives a subset of its features, and a CPU without part of the level says so.
TEST(CpuFeaturesTest, CapKeepsTheLevelsFeaturesAndOnlyRemoves) {
  const std::string levels = IsaCapLevels();
  size_t begin = 0;
  int count = 0;
  while (begin <= levels.size()) {
    const size_t end = std::min(levels.find('|', begin), levels.size());
    const std::string level = levels.substr(begin, end - begin);
    begin = end + 1;
    ++count;
    CpuFeatures all = Everything();
    ASSERT_TRUE(CapCpuFeatures(level.c_str(), &all)) << level;
    EXPECT_STREQ(all.isa_cap, level.c_str());
    EXPECT_FALSE(all.isa_cap_unmet) << level;
    EXPECT_FALSE(all.gfni) << level << ": no level includes GFNI";
#if defined(__x86_64__)
    const std::vector<bool> want = {
        level != "portable", level != "portable", level != "portable",
        level == "avx512" || level == "avx512vnni", level == "avx512" || level == "avx512vnni",
        level == "avx512" || level == "avx512vnni", level == "avx512" || level == "avx512vnni",
        level == "avx512vnni", level == "avx2vnni", false, false, false, false, false, false, false};
#else
    const std::vector<bool> want = {false, false, false, false, false, false, false, false, false, false,
                                    level != "portable",
                                    level == "dotprod" || level == "i8mm" || level == "sve" || level == "sve2",
                                    level == "i8mm" || level == "sve" || level == "sve2",
                                    level == "sve" || level == "sve2", level == "sve2",
                                    level == "sve" || level == "sve2"};
#endif
    EXPECT_EQ(Flags(all), want) << level;
    // On this CPU: a subset of what it has, and unmet exactly when the level wanted more.
    const CpuFeatures& real = GetCpuFeatures();
    if (real.isa_cap == nullptr) {
      CpuFeatures capped = real;
      ASSERT_TRUE(CapCpuFeatures(level.c_str(), &capped));
      bool unmet = false;
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_TRUE(!Flags(capped)[i] || Flags(real)[i]) << level << " added feature " << i;
        EXPECT_EQ(Flags(capped)[i], want[i] && Flags(real)[i]) << level << " feature " << i;
        unmet = unmet || (want[i] && !Flags(real)[i]);
      }
      EXPECT_EQ(capped.isa_cap_unmet, unmet) << level;
      EXPECT_EQ(capped.decode_streams, real.decode_streams) << "a cap leaves the streaming choice alone";
    }
  }
  EXPECT_GE(count, 5);
  CpuFeatures f = Everything();
  EXPECT_FALSE(CapCpuFeatures("avx3", &f));
  EXPECT_EQ(f.isa_cap, nullptr);
  EXPECT_EQ(Flags(f), Flags(Everything())) << "an unknown level changes nothing";
}

// cpu_features_cap_test runs with TESSEL_MAX_ISA set: GetCpuFeatures() is capped for the whole process.
TEST(CpuFeaturesTest, IsaCapFromEnvironment) {
  const char* level = std::getenv("TESSEL_MAX_ISA");
  if (level == nullptr) GTEST_SKIP() << "TESSEL_MAX_ISA is not set";
  CpuFeatures probe;
  if (!CapCpuFeatures(level, &probe)) GTEST_SKIP() << level << " is not a level of this architecture";
  const CpuFeatures& f = GetCpuFeatures();
  ASSERT_NE(f.isa_cap, nullptr);
  EXPECT_STREQ(f.isa_cap, level);
  EXPECT_NE(f.ToString().find(std::string("TESSEL_MAX_ISA=") + level), std::string::npos) << f.ToString();
#if defined(__x86_64__)
  const std::string flags = ProcCpuFlags();
  if (std::string(level) == "avx2") {
    EXPECT_EQ(f.avx2, HasFlag(flags, "avx2"));
    EXPECT_FALSE(f.avx512f || f.avx512bw || f.avx512vl || f.avx512dq || f.avx512vnni || f.avx_vnni || f.gfni);
    EXPECT_EQ(CpuSupports(Isa::kAvx2), HasFlag(flags, "avx2") && HasFlag(flags, "fma") && HasFlag(flags, "f16c"));
    EXPECT_FALSE(CpuSupports(Isa::kAvx512));
    EXPECT_FALSE(CpuSupports(Isa::kAvx512Vnni));
    EXPECT_FALSE(CpuSupports(Isa::kAvxVnni));
  }
#endif
}

}  // namespace
}  // namespace tessel
