#!/bin/bash
# Runs one of python/'s unittest files with Debian's Python (PyTorch, numpy) on the package in
# python/tessel, against the libtessel.so and tessel command of this build.
#   run_test.sh TEST.py LIBTESSEL.so TESSEL_CLI [NAME=VALUE ...]
set -euo pipefail
test_py="$1"
export TESSEL_LIBRARY="$PWD/$2"
export TESSEL_CLI="$PWD/$3"
shift 3
for kv in "$@"; do export "${kv%%=*}=$PWD/${kv#*=}"; done
export PYTHONPATH="$PWD/python" PYTHONDONTWRITEBYTECODE=1 OMP_NUM_THREADS=1
exec /usr/bin/python3 "$test_py" -v
