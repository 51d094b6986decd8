"""The Python module against the CLI: same files, same JSON, same messages."""
import json
import os
import pathlib
import signal
import threading
import time

import numpy as np
import pytest

import passlens


def strip_ms(x):
    """Timings differ from run to run; everything else must not."""
    if isinstance(x, dict):
        return {k: strip_ms(v) for k, v in x.items() if k not in ("ms",)}
    if isinstance(x, list):
        return [strip_ms(v) for v in x]
    return x


# ---- load ---------------------------------------------------------------------------------------

def test_load_path_bytes_pathlike(examples):
    path = examples / "conv_bn_relu.onnx"
    a = passlens.load(str(path))
    b = passlens.load(path)
    c = passlens.load(path.read_bytes())
    d = passlens.load(bytearray(path.read_bytes()))
    assert a.node_count == b.node_count == c.node_count == d.node_count > 0
    assert a.to_onnx() == c.to_onnx()
    assert "conv_bn_relu" in repr(a)


def test_load_model_proto(examples):
    onnx = pytest.importorskip("onnx")
    proto = onnx.load(str(examples / "conv_bn_relu.onnx"))
    m = passlens.load(proto)
    assert m.to_onnx() == passlens.load(examples / "conv_bn_relu.onnx").to_onnx()
    assert m.to_proto().graph.node[0].op_type == proto.graph.node[0].op_type


def test_info_matches_cli(examples, run_cli):
    path = examples / "transformer_block.onnx"
    assert passlens.load(path).info() == json.loads(run_cli("info", path, "--json").stdout)


def test_dims_pin_like_cli(fixtures, run_cli):
    path = fixtures / "resnet_tiny_dynamic.onnx"
    m = passlens.load(path, dims={"batch": 2})
    cli = json.loads(run_cli("info", path, "--json", "--dim", "batch=2").stdout)
    assert m.info() == cli


# ---- optimize: byte-identical to passlens-cli optimize --------------------------------------------

@pytest.mark.parametrize("model,args", [
    ("examples/cleanup_opportunities.onnx", {"level": "extended"}),
    ("examples/conv_bn_relu.onnx", {"level": "all"}),
    ("examples/transformer_block.onnx", {"level": "extended"}),
    ("fixtures/resnet_tiny_static.onnx", {"level": "extended"}),
    ("fixtures/gpt_tiny_static.onnx", {"level": "extended"}),
    ("fixtures/convnext_tiny_static.onnx", {"passes": ["constant-folding", "cse", "dce"]}),
])
def test_optimize_byte_identical_to_cli(model, args, examples, fixtures, run_cli, tmp_path):
    where, name = model.split("/")
    path = (examples if where == "examples" else fixtures) / name
    out, report = tmp_path / "cli.onnx", tmp_path / "report.json"
    cli_args = ["optimize", path, "-o", out, "--report", report]
    if "level" in args:
        cli_args += ["--level", args["level"]]
    if "passes" in args:
        cli_args += ["--passes", ",".join(args["passes"])]
    run_cli(*cli_args)
    r = passlens.load(path).optimize(**args)
    assert r.to_onnx() == out.read_bytes()
    assert strip_ms(r.report) == strip_ms(json.loads(report.read_text()))
    assert [s["name"] for s in r.steps] == [p["name"] for p in json.loads(report.read_text())["passes"]]


def test_optimize_pipeline_text_like_cli(examples, run_cli, tmp_path):
    # One pipeline syntax for the CLI and Python (core/pipeline/PipelineText.h): same bytes, same steps.
    path = examples / "conv_bn_relu.onnx"
    text = "basic,layout{to=NHWC},transpose"
    out = tmp_path / "cli.onnx"
    run_cli("optimize", path, "-o", out, "--pipeline", text)
    r = passlens.load(path).optimize(pipeline=text)
    assert r.to_onnx() == out.read_bytes()
    assert [s["name"] for s in r.steps][-2:] == ["layout", "transpose"]
    assert any(s["name"] == "layout" and s["changes"] for s in r.steps)
    for bad in ("layout{to=NCWH}", "basic,bogus", "dce{x=1}"):
        with pytest.raises(ValueError) as e:
            passlens.load(path).optimize(pipeline=bad)
        assert str(e.value) == cli_message(run_cli("optimize", path, "-o", "/dev/null", "--pipeline", bad, check=False))
    with pytest.raises(ValueError):
        passlens.load(path).optimize(pipeline="basic", level="all")
    with pytest.raises(TypeError):
        passlens.load(path).optimize(pipeline=["basic"])


def test_steps(examples):
    r = passlens.load(examples / "cleanup_opportunities.onnx").optimize(level="extended")
    s = {st["name"]: st for st in r.steps}
    cf = s["constant-folding"]
    assert cf["nodes_before"] > cf["nodes_after"]
    assert cf["changes"] and {"kind", "nodes", "reason"} <= set(cf["changes"][0])
    assert r.model.node_count == r.steps[-1]["nodes_after"]
    d = r.steps[[st["name"] for st in r.steps].index("cse")].diff()
    assert d["removed"] and d["before"].node_count > d["after"].node_count
    print(r.steps[0])  # the acceptance line prints a step


# ---- the other commands' JSON ---------------------------------------------------------------------

def test_explain_matches_cli(examples, run_cli):
    path = examples / "blocked_fusion.onnx"
    m = passlens.load(path)
    assert m.explain() == json.loads(run_cli("explain", path, "--json").stdout)
    e = m.explain(node="conv")
    assert e == json.loads(run_cli("explain", path, "--json", "--node", "conv").stdout)
    refused = e.refusals()
    assert any(r["rule"] == "fold-conv-bn" and r["blocking_node"] == "conv_tap.mean" for r in refused)


def test_memplan_matches_cli(examples, fixtures, run_cli):
    for path, schedule in ((examples / "inplace_chain.onnx", "model"), (fixtures / "resnet_tiny_static.onnx", "best")):
        got = passlens.load(path).memplan(planner="best", schedule=schedule)
        cli = json.loads(run_cli("memplan", path, "--json", "--schedule", schedule).stdout)
        assert strip_ms(got) == strip_ms(cli)
        assert got["arena_bytes"] >= got["lower_bound_bytes"] > 0


def test_memplan_assumed_dims_like_cli(fixtures, run_cli):
    path = fixtures / "resnet_tiny_dynamic.onnx"
    got = passlens.load(path).memplan(schedule="model")
    cli = json.loads(run_cli("memplan", path, "--json").stdout)
    assert got["assumed_dims"] == cli["assumed_dims"]
    assert strip_ms(got) == strip_ms(cli)


def test_shapes_matches_cli(fixtures, run_cli):
    path = fixtures / "gpt_tiny_dynamic.onnx"
    m = passlens.load(path)
    cli = json.loads(run_cli("shapes", path, "--json").stdout)
    assert m.shapes() == cli
    syms = cli["symbols"]
    if syms:
        dims = {syms[0]: 3}
        assert m.shapes(dims=dims) == json.loads(run_cli("shapes", path, "--json", "--dim", "%s=3" % syms[0]).stdout)


def test_grad_matches_cli(examples, run_cli, tmp_path):
    path = examples / "conv_bn_relu.onnx"
    out = tmp_path / "train.onnx"
    run_cli("grad", path, "-o", out, "--loss", "mse")
    g = passlens.load(path).grad(loss="mse", wrt="all")
    assert g.to_onnx() == out.read_bytes()
    assert g.summary["backward_nodes"] > 0 and g.summary["gradients"] > 0
    r = passlens.load(path).grad(recompute="sqrt")
    assert "recompute" in r.summary


def test_diff_matches_cli(examples, run_cli, tmp_path):
    a = examples / "cleanup_opportunities.onnx"
    b = tmp_path / "b.onnx"
    run_cli("optimize", a, "-o", b, "--level", "extended")
    d = passlens.diff(a, b)
    p = run_cli("diff", a, b, "--json", check=False)
    assert p.returncode == 1 and not d.identical
    assert dict(d) == json.loads(p.stdout)
    assert passlens.diff(a, a).identical
    assert passlens.diff(passlens.load(a), passlens.load(b)) == dict(d)


# ---- run: the interpreter, numpy in and out --------------------------------------------------------

@pytest.mark.parametrize("model", ["examples/transformer_block.onnx", "fixtures/resnet_tiny_static.onnx"])
def test_run_matches_cli(model, examples, fixtures, run_cli, tmp_path):
    where, name = model.split("/")
    path = (examples if where == "examples" else fixtures) / name
    run_cli("run", path, "--seed", 3, "--out-dir", tmp_path)
    m = passlens.load(path)
    outs = m.run(seed=3)
    names = list(outs)
    for i, n in enumerate(names):
        expected = passlens.read_tensor(tmp_path / ("output_%d.pb" % i))
        assert outs[n].dtype == expected.dtype and outs[n].shape == expected.shape
        assert np.array_equal(outs[n], expected)
    # The same inputs handed in as numpy arrays (by name and in order) give the same outputs.
    ins = [passlens.read_tensor(tmp_path / ("input_%d.pb" % i)) for i in range(len(m.input_types()))]
    by_name = {spec[0]: a for spec, a in zip(m.input_types(), ins)}
    for given in (ins, by_name):
        again = m.run(given)
        for i, n in enumerate(names):
            assert np.array_equal(again[n], outs[n])


def test_run_input_errors(examples):
    m = passlens.load(examples / "conv_bn_relu.onnx")
    (name, dtype, dims), = m.input_types()
    with pytest.raises(ValueError, match="missing input"):
        m.run({})
    with pytest.raises(ValueError, match="no model input named"):
        m.run({name: np.zeros([int(d) for d in dims], dtype), "bogus": 1})
    with pytest.raises(TypeError):
        m.run([np.zeros(dims, dtype=np.int64)])
    with pytest.raises(passlens.Error):  # a wrong shape: the interpreter's message, not a crash
        m.run([np.zeros([1], dtype=np.float32)])


# ---- errors ---------------------------------------------------------------------------------------

def cli_message(p):
    assert p.returncode != 0
    first = p.stderr.splitlines()[0]
    assert first.startswith("error: ")
    return first[len("error: "):]


def test_malformed_model(run_cli, tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07\x12\x05hello this is not a model")
    with pytest.raises(passlens.BadInputError) as e:
        passlens.load(bad)
    assert isinstance(e.value, ValueError) and isinstance(e.value, passlens.Error)
    assert str(e.value) == cli_message(run_cli("info", bad, check=False))
    with pytest.raises(ValueError):
        passlens.load(bad.read_bytes())
    with pytest.raises(ValueError) as e:
        passlens.load(tmp_path / "missing.onnx")
    assert str(e.value) == cli_message(run_cli("info", tmp_path / "missing.onnx", check=False))


def test_bad_arguments_like_cli(examples, run_cli):
    path = examples / "conv_bn_relu.onnx"
    m = passlens.load(path)
    with pytest.raises(ValueError) as e:
        m.optimize(level="fastest")
    assert str(e.value) == cli_message(run_cli("optimize", path, "-o", "/dev/null", "--level", "fastest", check=False))
    with pytest.raises(ValueError) as e:
        m.optimize(passes=["no-such-pass"])
    assert str(e.value) == cli_message(run_cli("optimize", path, "-o", "/dev/null", "--passes", "no-such-pass", check=False))
    with pytest.raises(ValueError) as e:
        m.memplan(planner="smart")
    assert str(e.value) == cli_message(run_cli("memplan", path, "--planner", "smart", check=False))
    with pytest.raises(ValueError) as e:
        m.explain(node="nope")
    assert str(e.value) == cli_message(run_cli("explain", path, "--node", "nope", check=False))


def test_wrong_argument_types(examples):
    m = passlens.load(examples / "conv_bn_relu.onnx")
    for bad in (123, None, 1.5, ["a.onnx"], object()):
        with pytest.raises(TypeError):
            passlens.load(bad)
    with pytest.raises(TypeError):
        m.optimize(level=2)
    with pytest.raises(TypeError):
        m.optimize(passes=[1, 2])
    with pytest.raises(TypeError):
        m.explain(node=3)
    with pytest.raises(TypeError):
        passlens.load(examples / "conv_bn_relu.onnx", dims=["batch", 1])
    with pytest.raises(TypeError):
        m.memplan(planner=None)


# ---- Ctrl+C cancels --------------------------------------------------------------------------------

def interrupt_after(seconds):
    t = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    t.start()
    return t


def test_ctrl_c_cancels_a_long_call():
    t0 = time.monotonic()
    interrupt_after(0.2)
    with pytest.raises(KeyboardInterrupt):
        passlens._c._sleep_cancellable(30)
    assert time.monotonic() - t0 < 5


def test_ctrl_c_during_optimize(fixtures):
    m = passlens.load(fixtures / "swin_tiny_dynamic.onnx")
    interrupt_after(0.05)
    with pytest.raises(KeyboardInterrupt):
        for _ in range(200):  # long enough that the signal lands inside a call
            m.optimize(level="all", fixed_point=True)
    # The module still works afterwards.
    assert m.optimize(level="basic").model.node_count > 0


# ---- memory stays flat -----------------------------------------------------------------------------

def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def test_repeated_load_optimize_keeps_memory_flat(examples):
    data = (examples / "conv_bn_relu.onnx").read_bytes()

    def once():
        m = passlens.load(data)
        r = m.optimize(level="extended")
        assert r.to_onnx()

    for _ in range(100):  # warm-up: allocator pools, registries, first-use caches
        once()
    before = rss_kb()
    for _ in range(1000):
        once()
    grown = rss_kb() - before
    # A leak of even 10 KB per call would be 10 MB here.
    assert grown < 4096, "RSS grew by %d KB over 1000 load/optimize calls" % grown


# ---- Jupyter display --------------------------------------------------------------------------------

def test_inline_drawings(examples, fixtures):
    m = passlens.load(examples / "blocked_fusion.onnx")
    assert "<svg" in m._repr_svg_()
    r = m.optimize(level="extended")
    html = r.steps[0]._repr_html_()
    assert html.count("<svg") == 2
    e = m.explain(node="conv")
    assert "<svg" in e._repr_svg_() and "#bbdefb" in e._repr_svg_()  # the node asked about, in focus blue
    assert "<svg" in m.explain()._repr_html_()
    p = m.memplan()
    assert p._repr_svg_().startswith("<svg") and "<rect" in p._repr_svg_()
    # A changed step: removed nodes red in before, added green in after.
    cf = next(s for s in passlens.load(examples / "cleanup_opportunities.onnx").optimize().steps if s["changes"])
    before, after = cf.svgs()
    assert "#ffcdd2" in before.lower() or "#c8e6c9" in after.lower() or "#fff59d" in after.lower()


def test_large_model_drawn_by_hierarchy(fixtures):
    m = passlens.load(fixtures / "swin_tiny_static.onnx")
    svg = m._repr_svg_()
    assert "<svg" in svg and len(svg) < 2_000_000


def test_render_formats(examples):
    m = passlens.load(examples / "conv_bn_relu.onnx")
    assert m.render("dot").lstrip().startswith("digraph")
    assert m.render("png")[:4] == b"\x89PNG"
    with pytest.raises(ValueError):
        m.render("gif")
