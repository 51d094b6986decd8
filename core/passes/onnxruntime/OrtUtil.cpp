#include "passes/onnxruntime/OrtUtil.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "onnx/ShapeInference.h"
#include "passes/match/Match.h"

namespace passlens::passes::ort {

using namespace passlens::ir;

namespace {
// Per thread: passes of different pipelines may run on other threads (the app's workers).
thread_local bool quietRefusals = false;
thread_local OrtShapeScope* activeShapes = nullptr;

/// Pairs each graph of `original` with the same graph of its copy (same node ids, same
/// attributes), enclosing graphs first.
void pairGraphs(const Graph& original, const Graph& copy, const std::function<void(const Graph&, const Graph&)>& f) {
    f(original, copy);
    for (NodeId n : original.nodesWithSubgraphs()) {
        if (!copy.hasNode(n)) continue;
        const auto& a = original.node(n).attributes;
        const auto& b = copy.node(n).attributes;
        for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
            if (a[i].g && b[i].g) pairGraphs(*a[i].g, *b[i].g, f);
            for (size_t k = 0; k < a[i].graphs.size() && k < b[i].graphs.size(); ++k) pairGraphs(*a[i].graphs[k], *b[i].graphs[k], f);
        }
    }
}

/// The graphs from `root` down to `target` (both included); empty when `target` is not inside.
bool pathTo(const Graph& root, const Graph& target, std::vector<const Graph*>& path) {
    path.push_back(&root);
    if (&root == &target) return true;
    for (NodeId n : root.nodesWithSubgraphs())
        for (const auto& a : root.node(n).attributes) {
            if (a.g && pathTo(*a.g, target, path)) return true;
            for (const auto& sub : a.graphs)
                if (pathTo(*sub, target, path)) return true;
        }
    path.pop_back();
    return false;
}
}  // namespace

OrtShapeScope::OrtShapeScope(const Model& model) : model_(model), previous_(activeShapes) { activeShapes = this; }
OrtShapeScope::~OrtShapeScope() { activeShapes = previous_; }

void OrtShapeScope::compute() {
    computed_ = true;
    Model copy = model_;
    onnxio::resetToOnnxInferredShapes(copy);
    const int64_t opset = model_.opsetFor("");
    pairGraphs(model_.graph, copy.graph, [&](const Graph& original, const Graph& inferred) {
        auto& out = shapes_[&original];
        out.resize(original.valueIdLimit());
        for (ValueId v : original.valueIds())
            if (inferred.hasValue(v)) out[v] = inferred.value(v).type.shape;
        // A subgraph reads an enclosing graph's value through the same NodeArg, shape included.
        for (ValueId v : original.valueIds())
            if (original.value(v).isOuterScope) out[v] = shapeOf(model_, original, v);
        // libonnx 1.12 leaves some shapes unknown that the newer ONNX inside ONNX Runtime 1.30
        // infers (the rank of a Slice or Squeeze of computed sizes, and the dims after it); for
        // those the type stands in. Not for what follows a Reshape-5 (opset < 13) to a computed
        // target: its inference gives no shape at all, in both.
        std::vector<bool> noShape(original.valueIdLimit(), false);
        for (NodeId n : inferred.nodeOrder()) {
            const Node& node = inferred.node(n);
            bool tainted = isOp(inferred, n, "Reshape") && opset < 13 && node.inputs.size() > 1 &&
                           !match::constantOf(inferred, node.inputs[1]);
            for (ValueId in : node.inputs) tainted = tainted || (in != kNone && in < noShape.size() && noShape[in]);
            for (ValueId o : node.outputs) {
                if (o == kNone || !original.hasValue(o) || inferred.value(o).type.shape) continue;
                noShape[o] = tainted;
                if (!tainted) out[o] = original.value(o).type.shape;
            }
        }
    });
}

TensorPtr outerScopeConstant(const Model& m, const Graph& g, ValueId v) {
    if (v == kNone || !g.hasValue(v) || !g.value(v).isOuterScope) return nullptr;
    std::vector<const Graph*> path;
    if (!pathTo(m.graph, g, path)) return nullptr;
    const std::string& name = g.value(v).name;
    for (size_t i = path.size() - 1; i-- > 0;) {
        const Graph& outer = *path[i];
        auto found = outer.findValue(name);
        if (!found) continue;
        const Value& val = outer.value(*found);
        if (val.isOuterScope) continue;
        // Constant nodes are initializers once ONNX Runtime has loaded the model.
        if (isOp(outer, val.producer, "Constant")) return match::constantOf(outer, *found);
        return val.initializer && !val.isGraphInput ? val.initializer : nullptr;
    }
    return nullptr;
}

std::optional<Shape> shapeOf(const Model& m, const Graph& g, ValueId v) {
    if (v == kNone || !g.hasValue(v)) return std::nullopt;
    if (!g.value(v).isOuterScope) return shapeOf(g, v);
    std::vector<const Graph*> path;
    if (!pathTo(m.graph, g, path)) return std::nullopt;
    const std::string& name = g.value(v).name;
    for (size_t i = path.size() - 1; i-- > 0;) {
        auto found = path[i]->findValue(name);
        if (found && !path[i]->value(*found).isOuterScope) return shapeOf(*path[i], *found);
    }
    return g.value(v).type.shape;
}

std::optional<std::optional<Shape>> OrtShapeScope::lookup(const Graph& g, ValueId v) {
    if (!computed_) compute();
    auto it = shapes_.find(&g);
    if (it == shapes_.end() || v >= it->second.size()) return std::nullopt;
    return it->second[v];
}

QuietRefusals::QuietRefusals() : previous_(quietRefusals) { quietRefusals = true; }
QuietRefusals::~QuietRefusals() { quietRefusals = previous_; }

void refuse(Rewriter& rw, const std::vector<NodeId>& nodes, const std::string& message, const std::vector<ValueId>& blockingValues) {
    if (!quietRefusals) rw.missed(nodes, message, blockingValues);
}

size_t outputEdges(const Graph& g, NodeId n) {
    size_t edges = 0;
    for (ValueId v : g.node(n).outputs)
        if (v != kNone) edges += g.value(v).consumers.size();
    return edges;
}

std::vector<NodeId> outputNodes(const Graph& g, NodeId n) {
    std::vector<NodeId> out;
    for (ValueId v : g.node(n).outputs)
        if (v != kNone) out.insert(out.end(), g.value(v).consumers.begin(), g.value(v).consumers.end());
    return out;
}

bool producesGraphOutput(const Graph& g, NodeId n) {
    for (ValueId v : g.node(n).outputs)
        if (v != kNone && g.value(v).isGraphOutput) return true;
    return false;
}

bool isOp(const Graph& g, NodeId n, const std::string& opType) {
    return n != kNone && g.hasNode(n) && g.node(n).opType == opType && canonicalDomain(g.node(n).domain).empty();
}

NodeId producer(const Graph& g, ValueId v, const std::string& opType) {
    if (v == kNone || !g.hasValue(v)) return kNone;
    NodeId p = g.value(v).producer;
    return isOp(g, p, opType) ? p : kNone;
}

std::optional<Shape> shapeOf(const Graph& g, ValueId v) {
    if (v == kNone || !g.hasValue(v)) return std::nullopt;
    if (const TensorPtr c = match::constantOf(g, v)) {
        Shape s;
        for (int64_t d : c->dims) s.dims.push_back(Dim::of(d));
        return s;
    }
    if (activeShapes)
        if (auto known = activeShapes->lookup(g, v)) return *known;
    return g.value(v).type.shape;
}

bool isScalarShape(const Graph& g, ValueId v) {
    auto s = shapeOf(g, v);
    return s && (s->rank() == 0 || (s->rank() == 1 && s->dims[0].value == 1));
}

std::optional<double> constantScalar(const Graph& g, ValueId v) {
    const TensorPtr t = match::constantOf(g, v);
    if (!t || t->elementCount() != 1) return std::nullopt;
    switch (t->dtype) {
    case DataType::Float: return t->byteSize() == 4 ? std::optional<double>(t->as<float>()[0]) : std::nullopt;
    case DataType::Double: return t->byteSize() == 8 ? std::optional<double>(t->as<double>()[0]) : std::nullopt;
    case DataType::Int64: return t->byteSize() == 8 ? std::optional<double>(double(t->as<int64_t>()[0])) : std::nullopt;
    case DataType::Int32: return t->byteSize() == 4 ? std::optional<double>(t->as<int32_t>()[0]) : std::nullopt;
    case DataType::Bool: return t->byteSize() == 1 ? std::optional<double>(t->as<uint8_t>()[0] ? 1 : 0) : std::nullopt;
    case DataType::Float16: {
        if (t->byteSize() != 2) return std::nullopt;
        const uint16_t h = t->as<uint16_t>()[0];
        const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
        double val = exp == 0 ? std::ldexp(mant, -24) : exp == 31 ? INFINITY : std::ldexp(mant + 1024, exp - 25);
        return (h & 0x8000) ? -val : val;
    }
    default: return std::nullopt;
    }
}

bool constantEquals(const Graph& g, ValueId v, double expected) {
    auto s = constantScalar(g, v);
    return s && std::abs(*s - expected) <= 1e-5 * std::max(1.0, std::abs(expected));
}

bool elemTypeIn(const Graph& g, ValueId v, const std::vector<DataType>& types) {
    if (v == kNone || !g.hasValue(v)) return false;
    DataType t = g.value(v).type.elemType;
    if (const TensorPtr c = match::constantOf(g, v)) t = c->dtype;
    return std::find(types.begin(), types.end(), t) != types.end();
}

std::string q(const Graph& g, NodeId n) { return "`" + g.node(n).displayName() + "`"; }
std::string qv(const Graph& g, ValueId v) { return "`" + g.value(v).name + "`"; }

std::string readBy(const Graph& g, NodeId n) {
    const auto readers = outputNodes(g, n);
    if (readers.empty()) return "read by no node";
    std::string s = "read by " + std::to_string(readers.size()) + (readers.size() == 1 ? " node (" : " nodes (");
    for (size_t i = 0; i < readers.size() && i < 4; ++i) s += (i ? ", " : "") + q(g, readers[i]);
    return s + (readers.size() > 4 ? ", ...)" : ")");
}

void useMicrosoftDomain(Rewriter& rw) {
    for (const auto& imp : rw.model().opsetImports)
        if (imp.domain == kMSDomain) return;
    rw.setOpsetImport(kMSDomain, 1, "com.microsoft contrib ops used by the ONNX Runtime fusions");
}

bool inputsTypedIn(const Graph& g, NodeId n, const std::vector<DataType>& types) {
    for (ValueId v : g.node(n).inputs)
        if (v != kNone && !elemTypeIn(g, v, types)) return false;
    return true;
}

NodeId soleReader(const Graph& g, NodeId n, const std::string& opType) {
    auto r = outputNodes(g, n);
    return r.size() == 1 && isOp(g, r[0], opType) ? r[0] : kNone;
}

}  // namespace passlens::passes::ort
