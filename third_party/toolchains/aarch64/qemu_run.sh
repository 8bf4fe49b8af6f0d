#!/bin/bash
# Bazel --run_under wrapper for --config=aarch64, and for build steps that run a target binary: runs
# aarch64 binaries under qemu-aarch64.
# A test may pass --tessel_sve_vl=128|256|512 to pick the emulated SVE vector length (default 256);
# the flag is consumed here and not passed on. TESSEL_UNDER_QEMU=1 tells a test it runs emulated.
# Non-aarch64 executables (scripts) run as they are.
set -euo pipefail
bin="$1"
shift
vl=256
args=()
for a in "$@"; do
  case "$a" in
    --tessel_sve_vl=*) vl="${a#*=}"; export TESSEL_SVE_VL="$vl" ;;
    *) args+=("$a") ;;
  esac
done
# ELF magic, then e_machine (offset 18) == EM_AARCH64 (183).
if [ "$(od -An -tx1 -N4 "$bin" | tr -d ' ')" = 7f454c46 ] && [ "$(od -An -tu2 -j18 -N2 "$bin" | tr -d ' ')" = 183 ]; then
  export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
  # Tests whose sweeps cost minutes of emulated floating point read this to run a smaller grid.
  export TESSEL_UNDER_QEMU=1
  exec qemu-aarch64 -cpu "max,sve${vl}=on,sve-default-vector-length=$((vl / 8))" "$bin" ${args[@]+"${args[@]}"}
fi
exec "$bin" ${args[@]+"${args[@]}"}
