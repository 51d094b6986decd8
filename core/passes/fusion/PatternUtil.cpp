#include "passes/fusion/PatternUtil.h"

#include <algorithm>
#include <cmath>

#include "onnx/SchemaValidation.h"

namespace passlens::passes::pattern {

using namespace passlens::ir;

std::optional<std::vector<double>> floatValues(const Graph& g, ValueId v) {
    const TensorPtr t = constantOf(g, v);
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

ValueId otherInput(const Node& n, ValueId x) {
    if (n.inputs.size() != 2) return kNone;
    if (n.inputs[0] == x) return n.inputs[1];
    if (n.inputs[1] == x) return n.inputs[0];
    return kNone;
}

void removeUnreadConstants(Rewriter& rw, const std::vector<ValueId>& candidates, const std::string& why) {
    const Graph& g = rw.graph();
    for (ValueId v : candidates) {
        if (v == kNone || !g.hasValue(v)) continue;
        const Value& val = g.value(v);
        if (val.initializer && val.consumers.empty() && !val.isGraphOutput && !val.isGraphInput && !rw.isCapturedBySubgraph(v))
            rw.removeInitializer(v, "'" + val.name + "' is no longer read after " + why);
    }
}

ConvWeights foldChannelAffine(const Tensor& w, const Tensor* bias, const std::vector<double>& pre,
                              const std::vector<double>& scale, const std::vector<double>& post) {
    const int64_t channels = w.dims.empty() ? 0 : w.dims[0];
    const int64_t perOut = channels > 0 ? w.elementCount() / channels : 0;
    ConvWeights out;
    out.weights.resize(size_t(w.elementCount()));
    out.bias.resize(size_t(channels));
    for (int64_t c = 0; c < channels; ++c) {
        const double s = scale[size_t(c)];
        for (int64_t k = 0; k < perOut; ++k)
            out.weights[size_t(c * perOut + k)] = float(double(w.as<float>()[c * perOut + k]) * s);
        const double b = bias ? double(bias->as<float>()[c]) : 0.0;
        out.bias[size_t(c)] = float((b + pre[size_t(c)]) * s + post[size_t(c)]);
    }
    return out;
}

int64_t defaultOpset(const Model& m) { return m.opsetFor(""); }

bool near(double a, double b, double tol) { return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b)); }

}  // namespace passlens::passes::pattern
