#!/usr/bin/env bash
# Builds the LLM peer: llama.cpp's llama-quantize and llama-bench from the source the node-llama-cpp npm
# package carries (a git bundle), with CMake, once per release and flavour, cached outside the tree in
# ~/.cache/tessel-llama.cpp/<release>-<commit>/build-<flavour>. Prints the folder holding the binaries
# on its last line of stdout; CMake's and ninja's progress goes to stderr.
#
#   benchmarks/llm/build_llama_cpp.sh [native|avx2]
#
#   native  -DGGML_NATIVE=ON: every ISA extension of the build machine (the peer at this CPU's full ISA),
#           except AMX: on the KVM guests these benchmarks run on (Emerald Rapids, 2026-11), ggml's AMX
#           matmul died of SIGILL at its first tilezero, so the build compiles it out (-mno-amx-*).
#   avx2    AVX2 + FMA + F16C, no AVX-512 and no AVX-VNNI: the peer an AVX2-only CPU (Zen 2/3) runs, for
#           comparing with Tessel under TESSEL_MAX_ISA=avx2 on a newer host.
# Environment: JOBS (2: these machines are shared), LLAMA_CPP_CACHE (~/.cache/tessel-llama.cpp).
set -euo pipefail
cd "$(dirname "$0")/../.."

FLAVOUR=${1:-native}
JOBS=${JOBS:-2}
LLAMA_DIR=third_party/npm/node_modules/node-llama-cpp/llama
BUNDLE=$LLAMA_DIR/gitRelease.bundle
if [[ ! -f $BUNDLE ]]; then
  echo "build_llama_cpp: $BUNDLE not found; run ./setup.sh (it installs node-llama-cpp from npm)" >&2
  exit 1
fi
if ! command -v cmake >/dev/null; then
  echo "build_llama_cpp: cmake not found; run ./setup.sh or apt-get install cmake" >&2
  exit 1
fi

case $FLAVOUR in
  native) FLAGS=(-DGGML_NATIVE=ON "-DCMAKE_C_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
                 "-DCMAKE_CXX_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16") ;;
  avx2) FLAGS=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
               -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF
               -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF) ;;
  *) echo "build_llama_cpp: flavour must be native or avx2, not '$FLAVOUR'" >&2; exit 1 ;;
esac

RELEASE=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['tag'])" "$LLAMA_DIR/llama.cpp.info.json")
COMMIT=$(git bundle list-heads "$BUNDLE" | awk '$2 == "HEAD" {print substr($1, 1, 10)}')
CACHE=${LLAMA_CPP_CACHE:-$HOME/.cache/tessel-llama.cpp}/$RELEASE-$COMMIT
SRC=$CACHE/src
BUILD=$CACHE/build-$FLAVOUR
mkdir -p "$CACHE"

# One build at a time per cache folder (a second caller waits, then finds it done).
exec 9>"$CACHE/.lock"
flock 9

if [[ -x $BUILD/bin/llama-bench && -x $BUILD/bin/llama-quantize && -f $BUILD/.tessel-built ]]; then
  echo "$BUILD/bin"
  exit 0
fi

if [[ ! -f $SRC/CMakeLists.txt ]]; then
  echo "[llama.cpp] cloning $RELEASE ($COMMIT) from $BUNDLE" >&2
  rm -rf "$SRC"
  git -c advice.detachedHead=false clone -q "$BUNDLE" "$SRC" >&2
fi

GENERATOR=()
if command -v ninja >/dev/null; then GENERATOR=(-G Ninja); fi
echo "[llama.cpp] configuring $FLAVOUR in $BUILD" >&2
cmake -S "$SRC" -B "$BUILD" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_SERVER=OFF -DGGML_OPENMP=ON "${FLAGS[@]}" >&2
echo "[llama.cpp] building llama-quantize and llama-bench ($FLAVOUR, $JOBS jobs; ~10-20 min on 2 cores)" >&2
# ninja prints [done/total] per step: the progress.
cmake --build "$BUILD" --target llama-quantize llama-bench -j "$JOBS" >&2
touch "$BUILD/.tessel-built"
echo "$BUILD/bin"
