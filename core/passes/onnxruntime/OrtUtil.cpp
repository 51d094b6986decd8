#include "passes/onnxruntime/OrtUtil.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "passes/match/Match.h"

namespace passlens::passes::ort {

using namespace passlens::ir;

namespace {
// Per thread: passes of different pipelines may run on other threads (the app's workers).
thread_local bool quietRefusals = false;
}  // namespace

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
