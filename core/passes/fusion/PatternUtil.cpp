#include "passes/fusion/PatternUtil.h"

#include <algorithm>
#include <cmath>

#include "onnx/SchemaValidation.h"

namespace passlens::passes::pattern {

using namespace passlens::ir;

const Tensor* constantOf(const Graph& g, ValueId v) {
    if (v == kNone || !g.hasValue(v)) return nullptr;
    const Value& val = g.value(v);
    if (!val.initializer || val.isGraphInput) return nullptr;
    return val.initializer.get();
}

std::optional<std::vector<double>> floatValues(const Graph& g, ValueId v) {
    const Tensor* t = constantOf(g, v);
    if (!t) return std::nullopt;
    const int64_t n = t->elementCount();
    std::vector<double> out(static_cast<size_t>(n));
    if (t->dtype == DataType::Float && t->byteSize() == size_t(n) * 4) {
        for (int64_t i = 0; i < n; ++i) out[size_t(i)] = t->as<float>()[i];
    } else if (t->dtype == DataType::Double && t->byteSize() == size_t(n) * 8) {
        for (int64_t i = 0; i < n; ++i) out[size_t(i)] = t->as<double>()[i];
    } else {
        return std::nullopt;
    }
    return out;
}

std::optional<double> scalarOf(const Graph& g, ValueId v) {
    auto vals = floatValues(g, v);
    if (!vals || vals->size() != 1) return std::nullopt;
    return (*vals)[0];
}

bool isOp(const Node& n, const std::string& opType) {
    // A node outside its schema's counts never matches, so matchers may read what the schema promises.
    return n.opType == opType && canonicalDomain(n.domain).empty() && onnxio::fitsSchemaEnvelope(n);
}

NodeId producerOf(const Graph& g, ValueId v, const std::string& opType) {
    if (v == kNone || !g.hasValue(v)) return kNone;
    NodeId p = g.value(v).producer;
    return p != kNone && isOp(g.node(p), opType) ? p : kNone;
}

std::vector<NodeId> subgraphReaders(const Graph& g, ValueId v) {
    std::vector<NodeId> out;
    const std::string& name = g.value(v).name;
    for (NodeId n : g.nodesWithSubgraphs()) {
        auto names = g.capturedNames(n);
        if (std::binary_search(names.begin(), names.end(), name)) out.push_back(n);
    }
    return out;
}

bool readOutside(const Graph& g, ValueId v, const std::vector<NodeId>& inside) {
    if (g.value(v).isGraphOutput) return true;
    for (NodeId c : g.value(v).consumers)
        if (std::find(inside.begin(), inside.end(), c) == inside.end()) return true;
    return !subgraphReaders(g, v).empty();
}

size_t readerCount(const Graph& g, ValueId v) {
    return g.value(v).consumers.size() + (g.value(v).isGraphOutput ? 1 : 0) + subgraphReaders(g, v).size();
}

std::string readersOf(const Graph& g, ValueId v) {
    std::string s;
    for (NodeId c : g.value(v).consumers) s += (s.empty() ? "" : ", ") + g.node(c).displayName();
    if (g.value(v).isGraphOutput) s += (s.empty() ? "" : ", ") + std::string("the graph output");
    for (NodeId n : subgraphReaders(g, v)) s += (s.empty() ? "" : ", ") + std::string("a subgraph of ") + g.node(n).displayName();
    return s;
}

ValueId otherInput(const Node& n, ValueId x) {
    if (n.inputs.size() != 2) return kNone;
    if (n.inputs[0] == x) return n.inputs[1];
    if (n.inputs[1] == x) return n.inputs[0];
    return kNone;
}

void removeUnreadConstants(Rewriter& rw, const std::vector<ValueId>& candidates, const std::string& why) {
    Graph& g = rw.graph();
    for (ValueId v : candidates) {
        if (v == kNone || !g.hasValue(v)) continue;
        const Value& val = g.value(v);
        if (val.initializer && val.consumers.empty() && !val.isGraphOutput && !val.isGraphInput && !rw.isCapturedBySubgraph(v))
            rw.removeInitializer(v, "'" + val.name + "' is no longer read after " + why);
    }
}

int64_t defaultOpset(const Model& m) { return m.opsetFor(""); }

bool near(double a, double b, double tol) { return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b)); }

}  // namespace passlens::passes::pattern
