#!/bin/bash
# End-to-end tests of the tessel CLI: help, errors on bad input, run and inspect on models exported
# from PyTorch (outputs compared with PyTorch's by numpy).
set -uo pipefail
tessel="$1"
models="$2"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
fails=0
check() {  # check NAME COMMAND... : expects success
  local name="$1"; shift
  if "$@" >"$tmp/out.txt" 2>&1; then echo "ok   $name"; else echo "FAIL $name"; cat "$tmp/out.txt"; fails=$((fails + 1)); fi
}
check_fails_with() {  # check_fails_with NAME TEXT COMMAND... : expects exit != 0 and TEXT in stderr
  local name="$1" text="$2"; shift 2
  if "$@" >"$tmp/out.txt" 2>&1; then echo "FAIL $name (succeeded)"; fails=$((fails + 1));
  elif grep -qF -- "$text" "$tmp/out.txt"; then echo "ok   $name";
  else echo "FAIL $name (message lacks '$text')"; cat "$tmp/out.txt"; fails=$((fails + 1)); fi
}

check "help lists commands" bash -c "'$tessel' --help | grep -q inspect"
check "run --help" bash -c "'$tessel' run --help | grep -q -- --output-dir"
check "help run is run --help" bash -c "diff <('$tessel' help run) <('$tessel' run --help)"
check_fails_with "help for an unknown command" "unknown command 'nope'" "$tessel" help nope
check_fails_with "unknown command" "unknown command 'frobnicate'" "$tessel" frobnicate
check_fails_with "missing model file" "nope.onnx" "$tessel" run "$tmp/nope.onnx" --input x.npy
check_fails_with "unknown flag" "unknown flag '--bogus'" "$tessel" run m.onnx --bogus
printf 'not a model' > "$tmp/garbage.onnx"
check_fails_with "garbage model" "garbage.onnx" "$tessel" inspect "$tmp/garbage.onnx"
check_fails_with "wrong input name" "no input named 'nope'" "$tessel" run "$models/transformer_block_op17.onnx" \
  --input "nope=$models/transformer_block.input.npy"
check_fails_with "wrong input shape" "expects f32[1,16,64]" "$tessel" run "$models/transformer_block_op17.onnx" \
  --input "$models/resnet18.output.npy"

check "run transformer block" "$tessel" run "$models/transformer_block_op17.onnx" \
  --input "input=$models/transformer_block.input.npy" --output-dir "$tmp/out"
check "output matches PyTorch" /usr/bin/python3 -c "
import numpy as np, sys
got = np.load('$tmp/out/output.npy'); want = np.load('$models/transformer_block.output.npy')
err = np.abs(got - want).max(); print('max err', err)
sys.exit(0 if got.shape == want.shape and err <= 1e-4 * np.abs(want).max() else 1)"
check "inspect counts ops" bash -c "'$tessel' inspect '$models/resnet18_op17.onnx' --no-ir | grep -E '^  Conv +20$'"
check "inspect prints IR" bash -c "'$tessel' inspect '$models/transformer_block_op17.onnx' | grep -q 'graph @'"
check "inspect writes dot" bash -c "'$tessel' inspect '$models/transformer_block_op17.onnx' --no-ir --dot '$tmp/g.dot' && grep -q digraph '$tmp/g.dot'"

# The artifact path: compile, per-op profile (kernels, scratch, 2 MiB pages, per-op times), bench JSON.
check "compile to an artifact" "$tessel" compile "$models/resnet18_op17.onnx" -o "$tmp/r18.tsl"
# Output files are replaced whole or not at all (support/atomic_file.h): a full device is an error,
# a missing folder leaves nothing behind, and an existing artifact survives a failed compile.
check_fails_with "compile to a full device" "No space left on device" \
  "$tessel" compile "$models/resnet18_op17.onnx" -o /dev/full
check_fails_with "compile into a missing folder" "does the folder exist" \
  "$tessel" compile "$models/resnet18_op17.onnx" -o "$tmp/no/such/dir/r18.tsl"
cp "$tmp/r18.tsl" "$tmp/keep.tsl"
check_fails_with "a failed compile keeps the old artifact" "nope.onnx" \
  "$tessel" compile "$tmp/nope.onnx" -o "$tmp/keep.tsl"
check "old artifact intact" cmp -s "$tmp/r18.tsl" "$tmp/keep.tsl"
check "no temporary left behind" bash -c "! ls '$tmp' | grep -q '\.tmp-'"
# INT8: every op on a vector kernel (no reference-kernel warning; the kernels line is sorted, and the
# timing of --int8-fallback cost may keep some layers f32, which puts 'gemm' before 'int8'); at the AVX2
# level (no 8-bit dot product) the compiler says an 8-bit-weight int8 artifact is estimated slower than f32.
check "int8 compile runs no op on a reference kernel" bash -c "{ '$tessel' compile '$models/mobilenet_v2_op17.onnx' \
  --quantize=int8 --calibration '$models/mobilenet_v2.input.npy' -o '$tmp/mb8.tsl' >'$tmp/mb8.log' 2>&1 \
  && grep -qE 'kernels: (.*, )?int8' '$tmp/mb8.log' && ! grep -q 'reference kernels' '$tmp/mb8.log'; } \
  || { grep -v '^\[quantize\] calibration' '$tmp/mb8.log'; false; }"
check "int8 compile honours --pipeline (residual adds left as QAdd)" bash -c "'$tessel' compile \
  '$models/resnet18_op17.onnx' --quantize=int8 --calibration '$models/resnet18.input.npy' -o '$tmp/r18q.tsl' \
  --pipeline fold-shape-ops,fold-constants,simplify,cse,fold-batchnorm,fuse-conv-activation,layout,dce >/dev/null 2>&1 \
  && '$tessel' inspect '$tmp/r18q.tsl' | grep -qE 'QAdd|qu8_add'"
check "int8 slower than f32 at the AVX2 level is said (8-bit weights)" bash -c "[ \"\$(uname -m)\" != x86_64 ] || \
  TESSEL_MAX_ISA=avx2 '$tessel' compile '$models/mobilenet_v2_op17.onnx' --quantize=int8 --calibration \
  '$models/mobilenet_v2.input.npy' --int8-weight-bits 8 -o '$tmp/mb8.tsl' 2>&1 | grep -q 'estimated slower than the f32 one'"
# --int8-weight-bits auto (the default): 7-bit weights where the host has no 8-bit dot product, said so.
check "int8 weights default to 7 bits at the AVX2 level" bash -c "[ \"\$(uname -m)\" != x86_64 ] || \
  TESSEL_MAX_ISA=avx2 '$tessel' compile '$models/mobilenet_v2_op17.onnx' --quantize=int8 --calibration \
  '$models/mobilenet_v2.input.npy' -o '$tmp/mb7.tsl' 2>&1 | grep -q 'int8 weights in \[-64, 64\] (7 bits)'"
# --int8-fallback cost (the default): at the AVX2 level ResNet-18's int8 convolutions are priced above
# their f32 (Winograd) form; the compiler times the artifact with them f32 against the all-int8 one, says
# which it kept, and the artifact holds what it said. --int8-fallback none never asks.
check "int8 layers slower than f32 are named, timed and kept f32 or int8 as said" bash -c "[ \"\$(uname -m)\" != x86_64 ] || { \
  TESSEL_MAX_ISA=avx2 '$tessel' compile '$models/resnet18_op17.onnx' --quantize=int8 --calibration \
  '$models/resnet18.input.npy' --int8-weight-bits 8 -o '$tmp/r18mix.tsl' >'$tmp/r18mix.log' 2>&1 && \
  grep -qE 'int8 layers are estimated slower than their f32 form .* measured' '$tmp/r18mix.log' && \
  '$tessel' run '$tmp/r18mix.tsl' --input '$models/resnet18.input.npy' >/dev/null && \
  if grep -q 'so they stay f32' '$tmp/r18mix.log'; then TESSEL_MAX_ISA=avx2 '$tessel' inspect '$tmp/r18mix.tsl' | grep -q 'f32_conv\|winograd'; \
  else ! TESSEL_MAX_ISA=avx2 '$tessel' inspect '$tmp/r18mix.tsl' | grep -q 'winograd'; fi && \
  TESSEL_MAX_ISA=avx2 '$tessel' compile '$models/resnet18_op17.onnx' --quantize=int8 --calibration \
  '$models/resnet18.input.npy' -o '$tmp/r18all.tsl' --int8-fallback none 2>&1 | { ! grep -q 'than their f32 form'; }; }"
check_fails_with "f32 compile of an f32 model warns of reference kernels at -O0" "reference kernels" \
  bash -c "'$tessel' compile '$models/mobilenet_v2_op17.onnx' -O0 -o '$tmp/mb0.tsl' && false"
cp "$models/resnet18_op17.onnx" "$tmp/self.onnx"
check_fails_with "compile refuses to overwrite its input" "is the input" \
  "$tessel" compile "$tmp/self.onnx" -o "$tmp/./self.onnx"
check "the input survives" cmp -s "$models/resnet18_op17.onnx" "$tmp/self.onnx"
check "inspect --profile" bash -c "'$tessel' inspect '$tmp/r18.tsl' --profile --iterations 2 > '$tmp/prof.txt' &&
  grep -qE '^scratch: [0-9.]+ MB' '$tmp/prof.txt' && grep -qE '^pages: [0-9.]+ MB' '$tmp/prof.txt' &&
  grep -qE '^total [0-9.]+ ms' '$tmp/prof.txt' && grep -qE '^ +[0-9]+ .* [0-9.]+ ms$' '$tmp/prof.txt'"
check "bench ends with JSON" bash -c "'$tessel' bench '$tmp/r18.tsl' --iterations 2 | tail -1 | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if d[\"threads\"] == 1 and d[\"median_ms\"] > 0 and d[\"min_ms\"] > 0 else 1)'"
check_fails_with "bench --estimate refuses a host artifact" "--estimate runs aarch64 artifacts" \
  "$tessel" bench "$tmp/r18.tsl" --estimate cortex-a76
check_fails_with "bench --estimate names the cores" "expected cortex-a55, cortex-a76 or neoverse-v1" \
  "$tessel" bench "$tmp/r18.tsl" --estimate cortex-x9
check_fails_with "classify refuses a zero std" "--std: '0' must be a finite number above 0" \
  "$tessel" classify "$tmp/r18.tsl" "$tmp/none.png" --std 0,1,1
# A NaN pixel: a warning by default (the compiled kernels need not carry NaN through), an error naming
# the input and index with --check-finite.
/usr/bin/python3 -c "
import numpy as np
x = np.load('$models/resnet18.input.npy'); x[0, 0, 100, 100] = np.nan; np.save('$tmp/nan.npy', x)"
check "run warns of a NaN input" bash -c "'$tessel' run '$tmp/r18.tsl' --input '$tmp/nan.npy' \
  --output-dir '$tmp/nan' 2>&1 | grep -qF \"input 'input' has 1 non-finite value (first: NaN at flat index 22500)\""
check_fails_with "run --check-finite refuses a NaN input" "input 'input' has 1 non-finite value" \
  "$tessel" run "$tmp/r18.tsl" --input "$tmp/nan.npy" --output-dir "$tmp/nan" --check-finite
# What `tessel opt -o` writes (tessel.* operators) compiles and runs.
check "opt -o output compiles and runs" bash -c "'$tessel' opt '$models/mobilenet_v2_op17.onnx' -O3 \
  -o '$tmp/mb_opt.onnx' && '$tessel' compile '$tmp/mb_opt.onnx' -o '$tmp/mb_opt.tsl' && \
  '$tessel' run '$tmp/mb_opt.tsl' --input '$models/mobilenet_v2.input.npy' --output-dir '$tmp/mb_opt'"

# Options out of range, or naming nothing the model has, fail before any work: exit status 1 and a
# message naming the option (and the value and range). The LLM commands check their options before
# loading the model, so a missing one serves.
expect_rejected() {  # expect_rejected TEXT ARGS... : exit status 1 and TEXT on stderr
  local text="$1"; shift
  "$tessel" "$@" > /dev/null 2> "$tmp/err.txt"
  local rc=$?
  if [ "$rc" = 1 ] && grep -qF -- "$text" "$tmp/err.txt"; then echo "ok   rejects $*";
  else echo "FAIL rejects $* (exit $rc, wanted 1 and '$text')"; cat "$tmp/err.txt"; fails=$((fails + 1)); fi
}
mkdir -p "$tmp/a_dir"
gen="generate --model $tmp/none.gguf --prompt x"
quant="quantize --model $tmp/none.gguf -o $tmp/none.q.gguf"
in="$models/transformer_block.input.npy"
while IFS='|' read -r text args; do
  expect_rejected "$text" $args
done <<EOF
--top-p must be in (0, 1], not 2|$gen --top-p 2
--top-p must be in (0, 1], not -0.5|$gen --top-p -0.5
--temp must be >= 0, not -1|$gen --temp -1
--temp must be a finite number >= 0, not inf|$gen --temp inf
--top-k must be >= 0, not -3|$gen --top-k -3
--min-p must be in [0, 1], not 1.5|$gen --min-p 1.5
--repeat-penalty must be > 0, not 0|$gen --repeat-penalty 0
--repeat-last-n must be >= 0, not -1|$gen --repeat-last-n -1
-n must be >= 0, not -5|$gen -n -5
--prompt-file: cannot read '$tmp/a_dir': Is a directory|generate --model $tmp/none.gguf --prompt-file $tmp/a_dir
--prompt-file: cannot read '/proc/self/mem'|generate --model $tmp/none.gguf --prompt-file /proc/self/mem
--start-fraction must be in [0, 1), not 1|perplexity --model $tmp/none.gguf --text $tmp/none.txt --start-fraction 1
--warmup must be >= 0, not -3|bench $tmp/none.tsl --warmup -3
--iterations must be >= 1, not 0|bench $tmp/none.tsl --iterations 0
--threads must be in [1, 256], not 0|bench $tmp/none.tsl --threads 0
--damp must be > 0, not -1|$quant --damp -1
--damp must be > 0, not 0|$quant --damp 0
--damp must be a finite number > 0, not nan|$quant --damp nan
--output-type 'bogus': use keep|$quant --output-type bogus
--bits: unsupported bit width 4294967300|$quant --bits 4294967300
--group: unsupported group size 48|$quant --group 48
--samples must be >= 1, not 0|$quant --samples 0
--dim nosuch=4: no input of $models/resnet18_op13.onnx has a symbolic dimension 'nosuch' (its inputs have batch)|compile $models/resnet18_op13.onnx -o $tmp/x.tsl --dim nosuch=4
--int8-fallback bogus: expected cost or none|compile $models/resnet18_op17.onnx -o $tmp/x.tsl --quantize int8 --calibration $models/resnet18.input.npy --int8-fallback bogus
--dim batch given twice|compile $models/resnet18_op13.onnx -o $tmp/x.tsl --dim batch=1 --dim batch=2
keep-fp32: the graph has no node 'nosuchnode'; its compute nodes|compile $models/resnet18_op17.onnx -o $tmp/x.tsl --quantize int8 --calibration $models/resnet18.input.npy --keep-fp32 nosuchnode
--input given twice for 'input'|run $models/transformer_block_op17.onnx --input $in --input input=$in
--input given twice for 'input'|run $tmp/r18.tsl --input $models/resnet18.input.npy --input input=$models/resnet18.input.npy
EOF
check "--help states the ranges" bash -c "'$tessel' generate --help | grep -qF -- '(P in (0, 1]; default 0.95)' &&
  '$tessel' bench --help | grep -qF -- '(W >= 0; default 2)' && '$tessel' quantize --help | grep -qF -- '(F > 0; default 0.01)'"

# Shapes from the model file are held to the machine's memory before anything is allocated: an input of
# [1000000000, 4] used to compile and then segfault in `tessel run`. TESSEL_MEMORY_LIMIT lowers the
# ceiling so that the outcome does not depend on this machine's memory.
/usr/bin/python3 - "$tmp" <<'PY'
import sys
from onnx import TensorProto, helper, save
for name, rows in (("huge", 1000000000), ("small", 1000)):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, 4])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], name, [x], [y])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), f"{sys.argv[1]}/{name}.onnx")
PY
check_fails_with "compile names the input beyond memory" "tessel compile: input 'x' f32[1000000000,4] needs 16.00 GB; " \
  env TESSEL_MEMORY_LIMIT=8000000000 "$tessel" compile "$tmp/huge.onnx" -o "$tmp/huge.tsl"
check_fails_with "compile names the arena beyond memory" \
  "tessel compile: the activation arena (largest tensor: input 'x' f32[1000,4], 16000 bytes) needs 32000 bytes; TESSEL_MEMORY_LIMIT is 20000 bytes" \
  env TESSEL_MEMORY_LIMIT=20000 "$tessel" compile "$tmp/small.onnx" -o "$tmp/small.tsl"
check "compile a small model" "$tessel" compile "$tmp/small.onnx" -o "$tmp/small.tsl"
/usr/bin/python3 -c "import numpy as np; np.save('$tmp/small.npy', np.ones((1000, 4), np.float32))"
check_fails_with "an artifact whose arena is beyond memory fails at load" \
  "tessel run: $tmp/small.tsl: the plan's activation arena (largest tensor: input 'x' f32[1000,4], 16000 bytes) needs 32000 bytes; TESSEL_MEMORY_LIMIT is 20000 bytes" \
  env TESSEL_MEMORY_LIMIT=20000 "$tessel" run "$tmp/small.tsl" --input "$tmp/small.npy" --output-dir "$tmp/small"
check "and runs where it fits" "$tessel" run "$tmp/small.tsl" --input "$tmp/small.npy" --output-dir "$tmp/small"

echo "cli_test: $fails failure(s)"
[ "$fails" = 0 ]
