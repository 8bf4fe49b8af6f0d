#!/usr/bin/env bash
# tessel serve against llama.cpp's llama-server under load: the same GGUF (the random TinyLlama-1.1B Q4_0
# that run.sh makes), the same --parallel slots, context per slot and threads; serve_bench.mjs runs 1, 2,
# 4 and 8 concurrent streaming chat clients against each server in turn (REQUESTS back to back per
# client, MAX_TOKENS greedy tokens each) and prints aggregate decode tokens/s (the clients' decode rates
# after their first token, summed) and time-to-first-token p50 / p99 per level, then the ratios
# Tessel / llama-server. llama-server is built from the source
# node-llama-cpp carries, in build_llama_cpp.sh's cache (its native build folder, llama-server target).
#
#   benchmarks/llm/serve_bench.sh [MODEL.gguf]
#
# Environment: CLIENTS ("1 2 4 8"), PARALLEL (8), CTX (512 per slot), THREADS (2), REQUESTS (3),
# MAX_TOKENS (64), PEER (1; 0 runs Tessel alone).
set -euo pipefail
cd "$(dirname "$0")/../.."

MODEL=${1:-$HOME/.cache/tessel/bench/tinyllama-1.1b-random-lq-q4_0.gguf}
CLIENTS=${CLIENTS:-"1 2 4 8"}
PARALLEL=${PARALLEL:-8}
CTX=${CTX:-512}
THREADS=${THREADS:-2}
REQUESTS=${REQUESTS:-3}
MAX_TOKENS=${MAX_TOKENS:-64}
PEER=${PEER:-1}
if [[ ! -f $MODEL ]]; then
  echo "serve_bench: $MODEL not found (benchmarks/llm/run.sh makes it)" >&2
  exit 1
fi
levels=$(echo "$CLIENTS" | tr ' ' ',')

bazel build --noshow_progress --local_cpu_resources=1 //cli:tessel >&2
TESSEL=bazel-bin/cli/tessel

LLAMA_SERVER=""
if [[ $PEER == 1 ]]; then
  BIN=$(benchmarks/llm/build_llama_cpp.sh native | tail -1)
  BUILD=$(dirname "$BIN")
  if [[ ! -x $BIN/llama-server ]]; then
    echo "[llama.cpp] adding the llama-server target to $BUILD (one job)" >&2
    cmake -S "$BUILD/../src" -B "$BUILD" -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON >&2
    cmake --build "$BUILD" --target llama-server -j 1 >&2
  fi
  LLAMA_SERVER=$BIN/llama-server
fi

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_ready() {
  for _ in $(seq 1 600); do
    if curl -sf "http://127.0.0.1:$1/health" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "serve_bench: the server on port $1 did not become ready" >&2
  return 1
}

out=$(mktemp)
trap 'rm -f "$out"; [[ -n ${pid:-} ]] && kill "$pid" 2>/dev/null || true' EXIT

port=$(free_port)
"$TESSEL" serve --model "$MODEL" --port "$port" --parallel "$PARALLEL" --ctx "$CTX" --threads "$THREADS" 2>/dev/null &
pid=$!
wait_ready "$port"
node benchmarks/llm/serve_bench.mjs --url "http://127.0.0.1:$port" --clients "$levels" --requests "$REQUESTS" \
  --max-tokens "$MAX_TOKENS" --name tessel | tee -a "$out"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""

if [[ -n $LLAMA_SERVER ]]; then
  port=$(free_port)
  # -c is the whole KV cache, shared by the -np slots: PARALLEL x CTX as on the Tessel side.
  "$LLAMA_SERVER" -m "$MODEL" --host 127.0.0.1 --port "$port" -np "$PARALLEL" -c $((PARALLEL * CTX)) \
    -t "$THREADS" -tb "$THREADS" --no-webui >/dev/null 2>&1 &
  pid=$!
  wait_ready "$port"
  node benchmarks/llm/serve_bench.mjs --url "http://127.0.0.1:$port" --clients "$levels" --requests "$REQUESTS" \
    --max-tokens "$MAX_TOKENS" --name llama-server | tee -a "$out"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
fi

/usr/bin/python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
by = {(r["server"], r["clients"]): r for r in rows}
single = by.get(("tessel", 1))
print("clients | Tessel tok/s | TTFT p50/p99 ms | vs Tessel 1 client | llama-server tok/s | TTFT p50/p99 ms | Tessel / llama-server")
for (server, clients), r in sorted(by.items(), key=lambda kv: kv[0][1]):
    if server != "tessel":
        continue
    peer = by.get(("llama-server", clients))
    line = f"{clients:7d} | {r['aggregate_tokens_per_s']:12.1f} | {r['ttft_p50_ms']:.0f} / {r['ttft_p99_ms']:.0f} | "
    line += f"{r['aggregate_tokens_per_s'] / single['aggregate_tokens_per_s']:.2f}x | " if single else "- | "
    if peer:
        line += (f"{peer['aggregate_tokens_per_s']:.1f} | {peer['ttft_p50_ms']:.0f} / {peer['ttft_p99_ms']:.0f} | "
                 f"{r['aggregate_tokens_per_s'] / peer['aggregate_tokens_per_s']:.2f}x")
    else:
        line += "- | - | -"
    print(line)
PY
