// Conv + BatchNormalization folding, with the checks its known traps demand: the Conv output must
// have the BatchNormalization as its only reader, the BN must be in inference mode (one output
// used, training_mode unset), and weights, bias and BN parameters must be float32 constants.
#include <algorithm>
#include <cmath>

#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

/// A float32 constant (the graph owns it, so the pointer lives as long as the value).
const Tensor* floatConstant(const Graph& g, ValueId v) {
    const TensorPtr t = pattern::constantOf(g, v);
    return t && t->dtype == DataType::Float ? t.get() : nullptr;
}

}  // namespace

void FuseConvBatchNorm::runImpl(PassContext& ctx) const {
    ctx.forEachGraph([&](Rewriter& rw) {
        const Graph& g = rw.graph();
        rw.setRule("fold-conv-bn");
        std::vector<ValueId> replacedConstants;
        for (NodeId bnId : std::vector<NodeId>(g.nodeOrder())) {
            if (!g.hasNode(bnId)) continue;
            const Node& bn = g.node(bnId);
            if (bn.opType != "BatchNormalization" || !canonicalDomain(bn.domain).empty() || bn.inputs.size() < 5) continue;
            ValueId x = bn.inputs[0];
            NodeId convId = g.value(x).producer;
            if (convId == kNone || g.node(convId).opType != "Conv" || !canonicalDomain(g.node(convId).domain).empty()) continue;
            const Node& conv = g.node(convId);
            const std::string pair = conv.displayName() + " + " + bn.displayName();
            // Cheap structural preconditions first, each refusal a missed remark.
            if (pattern::readerCount(g, x) != 1) {
                rw.missed({convId, bnId},
                          pair + " not folded: " + conv.displayName() + "'s output has " +
                              std::to_string(pattern::readerCount(g, x)) + " readers (" + pattern::readersOf(g, x) + ")",
                          {x});
                continue;
            }
            bool extraOutputs = false;
            for (size_t i = 1; i < bn.outputs.size(); ++i)
                if (bn.outputs[i] != kNone && (!g.value(bn.outputs[i]).consumers.empty() || g.value(bn.outputs[i]).isGraphOutput))
                    extraOutputs = true;
            if (extraOutputs || bn.attrInt("training_mode", 0) != 0) {
                rw.missed({convId, bnId}, pair + " not folded: " + bn.displayName() + " is in training mode (running statistics are used)");
                continue;
            }
            const Tensor* w = floatConstant(g, conv.inputs.size() > 1 ? conv.inputs[1] : kNone);
            if (!w || w->dims.empty() || w->dims[0] <= 0) {
                rw.missed({convId, bnId}, pair + " not folded: " + conv.displayName() + "'s weights are not a float32 constant",
                          {conv.inputs.size() > 1 ? conv.inputs[1] : kNone});
                continue;
            }
            const Tensor* b = conv.inputs.size() > 2 && conv.inputs[2] != kNone ? floatConstant(g, conv.inputs[2]) : nullptr;
            if (conv.inputs.size() > 2 && conv.inputs[2] != kNone && !b) {
                rw.missed({convId, bnId}, pair + " not folded: " + conv.displayName() + "'s bias is not a float32 constant");
                continue;
            }
            const Tensor* gamma = floatConstant(g, bn.inputs[1]);
            const Tensor* beta = floatConstant(g, bn.inputs[2]);
            const Tensor* mean = floatConstant(g, bn.inputs[3]);
            const Tensor* var = floatConstant(g, bn.inputs[4]);
            const int64_t channels = w->dims[0];
            auto perChannel = [&](const Tensor* t) { return t && t->elementCount() == channels; };
            if (!perChannel(gamma) || !perChannel(beta) || !perChannel(mean) || !perChannel(var) || (b && b->elementCount() != channels)) {
                rw.missed({convId, bnId}, pair + " not folded: BatchNormalization parameters are not constant vectors of " +
                                              std::to_string(channels) + " channels");
                continue;
            }
            const float eps = bn.attrFloat("epsilon", 1e-5f);
            // BN(y) = (y − μ)·γ/σ + β per channel.
            const size_t n = static_cast<size_t>(channels);
            std::vector<double> pre(n), scale(n), post(n);
            for (int64_t c = 0; c < channels; ++c) {
                pre[size_t(c)] = -double(mean->as<float>()[c]);
                scale[size_t(c)] = double(gamma->as<float>()[c]) / std::sqrt(double(var->as<float>()[c]) + double(eps));
                post[size_t(c)] = double(beta->as<float>()[c]);
            }
            const auto [newW, newB] = pattern::foldChannelAffine(*w, b, pre, scale, post);
            // Everything read from the two nodes is read here, before the first edit.
            const std::string convName = conv.displayName();
            std::vector<Attribute> attrs = conv.attributes;
            const ValueId input = conv.inputs[0];
            const ValueId out = bn.outputs[0];
            const std::vector<int64_t> wDims = w->dims;
            ValueId wv = rw.newInitializer(g.value(conv.inputs[1]).name + "_bn_folded", makeTensorOf(DataType::Float, wDims, newW));
            ValueId bv = rw.newInitializer(convName + ".bias_bn_folded", makeTensorOf(DataType::Float, {channels}, newB));
            // The constants the pair read: the ones nothing else reads go with the pair.
            for (NodeId n : {convId, bnId})
                for (size_t i = 1; i < g.node(n).inputs.size(); ++i)
                    if (g.node(n).inputs[i] != kNone && g.value(g.node(n).inputs[i]).initializer)
                        replacedConstants.push_back(g.node(n).inputs[i]);
            NodeId fused = rw.replaceNodes({convId, bnId}, "Conv", {input, wv, bv}, {out}, std::move(attrs),
                                           pair + ": BatchNormalization folded into the convolution's weights and bias", convName);
            rw.applied({fused}, pair + " folded into one Conv");
        }
        // Weights the folded pairs read and nothing reads now (other unread initializers are DCE's).
        std::sort(replacedConstants.begin(), replacedConstants.end());
        replacedConstants.erase(std::unique(replacedConstants.begin(), replacedConstants.end()), replacedConstants.end());
        for (ValueId v : replacedConstants) {
            if (!g.hasValue(v)) continue;
            const Value& val = g.value(v);
            if (val.consumers.empty() && !val.isGraphOutput && !val.isGraphInput && !rw.isCapturedBySubgraph(v))
                rw.removeInitializer(v, "'" + val.name + "' is no longer read after folding");
        }
    });
}

std::unique_ptr<Pass> makeFuseConvBatchNormPass() { return std::make_unique<FuseConvBatchNorm>(); }

}  // namespace passlens::passes
