#!/bin/bash
# Runs the model zoo test (zoo_test.py) with Debian's Python (PyTorch, numpy) against this build's tessel.
#   zoo_test.sh TESSEL [--models a,b]
set -euo pipefail
tessel="$PWD/$1"
shift
export PYTHONDONTWRITEBYTECODE=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
exec /usr/bin/python3 tools/zoo/zoo_test.py "$tessel" "$@"
