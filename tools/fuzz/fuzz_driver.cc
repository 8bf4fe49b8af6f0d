// A libFuzzer-compatible driver for ordinary builds: feeds LLVMFuzzerTestOneInput every seed file given
// on the command line, every truncation of each, and a bounded number of seeded random mutations.
// Under --config=fuzz the same entry point links with libFuzzer instead (tools/fuzz/run_fuzzers.sh).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  int mutations = 2000;
  std::vector<std::string> seeds;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--mutations=", 0) == 0) {
      mutations = std::atoi(a.c_str() + 12);
    } else if (a.rfind("--", 0) == 0) {
      continue;  // test-runner flags
    } else {
      std::ifstream f(a, std::ios::binary);
      if (!f) {
        std::fprintf(stderr, "fuzz_driver: cannot read seed %s\n", a.c_str());
        return 2;
      }
      std::stringstream ss;
      ss << f.rdbuf();
      seeds.push_back(ss.str());
    }
  }
  if (seeds.empty()) seeds.push_back(std::string());
  std::mt19937 rng(12345);
  long runs = 0;
  for (const std::string& s : seeds) {
    const size_t step = s.size() > 4096 ? s.size() / 512 : 1;
    for (size_t n = 0; n <= s.size(); n += step, ++runs) {
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), n);
    }
    for (int m = 0; m < mutations; ++m, ++runs) {
      std::string t = s;
      const int edits = 1 + rng() % 4;
      for (int e = 0; e < edits && !t.empty(); ++e) {
        const size_t pos = rng() % t.size();
        switch (rng() % 3) {
          case 0: t[pos] = static_cast<char>(rng()); break;
          case 1: t[pos] ^= static_cast<char>(1u << (rng() % 8)); break;
          default: t.resize(pos); break;
        }
      }
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(t.data()), t.size());
    }
  }
  std::printf("fuzz_driver: %ld inputs, no crash\n", runs);
  return 0;
}
