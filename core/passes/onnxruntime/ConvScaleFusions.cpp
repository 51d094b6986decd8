// ONNX Runtime's ConvAddFusion and ConvMulFusion (conv_add_fusion.cc, conv_mul_fusion.cc), Level1
// rewrite rules anchored on Conv, with their conditions rather than the standard
// fuse-conv-mul-add's wider ones:
//   the Conv has one output edge, to an Add/Mul whose only input edge it is (the other input an
//   initializer, in slot 1) and whose output is no graph output; the weight is an initializer of
//   rank ≥ 4; the Add's B has shape [C, 1, 1, ...] (rank of W − 1), the Mul's B that or a scalar
//   (rank 0); the Conv's bias, when present, is a 1-D initializer of C values of the same type.
// A per-tensor [1] constant, as Paddle exports write, is refused: ONNX Runtime keeps those Muls.
#include "ir/IntsText.h"
#include "passes/match/Match.h"
#include "passes/onnxruntime/OrtPasses.h"
#include "passes/onnxruntime/OrtUtil.h"

namespace passlens::passes::ort {

using namespace passlens::ir;

namespace {

/// The per-output-channel values of B (C of them, or one for a scalar), as doubles.
std::vector<double> valuesOf(const Tensor& t) {
    std::vector<double> v(size_t(t.elementCount()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = t.dtype == DataType::Float ? double(t.as<float>()[i]) : t.as<double>()[i];
    return v;
}

TensorPtr withValues(const Tensor& like, const std::vector<double>& v) {
    if (like.dtype == DataType::Float) {
        std::vector<float> f(v.begin(), v.end());
        return makeTensorOf(DataType::Float, like.dims, f);
    }
    return makeTensorOf(DataType::Double, like.dims, v);
}

bool fuseConvScale(Rewriter& rw, NodeId convId, const std::string& op) {
    const Graph& g = rw.graph();
    const Node& conv = g.node(convId);
    if (outputEdges(g, convId) != 1 || producesGraphOutput(g, convId)) return false;
    const NodeId next = outputNodes(g, convId)[0];
    if (!isOp(g, next, op)) return false;
    const Node& scale = g.node(next);
    const std::string rule = op == "Mul" ? "ConvMulFusion" : "ConvAddFusion";
    auto refuseWhy = [&](const std::string& why, std::vector<ValueId> edges = {}) {
        refuse(rw, {convId, next}, rule + ": not applied at " + q(g, convId) + " + " + q(g, next) + ": " + why, std::move(edges));
        return false;
    };
    if (scale.inputs.size() != 2 || scale.inputs[0] != conv.outputs[0]) return refuseWhy("the " + op + "'s input 1 must be the constant and input 0 the Conv");
    if (producesGraphOutput(g, next)) return refuseWhy("the " + op + "'s output is a graph output", {scale.outputs[0]});
    const TensorPtr w = match::constantOf(g, conv.inputs[1]);
    const TensorPtr b = match::constantOf(g, scale.inputs[1]);
    if (!w || !b) return refuseWhy("the weight and the " + op + "'s B must be initializers");
    if ((w->dtype != DataType::Float && w->dtype != DataType::Double) || b->dtype != w->dtype) return refuseWhy("float or double weight and B of the same type");
    if (w->dims.size() < 4) return false;
    const int64_t channels = w->dims[0];
    bool perChannel = b->dims.size() == w->dims.size() - 1 && b->dims[0] == channels;
    for (size_t i = 1; perChannel && i < b->dims.size(); ++i) perChannel = b->dims[i] == 1;
    const bool scalar = op == "Mul" && b->dims.empty();
    if (!perChannel && !scalar)
        return refuseWhy("B " + qv(g, scale.inputs[1]) + " has shape " + intsText(b->dims) + ", ONNX Runtime needs [C, 1, 1]" +
                             std::string(op == "Mul" ? " or a scalar" : ""),
                         {scale.inputs[1]});
    TensorPtr bias;
    if (conv.inputs.size() > 2 && conv.inputs[2] != kNone) {
        bias = match::constantOf(g, conv.inputs[2]);
        if (!bias || bias->dtype != w->dtype || bias->dims.size() != 1 || bias->dims[0] != channels)
            return refuseWhy("the Conv's bias must be an initializer of " + std::to_string(channels) + " values");
    }
    const std::vector<double> bv = valuesOf(*b);
    auto at = [&](int64_t c) { return bv.size() == 1 ? bv[0] : bv[size_t(c)]; };
    std::vector<ValueId> inputs = conv.inputs;
    inputs.resize(3, kNone);
    const std::string what = q(g, next) + " folded into " + q(g, convId);
    // Read the two nodes before the first edit: both are replaced below.
    const std::string name = conv.name;
    const std::vector<Attribute> attrs = conv.attributes;
    const ValueId out = scale.outputs[0];
    const std::string weightName = g.value(conv.inputs[1]).name;
    const std::string biasName = bias ? g.value(conv.inputs[2]).name : conv.name + "_bias";
    if (op == "Mul") {
        std::vector<double> wv = valuesOf(*w);
        const size_t per = wv.size() / size_t(channels);
        for (size_t i = 0; i < wv.size(); ++i) wv[i] *= at(int64_t(i / per));
        inputs[1] = rw.newInitializer(weightName + "_mul", withValues(*w, wv));
        if (bias) {
            std::vector<double> cb = valuesOf(*bias);
            for (size_t c = 0; c < cb.size(); ++c) cb[c] *= at(int64_t(c));
            inputs[2] = rw.newInitializer(biasName + "_mul", withValues(*bias, cb));
        }
    } else {
        std::vector<double> cb = bias ? valuesOf(*bias) : std::vector<double>(size_t(channels), 0.0);
        for (size_t c = 0; c < cb.size(); ++c) cb[c] += at(int64_t(c));
        TensorPtr like = bias ? bias : makeTensorOf(w->dtype == DataType::Float ? DataType::Float : DataType::Double, {channels},
                                                    std::vector<float>(size_t(channels), 0.f));
        if (!bias && w->dtype == DataType::Double) like = makeTensorOf(DataType::Double, {channels}, std::vector<double>(size_t(channels), 0.0));
        inputs[2] = rw.newInitializer(biasName + "_add", withValues(*like, cb));
    }
    if (inputs[2] == kNone) inputs.resize(2);
    NodeId fused = rw.replaceNodes({convId, next}, "Conv", inputs, {out}, attrs, rule + ": " + what, name);
    rw.applied({fused}, rule + ": " + what);
    return true;
}

}  // namespace

std::vector<RewriteRule> convScaleFusions() {
    return {{"ConvAddFusion", {"Conv"}, "", [](Rewriter& rw, NodeId n) { return fuseConvScale(rw, n, "Add"); }},
            {"ConvMulFusion", {"Conv"}, "", [](Rewriter& rw, NodeId n) { return fuseConvScale(rw, n, "Mul"); }}};
}

}  // namespace passlens::passes::ort
