#!/bin/bash
# Tessel setup for a fresh Debian 12 machine, then the main job (the built-in demo).
# Idempotent: a second run with everything installed takes seconds.
#
#   ./setup.sh            install everything, build, and run the demo
#   ./setup.sh --no-demo  install everything only (what .ci/run uses)
set -euo pipefail
cd "$(dirname "$0")"

run_demo=1
for arg in "$@"; do
  case "$arg" in
    --no-demo) run_demo=0 ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
log() { echo "[setup] $*"; }

# Host packages: build system, libraries, cross compiler, emulator, PyTorch frontend, peers' runtimes.
APT_PACKAGES=(
  bazel-bootstrap
  g++ gcc binutils make
  libabsl-dev libeigen3-dev libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
  libprotobuf-dev protobuf-compiler libonnx-dev
  libgtest-dev libgmock-dev libbenchmark-dev libstb-dev
  g++-aarch64-linux-gnu gcc-aarch64-linux-gnu qemu-user
  # The Arm performance lab (lab): llvm-mca, llvm-mc, llvm-nm and llvm-readelf 16 model the cores;
  # cmake and ninja build llama.cpp for aarch64 (benchmarks/arm).
  llvm-16 cmake ninja-build
  clang-14 libclang-rt-14-dev
  python3-torch python3-torchvision python3-onnx python3-numpy python3-sklearn
  # The LLM peer, llama.cpp, built from the source node-llama-cpp carries (benchmarks/llm/build_llama_cpp.sh).
  cmake ninja-build
  # PyTorch's BLAS: without it Debian's reference libblas3 serves the matmuls, and training the test
  # models took 5 s per step instead of a fraction of one (Zen 3: 512^3 matmul 56 ms -> 2.8 ms).
  libopenblas0-pthread
  # `tessel serve`: HTTP/1.1 (cpp-httplib) and JSON (nlohmann/json).
  libcpp-httplib-dev nlohmann-json3-dev
)
# Node.js runs the peers (ONNX Runtime, llama.cpp); the machine image may already carry a newer one.
if ! command -v npm >/dev/null; then APT_PACKAGES+=(nodejs npm); fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
need_update=0
if [ "${#missing[@]}" -gt 0 ]; then need_update=1; fi
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  log "adding the arm64 architecture (for the aarch64 sysroot's packages)"
  $SUDO dpkg --add-architecture arm64
  need_update=1
fi
if [ "$need_update" = 1 ]; then
  log "apt-get update"
  $SUDO apt-get update -q
fi
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing: ${missing[*]}"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# aarch64 sysroot: Debian's arm64 -dev packages unpacked into a folder (several cannot be installed
# side by side with their amd64 versions). Keep the path in sync with
# third_party/toolchains/aarch64/cc_toolchain_config.bzl.
SYSROOT=/opt/tessel/sysroot-aarch64
SYSROOT_PACKAGES=(
  libabsl-dev libabsl20220623
  libxnnpack-dev libxnnpack0 libpthreadpool-dev libpthreadpool0 libcpuinfo-dev libcpuinfo0
  libprotobuf-dev libprotobuf32 libprotobuf-lite32 zlib1g zlib1g-dev
  libonnx-dev libonnx1 libonnxifi
  libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian
  libstb-dev libstb0
)
stamp="$SYSROOT/.tessel-packages"
want="${SYSROOT_PACKAGES[*]}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "building the arm64 sysroot in $SYSROOT"
  if [ "$need_update" = 0 ]; then $SUDO apt-get update -q; fi
  tmp=$(mktemp -d)
  chmod 755 "$tmp"  # apt-get download runs as _apt
  (cd "$tmp" && apt-get download $(printf '%s:arm64 ' "${SYSROOT_PACKAGES[@]}"))
  $SUDO rm -rf "$SYSROOT"
  $SUDO mkdir -p "$SYSROOT"
  for deb in "$tmp"/*.deb; do $SUDO dpkg -x "$deb" "$SYSROOT"; done
  # Absolute symlinks inside the packages would point into the host: make them sysroot-relative.
  while IFS= read -r link; do
    target=$(readlink "$link")
    case "$target" in /*) $SUDO ln -sfn "$SYSROOT$target" "$link" ;; esac
  done < <(find "$SYSROOT" -type l)
  rm -rf "$tmp"
  echo "$want" | $SUDO tee "$stamp" >/dev/null
fi

# Peers for benchmarks: ONNX Runtime (CNN) and llama.cpp (LLM), and the OpenAI client that tests
# `tessel serve`, from npm, into third_party/npm.
if [ ! -d third_party/npm/node_modules/onnxruntime-node ] || [ ! -d third_party/npm/node_modules/node-llama-cpp ] ||
   [ ! -d third_party/npm/node_modules/openai ]; then
  # Downloads while Bazel compiles (34 s of network on a fresh machine, 2026-11-28).
  log "installing peers from npm (onnxruntime-node, node-llama-cpp, openai), alongside the build"
  npm_log=$(mktemp)
  (cd third_party/npm && npm install --ignore-scripts --no-audit --no-fund --loglevel=error) > "$npm_log" 2>&1 &
  npm_pid=$!
fi

# `import tessel` from Debian's Python: the C library and the CLI built here, and a .pth file in
# site-packages naming this checkout's python/ folder (the last checkout to run setup.sh wins).
log "building libtessel.so and the tessel command (for import tessel)"
bazel build //capi:libtessel.so //cli:tessel
if [ -n "${npm_pid:-}" ]; then
  if ! wait "$npm_pid"; then
    cat "$npm_log" >&2
    echo "[setup] npm install in third_party/npm failed (see above)" >&2
    exit 1
  fi
  cat "$npm_log"
  rm -f "$npm_log"
fi
site=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
pth="$site/tessel.pth"
if [ "$(cat "$pth" 2>/dev/null)" != "$PWD/python" ]; then
  $SUDO mkdir -p "$site"
  echo "$PWD/python" | $SUDO tee "$pth" >/dev/null
fi
/usr/bin/python3 -c "import tessel" || { echo "[setup] import tessel failed" >&2; exit 1; }

log "environment ready"
if [ "$run_demo" = 1 ]; then
  exec ./tools/demo.sh
fi
