#!/bin/bash
# tessel serve end to end: serve_test.cjs drives a server on a free loopback port with the official
# `openai` client (third_party/npm) and raw HTTP. Arguments: the tessel binary, the tiny Llama's folder,
# third_party/npm/package.json (its real path leads to the node_modules that setup.sh installs).
set -euo pipefail
BIN="$1"
DATA="$2"
NPM_DIR="$(dirname "$(readlink -f "$3")")"
if [ ! -d "$NPM_DIR/node_modules/openai" ]; then
  echo "FAIL: the openai npm package is missing from $NPM_DIR/node_modules (run ./setup.sh)" >&2
  exit 1
fi
exec node "$(dirname "$0")/serve_test.cjs" "$BIN" "$DATA" "$NPM_DIR/node_modules"
