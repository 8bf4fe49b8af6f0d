#!/bin/bash
# Runs quantized_logits_test.py with Debian's Python (PyTorch, numpy).
exec env HOME="${TEST_TMPDIR:-/tmp}" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$@"
