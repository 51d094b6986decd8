#!/usr/bin/python3
"""Writes full-size exports without their weights (tests/models/weightless/*.onnx).

Run with Debian's python (torch 1.13.1, torchvision 0.14.1, onnx 1.12):
    /usr/bin/python3 tests/models/generate_weightless.py [--out DIR]

Memory planning and recomputation depend on the graph and the tensor sizes, not on the weight
values, but they behave differently at full width than on the tiny fixtures (√n checkpointing
recomputes nothing on those). These are torchvision ResNet-18 and EfficientNet-B0, a ViT and a
GPT-style block at their real widths, exported by torch.onnx like the other fixtures; every
initializer of more than 64 elements is then turned into a graph input of the same name, type and
shape, listed in the metadata entry `passlens.weightless`. Tests refill those inputs with seeded
values (tests/core/WeightlessModels.h), so the committed files stay a few KB instead of 110 MB.
"""
import argparse
import io
import math
import os
import sys
import warnings

import onnx
import torch
import torchvision
from torchvision.models.vision_transformer import VisionTransformer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate import OPSET, TinyGpt  # noqa: E402  (the GPT-style block of the tiny fixture)

SMALL = 64  # initializers up to this many elements (shape constants, scalars) stay in the file


def gpt_block():
    return TinyGpt(vocab=512, d_model=384, max_seq=64, layers=2)


def vit_small():
    return VisionTransformer(image_size=64, patch_size=8, num_layers=4, num_heads=6, hidden_dim=384, mlp_dim=1536)


# name, builder, input name, input shape, integer input bound (None: float)
MODELS = [
    ("resnet18", lambda: torchvision.models.resnet18(), "image", (1, 3, 64, 64), None),
    ("efficientnet_b0", lambda: torchvision.models.efficientnet_b0(), "image", (1, 3, 64, 64), None),
    ("vit_s8_64", vit_small, "image", (1, 3, 64, 64), None),
    ("gpt_block_384", gpt_block, "tokens", (1, 64), 512),
]


def export(build, input_name, shape, bound):
    torch.manual_seed(0)
    model = build().eval()
    x = torch.randint(0, bound, shape) if bound else torch.rand(*shape)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), buffer, opset_version=OPSET, do_constant_folding=True,
                          input_names=[input_name], output_names=["out"])
    return onnx.load_from_string(buffer.getvalue())


def strip_weights(model):
    """Moves every initializer of more than SMALL elements to a graph input; returns their names."""
    graph = model.graph
    kept, moved = [], []
    for init in graph.initializer:
        if math.prod(init.dims) <= SMALL:
            kept.append(init)
            continue
        moved.append(init.name)
        graph.input.append(onnx.helper.make_tensor_value_info(init.name, init.data_type, list(init.dims)))
    del graph.initializer[:]
    graph.initializer.extend(kept)
    entry = model.metadata_props.add()
    entry.key, entry.value = "passlens.weightless", ",".join(moved)
    return moved


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "weightless"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, build, input_name, shape, bound in MODELS:
        model = export(build, input_name, shape, bound)
        moved = strip_weights(model)
        onnx.checker.check_model(model)
        path = os.path.join(args.out, name + ".onnx")
        onnx.save(model, path)
        print(f"{path}: {len(model.graph.node)} nodes, {len(moved)} weights stripped, {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
