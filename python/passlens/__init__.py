"""PassLens from Python: load an ONNX model, run the compiler passes, ask why a fusion did not fire,
plan memory, build the training graph, run the reference interpreter, and see it all inline in
Jupyter.

    import passlens
    m = passlens.load("model.onnx")            # a path, bytes, or an onnx.ModelProto
    r = m.optimize(level="extended")
    r.steps[0]                                 # what the first pass changed (a dict)
    r.to_onnx()                                # the optimized model, as passlens-cli optimize writes it

The work is done by the same C++ core as ``passlens-cli`` (no Qt). Results are plain Python
objects: dicts and lists from the core's JSON (the ``--json`` forms of the CLI commands), bytes,
numpy arrays. Errors raise :class:`passlens.Error` subclasses with the CLI's messages
(:class:`BadInputError` is a ``ValueError``). Ctrl+C during a long call cancels it
(``KeyboardInterrupt``). Reference: docs/python.md.
"""

import html as _html
import os as _os
import shutil as _shutil
import subprocess as _subprocess
import tempfile as _tempfile

from . import _passlens as _c
from ._passlens import (  # noqa: F401  (re-exported)
    BadInputError,
    CancelledError,
    CheckFailedError,
    Error,
    UnsupportedError,
)

__version__ = _c.__version__
__all__ = [
    "load", "diff", "read_tensor", "pass_names", "pipeline", "open",
    "Model", "OptimizeResult", "Step", "Explanation", "MemoryPlan", "GradResult", "Diff",
    "Error", "BadInputError", "UnsupportedError", "CheckFailedError", "CancelledError",
]

# The app's diff colors (Pass Stepper): added green, changed yellow, removed red.
_ADDED = ("#c8e6c9", "#2e7d32")
_CHANGED = ("#fff59d", "#f9a825")
_REMOVED = ("#ffcdd2", "#c62828")
_FOCUS = ("#bbdefb", "#1565c0")
_GROUP_COLORS = [
    ("#e1bee7", "#6a1b9a"), ("#b2dfdb", "#00695c"), ("#ffe0b2", "#e65100"), ("#c5cae9", "#283593"),
    ("#f0f4c3", "#827717"), ("#d7ccc8", "#4e342e"), ("#b3e5fc", "#0277bd"), ("#f8bbd0", "#ad1457"),
]


def _dims_list(dims):
    if dims is None:
        return []
    if not isinstance(dims, dict):
        raise TypeError("dims must be a dict of symbolic dim name -> int, not %s" % type(dims).__name__)
    out = []
    for k, v in dims.items():
        if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, int):
            raise TypeError("dims must map str -> int, got %r: %r" % (k, v))
        if v < 0:
            raise ValueError("--dim %s=%d: value must be a non-negative integer" % (k, v))
        out.append((k, v))
    return out


def _is_model_proto(x):
    t = type(x)
    return t.__name__ == "ModelProto" and hasattr(x, "SerializeToString") and "onnx" in (t.__module__ or "")


def load(source, *, dims=None, infer_shapes=True, validate_ops=True):
    """Imports a model: a path (str or os.PathLike), bytes, or an ``onnx.ModelProto``.

    ``dims`` pins symbolic input dims ({"batch": 8}), as ``--dim`` does on the CLI. Raises
    :class:`BadInputError` (a ``ValueError``) for a malformed model, with the CLI's message, and
    ``TypeError`` for anything that is not a model source.
    """
    pins = _dims_list(dims)
    if isinstance(source, Model):
        return source
    if isinstance(source, (str, _os.PathLike)):
        path = _os.fspath(source)
        if not isinstance(path, str):
            raise TypeError("path must be str, not bytes (pass the file's contents as bytes to load them)")
        return Model(_c.load_file(path, pins, infer_shapes, validate_ops))
    if isinstance(source, (bytes, bytearray, memoryview)):
        return Model(_c.load_bytes(bytes(source), _os.getcwd(), pins, infer_shapes, validate_ops))
    if _is_model_proto(source):
        return Model(_c.load_bytes(source.SerializeToString(), _os.getcwd(), pins, infer_shapes, validate_ops))
    raise TypeError("passlens.load expects a path, bytes or an onnx.ModelProto, not %s" % type(source).__name__)


class Model:
    """An imported model. Immutable: optimize/grad return new models."""

    def __init__(self, handle):
        self._m = handle

    # ---- facts ----------------------------------------------------------------------------------
    @property
    def source(self):
        """Where the model came from (a path, "<bytes>", or what produced it)."""
        return self._m.source

    @property
    def node_count(self):
        return self._m.node_count

    @property
    def warnings(self):
        """Non-fatal import findings (e.g. shape inference)."""
        return list(self._m.warnings)

    def info(self):
        """Producer, IR version, opsets, inputs/outputs, op counts, parameters (``passlens-cli info --json``)."""
        return self._m.info()

    def text(self):
        """The graph as text, one node per line (``passlens-cli print``)."""
        return self._m.print_text()

    def shapes(self, dims=None):
        """Every value's dims from the symbolic shape engine, evaluated at ``dims``
        (``passlens-cli shapes --json``)."""
        return self._m.shapes(dict(_dims_list(dims)), False)

    # ---- passes ---------------------------------------------------------------------------------
    def optimize(self, level=None, passes=None, *, fixed_point=False, target_opset=None, target_layout=None,
                 group_functions=False, recompute=None, snapshots=True, pipeline=None, profile=None):
        """Runs a pass pipeline (``passlens-cli optimize``). ``level`` is none|basic|extended|all
        (default extended); ``passes`` a list of pass names, run instead of the level unless a
        level is given too; ``pipeline`` the whole pipeline as text (``passlens-cli optimize
        --pipeline``: ``"basic,layout{to=NHWC},transpose"``), not combined with level or passes;
        ``profile`` standard|onnxruntime. Returns an :class:`OptimizeResult`."""
        if level is not None and not isinstance(level, str):
            raise TypeError("level must be a str (none, basic, extended, all)")
        if isinstance(passes, str):
            passes = [p for p in passes.split(",") if p]
        if passes is not None:
            passes = list(passes)
            if not all(isinstance(p, str) for p in passes):
                raise TypeError("passes must be a list of pass names")
        if target_opset is not None and (isinstance(target_opset, bool) or not isinstance(target_opset, int)):
            raise TypeError("target_opset must be an int")
        if pipeline is not None and not isinstance(pipeline, str):
            raise TypeError("pipeline must be a str (e.g. \"basic,layout{to=NHWC}\")")
        if profile is not None and not isinstance(profile, str):
            raise TypeError("profile must be a str (standard, onnxruntime)")
        return OptimizeResult(self._m.optimize(level, passes, bool(fixed_point), target_opset, target_layout,
                                               bool(group_functions), recompute, bool(snapshots), pipeline, profile))

    def explain(self, node=None, *, max_depth=None, passes=True):
        """Fusion groups and, per node, every fusion considered for it: the rule that refused it and
        the node and edge that blocked it (``passlens-cli explain --json``)."""
        if node is not None and not isinstance(node, str):
            raise TypeError("node must be a node name (str)")
        import json
        data = json.loads(self._m.explain(node, max_depth, bool(passes), False))
        return Explanation(data, self, node)

    def memplan(self, planner="best", schedule="best", *, parallel_aware=False):
        """Memory plan: buffers with offsets and lifetimes, arena vs lower bound, every schedule
        compared (``passlens-cli memplan --json``). Symbolic input dims not pinned at load are
        planned at 1 (``assumed_dims``)."""
        if not isinstance(planner, str) or not isinstance(schedule, str):
            raise TypeError("planner and schedule must be names (str)")
        return MemoryPlan(self._m.memplan(planner, schedule, bool(parallel_aware), False))

    def grad(self, loss="mse", wrt="all", recompute=None, *, output=None):
        """The training graph: loss + backward graph in standard ONNX ops (``passlens-cli grad``).
        ``wrt`` is "all" or a list of tensor names; ``recompute`` none|sqrt|all|budget=BYTES."""
        if not isinstance(wrt, str):
            wrt = ",".join(wrt)
        handle, summary = self._m.grad(loss, output or "", wrt, recompute)
        import json
        return GradResult(Model(handle), json.loads(summary))

    # ---- interpreter ------------------------------------------------------------------------------
    def input_types(self):
        """[(name, numpy dtype, dims)] of the runtime inputs (a symbolic dim by its name)."""
        return self._m.input_types()

    def run(self, inputs=None, *, seed=0, max_memory=None):
        """Runs the model on the reference interpreter; returns {output name: numpy array}.

        ``inputs``: a dict by input name, a list in input order, or one array; None draws the
        same seeded random inputs as ``passlens-cli run --seed``."""
        import numpy as np
        specs = self._m.input_types()
        arrays = None
        if inputs is not None:
            if isinstance(inputs, dict):
                names = [s[0] for s in specs]
                unknown = [k for k in inputs if k not in names]
                if unknown:
                    raise ValueError("no model input named %s (inputs: %s)" % (unknown[0], ", ".join(names)))
                missing = [n for n in names if n not in inputs]
                if missing:
                    raise ValueError("missing input '%s'" % missing[0])
                seq = [inputs[n] for n in names]
            elif isinstance(inputs, (list, tuple)):
                seq = list(inputs)
            else:
                seq = [inputs]
            if len(seq) != len(specs):
                raise ValueError("the model has %d inputs, got %d" % (len(specs), len(seq)))
            arrays = []
            for (name, dtype, _), x in zip(specs, seq):
                a = np.asarray(x)
                if dtype is not None and a.dtype != np.dtype(dtype):
                    want = np.dtype(dtype)
                    if a.dtype.kind != want.kind and not (a.dtype.kind in "iu" and want.kind in "iu"):
                        raise TypeError("input '%s' wants %s, got %s" % (name, want, a.dtype))
                    a = a.astype(want)
                arrays.append(np.ascontiguousarray(a))
        mem = 0 if max_memory is None else int(max_memory)
        _, outs = self._m.run(arrays, int(seed), mem)
        return dict(zip(self._m.output_names(), outs))

    def random_inputs(self, seed=0):
        """The seeded random inputs ``run(seed=...)`` and ``passlens-cli run --seed`` use."""
        # A run draws them; zero-size evaluation is not cheaper, so reuse the run's own draw.
        ins, _ = self._m.run(None, int(seed), 0)
        return dict(zip([s[0] for s in self._m.input_types()], ins))

    # ---- files ------------------------------------------------------------------------------------
    def to_onnx(self):
        """The model as ONNX bytes (what ``passlens-cli convert``/``optimize`` writes)."""
        return self._m.to_onnx()

    def save(self, path):
        self._m.save(_os.fspath(path))

    def to_proto(self):
        """An ``onnx.ModelProto`` (needs the ``onnx`` package)."""
        import onnx
        return onnx.load_from_string(self.to_onnx())

    # ---- drawing ----------------------------------------------------------------------------------
    def render(self, format="svg", *, fold=True, depth=None, expand=(), expand_all=False, colors=None):
        """The drawing of ``passlens-cli render``: svg/dot text or png bytes. Large graphs are drawn
        through their hierarchy (``depth`` levels open, ``expand`` paths, ``expand_all``).
        ``colors`` maps node names to (fill, border) colors."""
        ids = {}
        if colors:
            for name, c in colors.items():
                ids[self._m.node_id(name) if isinstance(name, str) else int(name)] = tuple(c)
        if isinstance(expand, str):
            expand = [expand]
        return self._m.render(format, bool(fold), depth, list(expand), bool(expand_all), ids)

    def _render_ids(self, ids_colors):
        return self._m.render("svg", True, None, [], False, ids_colors)

    def _repr_svg_(self):
        return self.render("svg")

    def __repr__(self):
        return "<passlens.Model %s: %d nodes, opset %d>" % (self._m.source, self._m.node_count, self._m.opset)


class Step(dict):
    """One pass of a pipeline run: name, nodes_before, nodes_after, ms, changes, remarks (the
    ``--report`` entry). In Jupyter it draws before | after with the diff colors."""

    def __init__(self, data, result, index):
        super().__init__(data)
        self._result = result
        self._index = index

    def diff(self):
        """{"before": Model, "after": Model, "added"/"removed"/"changed": node ids, "came_from": [...]}."""
        d = self._result._r.step_diff(self._index)
        d["before"] = Model(d["before"])
        d["after"] = Model(d["after"])
        return d

    def svgs(self):
        """(before svg, after svg): removed nodes red in before; added green, changed yellow in after."""
        d = self.diff()
        before = {i: _REMOVED for i in d["removed"]}
        before.update({i: _CHANGED for i in d["changed"]})
        after = {i: _ADDED for i in d["added"]}
        after.update({i: _CHANGED for i in d["changed"]})
        return d["before"]._render_ids(before), d["after"]._render_ids(after)

    def _repr_html_(self):
        b, a = self.svgs()
        missed = sum(1 for r in self.get("remarks", []) if r.get("kind") == "missed")
        head = "<b>%s</b>: %d &rarr; %d nodes, %d changes, %d missed" % (
            _html.escape(self["name"]), self["nodes_before"], self["nodes_after"], len(self["changes"]), missed)
        rows = "".join("<li>%s %s: %s</li>" % (_html.escape(c["kind"]), _html.escape(", ".join(c["nodes"])),
                                                 _html.escape(c["reason"])) for c in self["changes"][:20])
        more = "<li>... %d more</li>" % (len(self["changes"]) - 20) if len(self["changes"]) > 20 else ""
        return ('<div class="passlens-step"><div>%s</div><ul>%s%s</ul>'
                '<table><tr><th>before</th><th>after</th></tr><tr>'
                '<td style="vertical-align:top">%s</td><td style="vertical-align:top">%s</td></tr></table></div>'
                % (head, rows, more, b, a))


class OptimizeResult:
    """What ``Model.optimize`` returns: ``model`` (optimized), ``steps`` (per pass), ``report``
    (the ``--report`` JSON), ``to_onnx()``."""

    def __init__(self, handle):
        self._r = handle
        self.model = Model(handle.model)
        self.report = handle.report
        self.steps = [Step(p, self, i) for i, p in enumerate(self.report["passes"])]
        self.checker_problem = handle.checker_problem or None

    def to_onnx(self):
        return self.model.to_onnx()

    def save(self, path):
        self.model.save(path)

    def table(self):
        """The per-pass table ``passlens-cli optimize`` prints."""
        lines = ["%-20s%8s%8s%9s%8s%10s" % ("pass", "before", "after", "changes", "missed", "ms")]
        for s in self.steps:
            missed = sum(1 for r in s["remarks"] if r["kind"] == "missed")
            lines.append("%-20s%8d%8d%9d%8d%10.2f" % (s["name"], s["nodes_before"], s["nodes_after"],
                                                      len(s["changes"]), missed, s["ms"]))
        return "\n".join(lines) + "\n"

    def _repr_html_(self):
        rows = "".join("<tr><td>%s</td><td>%d</td><td>%d</td><td>%d</td></tr>" % (
            _html.escape(s["name"]), s["nodes_before"], s["nodes_after"], len(s["changes"])) for s in self.steps)
        return ("<table><tr><th>pass</th><th>before</th><th>after</th><th>changes</th></tr>%s</table>%s"
                % (rows, self.model._repr_svg_()))

    def __repr__(self):
        return "<passlens.OptimizeResult %d passes: %d -> %d nodes>" % (
            len(self.steps), self.steps[0]["nodes_before"] if self.steps else self.model.node_count,
            self.model.node_count)


class Explanation(dict):
    """``passlens-cli explain --json``: {"groups": [...], "nodes": [...], "warnings", "hints"}.
    Each node lists ``considered`` fusions: source, rule, outcome, blocking_node, blocking_edge,
    message. ``refusals()`` flattens the refused ones."""

    def __init__(self, data, model, node=None):
        super().__init__(data)
        self._model = model
        self._node = node

    def refusals(self):
        """[{node, source, rule, blocking_node, blocking_edge, message}] for every refused fusion."""
        out = []
        for n in self["nodes"]:
            for c in n["considered"]:
                if c["outcome"] == "refused":
                    out.append({"node": n["name"], "source": c["source"], "rule": c["rule"],
                                "blocking_node": c["blocking_node"], "blocking_edge": c["blocking_edge"],
                                "reason": c["message"]})
        return out

    def _colors(self):
        ids = dict(self._model._m.node_names())
        by_name = {name: i for i, name in ids.items()}
        colors = {}
        if self._node is not None:
            # The node asked about (blue), its fusion group (green), what blocked it (red).
            for n in self["nodes"]:
                for member in n.get("group_members", []):
                    if member in by_name:
                        colors[by_name[member]] = _ADDED
                for c in n["considered"]:
                    if c["outcome"] == "refused" and c.get("blocking_node") in by_name:
                        colors[by_name[c["blocking_node"]]] = _REMOVED
                if n["name"] in by_name:
                    colors[by_name[n["name"]]] = _FOCUS
        else:
            # Every fusion group of two or more nodes in its own color.
            k = 0
            for g in self["groups"]:
                members = g.get("members", [])
                if len(members) < 2:
                    continue
                for member in members:
                    if member in by_name:
                        colors[by_name[member]] = _GROUP_COLORS[k % len(_GROUP_COLORS)]
                k += 1
        return colors

    def _repr_svg_(self):
        return self._model._render_ids(self._colors())

    def _repr_html_(self):
        rows = "".join("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % tuple(
            _html.escape(str(r[k] or "")) for k in ("node", "rule", "blocking_node", "blocking_edge", "reason"))
            for r in self.refusals()[:50])
        return ("<div>%d fusion groups, %s kernels</div>%s"
                "<table><tr><th>node</th><th>rule</th><th>blocking node</th><th>edge</th><th>reason</th></tr>%s</table>"
                % (len(self["groups"]), self.get("kernels", "?"), self._repr_svg_(), rows))


class MemoryPlan(dict):
    """``passlens-cli memplan --json``: planner, arena_bytes, lower_bound_bytes, buffers (value,
    bytes, first, last, offset), live_bytes_per_step, schedules, ..."""

    def _repr_svg_(self):
        return _memory_svg(self)

    def _repr_html_(self):
        return ("<div>%s planner, schedule %s: arena %s bytes, lower bound %s, naive %s</div>%s" % (
            _html.escape(str(self.get("planner"))), _html.escape(str(self.get("schedule_name"))),
            self.get("arena_bytes"), self.get("lower_bound_bytes"), self.get("naive_bytes"), _memory_svg(self)))


def _memory_svg(plan, width=720, height=360):
    """The memory view as SVG: one rectangle per buffer, x = schedule steps it is live, y = its arena
    offset and size (the app's Memory dock), and the lower bound as a dashed line."""
    buffers = plan.get("buffers", [])
    steps = max([b["last"] for b in buffers] + [len(plan.get("schedule", [])) - 1, 0]) + 1
    arena = max([plan.get("arena_bytes", 0), plan.get("lower_bound_bytes", 0), 1]
                + [b["offset"] + b["bytes"] for b in buffers if b.get("offset", -1) >= 0])
    left, top, right, bottom = 70, 20, 10, 30
    w, h = width - left - right, height - top - bottom
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="10">'
           % (width, height),
           '<rect x="%d" y="%d" width="%d" height="%d" fill="#fafafa" stroke="#999"/>' % (left, top, w, h)]
    for i, b in enumerate(buffers):
        if b.get("offset", -1) < 0:
            continue
        x = left + w * b["first"] / steps
        bw = max(w * (b["last"] - b["first"] + 1) / steps, 1)
        y = top + h - h * (b["offset"] + b["bytes"]) / arena
        bh = max(h * b["bytes"] / arena, 1)
        fill, border = _GROUP_COLORS[i % len(_GROUP_COLORS)]
        out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" stroke="%s"><title>%s: %d bytes, '
                   'steps %d..%d, offset %d</title></rect>' % (x, y, bw, bh, fill, border, _html.escape(b["value"]),
                                                                b["bytes"], b["first"], b["last"], b["offset"]))
    lb = plan.get("lower_bound_bytes", 0)
    if lb:
        y = top + h - h * lb / arena
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#c62828" stroke-dasharray="4 3"/>'
                   '<text x="%d" y="%.1f" fill="#c62828" text-anchor="end">lower bound</text>'
                   % (left, left + w, y, y, left + w - 2, y - 2))
    out.append('<text x="%d" y="%d" text-anchor="end">%s B</text>' % (left - 4, top + 8, arena))
    out.append('<text x="%d" y="%d" text-anchor="end">0</text>' % (left - 4, top + h))
    out.append('<text x="%d" y="%d" text-anchor="middle">schedule step (0..%d), %s planner: arena %s bytes</text>'
               % (left + w // 2, height - 8, steps - 1, _html.escape(str(plan.get("planner"))), plan.get("arena_bytes")))
    out.append("</svg>")
    return "".join(out)


class GradResult:
    """What ``Model.grad`` returns: ``model`` (the training graph) and ``summary`` (node counts by
    role, gradients, and the recompute figures when asked)."""

    def __init__(self, model, summary):
        self.model = model
        self.summary = summary

    def to_onnx(self):
        return self.model.to_onnx()

    def _repr_svg_(self):
        return self.model._repr_svg_()

    def __repr__(self):
        s = self.summary
        return "<passlens.GradResult %d forward, %d loss, %d backward nodes; %d gradients of the %s loss>" % (
            s["forward_nodes"], s["loss_nodes"], s["backward_nodes"], s["gradients"], s["loss"])


class Diff(dict):
    """``passlens-cli diff --json``; ``text`` is the CLI's text summary, ``identical`` its exit
    status (True: no node differs)."""

    def __init__(self, data, text, identical):
        super().__init__(data)
        self.text = text
        self.identical = identical

    def _repr_html_(self):
        return "<pre>%s</pre>" % _html.escape(self.text)


def _as_model(x, validate_ops):
    if isinstance(x, Model):
        return x
    if isinstance(x, OptimizeResult):
        return x.model
    return load(x, validate_ops=validate_ops)


def diff(a, b, *, names_only=False):
    """Structural diff of two models (``passlens-cli diff --json``): nodes matched by name,
    weights, structure, neighbours and similarity. Paths and bytes are loaded as the CLI does
    (ops not validated)."""
    ma, mb = _as_model(a, False), _as_model(b, False)
    return Diff(*_c.diff(ma._m, mb._m, bool(names_only)))


def read_tensor(path):
    """One serialized TensorProto file (input_0.pb, output_0.pb) as a numpy array."""
    return _c.read_tensor(_os.fspath(path))


def pass_names():
    """Every registered pass."""
    return list(_c.pass_names())


def pipeline(level="extended"):
    """The passes of a level's pipeline, in order."""
    return list(_c.pipeline(level))


def open(model):  # noqa: A001  (passlens.open, as netron.start)
    """Starts the desktop app (``passlens``) on the model; returns the process."""
    exe = _shutil.which("passlens")
    if exe is None:
        here = _os.path.dirname(_os.path.abspath(__file__))
        candidate = _os.path.join(here, "..", "..", "bin", "passlens")  # build/python/passlens → build/bin
        exe = candidate if _os.path.exists(candidate) else None
    if exe is None:
        raise FileNotFoundError("the PassLens app (passlens) is not installed")
    if isinstance(model, (str, _os.PathLike)):
        path = _os.fspath(model)
    else:
        m = _as_model(model, True)
        fd, path = _tempfile.mkstemp(suffix=".onnx", prefix="passlens-")
        _os.close(fd)
        m.save(path)
    return _subprocess.Popen([exe, path])
