#!/bin/bash
# tessel generate / perplexity / logits / quantize end to end on the trained tiny Llama: greedy
# generation reproduces PyTorch's continuation, seeded sampling repeats, perplexity and logits print
# and write what they promise, and bad input
# fails with a clear message and exit code 1.
set -uo pipefail
BIN="$1"
DATA="$2"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$BIN" --help | grep -q "perplexity" || fail "top-level --help"
"$BIN" generate --help | grep -q -- "--top-p" || fail "generate --help"
"$BIN" perplexity --help | grep -q -- "--start-fraction" || fail "perplexity --help"
"$BIN" logits --help | grep -q -- "--output" || fail "logits --help"

# Greedy: the prompt, then exactly the 64 tokens PyTorch chose, then the speed line.
"$BIN" generate --model "$DATA/model-f32.gguf" --prompt-file "$DATA/prompt.txt" -n 64 --temp 0 --threads 2 \
  > "$TMP/greedy.txt" 2> "$TMP/greedy.err" || { cat "$TMP/greedy.err"; fail "generate exited non-zero"; }
cat "$DATA/prompt.txt" "$DATA/greedy_text.txt" > "$TMP/expected.txt"
head -c "$(wc -c < "$TMP/expected.txt")" "$TMP/greedy.txt" | cmp -s - "$TMP/expected.txt" \
  || { diff <(head -c "$(wc -c < "$TMP/expected.txt")" "$TMP/greedy.txt") "$TMP/expected.txt"; fail "greedy text differs from PyTorch"; }
tail -n 1 "$TMP/greedy.txt" | grep -Eq '^prefill: 64 tokens, [0-9.]+ s, [0-9.]+ tokens/s \| decode: 63 tokens, [0-9.]+ s, [0-9.]+ tokens/s$' \
  || fail "speed line: $(tail -n 1 "$TMP/greedy.txt")"
grep -q "greedy" "$TMP/greedy.err" || fail "sampler description on stderr"

# --verbose: the same text, and per weight type its kernels and share of the decode time (shares of the
# types and "other" add up to 100%).
"$BIN" generate --model "$DATA/model-q4_0.gguf" --prompt-file "$DATA/prompt.txt" -n 16 --temp 0 --threads 2 \
  > "$TMP/quiet.txt" 2> /dev/null || fail "generate exited non-zero"
"$BIN" generate --model "$DATA/model-q4_0.gguf" --prompt-file "$DATA/prompt.txt" -n 16 --temp 0 --threads 2 --verbose \
  > "$TMP/verbose.txt" 2> "$TMP/verbose.err" || { cat "$TMP/verbose.err"; fail "generate --verbose exited non-zero"; }
cmp -s <(head -n -1 "$TMP/quiet.txt") <(head -n -1 "$TMP/verbose.txt") || fail "--verbose changed the text"
grep -q "^kernels by weight type" "$TMP/verbose.err" || fail "--verbose: no kernel table: $(cat "$TMP/verbose.err")"
grep -Eq '^  Q4_0 +[0-9]+ matrices +[0-9.]+ MB +decode +[0-9.]+%  [a-z0-9_]+ \((int8|f32 vector)\); prefill ' "$TMP/verbose.err" \
  || fail "--verbose: no Q4_0 row: $(cat "$TMP/verbose.err")"
total=$(grep -E '^  [A-Za-z0-9_]+ .* decode +[0-9.]+%' "$TMP/verbose.err" | sed -E 's/.* decode +([0-9.]+)%.*/\1/' \
        | awk '{s += $1} END {printf "%.0f", s}')
[ "$total" = 100 ] || fail "--verbose: decode shares add up to $total%"

# Seeded sampling repeats; another seed differs.
for s in 1 1 2; do
  "$BIN" generate --model "$DATA/model-q4_0.gguf" --prompt "ROMEO:" -n 40 --seed $s --temp 1.0 --top-k 0 --top-p 1 \
    --min-p 0 --repeat-penalty 1.1 2>/dev/null | head -n -1 > "$TMP/seed$s.$RANDOM.txt" || fail "sampled generate"
done
files=("$TMP"/seed1.*.txt)
cmp -s "${files[0]}" "${files[1]}" || fail "same seed, different text"
cmp -s "${files[0]}" "$TMP"/seed2.*.txt && fail "different seeds, same text"

# Perplexity ends with the value.
"$BIN" perplexity --model "$DATA/model-q8_0.gguf" --text "$DATA/heldout.txt" --ctx 128 --max-chunks 4 \
  > "$TMP/ppl.txt" 2> "$TMP/ppl.err" || { cat "$TMP/ppl.err"; fail "perplexity exited non-zero"; }
tail -n 1 "$TMP/ppl.txt" | grep -Eq '^perplexity: [0-9]+\.[0-9]{4}$' || fail "perplexity line: $(tail -n 1 "$TMP/ppl.txt")"
grep -q '\[4/4\]' "$TMP/ppl.err" || fail "perplexity progress"

# Logits from safetensors: [64, 512] float32, equal to PyTorch's within 1e-3.
"$BIN" logits --model "$DATA/safetensors" --prompt-file "$DATA/prompt.txt" --output "$TMP/logits.npy" > /dev/null 2>&1 \
  || fail "logits exited non-zero"
/usr/bin/python3 - "$TMP/logits.npy" "$DATA/ref_logits.npy" <<'PY' || fail "logits differ from PyTorch"
import sys
import numpy as np
got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
assert got.dtype == np.float32 and got.shape == want.shape == (64, 512), (got.dtype, got.shape)
diff = float(np.abs(got - want).max())
print("logits max abs diff", diff)
assert diff <= 1e-3, diff
PY

# Errors: exit code 1 and a message naming the problem.
expect_error() {
  local pattern="$1"; shift
  "$BIN" "$@" > /dev/null 2> "$TMP/err.txt"
  local rc=$?
  [ "$rc" = 1 ] || fail "exit code $rc for: $*"
  grep -q -- "$pattern" "$TMP/err.txt" || fail "no '$pattern' in: $(cat "$TMP/err.txt")"
}
expect_error "tessel generate: model '/nonexistent.gguf' does not exist" generate --model /nonexistent.gguf --prompt x
expect_error "exactly one of --prompt" generate --model "$DATA/model-f32.gguf"
expect_error "unknown flag '--bogus'" generate --bogus 1
expect_error "not a GGUF file" perplexity --model "$DATA/heldout.txt" --text "$DATA/heldout.txt"
expect_error "fewer than one chunk" perplexity --model "$DATA/model-f32.gguf" --text "$DATA/prompt.txt"
expect_error "\-\-kv-type must be" logits --model "$DATA/model-f32.gguf" --prompt x --output "$TMP/x.npy" --kv-type q8
"$BIN" bogus > /dev/null 2>&1 && fail "unknown command accepted"

# Sizes from the user and from the file are checked before anything is allocated: each of these used
# to abort with std::bad_alloc or to run for minutes toward gigabytes.
expect_error "\-\-ctx 1000000000 exceeds the model's context length of 256 tokens" \
  generate --model "$DATA/model-f32.gguf" --prompt x --ctx 1000000000
expect_error "\-\-ctx 100000 exceeds the model's context length of 256 tokens" \
  perplexity --model "$DATA/model-f32.gguf" --text "$DATA/prompt.txt" --ctx 100000
expect_error "the prompt has [0-9]* tokens, more than the model's context length of 256" \
  logits --model "$DATA/model-f32.gguf" --prompt-file "$DATA/heldout.txt" --output "$TMP/x.npy"
# The tiny model with another llama.context_length (a u32 in the file).
with_context() {
  /usr/bin/python3 - "$DATA/model-f32.gguf" "$2" "$1" <<'PY' || fail "cannot patch the context length"
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
key = b"llama.context_length"
at = data.index(struct.pack("<Q", len(key)) + key) + 8 + len(key)
assert struct.unpack_from("<I", data, at)[0] == 4  # GGUF type u32
struct.pack_into("<I", data, at + 4, int(sys.argv[3]))
open(sys.argv[2], "wb").write(data)
PY
}
with_context 4294967295 "$TMP/ctx-u32max.gguf"
expect_error "gguf '$TMP/ctx-u32max.gguf': llama.context_length is 4294967295, more than the 16777216 tokens" \
  generate --model "$TMP/ctx-u32max.gguf" --prompt x
with_context 16777216 "$TMP/ctx-16m.gguf"
# 16M tokens of logits would be 34 GB: the 63-token text is measured first.
expect_error "the text has 63 tokens after byte 0, fewer than one chunk of 16777215" \
  perplexity --model "$TMP/ctx-16m.gguf" --text "$DATA/prompt.txt" --ctx 16777216
# The model's whole 16M-token context (17 GB of f16 KV cache) against a lowered ceiling: refused before
# allocating, whatever this machine's memory.
export TESSEL_MEMORY_LIMIT=1000000000
expect_error "a context of 16777216 tokens (KV cache 17.18 GB in f16, activations 2.15 GB) needs 19.33 GB; TESSEL_MEMORY_LIMIT is 1.00 GB" \
  generate --model "$TMP/ctx-16m.gguf" --prompt x
unset TESSEL_MEMORY_LIMIT
# The last resort, an allocation no check foresaw (a text larger than the address space left, a sparse
# 1 GB file under a 300 MB limit): one line and exit status 1, not an abort.
truncate -s 1G "$TMP/sparse.txt"
(ulimit -v 300000; "$BIN" perplexity --model "$DATA/model-f32.gguf" --text "$TMP/sparse.txt") > /dev/null 2> "$TMP/err.txt"
rc=$?
[ "$rc" = 1 ] || fail "exit code $rc out of memory: $(cat "$TMP/err.txt")"
[ "$(wc -l < "$TMP/err.txt")" = 1 ] && grep -q "^tessel perplexity: out of memory while running the command" "$TMP/err.txt" \
  || fail "out of memory: $(cat "$TMP/err.txt")"
rm -f "$TMP/sparse.txt"

# quantize: RTN W4 g32 (the tiny model's FFN width 352 fits only 32-element groups) writes ggml Q4_0
# with per-layer lines and a summary; the file runs; bad requests fail clearly.
"$BIN" quantize --help | grep -q -- "--calibration" || fail "quantize --help"
"$BIN" quantize --model "$DATA/model-f32.gguf" --method rtn --bits 4 --group 32 -o "$TMP/rtn.gguf" \
  > "$TMP/quant.txt" 2> "$TMP/quant.err" || { cat "$TMP/quant.err"; fail "quantize exited non-zero"; }
grep -q "^layer 4/4" "$TMP/quant.err" || fail "no per-layer progress: $(cat "$TMP/quant.err")"
grep -q "^28 matrices, mean relative weight error" "$TMP/quant.txt" || fail "summary: $(cat "$TMP/quant.txt")"
"$BIN" perplexity --model "$TMP/rtn.gguf" --text "$DATA/heldout.txt" --max-chunks 2 2> "$TMP/rtn_ppl.err" \
  | grep -q "^perplexity: " || fail "perplexity of the quantized model"
grep -q "Q4_0 weights" "$TMP/rtn_ppl.err" || fail "W4 g32 symmetric is not stored as Q4_0: $(cat "$TMP/rtn_ppl.err")"
expect_error "cannot be split into groups of 128" quantize --model "$DATA/model-f32.gguf" --method rtn -o "$TMP/x.gguf"
expect_error "needs --calibration" quantize --model "$DATA/model-f32.gguf" --method gptq --group 32 -o "$TMP/x.gguf"
expect_error "unsupported bit width 5" quantize --model "$DATA/model-f32.gguf" --bits 5 -o "$TMP/x.gguf"
expect_error "unknown method 'hqq'" quantize --model "$DATA/model-f32.gguf" --method hqq -o "$TMP/x.gguf"
expect_error "\-\-threads must be in \[1, 256\], not 0" quantize --model "$DATA/model-f32.gguf" --threads 0 -o "$TMP/x.gguf"
expect_error "\-\-threads must be in \[1, 256\], not 0" generate --model "$DATA/model-f32.gguf" --prompt x --threads 0

# GPTQ and AWQ write the same bytes on 1 thread as on 3 (their work is cut into fixed pieces).
for m in gptq awq; do
  for t in 1 3; do
    "$BIN" quantize --model "$DATA/model-f32.gguf" --method $m --group 32 --calibration "$DATA/heldout.txt" \
      --samples 4 --seq 64 --threads $t -o "$TMP/$m-t$t.gguf" > /dev/null 2> "$TMP/$m.err" \
      || { cat "$TMP/$m.err"; fail "$m --threads $t exited non-zero"; }
  done
  cmp -s "$TMP/$m-t1.gguf" "$TMP/$m-t3.gguf" || fail "$m: the file depends on --threads"
done
echo PASS
