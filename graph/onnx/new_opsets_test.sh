#!/bin/bash
# Runs new_opsets_test.py with Debian's Python (onnx, numpy) against this build's tessel command.
#   new_opsets_test.sh TEST.py TESSEL_CLI
set -euo pipefail
export TESSEL_CLI="$PWD/$2" PYTHONDONTWRITEBYTECODE=1
exec /usr/bin/python3 "$1" -v
