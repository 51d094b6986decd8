# Writes nas_cells.onnx, the small net of docs/scheduling.md: two NAS-style cells, each four 1x1-conv
# branches (expand 8 -> 32 channels, shrink 32 -> 4) joined by Concat and mixed back to 8 channels,
# the nodes written breadth first (every expander, then every shrinker) as a NAS exporter may.
# The same net as tests/core/ScheduleNets.h nasNet(2). Needs the onnx and numpy packages.
import numpy as np
import onnx
from onnx import TensorProto, helper

rng = np.random.default_rng(1)
nodes, inits = [], []


def weight(name, shape):
    inits.append(helper.make_tensor(name, TensorProto.FLOAT, shape, rng.uniform(-1, 1, size=shape).astype(np.float32).ravel()))
    return name


x = "x"
for c in range(2):
    cell = f"cell{c}"
    expanded = []
    for k in range(4):
        out = f"{cell}.expand{k}"
        nodes.append(helper.make_node("Conv", [x, weight(f"{cell}.e{k}", [32, 8, 1, 1])], [out], name=out))
        expanded.append(out)
    shrunk = []
    for k in range(4):
        out = f"{cell}.shrink{k}"
        nodes.append(helper.make_node("Conv", [expanded[k], weight(f"{cell}.s{k}", [4, 32, 1, 1])], [out], name=out))
        shrunk.append(out)
    cat = f"{cell}.concat"
    nodes.append(helper.make_node("Concat", shrunk, [cat], name=cat, axis=1))
    mix = f"{cell}.mix"
    nodes.append(helper.make_node("Conv", [cat, weight(f"{cell}.m", [8, 16, 1, 1])], [mix], name=mix))
    x = mix

graph = helper.make_graph(nodes, "nas_cells", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 8, 16, 16])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model)
onnx.save(model, "nas_cells.onnx")
