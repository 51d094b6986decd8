#!/usr/bin/python3
"""PyTorch's autograd gradients for the static fixtures, as references for the training graphs
`passlens-cli grad --loss mse` builds (tests/core/test_autodiff_real_exports.cpp).

For each fixture it rebuilds the model exactly as generate.py does (same builders, same seeds),
runs inputs from a closed-form formula both sides reproduce, takes PassLens's mse loss
(ReduceMean((y - target)^2) over every element, core/autodiff/Loss.cpp) and writes
`<fixture>.grads.json`: for each ONNX initializer that holds a torch parameter, summary numbers of
d loss / d initializer (sum, sum of |g|, sum of squares, max |g|, the first 8 values (4 at batch 3) and, at batch 1,
the values at flat positions k·n/4). Batch 1 always; batch 3 too for models whose dynamic export
has a batch dim. `dynamic_names` maps a static initializer name to the dynamic export's name for
the same parameter where they differ (the gradients are keyed by the static names); a parameter the
dynamic export stores another way has its dynamic initializer's gradient under `dynamic_gradients`
of each run, and its static initializer is listed in `static_only`.

torch.onnx.export (eval mode) folds BatchNorm into the preceding Conv, so the ONNX weight is the
fused one: the model is fused the same way first (torch.fx), and parameters are matched to
initializers by shape and values (also transposed: folded Linear weights of MatMuls; or a leading
slice of rows: GPT's position table, folded to positions.weight[:seq] in the static export).

Inputs (flat row-major index i): float x[i] = sin(0.37·i + 1); token ids (7·i + 3) mod vocab;
target t[i] = 0.5·cos(0.29·i + 2). Run with Debian's python (python3-torch, python3-onnx).
"""
import json
import math
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate  # noqa: E402  (the fixtures' model builders and seeds)

FIXTURES = ["resnet_tiny", "mobilenetv3_small", "efficientnet_b0_tiny", "convnext_tiny", "vit_tiny",
            "transformer_encoder", "gpt_tiny", "swin_tiny", "deeplabv3_tiny"]
SAMPLES = 8
STRIDED = 4


def input_tensor(spec, dims):
    shape = [d if isinstance(d, int) else dims[d] for d in spec["dims"]]
    count = int(np.prod(shape))
    i = np.arange(count, dtype=np.float64)
    if spec["dtype"] == "float32":
        return torch.from_numpy(np.sin(0.37 * i + 1.0).astype(np.float32).reshape(shape))
    vocab = spec["range"][1]
    return torch.from_numpy(((7 * np.arange(count, dtype=np.int64) + 3) % vocab).reshape(shape))


def target_like(y):
    i = np.arange(y.numel(), dtype=np.float64)
    return torch.from_numpy((0.5 * np.cos(0.29 * i + 2.0)).astype(np.float32).reshape(tuple(y.shape)))


def fused(model):
    """BatchNorm folded into Conv as the eval-mode export does (only models that have BatchNorm)."""
    if not any(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules()):
        return model
    from torch.fx.experimental.optimization import fuse
    return fuse(model)


def short(v):
    return float("%.7g" % v)


def summary(g, strided):
    """strided: also the values at flat positions k·n/4 (k = 0..3), which the test recomputes."""
    flat = g.detach().double().reshape(-1).numpy()
    n = flat.size
    out = {"sum": short(flat.sum()), "sum_abs": short(np.abs(flat).sum()), "sum_sq": short((flat * flat).sum()),
           "max_abs": short(np.abs(flat).max()), "first": [short(v) for v in flat[:SAMPLES if strided else SAMPLES // 2]]}
    if strided:
        out["strided"] = [short(flat[k * n // STRIDED]) for k in range(STRIDED)]
    return out


def match_initializers(model_file, params):
    """torch parameter name -> (initializer name, form) by shape and values; form is "" (as is),
    "T" (transposed: folded Linear weights of MatMuls) or "rows" (the leading rows only: GPT's
    position table, which the static export folds to positions.weight[:seq]). The exporter keeps one
    initializer for parameters of equal values (LayerNorm weights of ones, zero biases); the
    gradient of that initializer is the sum of theirs."""
    inits = [(t.name, numpy_helper.to_array(t)) for t in onnx.load(model_file).graph.initializer
             if t.data_type == onnx.TensorProto.FLOAT]
    out = {}
    for name, p in params.items():
        value = p.detach().numpy()
        for form in ("", "T", "rows"):
            if form and value.ndim != 2:
                continue
            if form == "rows":
                hits = [n for n, a in inits if a.ndim == 2 and 1 < a.shape[0] < value.shape[0] and a.shape[1] == value.shape[1]
                        and np.allclose(a, value[:a.shape[0]], rtol=1e-5, atol=1e-6)]
            else:
                want = value.T if form == "T" else value
                hits = [n for n, a in inits if a.shape == want.shape and np.allclose(a, want, rtol=1e-5, atol=1e-6)]
            if hits:
                rows = dict(inits)[hits[0]].shape[0]
                out[name] = (hits[0], form, rows)
                break
    return out


def dynamic_names(static_mapping, dynamic_mapping):
    """Static initializer name -> the dynamic export's name for the same parameters, where they
    differ (the exporter numbers its `onnx::MatMul_N` weights differently with dynamic axes), and
    the parameters stored another way in the dynamic export (GPT's position table, whole there):
    those get their own gradients in each run (`dynamic_gradients`)."""
    out, other_form = {}, set()
    for pname, (init, form, _) in static_mapping.items():
        if pname not in dynamic_mapping:
            raise SystemExit("parameter %s is in the static export but not in the dynamic one" % pname)
        other, other_f, _ = dynamic_mapping[pname]
        if other_f != form:
            other_form.add(pname)
            continue
        if out.get(init, other) != other:
            raise SystemExit("initializer %s of the static export has two dynamic twins" % init)
        out[init] = other
    return {k: v for k, v in sorted(out.items()) if k != v}, other_form


def summaries(params, mapping, strided):
    """Per initializer of `mapping`: the summary of the summed gradients of its parameters."""
    total, names = {}, {}
    for name, (init, form, rows) in mapping.items():
        g = params[name].grad
        if g is None:
            g = torch.zeros_like(params[name])
        g = g.t() if form == "T" else g[:rows] if form == "rows" else g
        total[init] = total[init] + g if init in total else g.clone()
        names.setdefault(init, []).append(name)
    return {init: dict(torch_parameters=names[init], **summary(g, strided)) if strided else summary(g, strided)
            for init, g in sorted(total.items())}


def gradients(model, spec, dims, mapping, strided, dynamic_own):
    """dynamic_own: the dynamic export's mapping of the parameters it stores another way."""
    for p in model.parameters():
        p.grad = None
    args = [input_tensor(s, dims) for s in spec["inputs"]]
    y = generate.flatten_outputs(model(*args))[0]
    target = target_like(y)
    loss = ((y - target) ** 2).mean()
    loss.backward()
    params = dict(model.named_parameters())
    out = {"dims": dims, "loss": float(loss), "output_dims": list(y.shape), "gradients": summaries(params, mapping, strided)}
    if dynamic_own:
        out["dynamic_gradients"] = summaries(params, dynamic_own, strided)
    return out


def main():
    specs = {s["name"]: s for s in generate.MODELS}
    only = sys.argv[1].split(",") if len(sys.argv) > 1 else FIXTURES
    torch.set_grad_enabled(True)
    for name in only:
        spec = specs[name]
        model = fused(generate.build_model(spec))
        model.eval()
        for p in model.parameters():
            p.requires_grad_(True)
        static_file = os.path.join(HERE, name + "_static.onnx")
        mapping = match_initializers(static_file, dict(model.named_parameters()))
        dynamic_mapping = match_initializers(os.path.join(HERE, name + "_dynamic.onnx"), dict(model.named_parameters()))
        renamed, other_form = dynamic_names(mapping, dynamic_mapping)
        dynamic_own = {p: dynamic_mapping[p] for p in other_form}
        # Static initializers none of whose parameters the dynamic export stores the same way.
        static_only = sorted({init for p, (init, _, _) in mapping.items()} -
                             {init for p, (init, _, _) in mapping.items() if p not in other_form})
        runs = [gradients(model, spec, dict(spec["static"]), mapping, True, dynamic_own)]
        if "batch" in spec["dynamic"]:
            runs.append(gradients(model, spec, dict(spec["static"], batch=3), mapping, False, dynamic_own))
        unmatched = sorted(set(dict(model.named_parameters())) - set(mapping))
        doc = {"fixture": name, "generator": "tests/models/gen_grads.py",
               "loss": "mse: ReduceMean((y - target)^2) over all elements",
               "inputs": [{"name": s["name"], "dtype": s["dtype"], "dims": s["dims"],
                           "formula": "sin(0.37*i + 1)" if s["dtype"] == "float32" else "(7*i + 3) % " + str(s["range"][1])}
                          for s in spec["inputs"]],
               "output": spec["outputs"][0], "target_formula": "0.5*cos(0.29*i + 2)",
               "unmatched_parameters": unmatched, "dynamic_names": renamed, "static_only": static_only, "runs": runs}
        path = os.path.join(HERE, name + ".grads.json")
        with open(path, "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
        print("%s: %d parameters matched, %d unmatched %s, %d bytes" % (name, len(mapping), len(unmatched), unmatched[:4],
                                                                      os.path.getsize(path)))


if __name__ == "__main__":
    main()
