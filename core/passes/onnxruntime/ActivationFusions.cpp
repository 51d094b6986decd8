// ONNX Runtime's ConvActivationFusion (conv_activation_fusion.cc) and GemmActivationFusion
// (gemm_activation_fusion.cc) for the CPU execution provider, and the partitioner's inlining of
// function ops the CPU provider has no kernel for (HardSwish: HardSigmoid(1/6, 0.5) then Mul).
//   Conv → Relu | Sigmoid | Tanh | LeakyRelu(α) | Clip(min, max) | HardSigmoid(α, β)
//        → FusedConv(X, W[, B], activation, activation_params)
//   Gemm → Elu | HardSigmoid | LeakyRelu | Relu | Selu | Sigmoid | Softplus | Softsign | Tanh | ThresholdedRelu
//        → FusedGemm(A, B[, C], Gemm's attributes, activation, activation_<attr> for each activation attribute)
#include <limits>

#include "passes/match/Match.h"
#include "passes/onnxruntime/OrtPasses.h"
#include "passes/onnxruntime/OrtUtil.h"

namespace passlens::passes::ort {

using namespace passlens::ir;

namespace {

/// Clip's min/max (attributes before opset 11, optional constant inputs after); nullopt when an
/// input is not a constant.
std::optional<std::vector<float>> clipParams(const Graph& g, const Node& clip) {
    float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
    if (clip.attr("min") || clip.attr("max")) {
        lo = clip.attrFloat("min", lo);
        hi = clip.attrFloat("max", hi);
        return std::vector<float>{lo, hi};
    }
    for (size_t slot : {size_t(1), size_t(2)}) {
        if (clip.inputs.size() <= slot || clip.inputs[slot] == kNone) continue;
        auto v = constantScalar(g, clip.inputs[slot]);
        if (!v) return std::nullopt;
        (slot == 1 ? lo : hi) = float(*v);
    }
    return std::vector<float>{lo, hi};
}

bool fuseConv(Rewriter& rw, NodeId convId) {
    const Graph& g = rw.graph();
    const Node& conv = g.node(convId);
    const auto readers = outputNodes(g, convId);
    if (readers.empty()) return false;
    static const std::vector<std::string> kActivations{"Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip", "HardSigmoid"};
    auto isActivation = [&](NodeId n) {
        return std::find(kActivations.begin(), kActivations.end(), g.node(n).opType) != kActivations.end() &&
               canonicalDomain(g.node(n).domain).empty();
    };
    auto refuse = [&](NodeId act, const std::string& why, std::vector<ValueId> edges = {}) {
        ort::refuse(rw, {convId, act}, "ConvActivationFusion: not applied at " + q(g, convId) + " + " + q(g, act) + ": " + why, std::move(edges));
        return false;
    };
    if (readers.size() != 1) {
        for (NodeId r : readers)
            if (isActivation(r))
                return refuse(r, "the Conv output is " + readBy(g, convId) + ", ONNX Runtime needs 1", {conv.outputs[0]});
        return false;
    }
    NodeId act = readers[0];
    if (!isActivation(act)) return false;
    if (producesGraphOutput(g, convId)) return refuse(act, "the Conv output is a graph output", {conv.outputs[0]});
    const Node& a = g.node(act);
    std::vector<float> params;
    if (a.opType == "LeakyRelu") params = {a.attrFloat("alpha", 0.01f)};
    if (a.opType == "HardSigmoid") params = {a.attrFloat("alpha", 0.2f), a.attrFloat("beta", 0.5f)};
    if (a.opType == "Clip") {
        auto p = clipParams(g, a);
        if (!p) return refuse(act, "the Clip's min or max is not a constant initializer");
        params = *p;
    }
    std::vector<Attribute> attrs = conv.attributes;
    attrs.push_back(Attribute::makeString("activation", a.opType));
    if (!params.empty()) attrs.push_back(Attribute::makeFloats("activation_params", params));
    useMicrosoftDomain(rw);
    const std::string what = q(g, convId) + " + " + q(g, act);
    NodeId fused = rw.replaceNodes({convId, act}, "FusedConv", conv.inputs, {a.outputs[0]}, std::move(attrs),
                                   "ConvActivationFusion: " + what, conv.name.empty() ? "FusedConv" : conv.name, kMSDomain);
    rw.applied({fused}, "ConvActivationFusion: " + what + " fused into FusedConv (activation " + g.node(fused).attrString("activation", "") + ")");
    return true;
}

bool fuseGemm(Rewriter& rw, NodeId gemmId) {
    const Graph& g = rw.graph();
    const Node& gemm = g.node(gemmId);
    static const std::vector<std::string> kActivations{"Elu", "HardSigmoid", "LeakyRelu", "Relu", "Selu", "Sigmoid",
                                                       "Softplus", "Softsign", "Tanh", "ThresholdedRelu"};
    auto isActivation = [&](NodeId n) {
        return std::find(kActivations.begin(), kActivations.end(), g.node(n).opType) != kActivations.end() &&
               canonicalDomain(g.node(n).domain).empty();
    };
    const auto readers = outputNodes(g, gemmId);
    if (readers.size() != 1) {
        for (NodeId r : readers)
            if (isActivation(r)) {
                ort::refuse(rw, {gemmId, r}, "GemmActivationFusion: not applied at " + q(g, gemmId) + " + " + q(g, r) + ": the Gemm output is " +
                                           readBy(g, gemmId) + ", ONNX Runtime needs 1", {gemm.outputs[0]});
                return false;
            }
        return false;
    }
    NodeId act = readers[0];
    if (!isActivation(act)) return false;
    if (producesGraphOutput(g, gemmId)) {
        refuse(rw, {gemmId, act}, "GemmActivationFusion: not applied at " + q(g, gemmId) + ": the Gemm output is a graph output", {gemm.outputs[0]});
        return false;
    }
    const Node& a = g.node(act);
    std::vector<Attribute> attrs = gemm.attributes;
    attrs.push_back(Attribute::makeString("activation", a.opType));
    for (Attribute at : a.attributes) {
        at.name = "activation_" + at.name;
        attrs.push_back(std::move(at));
    }
    useMicrosoftDomain(rw);
    const std::string what = q(g, gemmId) + " + " + q(g, act);
    NodeId fused = rw.replaceNodes({gemmId, act}, "FusedGemm", gemm.inputs, {a.outputs[0]}, std::move(attrs),
                                   "GemmActivationFusion: " + what, gemm.name.empty() ? "FusedGemm" : gemm.name, kMSDomain);
    rw.applied({fused}, "GemmActivationFusion: " + what + " fused into FusedGemm");
    return true;
}

bool inlineHardSwish(Rewriter& rw, NodeId n) {
    const Graph& g = rw.graph();
    // Copies, not references: the node is gone once replaceNodes returns.
    const std::string name = g.node(n).name;
    const ValueId x = g.node(n).inputs[0], y = g.node(n).outputs[0];
    ValueId gate = rw.newValue(name + "_HardSigmoid_Out", g.value(y).type);
    NodeId mul = rw.replaceNodes({n}, "Mul", {x, gate}, {y}, {},
                                 "the CPU provider has no HardSwish kernel: its function body (HardSigmoid, Mul) is inlined",
                                 name.empty() ? "Mul" : name + "_Mul");
    rw.addNode("HardSigmoid", {x}, {gate}, {Attribute::makeFloat("alpha", 1.0f / 6.0f), Attribute::makeFloat("beta", 0.5f)}, {mul},
               "HardSwish function body", name.empty() ? "HardSigmoid" : name + "_HardSigmoid");
    rw.applied({mul}, "function inlining: " + q(g, mul) + " and its HardSigmoid stand for a HardSwish (no CPU kernel)");
    return true;
}

}  // namespace

std::vector<RewriteRule> convActivationFusion() { return {{"ConvActivationFusion", {"Conv"}, "", fuseConv}}; }
std::vector<RewriteRule> gemmActivationFusion() { return {{"GemmActivationFusion", {"Gemm"}, "", fuseGemm}}; }
std::vector<RewriteRule> inlineFunctionsWithoutKernel() { return {{"InlineFunction", {"HardSwish"}, "", inlineHardSwish}}; }

}  // namespace passlens::passes::ort
