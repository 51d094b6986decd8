"""Models built with onnx.helper rather than exported: new ops of opsets 18..23, and IR-10
payloads (float8, int4) with node metadata and an overloaded local function.

python3-onnx 1.12 stops at IR 8 / opset 17: helper.make_node takes any op name, so the new ops
need nothing special; the IR-10 fields it lacks (NodeProto.overload = 8, NodeProto.metadata_props
= 9, FunctionProto.overload = 13) are written as protobuf wire bytes and merged into the message
with MergeFromString, which keeps them as unknown fields and serializes them after the known
ones, i.e. in field-number order, as a C++ protobuf writer would. The new data types are plain
int32 codes in TensorProto.data_type, with raw_data laid out as the spec says (one byte per
float8, two int4 per byte, low nibble first).
"""
from collections import OrderedDict

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT8E4M3FN, FLOAT8E5M2, UINT4, INT4 = 17, 19, 21, 22


def _varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _bytes_field(number, payload):
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _string_field(number, text):
    return _bytes_field(number, text.encode())


def _metadata_entry(number, key, value):
    return _bytes_field(number, _string_field(1, key) + _string_field(2, value))


def _const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def newops_opset23():
    """Opset 23, IR 11: Gelu, Mish, GroupNormalization-21, CenterCropPad, Pad-18 with axes,
    ReduceMean-18 with an axes input, Split-18 num_outputs, RMSNormalization, RotaryEmbedding,
    Attention, BitwiseAnd/Not, Col2Im."""
    rng = np.random.default_rng(0)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    inits = [
        _const("gn_scale", f32(4)), _const("gn_bias", f32(4)),
        _const("crop_shape", np.array([4, 4], np.int64)),
        _const("pad_pads", np.array([1, 2], np.int64)), _const("pad_axes", np.array([3], np.int64)),
        _const("mean_axes", np.array([1], np.int64)),
        _const("rms_scale", f32(8)), _const("heads_shape", np.array([1, 5, 2, 4], np.int64)),
        _const("cos_cache", np.cos(np.outer(np.arange(8), [1.0, 0.01])).astype(np.float32)),
        _const("sin_cache", np.sin(np.outer(np.arange(8), [1.0, 0.01])).astype(np.float32)),
        _const("position_ids", np.arange(5, dtype=np.int64).reshape(1, 5)),
        _const("image_shape", np.array([3, 3], np.int64)), _const("block_shape", np.array([2, 2], np.int64)),
    ]
    nodes = [
        helper.make_node("Gelu", ["x"], ["gelu"], name="gelu"),
        helper.make_node("Mish", ["gelu"], ["mish"], name="mish"),
        helper.make_node("GroupNormalization", ["mish", "gn_scale", "gn_bias"], ["grouped"], name="group_norm",
                         num_groups=2, epsilon=1e-5),
        helper.make_node("CenterCropPad", ["grouped", "crop_shape"], ["cropped"], name="center_crop_pad", axes=[2, 3]),
        helper.make_node("Pad", ["cropped", "pad_pads", "", "pad_axes"], ["padded"], name="pad_axes_input"),
        helper.make_node("ReduceMean", ["padded", "mean_axes"], ["reduced"], name="reduce_mean_axes_input", keepdims=1),
        helper.make_node("Split", ["padded"], ["split_a", "split_b"], name="split_num_outputs", axis=2, num_outputs=2),
        helper.make_node("RMSNormalization", ["s", "rms_scale"], ["rms"], name="rms_norm", axis=-1, epsilon=1e-5),
        helper.make_node("Reshape", ["rms", "heads_shape"], ["heads"], name="to_heads"),
        helper.make_node("Transpose", ["heads"], ["q"], name="heads_first", perm=[0, 2, 1, 3]),
        helper.make_node("RotaryEmbedding", ["q", "cos_cache", "sin_cache", "position_ids"], ["rotated"], name="rotary"),
        helper.make_node("Attention", ["rotated", "rotated", "q"], ["attention"], name="attention", is_causal=1),
        helper.make_node("BitwiseAnd", ["a", "b"], ["anded"], name="bitwise_and"),
        helper.make_node("BitwiseNot", ["anded"], ["bitwise"], name="bitwise_not"),
        helper.make_node("Col2Im", ["cols", "image_shape", "block_shape"], ["col2im"], name="col2im"),
    ]
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes, "newops_opset23",
        [vi("x", TensorProto.FLOAT, [1, 4, 6, 6]), vi("s", TensorProto.FLOAT, [1, 5, 8]),
         vi("a", TensorProto.INT32, [6]), vi("b", TensorProto.INT32, [6]), vi("cols", TensorProto.FLOAT, [1, 4, 4])],
        [vi("reduced", TensorProto.FLOAT, [1, 1, 4, 7]), vi("split_a", TensorProto.FLOAT, [1, 4, 2, 7]),
         vi("split_b", TensorProto.FLOAT, [1, 4, 2, 7]), vi("attention", TensorProto.FLOAT, [1, 2, 5, 4]),
         vi("bitwise", TensorProto.INT32, [6]), vi("col2im", TensorProto.FLOAT, [1, 1, 3, 3])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)], producer_name="passlens-fixtures")
    model.ir_version = 11
    return model.SerializeToString()


def _raw_tensor(name, data_type, dims, raw):
    t = TensorProto()
    t.name, t.data_type, t.raw_data = name, data_type, bytes(raw)
    t.dims.extend(dims)
    return t


def _pack_int4(values):
    nibbles = [v & 0xF for v in values] + ([0] if len(values) % 2 else [])
    return bytes(lo | hi << 4 for lo, hi in zip(nibbles[0::2], nibbles[1::2]))


def float8_int4_ir10():
    """IR 10, opset 21: float8e4m3fn, float8e5m2, int4, uint4 initializers in raw_data, cast to
    float; a node with metadata_props; a call of a local function with an overload."""
    inits = [
        _raw_tensor("f8e4m3fn", FLOAT8E4M3FN, [4], [0x38, 0x40, 0xB8, 0x7E]),  # 1, 2, -1, 448
        _raw_tensor("f8e5m2", FLOAT8E5M2, [4], [0x3C, 0x40, 0xBC, 0x7B]),      # 1, 2, -1, 57344
        _raw_tensor("int4", INT4, [5], _pack_int4([1, -2, 3, -8, 7])),
        _raw_tensor("uint4", UINT4, [3], _pack_int4([1, 15, 4])),
    ]
    casts = [helper.make_node("Cast", [n], [n + "_float"], name="cast_" + n, to=TensorProto.FLOAT)
             for n in ("f8e4m3fn", "f8e5m2", "int4", "uint4")]
    casts[0].MergeFromString(_metadata_entry(9, "origin", "handmade.py") + _metadata_entry(9, "why", "node metadata_props, IR 10"))
    call = helper.make_node("ScaleAdd", ["x", "f8e4m3fn_float"], ["scaled"], name="call_scale_add", domain="local.fixtures")
    call.MergeFromString(_string_field(8, "v2"))
    function = onnx.FunctionProto()
    function.name, function.domain = "ScaleAdd", "local.fixtures"
    function.input.extend(["x", "y"])
    function.output.extend(["z"])
    function.node.extend([helper.make_node("Mul", ["x", "x"], ["xx"]), helper.make_node("Add", ["xx", "y"], ["z"])])
    function.opset_import.extend([helper.make_opsetid("", 21)])
    function.MergeFromString(_string_field(13, "v2"))
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        casts + [call], "float8_int4_ir10", [vi("x", TensorProto.FLOAT, [4])],
        [vi("f8e4m3fn_float", TensorProto.FLOAT, [4]), vi("f8e5m2_float", TensorProto.FLOAT, [4]),
         vi("int4_float", TensorProto.FLOAT, [5]), vi("uint4_float", TensorProto.FLOAT, [3]),
         vi("scaled", TensorProto.FLOAT, [4])],
        inits)
    model = helper.make_model(graph, producer_name="passlens-fixtures",
                              opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("local.fixtures", 1)])
    model.functions.extend([function])
    model.ir_version = 10
    return model.SerializeToString()


def build_all():
    """(file name, bytes, manifest fields) for each hand-made fixture."""
    common = OrderedDict(generator="tests/models/handmade.py (onnx.helper, onnx 1.12)", shapes="static",
                         symbols=OrderedDict(), torch_check="none")
    return [
        ("newops_opset23.onnx", newops_opset23(),
         OrderedDict(model="newops", source=newops_opset23.__doc__.replace("\n   ", "").strip(), **common)),
        ("float8_int4_ir10.onnx", float8_int4_ir10(),
         OrderedDict(model="float8_int4", source=float8_int4_ir10.__doc__.replace("\n   ", "").strip(), **common,
                     expected_outputs=OrderedDict([  # what the payload bytes decode to
                         ("f8e4m3fn_float", [1, 2, -1, 448]), ("f8e5m2_float", [1, 2, -1, 57344]),
                         ("int4_float", [1, -2, 3, -8, 7]), ("uint4_float", [1, 15, 4])]))),
    ]
