"""Writes random-weight Llama GGUF files shaped like TinyLlama-1.1B for the decode/prefill benchmark.

Run with /usr/bin/python3 (needs numpy only):
  make_bench_gguf.py --out ~/.cache/tessel/bench --types q4_0,q8_0

Weights are random quantized blocks written directly (uniform nibbles or bytes, fp16 scales giving
a standard deviation of about 0.02), so that 1.1B parameters take seconds, not minutes. q4_k_m is
llama.cpp's Q4_K_M mix (Q4_K, with Q6_K for the head and some attn_v / ffn_down matrices), the type
most published GGUF files use, and q5_k_m the same mix around Q5_K; q6_k is every matrix in Q6_K;
iq4_xs is ggml's non-linear 4.25-bit type with a Q6_K head; q2_k and q3_k are every layer matrix in Q2_K
or Q3_K with a Q6_K head (llama-quantize's Q2_K and Q3_K_S files keep a few matrices in wider types;
these do not). The vocabulary is a valid SentencePiece (llama) one that llama.cpp loads: control
tokens, 256 byte tokens, the printable ASCII characters with and without the word-start mark, then
filler pieces up to 32000. A prompt of N single-letter words ("a b c ...") is N + 1 tokens with BOS in both runtimes.
Files are skipped when they exist with the expected size. --layers N writes a TinyLlama of N layers
(tinyllama-1.1b-random-L<N>-<type>.gguf) with the real widths, vocabulary and head: the Arm lab
(benchmarks/arm/run.sh) runs 1 and 2 layers under qemu and scales the difference to 22.
"""

import argparse
import os
import struct

import numpy as np

SPACE = "\u2581"
GGUF_U32, GGUF_I32, GGUF_F32, GGUF_BOOL, GGUF_STRING, GGUF_ARRAY = 4, 5, 6, 7, 8, 9
GGML_F32, GGML_F16, GGML_Q4_0, GGML_Q8_0, GGML_Q2_K, GGML_Q3_K, GGML_Q4_K, GGML_Q5_K, GGML_Q6_K, GGML_IQ4_XS = (
    0, 1, 2, 8, 10, 11, 12, 13, 14, 23)
FILE_TYPE = {"f16": 1, "q4_0": 2, "q8_0": 7, "q2_k": 10, "q3_k": 11, "q4_k_m": 15, "q5_k_m": 17, "q6_k": 18,
             "iq4_xs": 30}
TENSOR_TYPE = {"f16": GGML_F16, "q4_0": GGML_Q4_0, "q8_0": GGML_Q8_0, "q2_k": GGML_Q2_K, "q3_k": GGML_Q3_K,
               "q4_k_m": GGML_Q4_K, "q5_k_m": GGML_Q5_K, "q6_k": GGML_Q6_K, "iq4_xs": GGML_IQ4_XS}
# Bytes per element block and elements per block, by ggml type.
BLOCK = {GGML_F16: (2, 1), GGML_Q4_0: (18, 32), GGML_Q8_0: (34, 32), GGML_Q2_K: (84, 256), GGML_Q3_K: (110, 256),
         GGML_Q4_K: (144, 256), GGML_Q5_K: (176, 256), GGML_Q6_K: (210, 256), GGML_IQ4_XS: (136, 256)}
TYPE_NORMAL, TYPE_UNKNOWN, TYPE_CONTROL, TYPE_BYTE = 1, 2, 3, 6
ALIGN = 32

# TinyLlama-1.1B.
DIM, LAYERS, HEADS, KV_HEADS, FFN, VOCAB, CTX = 2048, 22, 32, 4, 5632, 32000, 2048


def gguf_string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def gguf_value(vtype, value):
    if vtype == GGUF_U32:
        return struct.pack("<I", value)
    if vtype == GGUF_I32:
        return struct.pack("<i", value)
    if vtype == GGUF_F32:
        return struct.pack("<f", value)
    if vtype == GGUF_BOOL:
        return struct.pack("<B", 1 if value else 0)
    if vtype == GGUF_STRING:
        return gguf_string(value)
    elem_type, items = value
    if elem_type == GGUF_F32:
        return struct.pack("<IQ", elem_type, len(items)) + np.asarray(items, "<f4").tobytes()
    if elem_type == GGUF_I32:
        return struct.pack("<IQ", elem_type, len(items)) + np.asarray(items, "<i4").tobytes()
    return struct.pack("<IQ", elem_type, len(items)) + b"".join(gguf_value(elem_type, v) for v in items)


def vocabulary():
    tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
    types = [TYPE_UNKNOWN, TYPE_CONTROL, TYPE_CONTROL] + [TYPE_BYTE] * 256
    chars = [chr(c) for c in range(33, 127)]
    pieces = [SPACE] + chars + [SPACE + c for c in chars]
    i = 0
    while len(tokens) + len(pieces) < VOCAB:
        pieces.append("%sx%d" % (SPACE, i))
        i += 1
    tokens += pieces
    types += [TYPE_NORMAL] * len(pieces)
    scores = [0.0] * (3 + 256) + [-float(i) for i in range(len(pieces))]
    return tokens, scores, types


def metadata(kind, layers=LAYERS):
    tokens, scores, types = vocabulary()
    a = "llama."
    return [
        ("general.architecture", GGUF_STRING, "llama"),
        ("general.name", GGUF_STRING, "tessel-bench-tinyllama-1.1b-random"),
        ("general.file_type", GGUF_U32, FILE_TYPE[kind]),
        ("general.alignment", GGUF_U32, ALIGN),
        (a + "context_length", GGUF_U32, CTX),
        (a + "embedding_length", GGUF_U32, DIM),
        (a + "block_count", GGUF_U32, layers),
        (a + "feed_forward_length", GGUF_U32, FFN),
        (a + "rope.dimension_count", GGUF_U32, DIM // HEADS),
        (a + "attention.head_count", GGUF_U32, HEADS),
        (a + "attention.head_count_kv", GGUF_U32, KV_HEADS),
        (a + "attention.layer_norm_rms_epsilon", GGUF_F32, 1e-5),
        (a + "rope.freq_base", GGUF_F32, 10000.0),
        (a + "vocab_size", GGUF_U32, VOCAB),
        ("tokenizer.ggml.model", GGUF_STRING, "llama"),
        ("tokenizer.ggml.tokens", GGUF_ARRAY, (GGUF_STRING, tokens)),
        ("tokenizer.ggml.scores", GGUF_ARRAY, (GGUF_F32, scores)),
        ("tokenizer.ggml.token_type", GGUF_ARRAY, (GGUF_I32, types)),
        ("tokenizer.ggml.bos_token_id", GGUF_U32, 1),
        ("tokenizer.ggml.eos_token_id", GGUF_U32, 2),
        ("tokenizer.ggml.unknown_token_id", GGUF_U32, 0),
        ("tokenizer.ggml.add_bos_token", GGUF_BOOL, True),
        ("tokenizer.ggml.add_eos_token", GGUF_BOOL, False),
    ]


def tensor_list(layers=LAYERS):
    """(name, [cols, rows] or [n]) in llama.cpp's names; 1-D tensors are norms (f32)."""
    kv = DIM // HEADS * KV_HEADS
    out = [("token_embd.weight", [DIM, VOCAB])]
    for i in range(layers):
        p = "blk.%d." % i
        out += [
            (p + "attn_norm.weight", [DIM]),
            (p + "attn_q.weight", [DIM, DIM]),
            (p + "attn_k.weight", [DIM, kv]),
            (p + "attn_v.weight", [DIM, kv]),
            (p + "attn_output.weight", [DIM, DIM]),
            (p + "ffn_norm.weight", [DIM]),
            (p + "ffn_gate.weight", [DIM, FFN]),
            (p + "ffn_up.weight", [DIM, FFN]),
            (p + "ffn_down.weight", [FFN, DIM]),
        ]
    out += [("output_norm.weight", [DIM]), ("output.weight", [DIM, VOCAB])]
    return out


def tensor_type(kind, name):
    """The ggml type of a matrix. q4_k_m follows llama.cpp's Q4_K_M mix: Q6_K for the output head and
    for attn_v / ffn_down in the layers its use_more_bits picks, Q4_K elsewhere (q5_k_m: Q5_K); iq4_xs has
    a Q6_K head."""
    if kind in ("iq4_xs", "q2_k", "q3_k"):
        return GGML_Q6_K if name == "output.weight" else TENSOR_TYPE[kind]
    if kind not in ("q4_k_m", "q5_k_m"):
        return TENSOR_TYPE[kind]
    if name == "output.weight":
        return GGML_Q6_K
    part = name.split(".")
    if part[0] == "blk" and part[2] in ("attn_v", "ffn_down"):
        i, n = int(part[1]), LAYERS
        if i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2:
            return GGML_Q6_K
    return TENSOR_TYPE[kind]


def tensor_bytes(gtype, ne):
    if len(ne) == 1:
        return 4 * ne[0]
    block_bytes, block = BLOCK[gtype]
    return ne[0] * ne[1] // block * block_bytes


def half_bytes(value):
    return np.frombuffer(np.array([value], "<f2").tobytes(), np.uint8)


def random_tensor(gtype, ne, rng):
    if len(ne) == 1:
        return np.ones(ne[0], "<f4").tobytes()
    n = ne[0] * ne[1]
    if gtype == GGML_IQ4_XS:
        # Random super-blocks: sub-block scales ls - 32 uniform on -32..31 (std 18.5), levels of
        # kvalues_iq4nl uniform (std 66): d for a weight std of about 0.02.
        out = rng.integers(0, 256, size=(n // 256, 136), dtype=np.uint8)
        out[:, 0:2] = half_bytes(0.02 / (18.5 * 66.0))
        return out.tobytes()
    if gtype == GGML_Q3_K:
        # hmask, qs, 12 bytes of 6-bit scales (s - 32 uniform on -32..31, std 18.5), d: codes - 4 uniform
        # on -4..3 (std 2.29).
        out = rng.integers(0, 256, size=(n // 256, 110), dtype=np.uint8)
        out[:, 108:110] = half_bytes(0.02 / (18.5 * 2.29))
        return out.tobytes()
    if gtype == GGML_Q2_K:
        # scale | min << 4 bytes, qs, d, dmin: d x scale x code (scales 0..15, codes 0..3: std about 10 d)
        # minus dmin x min.
        out = rng.integers(0, 256, size=(n // 256, 84), dtype=np.uint8)
        out[:, 80:82] = half_bytes(0.02 / 10.0)
        out[:, 82:84] = half_bytes(0.002 / 7.5)
        return out.tobytes()
    if gtype in (GGML_Q4_K, GGML_Q5_K, GGML_Q6_K):
        # Random super-blocks with fp16 scales for a weight std of about 0.02: Q4_K's and Q5_K's 6-bit
        # scales average 31.5 and their codes have std 4.6 and 9.2; Q6_K's int8 scales have std 74, its
        # codes 18.5.
        blocks = n // 256
        out = rng.integers(0, 256, size=(blocks, BLOCK[gtype][0]), dtype=np.uint8)
        if gtype != GGML_Q6_K:
            out[:, 0:2] = half_bytes(0.02 / (31.5 * (4.6 if gtype == GGML_Q4_K else 9.2)))
            out[:, 2:4] = half_bytes(0.002 / 31.5)
        else:
            out[:, 208:210] = half_bytes(0.02 / (74.0 * 18.5))
        return out.tobytes()
    kind = {GGML_F16: "f16", GGML_Q4_0: "q4_0", GGML_Q8_0: "q8_0"}[gtype]
    if kind == "f16":
        return (rng.standard_normal(n, dtype=np.float32) * 0.02).astype("<f2").tobytes()
    blocks = n // 32
    qbytes = 16 if kind == "q4_0" else 32
    # Uniform nibbles (-8..7) have std 4.6, uniform bytes 74: scales for a weight std of 0.02.
    scale = np.float16(0.02 / (4.6 if kind == "q4_0" else 74.0))
    out = np.empty((blocks, 2 + qbytes), np.uint8)
    out[:, :2] = np.frombuffer(np.array([scale], "<f2").tobytes(), np.uint8)
    out[:, 2:] = rng.integers(0, 256, size=(blocks, qbytes), dtype=np.uint8)
    return out.tobytes()


def write(path, kind, seed, layers=LAYERS):
    tensors = tensor_list(layers)
    kvs = metadata(kind, layers)
    header = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)))
    for key, vtype, value in kvs:
        header += gguf_string(key) + struct.pack("<I", vtype) + gguf_value(vtype, value)
    offset = 0
    for name, ne in tensors:
        gtype = GGML_F32 if len(ne) == 1 else tensor_type(kind, name)
        header += gguf_string(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
        header += struct.pack("<IQ", gtype, offset)
        offset += (tensor_bytes(gtype, ne) + ALIGN - 1) // ALIGN * ALIGN
    header += b"\0" * ((-len(header)) % ALIGN)
    expected = len(header) + offset
    if os.path.exists(path) and os.path.getsize(path) == expected:
        print("kept %s (%.2f GB)" % (path, expected / 1e9))
        return
    rng = np.random.default_rng(seed)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(header)
        for name, ne in tensors:
            data = random_tensor(GGML_F32 if len(ne) == 1 else tensor_type(kind, name), ne, rng)
            f.write(data + b"\0" * ((-len(data)) % ALIGN))
    os.replace(tmp, path)
    print("wrote %s (%.2f GB)" % (path, expected / 1e9))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.expanduser("~/.cache/tessel/bench"))
    ap.add_argument("--types", default="q4_0,q8_0", help="comma-separated: q4_0, q8_0, f16, q4_k_m, q5_k_m, q6_k, iq4_xs, q2_k, q3_k")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--layers", type=int, default=LAYERS, help="transformer blocks (TinyLlama has %d)" % LAYERS)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for kind in args.types.split(","):
        if kind not in FILE_TYPE:
            raise SystemExit("unknown type %r: use q4_0, q8_0, f16, q4_k_m, q5_k_m, q6_k, iq4_xs, q2_k or q3_k" % kind)
        if args.layers < 1:
            raise SystemExit("--layers must be at least 1")
        name = kind if args.layers == LAYERS else "L%d-%s" % (args.layers, kind)
        write(os.path.join(args.out, "tinyllama-1.1b-random-%s.gguf" % name), kind, args.seed, args.layers)


if __name__ == "__main__":
    main()
