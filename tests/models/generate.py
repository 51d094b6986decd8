#!/usr/bin/python3
"""Writes the committed PyTorch-exporter fixtures (tests/models/*.onnx) and manifest.json.

Run with Debian's python (torch 1.13.1, torchvision 0.14.1, onnx 1.12):
    /usr/bin/python3 tests/models/generate.py [--out DIR]

Deterministic: weights come from fixed seeds, example inputs from the same LCG that
tests/ort/ort_common.js uses, so a rerun writes byte-identical files (README.md says how that
was checked). CI has no torch: it only reads the committed files and the manifest.
"""
import argparse
import hashlib
import io
import json
import math
import os
import sys
import warnings
from collections import Counter, OrderedDict

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torchvision.models.convnext import CNBlockConfig, ConvNeXt
from torchvision.models.detection import FasterRCNN
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor, TwoMLPHead
from torchvision.models.detection.rpn import AnchorGenerator
from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf
from torchvision.models.mobilenetv3 import MobileNetV3, _mobilenet_v3_conf
from torchvision.models.resnet import BasicBlock, ResNet
from torchvision.models.segmentation.deeplabv3 import ASPP, DeepLabV3
from torchvision.models.swin_transformer import SwinTransformer
from torchvision.models._utils import IntermediateLayerGetter
from torchvision.models.vision_transformer import VisionTransformer
from torchvision.ops import MultiScaleRoIAlign

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import handmade  # noqa: E402  (models built with onnx.helper: new ops, float8/int4)
import rewrite_opset  # noqa: E402

OPSET = 17
INPUT_SEED = 1  # the seed tests/ort/ort_common.js uses for the bindings' example inputs


# ---------------------------------------------------------------- example inputs (shared LCG)
def lcg_stream(seed):
    """Numerical Recipes LCG; ort_common.js draws the same numbers (uint32 arithmetic)."""
    state = seed & 0xFFFFFFFF
    while True:
        state = (state * 1664525 + 1013904223) & 0xFFFFFFFF
        yield state >> 8  # 24 random bits


def example_inputs(inputs, dims, seed=INPUT_SEED):
    """Float inputs uniform in [-1, 1) on a 2^-23 grid (exact in float32), ints in [lo, hi)."""
    rng = lcg_stream(seed)
    tensors = []
    for spec in inputs:
        shape = [d if isinstance(d, int) else dims[d] for d in spec["dims"]]
        count = int(np.prod(shape)) if shape else 1
        bits = np.fromiter((next(rng) for _ in range(count)), dtype=np.int64, count=count)
        if spec["dtype"] == "float32":
            values = (bits.astype(np.float64) / 16777216.0 * 2.0 - 1.0).astype(np.float32)
        elif spec["dtype"] == "int64":
            lo, hi = spec["range"]
            values = lo + bits % (hi - lo)
        else:
            raise ValueError("no example inputs for dtype " + spec["dtype"])
        tensors.append(torch.from_numpy(values.reshape(shape)))
    return tensors


# ---------------------------------------------------------------- tiny models
class TinyResNet(ResNet):
    """torchvision's ResNet with BasicBlock at widths 8/16/24/32, one block per stage
    (ResNet.__init__ hard-codes 64..512 channels, so the layers are made here)."""

    def __init__(self, widths=(8, 16, 24, 32), num_classes=10):
        nn.Module.__init__(self)
        self._norm_layer = nn.BatchNorm2d
        self.inplanes, self.dilation, self.groups, self.base_width = widths[0], 1, 1, 64
        self.conv1 = nn.Conv2d(3, widths[0], kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(BasicBlock, widths[0], 1)
        self.layer2 = self._make_layer(BasicBlock, widths[1], 1, stride=2)
        self.layer3 = self._make_layer(BasicBlock, widths[2], 1, stride=2)
        self.layer4 = self._make_layer(BasicBlock, widths[3], 1, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(widths[3], num_classes)


class TinyDeepLab(nn.Module):
    """DeepLabV3: the TinyResNet trunk to layer3 (stride 16, 24 channels), an ASPP head at 16 channels,
    bilinear upsampling back to the input size (torchvision's DeepLabHead is 256 wide)."""

    def __init__(self, num_classes=5):
        super().__init__()
        backbone = IntermediateLayerGetter(TinyResNet(), return_layers={"layer3": "out"})
        head = nn.Sequential(ASPP(24, [2, 4, 6], out_channels=16),
                             nn.Conv2d(16, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                             nn.Conv2d(16, num_classes, 1))
        self.net = DeepLabV3(backbone, head, None)

    def forward(self, image):
        return self.net(image)["out"]


class TinyDetector(nn.Module):
    """torchvision FasterRCNN on a two-conv backbone (out_channels 8); takes one 3xHxW image
    and returns boxes, labels, scores of that image."""

    def __init__(self):
        super().__init__()
        backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.Conv2d(8, 8, 3, 2, 1), nn.ReLU())
        backbone.out_channels = 8
        self.net = FasterRCNN(
            backbone, num_classes=None,
            rpn_anchor_generator=AnchorGenerator(sizes=((16, 32),), aspect_ratios=((0.5, 1.0, 2.0),)),
            box_roi_pool=MultiScaleRoIAlign(["0"], 7, 2),
            box_head=TwoMLPHead(8 * 7 * 7, 32), box_predictor=FastRCNNPredictor(32, 3),
            min_size=64, max_size=64, rpn_pre_nms_top_n_test=50, rpn_post_nms_top_n_test=20,
            box_detections_per_img=10)
        # Random heads score every box about alike, so which boxes win NMS would hang on the last
        # bit of float rounding; sharper logits make torch and ONNX Runtime pick the same boxes.
        with torch.no_grad():
            self.net.rpn.head.cls_logits.weight.mul_(20.0)
            self.net.roi_heads.box_predictor.cls_score.weight.mul_(20.0)

    def forward(self, image):
        result = self.net([image])[0]
        return result["boxes"], result["labels"], result["scores"]


class TokenEncoder(nn.Module):
    """nn.TransformerEncoder (d_model 32, 2 heads, 2 layers, batch_first, GELU) on token ids."""

    def __init__(self, vocab=100, d_model=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, 2, 64, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, 4)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)))


def erf_gelu(x):
    # Written out the way GPT code often does: exports as Mul(x, 0.5) first, unlike F.gelu.
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


class GptBlock(nn.Module):
    def __init__(self, d_model, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv, self.proj = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model)
        self.fc, self.out = nn.Linear(d_model, 4 * d_model), nn.Linear(4 * d_model, d_model)

    def attention(self, x):
        batch, seq, width = x.size()
        q, k, v = self.qkv(x).split(width, dim=2)
        q, k, v = (t.view(batch, seq, self.heads, width // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(width // self.heads))
        causal = torch.tril(torch.ones(seq, seq, dtype=torch.bool, device=x.device))  # from seq at run time
        scores = scores.masked_fill(~causal, float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).contiguous().view(batch, seq, width))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.out(erf_gelu(self.fc(self.ln2(x))))


class RmsNorm(nn.Module):
    """LLaMA-style RMSNorm: exports as Pow, ReduceMean (axes attribute at opset 17), Add, Sqrt..."""

    def __init__(self, width, eps=1e-6):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.rand(width) + 0.5), eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class TinyGpt(nn.Module):
    def __init__(self, vocab=64, d_model=32, max_seq=16, layers=2):
        super().__init__()
        self.tokens, self.positions = nn.Embedding(vocab, d_model), nn.Embedding(max_seq, d_model)
        self.blocks = nn.ModuleList(GptBlock(d_model, 2) for _ in range(layers))
        self.ln_f, self.lm_head = RmsNorm(d_model), nn.Linear(d_model, vocab, bias=False)

    def forward(self, tokens):
        positions = torch.arange(tokens.size(1), dtype=torch.long, device=tokens.device)
        x = self.tokens(tokens) + self.positions(positions)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


class TinyLstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(16, 24, num_layers=2, batch_first=True)
        self.head = nn.Linear(24, 4)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y)


class ScriptedRnn(nn.Module):
    """A recurrence written as a Python loop, exported through torch.jit.script: a Loop over the
    run-time sequence length whose body holds an If on the data and ReduceMean with axes."""

    def __init__(self):
        super().__init__()
        self.inp, self.rec, self.out = nn.Linear(8, 16), nn.Linear(16, 16, bias=False), nn.Linear(16, 4)

    def forward(self, x):
        h = torch.zeros(x.size(0), 16, dtype=x.dtype)
        for t in range(x.size(1)):
            h = torch.tanh(self.inp(x[:, t]) + self.rec(h))
            if bool(h.abs().mean(dim=1).max() > 0.5):
                h = h * 0.9
        return self.out(h)


def randomize_norms(model, generator):
    """Random BatchNorm statistics and affine parameters, so folded norms are not identities."""
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            n = module.num_features
            module.running_mean.copy_(torch.randn(n, generator=generator) * 0.1)
            module.running_var.copy_(torch.rand(n, generator=generator) + 0.5)
            module.weight.data.copy_(torch.rand(n, generator=generator) + 0.5)
            module.bias.data.copy_(torch.randn(n, generator=generator) * 0.1)


def randomize_small_linears(model, generator):
    """Heads that torchvision starts at zero (ViT) or near it (MobileNetV3, std 0.01) would make
    the outputs constant or tiny, and a numerical check on them could not fail."""
    for module in model.modules():
        if isinstance(module, nn.Linear) and module.weight.abs().max() < 0.05:
            module.weight.data.copy_(torch.randn(module.weight.shape, generator=generator) / math.sqrt(module.in_features))
            if module.bias is not None:
                module.bias.data.copy_(torch.randn(module.bias.shape, generator=generator) * 0.1)


def image_spec(name="image"):
    return [{"name": name, "dtype": "float32", "dims": ["batch", 3, "height", "width"]}]


def tokens_spec(vocab):
    return [{"name": "tokens", "dtype": "int64", "dims": ["batch", "seq"], "range": [0, vocab]}]


def classifier(name, source, build, static, dynamic_symbols, bindings, outputs=("logits",), inputs=None):
    return dict(name=name, source=source, build=build, inputs=inputs or image_spec(), outputs=list(outputs),
                static=static, dynamic=dynamic_symbols, bindings=bindings)


def mobilenet():
    setting, _ = _mobilenet_v3_conf("mobilenet_v3_small", width_mult=0.25)
    return MobileNetV3(setting, last_channel=64, num_classes=10)  # 256 would be most of the file


def efficientnet():
    setting, last = _efficientnet_conf("efficientnet_b0", width_mult=0.2, depth_mult=0.25)
    return EfficientNet(setting, 0.2, last_channel=last, num_classes=10)


def convnext():
    blocks = [CNBlockConfig(8, 16, 1), CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)]
    return ConvNeXt(blocks, stochastic_depth_prob=0.0, layer_scale=0.5, num_classes=10)


def swin():
    return SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[1, 2], window_size=[4, 4],
                           mlp_ratio=2.0, stochastic_depth_prob=0.0, num_classes=10)


def vit():
    return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
                             num_classes=10)


CNN_BINDINGS = [{"batch": 1, "height": 64, "width": 64}, {"batch": 3, "height": 96, "width": 80}]
TEXT_BINDINGS = [{"batch": 1, "seq": 8}, {"batch": 3, "seq": 5}, {"batch": 2, "seq": 9}]

MODELS = [
    classifier("resnet_tiny", "torchvision ResNet(BasicBlock) subclass, widths 8/16/24/32, one block per stage",
               TinyResNet, {"batch": 1, "height": 64, "width": 64}, ["batch", "height", "width"], CNN_BINDINGS),
    classifier("mobilenetv3_small", "torchvision MobileNetV3 small, _mobilenet_v3_conf(width_mult=0.25), last_channel 64",
               mobilenet, {"batch": 1, "height": 64, "width": 64}, ["batch", "height", "width"], CNN_BINDINGS),
    classifier("efficientnet_b0_tiny", "torchvision EfficientNet, _efficientnet_conf('efficientnet_b0', width 0.2, depth 0.25)",
               efficientnet, {"batch": 1, "height": 64, "width": 64}, ["batch", "height", "width"], CNN_BINDINGS),
    classifier("convnext_tiny", "torchvision ConvNeXt, CNBlockConfig 8/16/32, one block each, layer_scale 0.5",
               convnext, {"batch": 1, "height": 64, "width": 64}, ["batch", "height", "width"], CNN_BINDINGS),
    classifier("vit_tiny", "torchvision VisionTransformer(image 32, patch 8, 2 layers, 2 heads, hidden 32, mlp 64)",
               vit, {"batch": 1, "height": 32, "width": 32}, ["batch"],
               [{"batch": 1, "height": 32, "width": 32}, {"batch": 3, "height": 32, "width": 32}]),
    classifier("swin_tiny", "torchvision SwinTransformer(patch 4, embed 16, depths [2,2], heads [1,2], window 4, mlp ratio 2) "
               "at 40x40: 10x10 patches pad to 12 for the windows, 5x5 pads to 8",
               swin, {"batch": 1, "height": 40, "width": 40}, ["batch", "height", "width"],
               [{"batch": 1, "height": 40, "width": 40}, {"batch": 2, "height": 52, "width": 44}]),
    classifier("deeplabv3_tiny", "torchvision DeepLabV3 + ASPP(24, rates 2/4/6, 16 channels) on the tiny ResNet "
               "trunk, bilinear upsampling to the input size", TinyDeepLab,
               {"batch": 1, "height": 64, "width": 64}, ["batch", "height", "width"], CNN_BINDINGS,
               outputs=("segmentation",)),
    dict(name="fasterrcnn_tiny", source="torchvision FasterRCNN, two-conv backbone (8 channels), TwoMLPHead(392, 32), "
         "3 classes, min_size=max_size=64, eval mode on one 3xHxW image",
         build=TinyDetector, inputs=[{"name": "image", "dtype": "float32", "dims": [3, "height", "width"]}],
         outputs=["boxes", "labels", "scores"], static={"height": 64, "width": 64}, dynamic=["height", "width"],
         bindings=[{"height": 64, "width": 64}, {"height": 96, "width": 80}],
         # torchvision's roi_align(aligned=False) and ONNX Runtime's RoiAlign-16
         # (coordinate_transformation_mode=output_half_pixel, what torchvision exports) disagree by
         # up to ~1.8 on random features, so the boxes differ from eager torch: dims only.
         torch_check="dims"),
    dict(name="transformer_encoder", source="nn.TransformerEncoder(d_model 32, 2 heads, ff 64, 2 layers, "
         "batch_first, GELU) over nn.Embedding(100, 32), Linear(32, 4)",
         build=TokenEncoder, inputs=tokens_spec(100), outputs=["hidden"], static={"batch": 1, "seq": 8},
         dynamic=["batch", "seq"], bindings=TEXT_BINDINGS),
    dict(name="gpt_tiny", source="GPT-style decoder: 2 blocks, d_model 32, 2 heads, causal mask from the run-time "
         "sequence length (tril of ones), written-out Erf GELU, LayerNorm, final RMSNorm, vocab 64, 16 positions",
         build=TinyGpt, inputs=tokens_spec(64), outputs=["logits"], static={"batch": 1, "seq": 8},
         dynamic=["batch", "seq"], bindings=TEXT_BINDINGS),
    dict(name="lstm_tiny", source="nn.LSTM(16, 24, num_layers=2, batch_first) + Linear(24, 4)",
         build=TinyLstm, inputs=[{"name": "x", "dtype": "float32", "dims": ["batch", "seq", 16]}],
         outputs=["y"], static={"batch": 1, "seq": 8}, dynamic=["batch", "seq"], bindings=TEXT_BINDINGS),
    dict(name="scripted_rnn_loop", source="torch.jit.script of a Python-loop recurrence (Linear 8->16, tanh, "
         "data-dependent If scaling h, Linear 16->4): Loop over the sequence, If and ReduceMean in its body",
         build=ScriptedRnn, script=True, inputs=[{"name": "x", "dtype": "float32", "dims": ["batch", "seq", 8]}],
         outputs=["y"], static={"batch": 1, "seq": 8}, dynamic=["batch", "seq"], bindings=TEXT_BINDINGS),
]

# Opset-17 exports rewritten the way newer exporters write them (rewrite_opset.py).
REWRITES = {"vit_tiny_static.onnx": [18, 20, 21, 23], "transformer_encoder_static.onnx": [18, 20, 21, 23],
            "gpt_tiny_static.onnx": [18, 20, 21, 23], "resnet_tiny_static.onnx": [18, 23],
            "swin_tiny_static.onnx": [23], "fasterrcnn_tiny_static.onnx": [18],
            "scripted_rnn_loop_static.onnx": [18, 23]}
# The same at opset 20 with GELU left written out (models that spell GELU by hand, or exporters
# that decompose it): fuse-gelu's input on a real export.
KEEP_GELU_REWRITES = {"vit_tiny_static.onnx": [20]}


# ---------------------------------------------------------------- export and describe
def build_model(spec):
    torch.manual_seed(0)
    model = spec["build"]()
    randomize_norms(model, torch.Generator().manual_seed(1))
    randomize_small_linears(model, torch.Generator().manual_seed(2))
    return model.eval()


def flatten_outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def dims_of(spec, symbolic):
    """Input dims: symbol names where the export is dynamic, numbers where static."""
    out = []
    for d in spec["dims"]:
        out.append(d if isinstance(d, int) or d in symbolic else None)
    return out


def export(spec, model, symbolic):
    static = spec["static"]
    args = tuple(example_inputs(spec["inputs"], static))
    dynamic_axes = {}
    for inp in spec["inputs"]:
        axes = {i: d for i, d in enumerate(inp["dims"]) if isinstance(d, str) and d in symbolic}
        if axes:
            dynamic_axes[inp["name"]] = axes
    if symbolic:
        for name in spec["outputs"]:
            dynamic_axes[name] = output_axes(spec["name"], name, symbolic)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(torch.jit.script(model) if spec.get("script") else model, args, buffer, opset_version=OPSET, do_constant_folding=True,
                          input_names=[i["name"] for i in spec["inputs"]], output_names=spec["outputs"],
                          dynamic_axes=dynamic_axes or None)
    return buffer.getvalue()


def output_axes(model_name, output, symbolic):
    if model_name == "fasterrcnn_tiny":
        return {0: "detections"}
    axes = {0: "batch"} if "batch" in symbolic else {}
    if "seq" in symbolic and model_name != "scripted_rnn_loop":
        axes[1] = "seq"
    if model_name == "deeplabv3_tiny" and "height" in symbolic:
        axes.update({2: "height", 3: "width"})
    return axes


def reference_outputs(model, spec, dims, names):
    """What torch computes on the shared example inputs: dims, sum and sum of |x| per output."""
    with torch.no_grad():
        result = flatten_outputs(model(*example_inputs(spec["inputs"], dims)))
    out = OrderedDict()
    for name, tensor in zip(names, result):
        values = tensor.detach().double().numpy()
        if not np.abs(values).sum() > 0:
            raise RuntimeError(f"{spec['name']}: output '{name}' is all zeros at {dims}: a check on it could not fail")
        out[name] = {"dims": list(values.shape), "sum": float(values.sum()), "abs_sum": float(np.abs(values).sum())}
    return out


def elem_name(elem_type):
    return {1: "float32", 6: "int32", 7: "int64", 9: "bool", 10: "float16"}.get(elem_type, str(elem_type))


def value_dims(value):
    dims = []
    for d in value.type.tensor_type.shape.dim:
        dims.append(d.dim_param if d.HasField("dim_param") else (d.dim_value if d.HasField("dim_value") else None))
    return dims


def count_subgraph_nodes(graph):
    total = 0
    for node in graph.node:
        for attr in node.attribute:
            for sub in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                total += len(sub.node) + count_subgraph_nodes(sub)
    return total


def describe(data, file_name, extra):
    model = onnx.load_from_string(data)
    graph = model.graph
    initializers = {i.name for i in graph.initializer}
    entry = OrderedDict(file=file_name)
    entry.update(extra)
    entry["ir_version"] = model.ir_version
    entry["opset"] = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    entry["inputs"] = [OrderedDict(name=v.name, dtype=elem_name(v.type.tensor_type.elem_type), dims=value_dims(v))
                       for v in graph.input if v.name not in initializers]
    entry["outputs"] = [OrderedDict(name=v.name, dtype=elem_name(v.type.tensor_type.elem_type), dims=value_dims(v))
                        for v in graph.output]
    entry["node_count"] = len(graph.node)
    entry["subgraph_node_count"] = count_subgraph_nodes(graph)
    entry["op_histogram"] = OrderedDict(sorted(Counter(n.op_type for n in graph.node).items()))
    entry["size"] = len(data)
    entry["sha256"] = hashlib.sha256(data).hexdigest()
    return entry


def add_ranges(entry, spec_inputs):
    ranges = {i["name"]: i["range"] for i in spec_inputs if "range" in i}
    for inp in entry["inputs"]:
        if inp["name"] in ranges:
            inp["range"] = ranges[inp["name"]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--only", help="comma-separated model names (for debugging: the manifest lists only these)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    only = set(args.only.split(",")) if args.only else None
    entries, files = [], {}

    def write(name, data, entry):
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(data)
        files[name] = data
        entries.append(entry)
        print(f"{name}: {entry['node_count']} nodes, {len(data)} bytes", flush=True)

    for spec in MODELS:
        if only and spec["name"] not in only:
            continue
        model = build_model(spec)
        for variant in ("static", "dynamic"):
            symbolic = spec["dynamic"] if variant == "dynamic" else []
            data = export(spec, model, symbolic)
            file_name = f"{spec['name']}_{variant}.onnx"
            bindings = spec["bindings"] if symbolic else [spec["static"]]
            symbols = OrderedDict((s, sorted({b[s] for b in bindings})) for s in symbolic)
            extra = OrderedDict(model=spec["name"], source=spec["source"], generator="torch.onnx.export (torch "
                                + torch.__version__.split("a")[0] + ", torchvision " + torchvision.__version__.split("a")[0]
                                + "), do_constant_folding=True", shapes=variant, symbols=symbols)
            extra["torch_check"] = spec.get("torch_check", "sums")
            entry = describe(data, file_name, extra)
            add_ranges(entry, spec["inputs"])
            names = [o["name"] for o in entry["outputs"]]
            entry["bindings"] = [OrderedDict(dims={s: b[s] for s in symbolic}, seed=INPUT_SEED,
                                             torch_outputs=reference_outputs(model, spec, b, names)) for b in bindings]
            write(file_name, data, entry)

    for original, opsets in REWRITES.items():
        if original not in files:
            continue
        base = next(e for e in entries if e["file"] == original)
        for opset in opsets:
            data = rewrite_opset.rewrite_bytes(files[original], opset)
            file_name = original.replace(".onnx", f"_opset{opset}.onnx")
            extra = OrderedDict(model=base["model"], source=base["source"],
                                generator=f"rewrite_opset.py {opset} from {original}", shapes=base["shapes"],
                                symbols=base["symbols"], torch_check=base["torch_check"], rewrite_of=original)
            entry = describe(data, file_name, extra)
            entry["inputs"] = base["inputs"]
            entry["bindings"] = base["bindings"]
            write(file_name, data, entry)
        for opset in KEEP_GELU_REWRITES.get(original, []):
            data = rewrite_opset.rewrite_bytes(files[original], opset, keep_gelu=True)
            file_name = original.replace(".onnx", f"_opset{opset}_handgelu.onnx")
            extra = OrderedDict(model=base["model"], source=base["source"],
                                generator=f"rewrite_opset.py {opset} --keep-gelu from {original}", shapes=base["shapes"],
                                symbols=base["symbols"], torch_check=base["torch_check"], rewrite_of=original)
            entry = describe(data, file_name, extra)
            entry["inputs"] = base["inputs"]
            entry["bindings"] = base["bindings"]
            write(file_name, data, entry)

    if not only:
        for name, data, extra in handmade.build_all():
            entry = describe(data, name, extra)
            entry["bindings"] = [OrderedDict(dims={}, seed=INPUT_SEED)]
            write(name, data, entry)
    manifest = OrderedDict(
        about="Fixtures written by tests/models/generate.py; see tests/models/README.md. node_count and "
              "op_histogram are over the top-level graph; subgraph_node_count counts nodes in If/Loop/Scan "
              "bodies. Each binding's example inputs come from the LCG in tests/ort/ort_common.js "
              "seeded with 'seed'; torch_outputs are what torch computed on them (torch_check says whether "
              "ONNX Runtime must match their sums or only their dims).",
        fixtures=sorted(entries, key=lambda e: e["file"]))
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    total = sum(len(d) for d in files.values())
    print(f"{len(files)} files, {total} bytes")


if __name__ == "__main__":
    main()
