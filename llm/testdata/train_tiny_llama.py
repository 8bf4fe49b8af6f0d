#!/usr/bin/python3
"""Trains the tiny Llama that Tessel's LLM tests run, and writes it with its references.

Run with Debian's /usr/bin/python3 (PyTorch 1.13, numpy); no other packages. The model, the two
tokenizers and every file format writer are plain Python here so that they are independent of the C++
code they check. Deterministic: seeded, fixed step count, fixed thread count.

Writes into --out:
  model-{f32,f16,q8_0,q4_0,q4_1}.gguf   the model (GGUF v3, arch "llama", SPM vocabulary)
  safetensors/                          model.safetensors + config.json + tokenizer.json (Hugging Face)
  tokenizer-bpe.gguf                    a byte-level BPE (GPT-2 style) vocabulary, no tensors
  tokenizer_cases.json                  sample strings with the ids each tokenizer gives
  prompt.txt, prompt_tokens.npy         the 64-token prompt (text without BOS; ids with BOS)
  ref_logits.npy                        PyTorch logits [64, vocab] for the prompt
  ref_logits_window16.npy               the same with a 16-token sliding window
  greedy_tokens.npy, greedy_text.txt    64 greedy tokens after the prompt, and their text
  ref_perplexity.json                   held-out perplexity (ctx 256) of the f32 model
  dequant_<type>.npy                    blk.0.ffn_down.weight dequantized by numpy, per GGUF type
  heldout.txt                           the last 10% of the corpus

With --size small (the quantization model: dim 256, 6 layers, 5.0M parameters, same vocabulary) only
model-f32.gguf, heldout.txt and calibration.txt (the first 90%, the training text) are written.
"""

import argparse
import collections
import heapq
import json
import math
import os
import struct
import sys
import time
import unicodedata

import numpy as np
import torch
import torch.nn.functional as F

SPACE = "\u2581"  # SentencePiece's visible space

# ---------------------------------------------------------------------------------------------------
# SentencePiece-style vocabulary (score-based merges with byte fallback), as llama.cpp runs it.

TYPE_NORMAL, TYPE_UNKNOWN, TYPE_CONTROL, TYPE_BYTE = 1, 2, 3, 6


def split_words(normalized):
    """Pieces that start at each visible space; merges never cross them."""
    words, start = [], 0
    for i in range(1, len(normalized)):
        if normalized[i] == SPACE:
            words.append(normalized[start:i])
            start = i
    if normalized:
        words.append(normalized[start:])
    return words


def learn_merges(word_counts, n_merges, blocked="\0"):
    """Classic BPE on a word-frequency table, with incremental pair counts. Ties go to the larger
    pair text (deterministic); pairs touching a `blocked` symbol are never merged."""
    words = [list(w) for w in word_counts]
    counts = list(word_counts.values())
    pairs = collections.Counter()
    where = collections.defaultdict(set)

    def count(wi, sign):
        syms = words[wi]
        for a, b in zip(syms, syms[1:]):
            if blocked in a or blocked in b:
                continue
            pairs[(a, b)] += sign * counts[wi]
            if sign > 0:
                where[(a, b)].add(wi)

    for wi in range(len(words)):
        count(wi, 1)
    merges = []
    for _ in range(n_merges):
        live = [(n, p) for p, n in pairs.items() if n > 0]
        if not live:
            break
        best = max(live)[1]
        merges.append(best)
        merged = best[0] + best[1]
        for wi in sorted(where.pop(best)):
            count(wi, -1)
            syms, out, i = words[wi], [], 0
            while i < len(syms):
                if i + 1 < len(syms) and syms[i] == best[0] and syms[i + 1] == best[1]:
                    out.append(merged)
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            words[wi] = out
            count(wi, 1)
        del pairs[best]
    return merges


class SpmVocab:
    def __init__(self, train_text, vocab_size, min_char_count):
        self.tokens = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)]
        self.types = [TYPE_UNKNOWN, TYPE_CONTROL, TYPE_CONTROL] + [TYPE_BYTE] * 256
        normalized = SPACE + train_text.replace(" ", SPACE)
        chars = collections.Counter(normalized)
        # Rare characters are left to byte fallback so that the tests exercise it.
        kept = sorted((c for c, n in chars.items() if n >= min_char_count), key=lambda c: (-chars[c], c))
        for c in kept:
            self.tokens.append(c)
            self.types.append(TYPE_NORMAL)
        word_counts = collections.Counter(split_words(normalized))
        word_counts = {tuple(c if c in chars and chars[c] >= min_char_count else "\0" for c in w): n
                       for w, n in word_counts.items()}
        self.merges = learn_merges(word_counts, vocab_size - len(self.tokens))
        for a, b in self.merges:
            self.tokens.append(a + b)
            self.types.append(TYPE_NORMAL)
        first_normal = 3 + 256
        # Later merges score lower: the highest-scoring bigram is the earliest learned merge.
        self.scores = [0.0] * first_normal + [-float(i) for i in range(len(self.tokens) - first_normal)]
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        self.merge_rank = {m: r for r, m in enumerate(self.merges)}
        self.bos, self.eos, self.unk = 1, 2, 0
        self._cache = {}

    def _mergeable(self, text):
        i = self.ids.get(text)
        return i if i is not None and self.types[i] == TYPE_NORMAL else None

    def _encode_word_scores(self, word):
        """llama.cpp's llm_tokenizer_spm: merge the highest-scoring adjacent pair, leftmost first."""
        syms = list(word)
        n = len(syms)
        prev = list(range(-1, n - 1))
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        size = [1] * n
        heap = []

        def add(left, right):
            if left < 0 or right < 0:
                return
            text = syms[left] + syms[right]
            tok = self._mergeable(text)
            if tok is not None:
                heapq.heappush(heap, (-self.scores[tok], left, right, size[left] + size[right]))

        for i in range(1, n):
            add(i - 1, i)
        while heap:
            _, left, right, sz = heapq.heappop(heap)
            if size[left] == 0 or size[right] == 0 or size[left] + size[right] != sz:
                continue
            syms[left] += syms[right]
            size[left] += size[right]
            size[right] = 0
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prev[nxt[right]] = left
            add(prev[left], left)
            add(left, nxt[left])
        out = []
        i = 0
        while i != -1:
            out.extend(self._piece_ids(syms[i]))
            i = nxt[i]
        return out

    def _encode_word_ranks(self, word):
        """Hugging Face's BPE model (tokenizer.json): apply the lowest-ranked merge, leftmost first."""
        syms = list(word)
        while len(syms) > 1:
            best = None
            for i in range(len(syms) - 1):
                r = self.merge_rank.get((syms[i], syms[i + 1]))
                if r is not None and (best is None or r < best[0]):
                    best = (r, i)
            if best is None:
                break
            i = best[1]
            syms[i:i + 2] = [syms[i] + syms[i + 1]]
        out = []
        for s in syms:
            out.extend(self._piece_ids(s))
        return out

    def _piece_ids(self, piece):
        i = self.ids.get(piece)
        if i is not None and self.types[i] == TYPE_NORMAL:
            return [i]
        return [self.ids["<0x%02X>" % b] for b in piece.encode("utf-8")]

    def encode(self, text, mode="scores"):
        """Ids without BOS; a space is prepended as llama.cpp does for SPM vocabularies."""
        if not text:
            return []
        normalized = SPACE + text.replace(" ", SPACE)
        out = []
        fn = self._encode_word_scores if mode == "scores" else self._encode_word_ranks
        for w in split_words(normalized):
            key = (mode, w)
            if key not in self._cache:
                self._cache[key] = fn(w)
            out.extend(self._cache[key])
        return out

    def decode(self, ids, strip_prefix_space=True):
        data = bytearray()
        for i in ids:
            if self.types[i] == TYPE_BYTE:
                data.append(int(self.tokens[i][3:5], 16))
            elif self.types[i] == TYPE_NORMAL:
                data.extend(self.tokens[i].replace(SPACE, " ").encode("utf-8"))
        text = data.decode("utf-8", errors="replace")
        return text[1:] if strip_prefix_space and text.startswith(" ") else text


# ---------------------------------------------------------------------------------------------------
# Byte-level BPE (GPT-2): the GPT-2 pre-tokenizer regex, written out by hand (Python's re module has no
# \p{L}), byte-to-unicode mapping, rank-ordered merges.

def gpt2_bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def is_space(c):
    return c.isspace()


def is_letter(c):
    return unicodedata.category(c).startswith("L")


def is_number(c):
    return unicodedata.category(c).startswith("N")


def gpt2_pretokenize(text):
    """'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"""
    out, i, n = [], 0, len(text)

    def run(j, pred):
        while j < n and pred(text[j]):
            j += 1
        return j

    def other(c):
        return not is_space(c) and not is_letter(c) and not is_number(c)

    while i < n:
        c = text[i]
        if c == "'":
            matched = False
            for suffix in ("s", "t", "re", "ve", "m", "ll", "d"):
                if text.startswith(suffix, i + 1):
                    out.append(text[i:i + 1 + len(suffix)])
                    i += 1 + len(suffix)
                    matched = True
                    break
            if matched:
                continue
        start = i + 1 if c == " " and i + 1 < n else i
        done = False
        for pred in (is_letter, is_number, other):
            if start < n and pred(text[start]):
                j = run(start, pred)
                out.append(text[i:j])
                i = j
                done = True
                break
        if done:
            continue
        # Whitespace: a run not followed by non-space, else all but its last character.
        j = run(i, is_space)
        if j < n and j - i > 1:
            j -= 1
        out.append(text[i:j])
        i = j
    return out


class BpeVocab:
    def __init__(self, train_text, n_merges):
        self.byte_map = gpt2_bytes_to_unicode()
        self.byte_unmap = {v: k for k, v in self.byte_map.items()}
        self.tokens = [self.byte_map[b] for b in range(256)]
        counts = collections.Counter(gpt2_pretokenize(train_text))
        word_counts = {tuple(self._map(w)): c for w, c in counts.items()}
        self.merges = learn_merges(word_counts, n_merges)
        for a, b in self.merges:
            self.tokens.append(a + b)
        self.tokens.append("<|endoftext|>")
        self.eot = len(self.tokens) - 1
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        self.ranks = {m: r for r, m in enumerate(self.merges)}
        self._cache = {}

    def _map(self, s):
        return "".join(self.byte_map[b] for b in s.encode("utf-8"))

    def _bpe(self, word):
        """The original GPT-2 encoder loop: merge every occurrence of the lowest-ranked pair."""
        syms = list(word)
        while len(syms) > 1:
            pairs = set(zip(syms, syms[1:]))
            best = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if best not in self.ranks:
                break
            out, i = [], 0
            while i < len(syms):
                if i < len(syms) - 1 and syms[i] == best[0] and syms[i + 1] == best[1]:
                    out.append(best[0] + best[1])
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            syms = out
        return [self.ids[s] for s in syms]

    def encode(self, text):
        out = []
        for w in gpt2_pretokenize(text):
            m = self._map(w)
            if m not in self._cache:
                self._cache[m] = self._bpe(m)
            out.extend(self._cache[m])
        return out

    def decode(self, ids):
        data = bytes(self.byte_unmap[ch] for i in ids if i != self.eot for ch in self.tokens[i])
        return data.decode("utf-8", errors="replace")


# ---------------------------------------------------------------------------------------------------
# The model: Llama in plain PyTorch, Hugging Face conventions (rotate-half RoPE, [out, in] weights).

# Training steps by default. The tests compare Tessel with PyTorch on the same weights, so what they need
# of training is realistic weights (norms and embeddings moved off their initialization, peaked
# next-token distributions), not a good model: a few hundred small steps give that in well under a
# minute on one core. benchmarks/quant/run.sh trains the small model for real (--steps 700 --batch 8
# --window 256), where perplexity differences between quantizers have to mean something.
TINY_STEPS = 200
SMALL_STEPS = 40


class Config:
    dim = 128
    n_layers = 4
    n_heads = 4
    n_kv_heads = 2
    ffn = 352  # ~2.75 x dim, a multiple of the 32-element quantization block
    vocab = 512
    ctx = 256
    eps = 1e-5
    rope_theta = 10000.0


class SmallConfig(Config):
    """The quantization test model (issue 9): 5.0M parameters, large enough that 3- and 4-bit weights
    cost perplexity. Every matrix width is a multiple of 128 so that 128-element groups fit."""
    dim = 256
    n_layers = 6
    n_heads = 8
    n_kv_heads = 4
    ffn = 768


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        hd = c.dim // c.n_heads
        self.c, self.hd = c, hd
        self.attn_norm = RMSNorm(c.dim, c.eps)
        self.wq = torch.nn.Linear(c.dim, c.n_heads * hd, bias=False)
        self.wk = torch.nn.Linear(c.dim, c.n_kv_heads * hd, bias=False)
        self.wv = torch.nn.Linear(c.dim, c.n_kv_heads * hd, bias=False)
        self.wo = torch.nn.Linear(c.n_heads * hd, c.dim, bias=False)
        self.ffn_norm = RMSNorm(c.dim, c.eps)
        self.w_gate = torch.nn.Linear(c.dim, c.ffn, bias=False)
        self.w_up = torch.nn.Linear(c.dim, c.ffn, bias=False)
        self.w_down = torch.nn.Linear(c.ffn, c.dim, bias=False)

    def forward(self, x, cos, sin, mask):
        c, hd = self.c, self.hd
        b, t, _ = x.shape
        h = self.attn_norm(x)
        q = self.wq(h).view(b, t, c.n_heads, hd).transpose(1, 2)
        k = self.wk(h).view(b, t, c.n_kv_heads, hd).transpose(1, 2)
        v = self.wv(h).view(b, t, c.n_kv_heads, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = c.n_heads // c.n_kv_heads
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hd) + mask
        o = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, t, c.n_heads * hd)
        x = x + self.wo(o)
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class TinyLlama(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed = torch.nn.Embedding(c.vocab, c.dim)
        self.blocks = torch.nn.ModuleList([Block(c) for _ in range(c.n_layers)])
        self.norm = RMSNorm(c.dim, c.eps)
        self.lm_head = torch.nn.Linear(c.dim, c.vocab, bias=False)
        hd = c.dim // c.n_heads
        inv_freq = 1.0 / (c.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
        ang = torch.outer(torch.arange(c.ctx, dtype=torch.float64), inv_freq)
        ang = torch.cat((ang, ang), dim=-1)
        self.register_buffer("cos", ang.cos().float(), persistent=False)
        self.register_buffer("sin", ang.sin().float(), persistent=False)

    def forward(self, tokens, window=0):
        t = tokens.shape[1]
        i = torch.arange(t)[:, None]
        j = torch.arange(t)[None, :]
        allowed = j <= i
        if window > 0:
            allowed &= j > i - window
        mask = torch.zeros(t, t).masked_fill(~allowed, float("-inf"))
        x = self.embed(tokens)
        for blk in self.blocks:
            x = blk(x, self.cos[:t], self.sin[:t], mask)
        return self.lm_head(self.norm(x))


def train(model, data, c, steps, batch, window, seed, log, peak_lr=1e-2):
    """AdamW on random windows of `window` tokens (at most the model's context), in f32 on any CPU so
    that the same seed gives the same weights on every machine."""
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=peak_lr, betas=(0.9, 0.95), weight_decay=0.1)
    warmup = 30
    t0 = time.time()
    for step in range(steps):
        lr = peak_lr * min(1.0, (step + 1) / warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / steps)))
        for grp in opt.param_groups:
            grp["lr"] = lr
        starts = torch.randint(0, len(data) - window - 1, (batch,), generator=g)
        x = torch.stack([data[s:s + window] for s in starts])
        y = torch.stack([data[s + 1:s + window + 1] for s in starts])
        logits = model(x)
        loss = F.cross_entropy(logits.float().reshape(-1, c.vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 0 or step == steps - 1:
            log("step %d/%d loss %.4f (%.0f s)" % (step, steps, loss.item(), time.time() - t0))


# ---------------------------------------------------------------------------------------------------
# Quantization (ggml's reference quantizers, vectorized over blocks) and GGUF/safetensors writers.

GGML_F32, GGML_F16, GGML_Q4_0, GGML_Q4_1, GGML_Q8_0 = 0, 1, 2, 3, 8
FILE_TYPES = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q8_0": 7}  # llama_ftype values


def quantize(w, kind):
    """Returns (bytes, dequantized float32 array) for a [rows, cols] matrix; cols % 32 == 0 for blocks."""
    if kind == "f32":
        return w.astype("<f4").tobytes(), w.astype(np.float32)
    if kind == "f16":
        h = w.astype("<f2")
        return h.tobytes(), h.astype(np.float32)
    rows, cols = w.shape
    x = w.astype(np.float32).reshape(rows, cols // 32, 32)
    if kind == "q8_0":
        amax = np.abs(x).max(-1)
        d = amax / 127.0
        idv = np.where(d != 0, 1.0 / np.where(d != 0, d, 1), 0).astype(np.float32)
        # roundf: ties away from zero (np.round would round half to even).
        q = (np.sign(x * idv[..., None]) * np.floor(np.abs(x * idv[..., None]) + 0.5)).astype(np.int8)
        dh = d.astype("<f2")
        blocks = np.concatenate([dh[..., None].view(np.uint8), q.view(np.uint8)], axis=-1)
        deq = dh.astype(np.float32)[..., None] * q.astype(np.float32)
        return blocks.tobytes(), deq.reshape(rows, cols)
    if kind == "q4_0":
        idx = np.abs(x).argmax(-1)
        mx = np.take_along_axis(x, idx[..., None], -1)[..., 0]
        d = (mx / -8.0).astype(np.float32)
        idv = np.where(d != 0, 1.0 / np.where(d != 0, d, 1), 0).astype(np.float32)
        q = np.minimum(15, (x * idv[..., None] + np.float32(8.5)).astype(np.int8)).astype(np.uint8)
        packed = q[..., :16] | (q[..., 16:] << 4)
        dh = d.astype("<f2")
        blocks = np.concatenate([dh[..., None].view(np.uint8), packed], axis=-1)
        deq = dh.astype(np.float32)[..., None] * (q.astype(np.float32) - 8.0)
        return blocks.tobytes(), deq.reshape(rows, cols)
    if kind == "q4_1":
        mn = x.min(-1)
        mx = x.max(-1)
        d = ((mx - mn) / 15.0).astype(np.float32)
        idv = np.where(d != 0, 1.0 / np.where(d != 0, d, 1), 0).astype(np.float32)
        q = np.minimum(15, ((x - mn[..., None]) * idv[..., None] + np.float32(0.5)).astype(np.int8)).astype(np.uint8)
        packed = q[..., :16] | (q[..., 16:] << 4)
        dh = d.astype("<f2")
        mh = mn.astype("<f2")
        blocks = np.concatenate([dh[..., None].view(np.uint8), mh[..., None].view(np.uint8), packed], axis=-1)
        deq = dh.astype(np.float32)[..., None] * q.astype(np.float32) + mh.astype(np.float32)[..., None]
        return blocks.tobytes(), deq.reshape(rows, cols)
    raise ValueError(kind)


GGUF_U32, GGUF_I32, GGUF_F32, GGUF_BOOL, GGUF_STRING, GGUF_ARRAY = 4, 5, 6, 7, 8, 9


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
    return struct.pack("<IQ", elem_type, len(items)) + b"".join(gguf_value(elem_type, v) for v in items)


def write_gguf(path, kvs, tensors, alignment=32):
    """kvs: [(key, type, value)]; tensors: [(name, ggml_type, ne (innermost first), bytes)]."""
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)))
    for key, vtype, value in kvs:
        out += gguf_string(key) + struct.pack("<I", vtype) + gguf_value(vtype, value)
    offset = 0
    offsets = []
    for name, gtype, ne, data in tensors:
        offsets.append(offset)
        out += gguf_string(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
        out += struct.pack("<IQ", gtype, offset)
        offset += (len(data) + alignment - 1) // alignment * alignment
    out += b"\0" * ((-len(out)) % alignment)
    for (_, _, _, data), off in zip(tensors, offsets):
        out += data + b"\0" * ((-len(data)) % alignment)
    with open(path, "wb") as f:
        f.write(out)


def permute_for_gguf(w, n_heads):
    """HF rotate-half rows -> llama.cpp's adjacent-pair RoPE rows (what convert_hf_to_gguf.py does)."""
    rows, cols = w.shape
    return w.reshape(n_heads, 2, rows // n_heads // 2, cols).swapaxes(1, 2).reshape(rows, cols)


def gguf_tensors(model, c, kind):
    """Tensors in llama.cpp's names, with the dequantized float32 values for references."""
    sd = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    named = [("token_embd.weight", sd["embed.weight"])]
    for i in range(c.n_layers):
        p = "blocks.%d." % i
        named += [
            ("blk.%d.attn_norm.weight" % i, sd[p + "attn_norm.weight"]),
            ("blk.%d.attn_q.weight" % i, permute_for_gguf(sd[p + "wq.weight"], c.n_heads)),
            ("blk.%d.attn_k.weight" % i, permute_for_gguf(sd[p + "wk.weight"], c.n_kv_heads)),
            ("blk.%d.attn_v.weight" % i, sd[p + "wv.weight"]),
            ("blk.%d.attn_output.weight" % i, sd[p + "wo.weight"]),
            ("blk.%d.ffn_norm.weight" % i, sd[p + "ffn_norm.weight"]),
            ("blk.%d.ffn_gate.weight" % i, sd[p + "w_gate.weight"]),
            ("blk.%d.ffn_up.weight" % i, sd[p + "w_up.weight"]),
            ("blk.%d.ffn_down.weight" % i, sd[p + "w_down.weight"]),
        ]
    named += [("output_norm.weight", sd["norm.weight"]), ("output.weight", sd["lm_head.weight"])]
    out, deq = [], {}
    for name, w in named:
        if w.ndim == 1:
            out.append((name, GGML_F32, [w.shape[0]], w.astype("<f4").tobytes()))
            deq[name] = w
            continue
        data, d = quantize(w, kind)
        gtype = {"f32": GGML_F32, "f16": GGML_F16, "q8_0": GGML_Q8_0, "q4_0": GGML_Q4_0, "q4_1": GGML_Q4_1}[kind]
        out.append((name, gtype, [w.shape[1], w.shape[0]], data))
        deq[name] = d
    return out, deq


def llama_kvs(c, vocab, kind):
    a = "llama."
    return [
        ("general.architecture", GGUF_STRING, "llama"),
        ("general.name", GGUF_STRING, "tessel-tiny-llama"),
        ("general.file_type", GGUF_U32, FILE_TYPES[kind]),
        ("general.alignment", GGUF_U32, 32),
        (a + "context_length", GGUF_U32, c.ctx),
        (a + "embedding_length", GGUF_U32, c.dim),
        (a + "block_count", GGUF_U32, c.n_layers),
        (a + "feed_forward_length", GGUF_U32, c.ffn),
        (a + "rope.dimension_count", GGUF_U32, c.dim // c.n_heads),
        (a + "attention.head_count", GGUF_U32, c.n_heads),
        (a + "attention.head_count_kv", GGUF_U32, c.n_kv_heads),
        (a + "attention.layer_norm_rms_epsilon", GGUF_F32, c.eps),
        (a + "rope.freq_base", GGUF_F32, c.rope_theta),
        (a + "vocab_size", GGUF_U32, c.vocab),
        ("tokenizer.ggml.model", GGUF_STRING, "llama"),
        ("tokenizer.ggml.tokens", GGUF_ARRAY, (GGUF_STRING, vocab.tokens)),
        ("tokenizer.ggml.scores", GGUF_ARRAY, (GGUF_F32, vocab.scores)),
        ("tokenizer.ggml.token_type", GGUF_ARRAY, (GGUF_I32, vocab.types)),
        ("tokenizer.ggml.bos_token_id", GGUF_U32, vocab.bos),
        ("tokenizer.ggml.eos_token_id", GGUF_U32, vocab.eos),
        ("tokenizer.ggml.unknown_token_id", GGUF_U32, vocab.unk),
        ("tokenizer.ggml.add_bos_token", GGUF_BOOL, True),
        ("tokenizer.ggml.add_eos_token", GGUF_BOOL, False),
    ]


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, arr in tensors:
        data = arr.astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((-len(h)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def write_hf_dir(d, model, c, vocab):
    os.makedirs(d, exist_ok=True)
    sd = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    t = [("model.embed_tokens.weight", sd["embed.weight"])]
    for i in range(c.n_layers):
        p, q = "blocks.%d." % i, "model.layers.%d." % i
        t += [
            (q + "input_layernorm.weight", sd[p + "attn_norm.weight"]),
            (q + "self_attn.q_proj.weight", sd[p + "wq.weight"]),
            (q + "self_attn.k_proj.weight", sd[p + "wk.weight"]),
            (q + "self_attn.v_proj.weight", sd[p + "wv.weight"]),
            (q + "self_attn.o_proj.weight", sd[p + "wo.weight"]),
            (q + "post_attention_layernorm.weight", sd[p + "ffn_norm.weight"]),
            (q + "mlp.gate_proj.weight", sd[p + "w_gate.weight"]),
            (q + "mlp.up_proj.weight", sd[p + "w_up.weight"]),
            (q + "mlp.down_proj.weight", sd[p + "w_down.weight"]),
        ]
    t += [("model.norm.weight", sd["norm.weight"]), ("lm_head.weight", sd["lm_head.weight"])]
    write_safetensors(os.path.join(d, "model.safetensors"), t)
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": c.dim,
        "intermediate_size": c.ffn, "num_hidden_layers": c.n_layers, "num_attention_heads": c.n_heads,
        "num_key_value_heads": c.n_kv_heads, "rms_norm_eps": c.eps, "rope_theta": c.rope_theta,
        "max_position_embeddings": c.ctx, "vocab_size": c.vocab, "tie_word_embeddings": False,
        "bos_token_id": vocab.bos, "eos_token_id": vocab.eos, "hidden_act": "silu", "torch_dtype": "float32",
        "rope_scaling": None,
    }
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    tok = {
        "version": "1.0",
        "added_tokens": [{"id": i, "content": vocab.tokens[i], "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True} for i in range(3)],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": SPACE},
            {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}]},
        "pre_tokenizer": None,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": SPACE}, "content": " "}, {"type": "ByteFallback"},
            {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True,
                  "vocab": {t: i for i, t in enumerate(vocab.tokens)},
                  "merges": ["%s %s" % m for m in vocab.merges]},
    }
    with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)


def write_npy(path, arr):
    np.save(path, np.ascontiguousarray(arr))


# ---------------------------------------------------------------------------------------------------

SAMPLE_STRINGS = [
    "Hello world",
    "First Citizen:\nBefore we proceed any further, hear me speak.",
    "  two  leading spaces and   three",
    "ROMEO: O, she doth teach the torches to burn bright!",
    "na\u00efve caf\u00e9 \u2014 \u00fcn\u00efc\u00f6d\u00e9 \u2713 \U0001F600",
    "",
    "a",
    "Price: $3 & 45% off, 2024-11-05.",
    "<s> is not parsed as a special token </s>",
    "tabs\tand\nnewlines\n\n\nend ",
    "I'll say 'tis they've we're he'd you'd I'm",
    "\u4f60\u597d\uff0c\u4e16\u754c 123\u0663",
]


def find_corpus(arg):
    if arg:
        return arg
    # Bazel runs this script through a symlink to the source tree; the corpus lives beside the
    # project root (../shared/data from the root).
    here = os.path.dirname(os.path.realpath(__file__))
    path = os.path.normpath(os.path.join(here, "..", "..", "..", "shared", "data", "tinyshakespeare.txt"))
    if not os.path.exists(path):
        sys.exit("train_tiny_llama.py: corpus not found at %s; pass --text PATH" % path)
    return path


def heldout_perplexity(model, spm, heldout_ids, ctx):
    """Chunks of BOS + ctx-1 tokens, every prediction after BOS scored (what `tessel perplexity` does)."""
    n_chunks = len(heldout_ids) // (ctx - 1)
    nll, count = 0.0, 0
    with torch.no_grad():
        for k in range(n_chunks):
            chunk = [spm.bos] + heldout_ids[k * (ctx - 1):(k + 1) * (ctx - 1)]
            lg = model(torch.tensor([chunk]))[0].double()
            lp = torch.log_softmax(lg[:-1], -1)
            tgt = torch.tensor(chunk[1:])
            nll -= float(lp[torch.arange(len(tgt)), tgt].sum())
            count += len(tgt)
    return math.exp(nll / count), n_chunks, count


def write_small_outputs(out, model, c, spm, train_text, heldout, log):
    # No PyTorch perplexity here: Debian's f32 BLAS needs minutes for it; `tessel perplexity` on
    # model-f32.gguf is the baseline (the runtime matches PyTorch on the tiny model).
    with open(os.path.join(out, "heldout.txt"), "w", encoding="utf-8") as f:
        f.write(heldout)
    with open(os.path.join(out, "calibration.txt"), "w", encoding="utf-8") as f:
        f.write(train_text)
    tensors, _ = gguf_tensors(model, c, "f32")
    kvs = [kv if kv[0] != "general.name" else (kv[0], kv[1], "tessel-small-llama") for kv in llama_kvs(c, spm, "f32")]
    write_gguf(os.path.join(out, "model-f32.gguf"), kvs, tensors)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--text", default="")
    ap.add_argument("--size", choices=("tiny", "small"), default="tiny")
    ap.add_argument("--steps", type=int, default=0, help="default: %d (tiny), %d (small)" % (TINY_STEPS, SMALL_STEPS))
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--window", type=int, default=128, help="training window in tokens (at most the context)")
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    # One thread: Bazel builds this beside the other test models on 2 cores, and PyTorch's OpenMP threads
    # on top of OpenBLAS's own made a step 2x slower than one thread even with the machine to itself
    # (Zen 3: small model 2.4 s vs 1.3 s per step).
    torch.set_num_threads(1)
    logf = open(os.path.join(args.out, "train_log.txt"), "w")

    def log(msg):
        print(msg, flush=True)
        logf.write(msg + "\n")

    with open(find_corpus(args.text), encoding="utf-8") as f:
        text = f.read()
    split = int(0.9 * len(text))
    train_text, heldout = text[:split], text[split:]
    c = SmallConfig() if args.size == "small" else Config()
    steps = args.steps or (SMALL_STEPS if args.size == "small" else TINY_STEPS)
    if not 2 <= args.window <= c.ctx:
        sys.exit("--window must be between 2 and the context (%d)" % c.ctx)

    t0 = time.time()
    spm = SpmVocab(train_text, c.vocab, min_char_count=200)
    assert len(spm.tokens) == c.vocab, len(spm.tokens)
    bpe = BpeVocab(train_text, 240)
    log("vocabularies built in %.1f s (SPM %d tokens, BPE %d tokens)" % (time.time() - t0, len(spm.tokens), len(bpe.tokens)))

    train_ids = torch.tensor([spm.bos] + spm.encode(train_text), dtype=torch.long)
    heldout_ids = spm.encode(heldout)
    log("train tokens %d, held-out tokens %d (%.0f s)" % (len(train_ids), len(heldout_ids), time.time() - t0))
    assert spm.decode(heldout_ids) == heldout
    assert bpe.decode(bpe.encode(heldout)) == heldout

    model = TinyLlama(c)
    log("model: %d parameters" % sum(p.numel() for p in model.parameters()))
    train(model, train_ids, c, steps, args.batch, args.window, args.seed, log,
          peak_lr=5e-3 if args.size == "small" else 1e-2)
    model.eval()
    if args.size == "small":
        write_small_outputs(args.out, model, c, spm, train_text, heldout, log)
        log("done in %.0f s" % (time.time() - t0))
        return

    with torch.no_grad():
        # The prompt: the held-out text's first 63 tokens after BOS, cut where its decoding round-trips.
        prompt_ids = [spm.bos] + heldout_ids[:63]
        prompt_text = spm.decode(heldout_ids[:63])
        assert spm.encode(prompt_text) == heldout_ids[:63], "prompt does not re-encode to the same ids"
        logits = model(torch.tensor([prompt_ids]))[0].numpy()
        logits_w16 = model(torch.tensor([prompt_ids]), window=16)[0].numpy()
        seq = list(prompt_ids)
        min_margin = float("inf")
        for _ in range(64):
            last = model(torch.tensor([seq]))[0, -1]
            top2 = torch.topk(last, 2).values
            min_margin = min(min_margin, float(top2[0] - top2[1]))
            seq.append(int(last.argmax()))
        greedy = seq[len(prompt_ids):]
        log("greedy continuation: %r (smallest top-2 logit margin %.4f)" % (spm.decode(greedy), min_margin))
        # The runtime matches these logits to ~1e-5; a near tie would make the greedy test a coin toss.
        assert min_margin > 2e-4, "greedy continuation has a near tie (%.2g): change --seed or --steps" % min_margin

        ctx = c.ctx
        ppl, n_chunks, count = heldout_perplexity(model, spm, heldout_ids, ctx)
        log("held-out perplexity (ctx %d, %d chunks): %.4f" % (ctx, n_chunks, ppl))

    with open(os.path.join(args.out, "prompt.txt"), "w", encoding="utf-8") as f:
        f.write(prompt_text)
    write_npy(os.path.join(args.out, "prompt_tokens.npy"), np.array(prompt_ids, dtype=np.int32))
    write_npy(os.path.join(args.out, "ref_logits.npy"), logits.astype(np.float32))
    write_npy(os.path.join(args.out, "ref_logits_window16.npy"), logits_w16.astype(np.float32))
    write_npy(os.path.join(args.out, "greedy_tokens.npy"), np.array(greedy, dtype=np.int32))
    # The continuation as the tokens' pieces, leading space kept (it follows the prompt).
    with open(os.path.join(args.out, "greedy_text.txt"), "w", encoding="utf-8") as f:
        f.write(spm.decode(greedy, strip_prefix_space=False))
    with open(os.path.join(args.out, "ref_perplexity.json"), "w") as f:
        json.dump({"ctx": ctx, "chunks": n_chunks, "tokens_scored": count, "perplexity": ppl}, f)
    with open(os.path.join(args.out, "heldout.txt"), "w", encoding="utf-8") as f:
        f.write(heldout)

    for kind in ("f32", "f16", "q8_0", "q4_0", "q4_1"):
        tensors, deq = gguf_tensors(model, c, kind)
        write_gguf(os.path.join(args.out, "model-%s.gguf" % kind), llama_kvs(c, spm, kind), tensors)
        write_npy(os.path.join(args.out, "dequant_%s.npy" % kind), deq["blk.0.ffn_down.weight"])
    write_hf_dir(os.path.join(args.out, "safetensors"), model, c, spm)

    bpe_kvs = [
        ("general.architecture", GGUF_STRING, "llama"),
        ("tokenizer.ggml.model", GGUF_STRING, "gpt2"),
        ("tokenizer.ggml.tokens", GGUF_ARRAY, (GGUF_STRING, bpe.tokens)),
        ("tokenizer.ggml.token_type", GGUF_ARRAY,
         (GGUF_I32, [TYPE_NORMAL] * (len(bpe.tokens) - 1) + [TYPE_CONTROL])),
        ("tokenizer.ggml.merges", GGUF_ARRAY, (GGUF_STRING, ["%s %s" % m for m in bpe.merges])),
        ("tokenizer.ggml.bos_token_id", GGUF_U32, bpe.eot),
        ("tokenizer.ggml.eos_token_id", GGUF_U32, bpe.eot),
        ("tokenizer.ggml.add_bos_token", GGUF_BOOL, False),
    ]
    write_gguf(os.path.join(args.out, "tokenizer-bpe.gguf"), bpe_kvs, [])

    cases = []
    for s in SAMPLE_STRINGS + [heldout[:2000]]:
        cases.append({"text": s, "spm_ids": spm.encode(s), "spm_rank_ids": spm.encode(s, mode="ranks"),
                      "bpe_ids": bpe.encode(s)})
        assert spm.decode(spm.encode(s)) == s and bpe.decode(bpe.encode(s)) == s, repr(s)
    with open(os.path.join(args.out, "tokenizer_cases.json"), "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=False, indent=1)
    log("done in %.0f s" % (time.time() - t0))


if __name__ == "__main__":
    main()
