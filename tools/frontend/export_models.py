"""PyTorch frontend: exports Tessel's reference models to ONNX with input/expected-output pairs.

Run with Debian's PyTorch: /usr/bin/python3 tools/frontend/export_models.py --out DIR
Writes, per model M and opset K:  DIR/M_opK.onnx, and once per model DIR/M.input.npy, DIR/M.output.npy
(the output of the PyTorch model in eval mode on that input; the reference for Tessel's results).

Models:
  resnet18           torchvision ResNet-18, seeded weights, BatchNorm statistics randomized so that
                     folding them is not a no-op; batch is a symbolic dim ("batch") at opset 13
  mobilenet_v2       torchvision MobileNetV2, same treatment
  transformer_block  one Llama-style decoder block (RMSNorm, grouped-query attention with RoPE and a
                     causal mask, SwiGLU MLP) written in plain PyTorch
"""
import argparse
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def randomize_batchnorm(model, gen):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(c, generator=gen) * 0.1)


def build_cnn(name, seed):
    import torchvision
    torch.manual_seed(seed)
    model = getattr(torchvision.models, name)(weights=None)
    randomize_batchnorm(model, torch.Generator().manual_seed(seed + 1))
    return model.eval(), torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(seed + 2))


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class DecoderBlock(nn.Module):
    """A Llama decoder block: pre-RMSNorm, GQA with RoPE and a causal mask, SwiGLU MLP."""

    def __init__(self, dim=64, n_heads=4, n_kv_heads=2, ffn=128, seq=16, theta=10000.0):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, dim // n_heads
        self.attn_norm = RMSNorm(dim)
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)
        self.ffn_norm = RMSNorm(dim)
        self.w1 = nn.Linear(dim, ffn, bias=False)
        self.w2 = nn.Linear(ffn, dim, bias=False)
        self.w3 = nn.Linear(dim, ffn, bias=False)
        inv = 1.0 / (theta ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        freqs = torch.outer(torch.arange(seq).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())
        self.register_buffer("mask", torch.full((seq, seq), float("-inf")).triu(1))

    def forward(self, x):
        b, t, _ = x.shape
        h = self.attn_norm(x)
        q = self.wq(h).view(b, t, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(h).view(b, t, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(h).view(b, t, self.n_kv_heads, self.head_dim).transpose(1, 2)
        q = q * self.cos + rotate_half(q) * self.sin
        k = k * self.cos + rotate_half(k) * self.sin
        rep = self.n_heads // self.n_kv_heads
        k = k[:, :, None, :, :].expand(b, self.n_kv_heads, rep, t, self.head_dim).reshape(b, self.n_heads, t, self.head_dim)
        v = v[:, :, None, :, :].expand(b, self.n_kv_heads, rep, t, self.head_dim).reshape(b, self.n_heads, t, self.head_dim)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + self.mask
        attn = torch.matmul(F.softmax(scores, dim=-1), v)
        attn = attn.transpose(1, 2).reshape(b, t, self.n_heads * self.head_dim)
        x = x + self.wo(attn)
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


def build_transformer_block(seed):
    torch.manual_seed(seed)
    model = DecoderBlock()
    with torch.no_grad():
        for norm in (model.attn_norm, model.ffn_norm):
            norm.weight.copy_(torch.rand(norm.weight.shape) + 0.5)
    return model.eval(), torch.randn(1, 16, 64, generator=torch.Generator().manual_seed(seed + 2))


MODELS = {
    "resnet18": lambda: build_cnn("resnet18", 0),
    "mobilenet_v2": lambda: build_cnn("mobilenet_v2", 10),
    "transformer_block": lambda: build_transformer_block(20),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of: " + ", ".join(MODELS))
    parser.add_argument("--opsets", default="13,17", help="comma-separated ONNX opsets (7..17 with PyTorch 1.13)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)  # Bazel runs the test-data builds side by side on few cores
    for name in args.models.split(","):
        if name not in MODELS:
            sys.exit("unknown model '%s' (choose from %s)" % (name, ", ".join(MODELS)))
        start = time.time()
        model, x = MODELS[name]()
        with torch.no_grad():
            y = model(x)
        np.save(os.path.join(args.out, name + ".input.npy"), x.numpy().astype(np.float32))
        np.save(os.path.join(args.out, name + ".output.npy"), y.numpy().astype(np.float32))
        for opset in [int(o) for o in args.opsets.split(",")]:
            path = os.path.join(args.out, "%s_op%d.onnx" % (name, opset))
            dynamic = {"input": {0: "batch"}, "output": {0: "batch"}} if opset == 13 and name != "transformer_block" else None
            # PRESERVE keeps BatchNormalization nodes (in inference form) instead of letting the exporter
            # fold them, so that Tessel's own BN folding has work to do.
            torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"], output_names=["output"],
                              dynamic_axes=dynamic, do_constant_folding=True,
                              training=torch.onnx.TrainingMode.PRESERVE)
        print("exported %s (opsets %s) in %.1fs" % (name, args.opsets, time.time() - start), flush=True)


if __name__ == "__main__":
    main()
