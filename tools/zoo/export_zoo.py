"""Exports the model zoo (tools/zoo/zoo_test.py) to ONNX with PyTorch's inputs and outputs.

Run with Debian's PyTorch: /usr/bin/python3 tools/zoo/export_zoo.py --out DIR [--models a,b]
Writes, per model M:  DIR/M/opK.onnx for each opset K it exports at, DIR/M/<input>.npy per input,
DIR/M/<output>.npy per output (PyTorch in float64, eval mode; <output>.f32.npy in float32) and DIR/M/meta.json (inputs, outputs, compile-time
dims, opsets that failed to export and why). Each model is written to a temporary folder and renamed
into place, so a folder that exists is complete.

Weights are seeded, and whatever torchvision initializes to zero or nearly zero (classifier heads,
ViT's class token, ConvNeXt's 1e-6 layer scales, BatchNorm statistics) is re-seeded so that the
output depends on the input: an export step fails if two inputs give nearly the same output.
Sizes are small (64x64 to 96x96 images, short clips and sequences, reduced ViT/BERT/Whisper widths)
to keep the zoo test within CI time; the operators and graph structure are the full models'.
"""
import argparse
import copy
import json
import math
import os
import shutil
import sys
import time
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def reseed(model, seed):
    """Moves every parameter and buffer that torchvision leaves at zero, one, or a tiny scale onto
    seeded random values of a realistic size, so that no part of the model is an identity or a zero."""
    gen = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            c = m.num_features
            m.weight.data.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(c, generator=gen) * 0.1)
        elif isinstance(m, (nn.LayerNorm, nn.GroupNorm)) and m.weight is not None:
            m.weight.data.copy_(torch.rand(m.weight.shape, generator=gen) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)
        elif isinstance(m, nn.Linear):
            # torchvision's heads: zeros (ViT) or N(0, 0.01) (MobileNet, EfficientNet).
            if m.weight.detach().std() < 0.02:
                bound = 1.0 / math.sqrt(m.in_features)
                m.weight.data.uniform_(-bound, bound, generator=gen)
            if m.bias is not None:
                m.bias.data.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)
    for name, p in model.named_parameters():
        # ConvNeXt's layer_scale (1e-6), ViT's class token (zeros), biases left at zero.
        if "layer_scale" in name:
            p.data.copy_(torch.rand(p.shape, generator=gen) * 0.3 + 0.2)
        elif p.detach().abs().max() == 0:
            p.data.copy_(torch.randn(p.shape, generator=gen) * 0.1)


def calibrate_batchnorm(model, inputs, seed):
    """Sets BatchNorm's running statistics from a forward pass over a batch of random inputs.
    Statistics drawn at random instead leave the activations of a deep CNN off their scale, and the
    BatchNorm biases then drown the signal: MobileNetV3's output moved by 1e-7 between two inputs."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    gen = torch.Generator().manual_seed(seed)
    batch = [torch.randn((4,) + tuple(v.shape[1:]), generator=gen) for v in inputs.values()]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average over the calibration pass
        m.train()
    with torch.no_grad():
        model(*batch)
    model.eval()


def image(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def torchvision_cnn(ctor, size):
    def build(seed):
        torch.manual_seed(seed)
        model = ctor()
        reseed(model, seed + 1)
        return model, {"input": image(seed + 2, 1, 3, size, size)}
    return build


class OutKey(nn.Module):
    """Segmentation models return a dict; keep its "out" tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def segmentation(ctor, size):
    def build(seed):
        torch.manual_seed(seed)
        model = OutKey(ctor(weights=None, weights_backbone=None, aux_loss=False))
        reseed(model, seed + 1)
        return model, {"input": image(seed + 2, 1, 3, size, size)}
    return build


def vit(seed):
    from torchvision.models.vision_transformer import VisionTransformer
    torch.manual_seed(seed)
    model = VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128,
                              num_classes=100)
    reseed(model, seed + 1)
    return model, {"input": image(seed + 2, 1, 3, 32, 32)}


def r3d_18(seed):
    from torchvision.models.video import r3d_18 as ctor
    torch.manual_seed(seed)
    model = ctor(weights=None, num_classes=50)
    reseed(model, seed + 1)
    return model, {"input": image(seed + 2, 1, 3, 4, 32, 32)}


def transformer_encoder(seed):
    torch.manual_seed(seed)
    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=2)
    reseed(model, seed + 1)
    return model, {"input": image(seed + 2, 1, 16, 64)}


class BertEncoder(nn.Module):
    """BERT's encoder: token + position + segment embeddings, post-LayerNorm blocks with GELU, and
    an additive attention mask built from a 0/1 mask input, as Hugging Face's BertModel does."""

    def __init__(self, vocab=500, dim=64, heads=4, ffn=256, layers=2, max_len=64):
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.seg = nn.Embedding(2, dim)
        self.emb_norm = nn.LayerNorm(dim, eps=1e-12)
        self.qkv = nn.ModuleList(nn.Linear(dim, 3 * dim) for _ in range(layers))
        self.proj = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.norm1 = nn.ModuleList(nn.LayerNorm(dim, eps=1e-12) for _ in range(layers))
        self.fc1 = nn.ModuleList(nn.Linear(dim, ffn) for _ in range(layers))
        self.fc2 = nn.ModuleList(nn.Linear(ffn, dim) for _ in range(layers))
        self.norm2 = nn.ModuleList(nn.LayerNorm(dim, eps=1e-12) for _ in range(layers))
        self.pooler = nn.Linear(dim, dim)

    def forward(self, input_ids, attention_mask):
        b, t = input_ids.shape
        pos = torch.arange(t, device=input_ids.device).unsqueeze(0)
        x = self.emb_norm(self.tok(input_ids) + self.pos(pos) + self.seg(torch.zeros_like(input_ids)))
        bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        d = x.shape[-1] // self.heads
        for qkv, proj, n1, fc1, fc2, n2 in zip(self.qkv, self.proj, self.norm1, self.fc1, self.fc2, self.norm2):
            q, k, v = qkv(x).reshape(b, t, 3, self.heads, d).permute(2, 0, 3, 1, 4)
            att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d) + bias, dim=-1)
            x = n1(x + proj((att @ v).transpose(1, 2).reshape(b, t, -1)))
            x = n2(x + fc2(F.gelu(fc1(x))))
        return x


def bert(seed):
    torch.manual_seed(seed)
    model = BertEncoder()
    reseed(model, seed + 1)
    gen = torch.Generator().manual_seed(seed + 2)
    ids = torch.randint(0, 500, (1, 16), generator=gen)
    mask = torch.ones(1, 16, dtype=torch.int64)
    mask[:, 11:] = 0  # padding at the end: masked keys must not reach the other positions
    return model, {"input_ids": ids, "attention_mask": mask}


class WhisperEncoder(nn.Module):
    """Whisper's audio encoder: two GELU conv1d over log-mel frames (the second with stride 2), fixed
    sinusoidal positions, pre-LayerNorm transformer blocks, a final LayerNorm."""

    def __init__(self, mels=16, dim=64, heads=4, layers=2, frames=64):
        super().__init__()
        self.conv1 = nn.Conv1d(mels, dim, 3, padding=1)
        self.conv2 = nn.Conv1d(dim, dim, 3, stride=2, padding=1)
        t = torch.arange(frames // 2).float()[:, None]
        inv = torch.exp(-math.log(10000.0) * torch.arange(dim // 2).float() / (dim // 2 - 1))
        self.register_buffer("positions", torch.cat([torch.sin(t * inv), torch.cos(t * inv)], dim=1))
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.ln_post = nn.LayerNorm(dim)

    def forward(self, mel):
        x = F.gelu(self.conv2(F.gelu(self.conv1(mel)))).permute(0, 2, 1)
        return self.ln_post(self.blocks(x + self.positions))


def whisper(seed):
    torch.manual_seed(seed)
    model = WhisperEncoder()
    reseed(model, seed + 1)
    return model, {"mel": image(seed + 2, 1, 16, 64)}


class SpeechRNN(nn.Module):
    """A speech model in the DeepSpeech mould: feature frames through a 2-layer bidirectional LSTM or
    GRU, then per-frame log-probabilities over a small alphabet."""

    def __init__(self, cell, feats=40, hidden=48, classes=29):
        super().__init__()
        self.rnn = cell(feats, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.out = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        y, _ = self.rnn(x)
        return F.log_softmax(self.out(y), dim=-1)


def speech(cell):
    def build(seed):
        torch.manual_seed(seed)
        model = SpeechRNN(cell)
        reseed(model, seed + 1)
        return model, {"input": image(seed + 2, 1, 20, 40)}
    return build


class Detection(nn.Module):
    """Detection models take a list of images and return a list of dicts: one image in, its boxes,
    scores and labels out."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        d = self.model(list(x))[0]
        return d["boxes"], d["scores"], d["labels"]


def detection(ctor, size, **kwargs):
    def build(seed):
        torch.manual_seed(seed)
        model = Detection(ctor(weights=None, weights_backbone=None, **kwargs))
        reseed(model, seed + 1)
        return model, {"input": torch.rand(1, 3, size, size, generator=torch.Generator().manual_seed(seed + 2))}
    return build


class Raft(nn.Module):
    """RAFT returns one flow field per refinement; keep the last (2 iterations for time). Its
    correlation pyramid needs 128x128 images: at 64x64 the output is NaN."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, a, b):
        return self.model(a, b, num_flow_updates=2)[-1]


def raft_small(seed):
    from torchvision.models.optical_flow import raft_small as ctor
    torch.manual_seed(seed)
    model = Raft(ctor(weights=None))
    reseed(model, seed + 1)
    return model, {"image1": image(seed + 2, 1, 3, 128, 128), "image2": image(seed + 3, 1, 3, 128, 128)}


def models():
    import torchvision.models as tv
    import torchvision.models.detection as det
    import torchvision.models.segmentation as seg
    # name: (builder, opsets, dynamic axes per input/output name, tessel compile --dim values)
    bert_dyn = {"input_ids": {1: "seq"}, "attention_mask": {1: "seq"}, "output": {1: "seq"}}
    return {
        "resnet50": (torchvision_cnn(tv.resnet50, 64), [17], None, None),
        "mobilenet_v3_small": (torchvision_cnn(tv.mobilenet_v3_small, 96), [11, 13, 17], None, None),
        "efficientnet_b0": (torchvision_cnn(tv.efficientnet_b0, 64), [11, 13, 17], None, None),
        "convnext_tiny": (torchvision_cnn(tv.convnext_tiny, 64), [17], None, None),
        "densenet121": (torchvision_cnn(tv.densenet121, 64), [13, 17], None, None),
        "vit": (vit, [11, 13, 17], None, None),
        "deeplabv3_mobilenet_v3_large": (segmentation(seg.deeplabv3_mobilenet_v3_large, 96), [13, 17], None, None),
        "fcn_resnet50": (segmentation(seg.fcn_resnet50, 64), [17], None, None),
        "r3d_18": (r3d_18, [17], None, None),
        "transformer_encoder": (transformer_encoder, [11, 13, 17], None, None),
        "bert": (bert, [11, 13, 17], bert_dyn, {"seq": 16}),
        "whisper_encoder": (whisper, [11, 13, 17], None, None),
        "lstm_speech": (speech(nn.LSTM), [11, 13, 17], None, None),
        "gru_speech": (speech(nn.GRU), [11, 13, 17], None, None),
        "ssdlite320_mobilenet_v3_large": (detection(det.ssdlite320_mobilenet_v3_large, 96), [17], None, None),
        # Seeded class scores sit near 1/91, below the default 0.05 threshold: keep every box so that the
        # comparison sees detections, not two empty lists.
        "fasterrcnn_mobilenet_v3_large_320_fpn": (
            detection(det.fasterrcnn_mobilenet_v3_large_320_fpn, 96, box_score_thresh=0.0), [17], None, None),
        # ResNet-50 FPN one-stage detectors at 96x96 (their transform resizes to min_size otherwise).
        "retinanet_resnet50_fpn": (
            detection(det.retinanet_resnet50_fpn, 96, min_size=96, max_size=96, score_thresh=0.0), [17], None, None),
        "fcos_resnet50_fpn": (
            detection(det.fcos_resnet50_fpn, 96, min_size=96, max_size=96, score_thresh=0.0), [17], None, None),
        "raft_small": (raft_small, [17], None, None),
    }


def as_tuple(y):
    return tuple(y) if isinstance(y, (tuple, list)) else (y,)


def check_depends_on_input(name, model, inputs, outputs, seed):
    """A second input of the same kind must move every float output by a visible fraction of its size."""
    other = {}
    gen = torch.Generator().manual_seed(seed + 99)
    for k, v in inputs.items():
        other[k] = torch.randint(0, 500, v.shape, generator=gen) if k == "input_ids" else (
            v if not v.is_floating_point() else torch.randn(v.shape, generator=gen))
    with torch.no_grad():
        moved = as_tuple(model(*other.values()))
    for i, (a, b) in enumerate(zip(outputs, moved)):
        if not a.is_floating_point() or a.numel() == 0 or a.shape != b.shape:
            continue
        scale = a.abs().max().item()
        change = (a - b).abs().max().item()
        if not (scale > 0 and change > 1e-2 * scale):
            sys.exit("export_zoo.py: %s output %d barely depends on the input (max %.3g, change %.3g): re-seed "
                     "the weights that hide it" % (name, i, scale, change))


def name_roi_align_mode(path):
    """torchvision 0.14 exports RoiAlign in its opset-11 form (no coordinate_transformation_mode) at any
    opset; from opset 16 that means ONNX's default, half_pixel, half a pixel away from the aligned=False
    sampling PyTorch ran. Later torchvision releases write output_half_pixel; so does this export, so
    that the file means what PyTorch computed (Tessel reads the attribute as ONNX defines it)."""
    import onnx
    model = onnx.load(path)
    if max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")) < 16:
        return

    def fix(graph):
        for node in graph.node:
            if node.op_type == "RoiAlign" and not any(a.name == "coordinate_transformation_mode"
                                                      for a in node.attribute):
                node.attribute.append(onnx.helper.make_attribute("coordinate_transformation_mode",
                                                                 "output_half_pixel"))
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    fix(a.g)
    fix(model.graph)
    onnx.save(model, path)


def export(name, spec, out_root, seed):
    build, opsets, dynamic, dims = spec
    start = time.time()
    model, inputs = build(seed)
    model.eval()
    calibrate_batchnorm(model, inputs, seed + 5)
    with torch.no_grad():
        outputs = as_tuple(model(*inputs.values()))
    detect = name.startswith(("ssdlite", "fasterrcnn", "retinanet", "fcos"))
    if not detect:
        check_depends_on_input(name, model, inputs, outputs, seed)
    output_names = ["output"] if len(outputs) == 1 else ["boxes", "scores", "labels"] if detect else [
        "output%d" % i for i in range(len(outputs))]
    tmp = os.path.join(out_root, ".%s.tmp%d" % (name, os.getpid()))
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    for k, v in inputs.items():
        np.save(os.path.join(tmp, k + ".npy"), v.numpy())
    # The reference is the same model in float64: float32 PyTorch is itself up to 5e-5 of the output's
    # magnitude off the exact result on ResNet-50-sized models, half the tolerance. Its float32 output is
    # kept beside it (<output>.f32.npy) to show that floor.
    # RAFT builds float32 grids inside, so it cannot run in float64; it and detection only check the error.
    exact = outputs
    if not detect and name != "raft_small":
        with torch.no_grad():
            exact = as_tuple(copy.deepcopy(model).double()(
                *[v.double() if v.is_floating_point() else v for v in inputs.values()]))
    for k, v, e in zip(output_names, outputs, exact):
        np.save(os.path.join(tmp, k + ".npy"), e.numpy())
        np.save(os.path.join(tmp, k + ".f32.npy"), v.numpy())
    meta = {"inputs": list(inputs), "outputs": output_names, "dims": dims or {}, "opsets": [],
            "export_errors": {}}
    for opset in opsets:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(model, tuple(inputs.values()), os.path.join(tmp, "op%d.onnx" % opset),
                                  opset_version=opset, input_names=list(inputs), output_names=output_names,
                                  dynamic_axes=dynamic, do_constant_folding=True)
            if detect:
                name_roi_align_mode(os.path.join(tmp, "op%d.onnx" % opset))
            meta["opsets"].append(opset)
        except Exception as e:  # PyTorch's exporter raises many kinds; the message is what matters.
            meta["export_errors"][str(opset)] = str(e).strip().splitlines()[0][:200]
    with open(os.path.join(tmp, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    final = os.path.join(out_root, name)
    shutil.rmtree(final, ignore_errors=True)
    os.rename(tmp, final)
    print("exported %s (opsets %s) in %.1fs" % (name, meta["opsets"], time.time() - start), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="", help="comma-separated names (default: all)")
    ap.add_argument("--list", action="store_true", help="print each model and its opsets, then exit")
    args = ap.parse_args()
    torch.set_num_threads(1)
    zoo = models()
    if args.list:
        for name, spec in zoo.items():
            print(name, ",".join(str(o) for o in spec[1]))
        return
    names = [n for n in args.models.split(",") if n] or list(zoo)
    for n in names:
        if n not in zoo:
            sys.exit("export_zoo.py: no model '%s' (have: %s)" % (n, ", ".join(zoo)))
    os.makedirs(args.out, exist_ok=True)
    for i, n in enumerate(names):
        export(n, zoo[n], args.out, 1000 + 10 * list(zoo).index(n))


if __name__ == "__main__":
    main()
