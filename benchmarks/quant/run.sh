#!/bin/bash
# Held-out perplexity (ctx 256, the last 10% of tinyshakespeare) of the small Llama
# (//llm/testdata:small_llama_trained, 5.0M parameters; trained on first use, about 20 minutes on one
# core) in f32 and quantized with RTN, GPTQ and AWQ at W4 g128, W4 g32 and W3 g128, plus each
# method's quantization time. GPTQ and AWQ calibrate on windows of the first 90% (the training text).
#
#   benchmarks/quant/run.sh [OUT_DIR]        (default /tmp/tessel-quant-bench)
#
# Environment: SAMPLES (128), SEQ (256), THREADS (2, for perplexity), SCHEME ("--asym" or "" for
# symmetric groups; default --asym), CONFIGS ("4:128 4:32 3:128"), METHODS ("rtn gptq awq"), TESSEL
# (the tessel binary; default the one just built).
# Takes about 30 minutes on 2 cores (each perplexity run scores 58k tokens).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-/tmp/tessel-quant-bench}
SAMPLES=${SAMPLES:-128}
SEQ=${SEQ:-256}
THREADS=${THREADS:-2}
SCHEME=${SCHEME---asym}
CONFIGS=${CONFIGS:-"4:128 4:32 3:128"}
METHODS=${METHODS:-"rtn gptq awq"}
mkdir -p "$OUT"

BIN=bazel-out/k8-opt/bin
[[ -n ${TESSEL:-} ]] || bazel build //cli:tessel //llm/testdata:small_llama_trained >&2
TESSEL=${TESSEL:-$BIN/cli/tessel}
DATA=$BIN/llm/testdata/small_llama_trained
MODEL=$DATA/model-f32.gguf

ppl() {
  "$TESSEL" perplexity --model "$1" --text "$DATA/heldout.txt" --ctx 256 --threads "$THREADS" 2>/dev/null |
    sed -n 's/^perplexity: //p'
}

RESULTS=$OUT/results.tsv
echo -e "config\tmethod\tperplexity\tquant_seconds\tfile_mb" > "$RESULTS"
base=$(ppl "$MODEL")
echo -e "f32\t-\t$base\t-\t$(du -m "$MODEL" | cut -f1)" >> "$RESULTS"
echo "f32: perplexity $base" >&2
for cfg in $CONFIGS; do
  bits=${cfg%%:*}
  group=${cfg##*:}
  for method in $METHODS; do
    out=$OUT/w${bits}g${group}-$method.gguf
    calib=()
    [[ $method != rtn ]] && calib=(--calibration "$DATA/calibration.txt" --samples "$SAMPLES" --seq "$SEQ")
    log=$OUT/w${bits}g${group}-$method.log
    "$TESSEL" quantize --model "$MODEL" --method "$method" --bits "$bits" --group "$group" $SCHEME \
      "${calib[@]}" -o "$out" > "$log" 2>&1
    secs=$(sed -n 's/^quantized in \([0-9.]*\) s.*/\1/p' "$log")
    p=$(ppl "$out")
    echo -e "W$bits g$group\t$method\t$p\t$secs\t$(du -k "$out" | awk '{printf "%.2f", $1 / 1024}')" >> "$RESULTS"
    echo "W$bits g$group $method: perplexity $p, quantized in $secs s" >&2
  done
done

# The table: perplexity, its increase over f32, and the share of RTN's increase each method recovers.
awk -F'\t' -v base="$base" '
  NR == FNR { if ($2 == "rtn") rtn[$1] = $3 - base; next }
  FNR == 1 { next }
  $1 == "f32" { printf "| f32 | - | %.4f | - | - | - |\n", $3; next }
  { inc = $3 - base
    rec = ($2 == "rtn" || !($1 in rtn) || rtn[$1] <= 0) ? "-" : sprintf("%.0f%%", 100 * (1 - inc / rtn[$1]))
    printf "| %s | %s | %.4f | %+.4f | %s | %s s |\n", $1, $2, $3, inc, rec, $4 }
' "$RESULTS" "$RESULTS" | { echo "| scheme | method | perplexity | vs f32 | recovered of RTN's increase | quantization time |";
                 echo "| --- | --- | --- | --- | --- | --- |"; cat; } | tee "$OUT/table.md"
