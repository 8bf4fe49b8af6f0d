#!/usr/bin/env bash
# Builds llama.cpp for aarch64 from the source node-llama-cpp carries (a git bundle), once per core
# model, and links benchmarks/arm/llama_steps.cc against it (static, so qemu needs no sysroot).
#
#   benchmarks/arm/build_llama_cpp.sh CORE      # cortex-a55 | cortex-a76 | neoverse-v1; prints the binary
#
# ggml's CPU backend (every kernel the rows measure) and ggml-base are built per core with
# -mcpu=CORE, GGML_NATIVE off and GGML_CPU_REPACK on (llama.cpp repacks Q4_0 / Q8_0 at load for the
# dotprod, i8mm and SVE kernels the CPU reports). libllama (graph building, sampling: scalar host code)
# is built once for plain armv8-a and shared, which saves two thirds of the build. Everything lives
# under ~/.cache/tessel-llama.cpp-aarch64/<commit>/ and is reused while the bundle does not change.
set -euo pipefail
core="${1:?usage: build_llama_cpp.sh cortex-a55|cortex-a76|neoverse-v1}"
case "$core" in cortex-a55|cortex-a76|neoverse-v1) ;; *) echo "build_llama_cpp.sh: unknown core '$core'" >&2; exit 2 ;; esac
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bundle="$root/third_party/npm/node_modules/node-llama-cpp/llama/gitRelease.bundle"
[ -f "$bundle" ] || { echo "build_llama_cpp.sh: no $bundle (run setup.sh)" >&2; exit 1; }
jobs="${JOBS:-2}"
cache="${TESSEL_LLAMA_CPP_AARCH64:-$HOME/.cache/tessel-llama.cpp-aarch64}"
commit=$(git bundle list-heads "$bundle" | head -1 | cut -c1-10)
base="$cache/$commit"
src="$base/src"
mkdir -p "$base"
# One build at a time per source tree (run.sh builds each core's in parallel with its other work).
exec 9>"$base/.lock"
flock 9
if [ ! -d "$src/.git" ]; then
  git clone -q "$bundle" "$src.tmp" >&2 && mv "$src.tmp" "$src"
fi
out="$base/$core/llama_steps"
driver="$root/benchmarks/arm/llama_steps.cc"
if [ -x "$out" ] && [ "$out" -nt "$driver" ]; then echo "$out"; exit 0; fi

# The toolchain file lives in the cache, not in this checkout: a build configured from one checkout
# keeps working from another after the first is gone (CMake re-reads the file when it regenerates).
toolchain="$base/aarch64-linux-gnu.cmake"
cmp -s "$root/benchmarks/arm/aarch64-linux-gnu.cmake" "$toolchain" ||
  cp "$root/benchmarks/arm/aarch64-linux-gnu.cmake" "$toolchain"
configure() {  # DIR FLAGS
  # A build directory configured with another toolchain path (older caches) is configured again.
  if [ -f "$1/CMakeCache.txt" ] && ! grep -qF "CMAKE_TOOLCHAIN_FILE:FILEPATH=$toolchain" "$1/CMakeCache.txt"; then
    rm -rf "$1"
  fi
  [ -f "$1/build.ninja" ] && return 0
  cmake -S "$src" -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
    -DCMAKE_C_FLAGS="$2" -DCMAKE_CXX_FLAGS="$2" \
    -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DGGML_CPU_REPACK=ON -DGGML_BACKEND_DL=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF >&2
}
configure "$base/common" "-march=armv8-a"
cmake --build "$base/common" --target llama -j "$jobs" >&2
configure "$base/$core" "-mcpu=$core"
cmake --build "$base/$core" --target ggml-cpu ggml-base -j "$jobs" >&2
lib() { find "$1" -name "$2" | head -1; }
aarch64-linux-gnu-g++ -O2 -mcpu="$core" -std=c++17 -static -o "$out.tmp" "$driver" \
  -I"$src/include" -I"$src/ggml/include" \
  "$(lib "$base/common" libllama.a)" "$(lib "$base/common" libggml.a)" \
  "$(lib "$base/$core" libggml-cpu.a)" "$(lib "$base/$core" libggml-base.a)" -lpthread -lm
mv "$out.tmp" "$out"
echo "$out"
