#!/usr/bin/python3
"""Quantized GGUF files through the runtime against an independent reference.

Quantizes the small Llama with `tessel quantize` (GPTQ W3 g64 asymmetric -> TESSEL_I3G64_A, RTN W4
g128 symmetric -> TESSEL_I4G128, AWQ W4 g32 asymmetric -> ggml Q4_1 with folded norms, ggml's Q4_K_M mix,
Q5_K, Q5_0, Q3_K and Q2_K, each with its f32 output head kept; then RTN W4 g128 and Q5_1 with the default Q8_0 head,
Q4_K_M and Q5_K_M with their Q6_K heads, Q6_K, Q3_K, Q2_K and Q5_0, run on the default kernels; IQ4_NL
and IQ4_XS both ways, Q2_K and IQ4_XS with an importance matrix), reads each
file back with the GGUF reader and dequantizers below (numpy, written from the format description in
llm/gguf/ggml_types.h, sharing no code with Tessel), runs the PyTorch model of train_tiny_llama.py on
the dequantized weights and compares its logits with `tessel logits`. The dequantized matrices of
RTN and GPTQ are also compared with the f32 ones (relative error between 1e-4 and 0.5), so that a
quantizer that wrote the f32 weights back, or garbage, cannot pass.

usage: quantized_logits_test.py TESSEL SMALL_LLAMA_DIR TRAIN_SCRIPT
"""

import importlib.util
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

# ggml-common.h's kvalues_iq4nl.
IQ4_LEVELS = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113], np.float32)

TOL = 1e-3  # max |logit difference|: f32 runtime vs f32 PyTorch on the same dequantized weights


def int8_activations(x):
    """x rounded per 32-element block to int8 times the block's max/127 (ggml's q8_0 activations, what
    the int8 kernels do to every matrix input)."""
    b = x.reshape(-1, 32)
    d = b.abs().amax(1, keepdim=True) / 127
    safe = torch.where(d > 0, d, torch.ones_like(d))
    return (torch.round(b / safe) * d).reshape(x.shape)

def Q4KM(part, layer):
    """Q4_K_M's type for a matrix of the 6-layer small model."""
    return 14 if part in ("attn_v", "ffn_down") and layer in (2, 5) else 12


def Q5KM(part, layer):
    return 14 if part in ("attn_v", "ffn_down") and layer in (2, 5) else 13


TESSEL_TYPES = {}  # id -> (bits, group, asymmetric)
for k in range(12):
    TESSEL_TYPES[100 + k] = (4 if k < 6 else 3, 32 << ((k % 6) // 2), k % 2 == 1)


def read_gguf(path):
    data = open(path, "rb").read()
    pos = 0

    def take(fmt):
        nonlocal pos
        vals = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return vals[0] if len(vals) == 1 else vals

    def string():
        nonlocal pos
        n = take("Q")
        s = data[pos:pos + n].decode("utf-8")
        pos += n
        return s

    sizes = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et, n = take("I"), take("Q")
            return [value(et) for _ in range(n)]
        return take(sizes[t])

    assert data[:4] == b"GGUF"
    pos = 4
    _, n_tensors, n_kv = take("I"), take("Q"), take("Q")
    meta = {}
    for _ in range(n_kv):
        key = string()
        meta[key] = value(take("I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        dims = [take("Q") for _ in range(take("I"))]
        infos.append((name, dims, take("I"), take("Q")))
    align = meta.get("general.alignment", 32)
    start = (pos + align - 1) // align * align
    view = memoryview(data)  # a slice of bytes copies the rest of the file, per tensor
    return meta, {name: (dims, t, view[start + off:]) for name, dims, t, off in infos}


def dequantize(dims, t, raw):
    cols = dims[0]
    rows = int(np.prod(dims[1:])) if len(dims) > 1 else 1
    if t == 0:
        return np.frombuffer(raw, "<f4", rows * cols).reshape(rows, cols)
    if t in (2, 3):  # ggml Q4_0 / Q4_1: 32 elements, low nibbles first then high nibbles
        bb = 18 if t == 2 else 20
        b = np.frombuffer(raw, np.uint8, rows * cols // 32 * bb).reshape(-1, bb)
        d = b[:, 0:2].copy().view("<f2").astype(np.float32)
        qs = b[:, bb - 16:]
        q = np.concatenate([qs & 15, qs >> 4], axis=1).astype(np.float32)
        if t == 2:
            return ((q - 8) * d).reshape(rows, cols)
        m = b[:, 2:4].copy().view("<f2").astype(np.float32)
        return (q * d + m).reshape(rows, cols)
    if t in (6, 7):  # ggml Q5_0 / Q5_1: Q4_0 / Q4_1 nibbles plus a fifth bit per element in a 32-bit qh
        bb = 22 if t == 6 else 24
        b = np.frombuffer(raw, np.uint8, rows * cols // 32 * bb).reshape(-1, bb)
        d = b[:, 0:2].copy().view("<f2").astype(np.float32)
        qh = b[:, bb - 20:bb - 16].copy().view("<u4").astype(np.int64)
        qs = b[:, bb - 16:]
        low = np.concatenate([qs & 15, qs >> 4], axis=1).astype(np.int64)
        q = (low | (((qh >> np.arange(32)) & 1) << 4)).astype(np.float32)
        if t == 6:
            return ((q - 16) * d).reshape(rows, cols)
        m = b[:, 2:4].copy().view("<f2").astype(np.float32)
        return (q * d + m).reshape(rows, cols)
    if t == 8:  # ggml Q8_0: 32 elements, int8 values times an fp16 scale
        b = np.frombuffer(raw, np.uint8, rows * cols // 32 * 34).reshape(-1, 34)
        d = b[:, 0:2].copy().view("<f2").astype(np.float32)
        q = b[:, 2:].copy().view(np.int8).astype(np.float32)
        return (q * d).reshape(rows, cols)
    if t in (10, 11, 12, 13, 14):
        return dequantize_k(t, raw, rows, cols)
    if t == 20:  # ggml IQ4_NL: Q4_0's block, each nibble indexing the non-linear levels
        b = np.frombuffer(raw, np.uint8, rows * cols // 32 * 18).reshape(-1, 18)
        d = b[:, 0:2].copy().view("<f2").astype(np.float32)
        q = np.concatenate([b[:, 2:] & 15, b[:, 2:] >> 4], axis=1)
        return (IQ4_LEVELS[q] * d).reshape(rows, cols)
    if t == 23:  # ggml IQ4_XS: 256 elements, d, 8 six-bit sub-block scales (-32), IQ4_NL nibbles
        b = np.frombuffer(raw, np.uint8, rows * cols // 256 * 136).reshape(-1, 136)
        d = b[:, 0:2].copy().view("<f2").astype(np.float32)
        scales_h = b[:, 2:4].copy().view("<u2").astype(np.int64)
        scales_l = b[:, 4:8].astype(np.int64)
        j = np.arange(8)
        low = (scales_l[:, j // 2] >> (4 * (j % 2))) & 15
        ls = (low | (((scales_h >> (2 * j)) & 3) << 4)) - 32
        qs = b[:, 8:].reshape(-1, 8, 16)
        q = np.concatenate([qs & 15, qs >> 4], axis=2)  # [blocks, 8, 32]
        return (IQ4_LEVELS[q] * (d * ls)[:, :, None]).reshape(rows, cols)
    bits, g, asym = TESSEL_TYPES[t]
    ng = cols // g
    row_bytes = ng * (g * bits // 8 + 2 + (2 if asym else 0))
    out = np.zeros((rows, cols), np.float32)
    for r in range(rows):
        row = np.frombuffer(raw, np.uint8, row_bytes, r * row_bytes)
        codes = row[:cols * bits // 8].reshape(ng, g * bits // 8)
        scales = row[cols * bits // 8:cols * bits // 8 + 2 * ng].copy().view("<f2").astype(np.float32)
        zeros = row[cols * bits // 8 + 2 * ng:][:ng].astype(np.float32) if asym else np.full(ng, 2 ** (bits - 1))
        if bits == 4:
            q = np.concatenate([codes & 15, codes >> 4], axis=1)
        else:
            lo, hi = codes[:, :g // 4], codes[:, g // 4:]
            low = np.concatenate([(lo >> (2 * k)) & 3 for k in range(4)], axis=1)
            high = np.concatenate([(hi >> k) & 1 for k in range(8)], axis=1)
            q = low | (high << 2)
        out[r] = ((q.astype(np.float32) - zeros[:, None]) * scales[:, None]).reshape(cols)
    return out


def dequantize_k(t, raw, rows, cols):
    """ggml's Q4_K (12), Q5_K (13) and Q6_K (14): 256-element super-blocks (ggml_types.h BlockQ*_K)."""
    bb = {10: 84, 11: 110, 12: 144, 13: 176, 14: 210}[t]
    b = np.frombuffer(raw, np.uint8, rows * cols // 256 * bb).reshape(-1, bb)
    if t in (10, 11):  # Q2_K / Q3_K: sub-block s = elements 16s..16s+15; element 128n + 32j + l's 2 bits
        # at 2j of qs[32n + l]
        qs = b[:, 16:80] if t == 10 else b[:, 32:96]
        low = np.zeros((b.shape[0], 256), np.int32)
        for n in range(2):
            for j in range(4):
                low[:, 128 * n + 32 * j:128 * n + 32 * j + 32] = (qs[:, 32 * n:32 * n + 32] >> (2 * j)) & 3
        if t == 10:
            sc = b[:, :16].astype(np.int32)
            d = b[:, 80:82].copy().view("<f2").astype(np.float32)
            dmin = b[:, 82:84].copy().view("<f2").astype(np.float32)
            scale = np.repeat(sc & 15, 16, axis=1).astype(np.float32)
            mn = np.repeat(sc >> 4, 16, axis=1).astype(np.float32)
            return (d * scale * low - dmin * mn).reshape(rows, cols)
        hmask = b[:, :32].astype(np.int32)
        s12 = b[:, 96:108].astype(np.int32)
        d = b[:, 108:110].copy().view("<f2").astype(np.float32)
        sc = np.zeros((b.shape[0], 16), np.int32)
        for s in range(16):
            lo4 = (s12[:, s % 8] >> (0 if s < 8 else 4)) & 15
            hi2 = (s12[:, 8 + s % 4] >> (2 * (s // 4))) & 3
            sc[:, s] = lo4 | (hi2 << 4)
        third = np.zeros((b.shape[0], 256), np.int32)
        for n in range(2):
            for j in range(4):
                third[:, 128 * n + 32 * j:128 * n + 32 * j + 32] = (hmask >> (4 * n + j)) & 1
        q = low - np.where(third == 1, 0, 4)
        return (d * np.repeat(sc - 32, 16, axis=1).astype(np.float32) * q).reshape(rows, cols)
    if t == 14:
        ql, qh = b[:, :128].astype(np.int32), b[:, 128:192].astype(np.int32)
        sc = b[:, 192:208].copy().view(np.int8).astype(np.float32)
        d = b[:, 208:210].copy().view("<f2").astype(np.float32)
        out = np.zeros((b.shape[0], 256), np.float32)
        for h in range(2):
            for k in range(4):
                low = ql[:, 64 * h + 32 * (k % 2):64 * h + 32 * (k % 2) + 32]
                low = low & 15 if k < 2 else low >> 4
                high = (qh[:, 32 * h:32 * h + 32] >> (2 * k)) & 3
                q = (low | (high << 4)) - 32
                scale = np.repeat(sc[:, 8 * h + 2 * k:8 * h + 2 * k + 2], 16, axis=1)
                out[:, 128 * h + 32 * k:128 * h + 32 * k + 32] = d * scale * q
        return out.reshape(rows, cols)
    d, dmin = b[:, 0:2].copy().view("<f2").astype(np.float32), b[:, 2:4].copy().view("<f2").astype(np.float32)
    s = b[:, 4:16].astype(np.int32)
    sc = np.zeros((b.shape[0], 8), np.float32)
    mn = np.zeros((b.shape[0], 8), np.float32)
    for j in range(8):
        if j < 4:
            sc[:, j], mn[:, j] = s[:, j] & 63, s[:, j + 4] & 63
        else:
            sc[:, j] = (s[:, j + 4] & 15) | ((s[:, j - 4] >> 6) << 4)
            mn[:, j] = (s[:, j + 4] >> 4) | ((s[:, j] >> 6) << 4)
    qs = b[:, bb - 128:].astype(np.int32)
    qh = b[:, 16:48].astype(np.int32) if t == 13 else None
    out = np.zeros((b.shape[0], 256), np.float32)
    for c in range(4):
        for upper in range(2):
            q = qs[:, 32 * c:32 * c + 32]
            q = q >> 4 if upper else q & 15
            if t == 13:
                q = q + 16 * ((qh >> (2 * c + upper)) & 1)
            j = 2 * c + upper
            out[:, 32 * j:32 * j + 32] = d * sc[:, j:j + 1] * q - dmin * mn[:, j:j + 1]
    return out.reshape(rows, cols)


def unpermute(w, n_heads):
    """Inverse of train_tiny_llama.permute_for_gguf: adjacent-pair RoPE rows back to rotate-half."""
    rows, cols = w.shape
    return w.reshape(n_heads, rows // n_heads // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)


def vocab_from_gguf(T, meta):
    """The training script's SPM vocabulary (its own Python encoder) from the tokens, scores and types it
    wrote into the GGUF, instead of learning the merges again from the calibration text."""
    vocab = T.SpmVocab.__new__(T.SpmVocab)
    vocab.tokens = list(meta["tokenizer.ggml.tokens"])
    vocab.scores = list(meta["tokenizer.ggml.scores"])
    vocab.types = list(meta["tokenizer.ggml.token_type"])
    vocab.ids = {t: i for i, t in enumerate(vocab.tokens)}
    vocab.merge_rank = {}
    vocab.bos = meta["tokenizer.ggml.bos_token_id"]
    vocab.eos = meta["tokenizer.ggml.eos_token_id"]
    vocab.unk = meta["tokenizer.ggml.unknown_token_id"]
    vocab._cache = {}
    return vocab


def main():
    tessel, data_dir, train_script = sys.argv[1:4]
    spec = importlib.util.spec_from_file_location("train_tiny_llama", train_script)
    T = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(T)
    c = T.SmallConfig()
    f32_model = os.path.join(data_dir, "model-f32.gguf")
    f32_meta, f32_tensors = read_gguf(f32_model)
    vocab = vocab_from_gguf(T, f32_meta)
    prompt = open(os.path.join(data_dir, "heldout.txt"), encoding="utf-8").read()[:300]
    ids = [vocab.bos] + vocab.encode(prompt)
    tmp = os.environ.get("TEST_TMPDIR") or tempfile.mkdtemp()
    # (label, method, flags, type of the blocks' matrices, type of the output head, logits load, tolerance).
    # The --mmap cases keep the f32 head and read the file mapped, where every matrix of those types runs
    # the f32-input kernels: the runtime's arithmetic is f32 and TOL holds. The default-load cases (None)
    # are what a user gets: the head rounded to Q8_0 or Q6_K and, where the CPU has int8 kernels for the
    # type, the matrices repacked for them, whose x is quantized per 32-block as llama.cpp's q8_0
    # activations are. What that costs depends on the model and the weights, so the bound comes from
    # the same PyTorch model with its block matrices' inputs rounded that way (int8_activations): 1.5x
    # its max |logit diff| + 0.05. On the small model (Zen 3, AVX2): PyTorch int8-x 0.130 (Q8_0), 0.225
    # (Q4_0), 0.344 (IQ4_NL); the runtime 0.122, 0.248, 0.349.
    keep = ["--output-type", "keep"]
    cal = os.path.join(data_dir, "calibration.txt")
    cases = [
        ("gptq", "gptq", ["--bits", "3", "--group", "64", "--asym"] + keep, 109, 0, ["--mmap"], TOL),
        ("rtn", "rtn", ["--bits", "4", "--group", "128"] + keep, 104, 0, ["--mmap"], TOL),
        ("awq", "awq", ["--bits", "4", "--group", "32", "--asym"] + keep, 3, 0, ["--mmap"], TOL),
        ("rtn-default", "rtn", ["--bits", "4", "--group", "128"], 104, 8, [], None),
        # ggml's k-quants (`--type`): Q4_K_M's mix puts Q6_K in attn_v and ffn_down of layers 2 and 5
        # (llama.cpp's use_more_bits for 6 layers) and rounds the head to Q6_K.
        ("q4_k_m", "rtn", ["--type", "q4_k_m"] + keep, Q4KM, 0, ["--mmap"], TOL),
        ("q5_k", "rtn", ["--type", "q5_k"] + keep, 13, 0, ["--mmap"], TOL),
        ("q5_0", "rtn", ["--type", "q5_0"] + keep, 6, 0, ["--mmap"], TOL),
        ("q3_k", "rtn", ["--type", "q3_k"] + keep, 11, 0, ["--mmap"], TOL),
        ("q2_k", "rtn", ["--type", "q2_k"] + keep, 10, 0, ["--mmap"], TOL),
        ("iq4_nl", "rtn", ["--type", "iq4_nl"] + keep, 20, 0, ["--mmap"], TOL),
        ("iq4_xs", "rtn", ["--type", "iq4_xs"] + keep, 23, 0, ["--mmap"], TOL),
        # With an importance matrix from the calibration text (llama.cpp's --imatrix): other bytes, same
        # format.
        ("q2_k-imatrix", "rtn", ["--type", "q2_k", "--calibration", cal, "--samples", "4", "--seq", "64"] + keep, 10,
         0, ["--mmap"], TOL),
        ("iq4_xs-imatrix", "rtn", ["--type", "iq4_xs", "--calibration", cal, "--samples", "4", "--seq", "64"], 23, 8,
         [], None),
        ("q5_1-default", "rtn", ["--type", "q5_1"], 7, 8, [], None),
        ("q4_k_m-default", "rtn", ["--type", "q4_k_m"], Q4KM, 14, [], None),
        ("q5_k_m-default", "rtn", ["--type", "q5_k_m"], Q5KM, 14, [], None),
        ("q6_k-default", "rtn", ["--type", "q6_k"], 14, 8, [], None),
        ("q3_k-default", "rtn", ["--type", "q3_k"], 11, 8, [], None),
        ("q2_k-default", "rtn", ["--type", "q2_k"], 10, 8, [], None),
        ("q5_0-default", "rtn", ["--type", "q5_0"], 6, 8, [], None),
        ("iq4_nl-default", "rtn", ["--type", "iq4_nl"], 20, 8, [], None),
        ("iq4_xs-default", "rtn", ["--type", "iq4_xs"], 23, 8, [], None),
    ]
    # Bazel's shards (TEST_TOTAL_SHARDS) take every n-th case.
    if os.environ.get("TEST_SHARD_STATUS_FILE"):
        open(os.environ["TEST_SHARD_STATUS_FILE"], "w").close()
    shards, shard = int(os.environ.get("TEST_TOTAL_SHARDS", "1")), int(os.environ.get("TEST_SHARD_INDEX", "0"))
    cases = cases[shard::shards]
    failures = 0
    for label, method, flags, want_type, head_type, load, tol in cases:
        out = os.path.join(tmp, "%s.gguf" % label)
        cmd = [tessel, "quantize", "--model", f32_model, "--method", method, "-o", out] + flags
        if method != "rtn":
            cmd += ["--calibration", os.path.join(data_dir, "calibration.txt"), "--samples", "4", "--seq", "64"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        meta, tensors = read_gguf(out)
        state = {}
        names = {"token_embd.weight": "embed.weight", "output_norm.weight": "norm.weight",
                 "output.weight": "lm_head.weight"}
        parts = {"attn_norm": "attn_norm", "attn_q": "wq", "attn_k": "wk", "attn_v": "wv", "attn_output": "wo",
                 "ffn_norm": "ffn_norm", "ffn_gate": "w_gate", "ffn_up": "w_up", "ffn_down": "w_down"}
        for name, (dims, t, raw) in tensors.items():
            w = dequantize(dims, t, raw)
            if name.startswith("blk."):
                _, layer, part, _ = name.split(".")
                if part in ("attn_q", "attn_k", "attn_v", "ffn_down"):
                    want = want_type(part, int(layer)) if callable(want_type) else want_type
                    assert t == want, "%s: %s has type %d, expected %d" % (label, name, t, want)
                if part == "attn_q":
                    w = unpermute(w, c.n_heads)
                if part == "attn_k":
                    w = unpermute(w, c.n_kv_heads)
                if part not in ("attn_norm", "ffn_norm"):
                    ref = dequantize(*f32_tensors[name])
                    ref = unpermute(ref, c.n_heads if part == "attn_q" else c.n_kv_heads) if part in ("attn_q", "attn_k") else ref
                    if method != "awq":  # AWQ's stored weights carry the folded scales
                        rel = np.linalg.norm(w - ref) / np.linalg.norm(ref)
                        assert 1e-4 < rel < 0.5, "%s: %s relative weight error %.3g" % (method, name, rel)
                key = "blocks.%s.%s.weight" % (layer, parts[part])
            else:
                key = names[name]
                if name == "output.weight":
                    assert t == head_type, "%s: the output head has type %d, expected %d" % (label, t, head_type)
                    rel = np.linalg.norm(w - dequantize(*f32_tensors[name])) / np.linalg.norm(w)
                    # Q8_0 rounds to 1/254 of each block's range: ~0.5% relative; a copy is exact.
                    assert (rel == 0) if head_type == 0 else (1e-4 < rel < 0.02), (
                        "%s: output head relative weight error %.3g" % (label, rel))
            state[key] = torch.from_numpy(np.array(w.reshape(-1) if len(dims) == 1 else w))
        model = T.TinyLlama(c)
        model.load_state_dict(state)
        model.eval()
        with torch.no_grad():
            ref = model(torch.tensor([ids]))[0].numpy()
            if tol is None:
                for blk in model.blocks:
                    for lin in (blk.wq, blk.wk, blk.wv, blk.wo, blk.w_gate, blk.w_up, blk.w_down):
                        lin.register_forward_pre_hook(lambda mod, inp: (int8_activations(inp[0]),))
                int8_x = float(np.abs(model(torch.tensor([ids]))[0].numpy() - ref).max())
                tol = 1.5 * int8_x + 0.05
        npy = os.path.join(tmp, "%s.npy" % label)
        subprocess.run([tessel, "logits", "--model", out, "--prompt", prompt, "--output", npy, "--threads", "1"] + load,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        got = np.load(npy)
        assert got.shape == ref.shape, (got.shape, ref.shape)
        diff = float(np.abs(got - ref).max())
        status = "ok" if diff <= tol else "FAIL"
        failures += diff > tol
        print("%s: %s %s (%s), logits %s: %d tokens, max |logit diff| %.2e (tolerance %.2g) %s"
              % (label, method, " ".join(flags), meta.get("tessel.quantization"), " ".join(load) or "default load",
                 len(ids), diff, tol, status))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
