#!/usr/bin/python3
"""Rewrites an opset-17 export the way newer exporters write it, at opset 18..23.

    /usr/bin/python3 tests/models/rewrite_opset.py IN.onnx OUT.onnx TARGET_OPSET [--keep-gelu]

Protobuf manipulation only (python3-onnx 1.12, whose checker stops at opset 17, so the result is
not checked here; tests/models' CTest compares it with the original in ONNX Runtime):
  >= 18  Reduce* except ReduceSum (input since 13) take `axes` as a constant int64 input instead
         of an attribute; Split without a `split` input, or with a constant one of n equal parts,
         gets `num_outputs` (and loses the input).
  >= 20  the Erf GELU x*0.5*(1+Erf(x/sqrt2)), in either order torch emits, becomes one Gelu
         (--keep-gelu leaves it written out, as in models that spell GELU by hand: the input a
         fusion pass should turn into Gelu).
  IR version 8 for 18, 9 for 19/20, 10 for 21/22, 11 for 23; the default-domain opset import is
  bumped. CHANGES below lists every op the ONNX Changelog shows changing in 18..23 (ops new in
  those opsets cannot be in an opset-17 model) as handled here, compatible (new types, or new
  attributes/inputs whose defaults keep the old meaning) or not handled; a model using a
  not-handled one at or below TARGET is refused, naming it.
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

IR_VERSION = {18: 8, 19: 9, 20: 9, 21: 10, 22: 10, 23: 11}

REDUCE_AXES_TO_INPUT = {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                        "ReduceMin", "ReduceProd", "ReduceSumSquare"}

# Ops whose default-domain schema changed in opsets 18..23 (Changelog.md, "Version 18 ..." to
# "Version 23 ..."), keyed by the opset of the change. "handled": this script rewrites the node;
# "compatible": only new types, or new attributes/optional inputs whose defaults keep the old
# meaning; anything else is a semantic change this script does not implement.
COMPATIBLE, HANDLED = "compatible", "handled"
CHANGES = {
    18: {**{op: HANDLED for op in REDUCE_AXES_TO_INPUT}, "Split": HANDLED,
         "Pad": COMPATIBLE,              # optional `axes` input
         "Resize": COMPATIBLE,           # antialias=0, axes, keep_aspect_ratio_policy=stretch
         "ScatterElements": COMPATIBLE, "ScatterND": COMPATIBLE,  # reduction max/min added
         "LpPool": COMPATIBLE,           # ceil_mode=0, dilations
         "OptionalGetElement": COMPATIBLE, "OptionalHasElement": COMPATIBLE,  # accept tensors too
         },
    19: {"AveragePool": COMPATIBLE,      # dilations
         "Cast": COMPATIBLE, "CastLike": COMPATIBLE,  # float8 types; saturate only applies to them
         "Constant": COMPATIBLE, "Identity": COMPATIBLE, "If": COMPATIBLE, "Loop": COMPATIBLE,
         "Scan": COMPATIBLE, "Reshape": COMPATIBLE, "Shape": COMPATIBLE, "Size": COMPATIBLE,
         "Equal": COMPATIBLE,            # strings
         "Pad": COMPATIBLE,              # mode "wrap"
         "Resize": COMPATIBLE,           # mode "half_pixel_symmetric"
         "DequantizeLinear": COMPATIBLE, "QuantizeLinear": COMPATIBLE,  # float8
         },
    20: {"ConstantOfShape": COMPATIBLE, "IsInf": COMPATIBLE, "IsNaN": COMPATIBLE,
         "ReduceMax": COMPATIBLE, "ReduceMin": COMPATIBLE,  # bool
         "DFT": "dft_length and axis become inputs",
         "GridSample": "modes renamed (bilinear -> linear, bicubic -> cubic), N-d",
         },
    21: {**{op: COMPATIBLE for op in ("Cast", "CastLike", "Constant", "ConstantOfShape", "Flatten", "Identity",
                                      "If", "Loop", "Pad", "Reshape", "Scan", "Shape", "Size", "Squeeze",
                                      "Transpose", "Unsqueeze", "QLinearMatMul")},
         "DequantizeLinear": COMPATIBLE, "QuantizeLinear": COMPATIBLE,  # block_size=0, int4
         "GroupNormalization": "scale and bias become per channel instead of per group",
         },
    22: {op: COMPATIBLE for op in (  # bfloat16 added to the type constraints
        "Acos Acosh Asin Asinh Atan Atanh AveragePool Bernoulli Conv ConvTranspose Cos Cosh DeformConv Det "
        "Dropout Elu EyeLike GRU GlobalAveragePool GlobalLpPool GlobalMaxPool GridSample HardSigmoid HardSwish "
        "InstanceNormalization LSTM LpNormalization LpPool MaxPool MaxRoiPool MaxUnpool Mish Multinomial "
        "NegativeLogLikelihoodLoss RNN RandomNormal RandomNormalLike RandomUniform RandomUniformLike RoiAlign "
        "Round Selu Sin Sinh Softplus Softsign Tan ThresholdedRelu").split()},
    23: {op: COMPATIBLE for op in (  # float4e2m1 (and 4-bit) types
        "Cast CastLike Constant ConstantOfShape DequantizeLinear Flatten Identity If Loop Pad QuantizeLinear "
        "Reshape Scan Shape Size Squeeze Transpose Unsqueeze").split()},
}


class RewriteError(Exception):
    pass


def all_graphs(graph):
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            subs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
            for sub in subs:
                yield from all_graphs(sub)


def each_graph(graph, fn):
    """fn(graph), then the same for every subgraph of the nodes fn left (fn replaces nodes, so
    subgraphs are looked up afterwards, never from a stale list)."""
    fn(graph)
    for node in graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                each_graph(attr.g, fn)
            for sub in attr.graphs:
                each_graph(sub, fn)


def check_ops(model, target):
    ops = {n.op_type for g in all_graphs(model.graph) for n in g.node if n.domain in ("", "ai.onnx")}
    refused = []
    for opset in range(18, target + 1):
        for op in sorted(ops & set(CHANGES[opset])):
            if CHANGES[opset][op] not in (COMPATIBLE, HANDLED):
                refused.append(f"{op}-{opset} ({CHANGES[opset][op]})")
    if refused:
        raise RewriteError("semantics changed and not handled: " + ", ".join(refused))
    if opset_of(model) != 17:
        raise RewriteError(f"expects an opset-17 model, this one imports opset {opset_of(model)}")
    if len(model.functions):
        raise RewriteError("model-local functions are not rewritten")


def opset_of(model):
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


class Names:
    """Fresh value and node names, never clashing with any name in the model."""

    def __init__(self, model):
        self.used = set()
        for g in all_graphs(model.graph):
            self.used.update(n.name for n in g.node)
            for n in g.node:
                self.used.update(n.input)
                self.used.update(n.output)
            self.used.update(i.name for i in g.initializer)
            self.used.update(v.name for v in g.input)

    def fresh(self, base):
        name, i = base, 1
        while name in self.used:
            name, i = f"{base}_{i}", i + 1
        self.used.add(name)
        return name


def constant_node(names, base, array):
    out = names.fresh(base)
    node = helper.make_node("Constant", [], [out], name=names.fresh(base + "_Constant"),
                            value=numpy_helper.from_array(array, out))
    return node, out


def rewrite_reduce_and_split(graph, names):
    """Opset 18: Reduce* axes attribute -> constant input; Split gets num_outputs."""
    constants = constants_of(graph)
    new_nodes, dropped = [], set()
    for node in graph.node:
        if node.domain in ("", "ai.onnx") and node.op_type in REDUCE_AXES_TO_INPUT:
            attrs = {a.name: a for a in node.attribute}
            if "noop_with_empty_axes" in attrs:
                raise RewriteError(f"{node.op_type} '{node.name}' already has noop_with_empty_axes")
            if "axes" in attrs:
                axes = list(attrs["axes"].ints)
                keep = [copy_of(a, onnx.AttributeProto) for a in node.attribute if a.name != "axes"]
                del node.attribute[:]
                node.attribute.extend(keep)
                # An empty axes attribute meant "all axes"; with noop_with_empty_axes=0 (default)
                # an absent axes input means the same, so only non-empty axes become an input.
                if axes:
                    const, name = constant_node(names, (node.name or node.op_type) + "_axes",
                                                np.array(axes, dtype=np.int64))
                    new_nodes.append(const)
                    node.input.append(name)
        elif node.domain in ("", "ai.onnx") and node.op_type == "Split":
            split = constants.get(node.input[1]) if len(node.input) > 1 and node.input[1] else None
            # Split-13 requires sum(split) == the axis' size, so n equal parts are exactly what
            # num_outputs=n means; newer exporters write even chunks that way.
            even = split is not None and split.size == len(node.output) and len(set(split.tolist())) == 1
            if len(node.input) < 2 or node.input[1] == "" or even:
                dropped.update(node.input[1:])
                del node.input[1:]
                node.attribute.append(helper.make_attribute("num_outputs", len(node.output)))
        new_nodes.append(node)
    replace_nodes(graph, new_nodes)
    remove_unread_constants(graph, dropped)


def copy_of(message, kind):
    out = kind()
    out.CopyFrom(message)
    return out


def replace_nodes(graph, nodes):
    copies = [copy_of(node, onnx.NodeProto) for node in nodes]
    del graph.node[:]
    graph.node.extend(copies)


def scalar_value(graph, name, constants):
    """The value of a one-element constant (initializer or Constant node output), else None."""
    array = constants.get(name)
    if array is None or array.size != 1:
        return None
    return float(array.reshape(-1)[0])


def constants_of(graph):
    values = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            for attr in node.attribute:
                if attr.name == "value":
                    values[node.output[0]] = numpy_helper.to_array(attr.t)
    return values


def rewrite_gelu(graph, names):
    """Opset 20: Div(x, sqrt2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5), or Mul(x, 0.5) then
    Mul(that, 1+erf), becomes Gelu(x). Intermediate values must have no other reader."""
    constants = constants_of(graph)
    # One list of wrappers: the protobuf runtime may hand out a new Python object per access,
    # and the matching below compares nodes by identity.
    graph_nodes = list(graph.node)
    producer = {o: n for n in graph_nodes for o in n.output}
    readers = {}
    for n in graph_nodes:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    outputs = {o.name for o in graph.output}

    def only_reader(value):
        r = readers.get(value, [])
        return r[0] if len(r) == 1 and value not in outputs else None

    def is_const(name, expected):
        v = scalar_value(graph, name, constants)
        return v is not None and abs(v - expected) <= 1e-6 * max(1.0, abs(expected))

    def other(node, value):
        a, b = node.input
        return b if a == value else a

    removed, replacements, dropped = set(), {}, set()
    for erf in graph_nodes:
        if erf.op_type != "Erf" or erf.domain not in ("", "ai.onnx"):
            continue
        scale = producer.get(erf.input[0])
        if scale is None or id(scale) in removed or only_reader(scale.output[0]) is not erf:
            continue
        if scale.op_type == "Div" and is_const(scale.input[1], math_sqrt2()):
            x = scale.input[0]
        elif scale.op_type == "Mul" and (is_const(scale.input[1], 1 / math_sqrt2())
                                         or is_const(scale.input[0], 1 / math_sqrt2())):
            x = other(scale, scale.input[1] if is_const(scale.input[1], 1 / math_sqrt2()) else scale.input[0])
        else:
            continue
        add = only_reader(erf.output[0])
        if add is None or add.op_type != "Add" or not is_const(other(add, erf.output[0]), 1.0):
            continue
        mul = only_reader(add.output[0])
        if mul is None or mul.op_type != "Mul":
            continue
        partner = other(mul, add.output[0])
        chain = [scale, erf, add, mul]
        if partner == x:  # torch's F.gelu: Mul(x, 1+erf) then Mul(., 0.5)
            half = only_reader(mul.output[0])
            if half is None or half.op_type != "Mul" or not is_const(other(half, mul.output[0]), 0.5):
                continue
            chain.append(half)
        else:             # written out: Mul(x, 0.5) then Mul(., 1+erf)
            half = producer.get(partner)
            if (half is None or half.op_type != "Mul" or only_reader(partner) is not mul
                    or x not in half.input or not is_const(other(half, x), 0.5)):
                continue
            chain.insert(0, half)
        last = chain[-1]
        gelu = helper.make_node("Gelu", [x], [last.output[0]], name=names.fresh((erf.name or "Erf") + "_Gelu"))
        for n in chain:
            removed.add(id(n))
            dropped.update(n.input)
        replacements[id(last)] = gelu
    nodes = []
    for n in graph_nodes:
        if id(n) in replacements:
            nodes.append(replacements[id(n)])
        elif id(n) not in removed:
            nodes.append(n)
    replace_nodes(graph, nodes)
    remove_unread_constants(graph, dropped)


def math_sqrt2():
    return 1.4142135623730951


def remove_unread_constants(graph, dropped):
    """Constant nodes and initializers that only the inputs this rewrite dropped read (newer
    exporters do not write them); anything still read, here or in a subgraph, stays."""
    read = {o.name for o in graph.output}
    for g in all_graphs(graph):
        for n in g.node:
            read.update(n.input)
    unread = dropped - read
    kept = [n for n in graph.node
            if not (n.op_type == "Constant" and n.domain in ("", "ai.onnx") and n.output[0] in unread)]
    replace_nodes(graph, kept)
    inits = [copy_of(i, onnx.TensorProto) for i in graph.initializer if i.name not in unread]
    del graph.initializer[:]
    graph.initializer.extend(inits)


def rewrite(model, target, keep_gelu=False):
    if target not in IR_VERSION:
        raise RewriteError(f"target opset {target}: only 18..23")
    check_ops(model, target)
    names = Names(model)
    each_graph(model.graph, lambda g: rewrite_reduce_and_split(g, names))
    if target >= 20 and not keep_gelu:
        each_graph(model.graph, lambda g: rewrite_gelu(g, names))
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = target
    model.ir_version = IR_VERSION[target]
    return model


def rewrite_bytes(data, target, keep_gelu=False):
    try:
        model = onnx.load_from_string(data)
    except Exception as e:  # protobuf's DecodeError
        raise RewriteError(f"not an ONNX model: {e}") from e
    if not model.HasField("graph"):
        raise RewriteError("not an ONNX model: no graph")
    return rewrite(model, target, keep_gelu).SerializeToString()


def main(argv):
    keep_gelu = "--keep-gelu" in argv
    argv = [a for a in argv if a != "--keep-gelu"]
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        target = int(argv[3])
        with open(argv[1], "rb") as f:
            data = rewrite_bytes(f.read(), target, keep_gelu)
    except (RewriteError, ValueError, OSError) as e:
        print(f"rewrite_opset: {argv[1]}: {e}", file=sys.stderr)
        return 1
    with open(argv[2], "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
