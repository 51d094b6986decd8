// HardSigmoid and HardSwish from their decomposed forms:
//   clip(x+3, 0, 6)/6            → HardSigmoid(x, alpha=1/6, beta=0.5)      (any opset)
//   x·clip(x+3, 0, 6)/6          → HardSwish(x)                             (opset ≥ 14)
//   x·HardSigmoid(x, 1/6, 0.5)   → HardSwish(x)                             (opset ≥ 14)
//   x·clip(x+3, 0, 6)/6          → x·HardSigmoid(x)                         (opset < 14)
// Clip's bounds are attributes before opset 11 and inputs from 11 on; both are read. "/6" may be
// Div by 6 or Mul by 1/6.
#include <cmath>
#include <limits>

#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::pattern;

namespace {

constexpr int64_t kHardSwishOpset = 14;

/// Clip's [min, max], from attributes (opset < 11) or constant inputs (opset ≥ 11).
std::optional<std::pair<double, double>> clipBounds(const Graph& g, const Node& clip) {
    double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
    if (clip.attr("min") || clip.attr("max")) {
        lo = clip.attrFloat("min", float(lo));
        hi = clip.attrFloat("max", float(hi));
    }
    for (size_t i = 1; i < clip.inputs.size() && i < 3; ++i) {
        if (clip.inputs[i] == kNone) continue;
        auto v = scalarOf(g, clip.inputs[i]);
        if (!v) return std::nullopt;
        (i == 1 ? lo : hi) = *v;
    }
    return std::make_pair(lo, hi);
}

/// A "/6" reader of `v`: Div(v, 6) or Mul(v, 1/6) / Mul(1/6, v). Returns the node or kNone.
NodeId divideBySix(const Graph& g, ValueId v) {
    if (g.value(v).consumers.size() != 1) return kNone;
    NodeId c = g.value(v).consumers[0];
    const Node& n = g.node(c);
    if (isOp(n, "Div") && n.inputs.size() == 2 && n.inputs[0] == v && near(scalarOf(g, n.inputs[1]).value_or(0), 6.0))
        return c;
    if (isOp(n, "Mul") && near(scalarOf(g, otherInput(n, v)).value_or(0), 1.0 / 6.0, 1e-4)) return c;
    return kNone;
}

/// clip(x+3, 0, 6) ending at `clipId`: returns x (kNone when this is not that shape).
ValueId hardSigmoidCore(const Graph& g, NodeId clipId, NodeId& addId) {
    const Node& clip = g.node(clipId);
    auto bounds = clipBounds(g, clip);
    if (!bounds || !near(bounds->first, 0.0) || !near(bounds->second, 6.0)) return kNone;
    addId = producerOf(g, clip.inputs[0], "Add");
    if (addId == kNone) return kNone;
    const Node& add = g.node(addId);
    if (add.inputs.size() != 2) return kNone;
    for (int i = 0; i < 2; ++i)
        if (near(scalarOf(g, add.inputs[size_t(i)]).value_or(0), 3.0) && !constantOf(g, add.inputs[size_t(1 - i)]))
            return add.inputs[size_t(1 - i)];
    return kNone;
}

bool onlyReadInside(const Graph& g, ValueId v, NodeId reader) { return !readOutside(g, v, {reader}); }

std::vector<ValueId> constantInputs(const Graph& g, const std::vector<NodeId>& nodes) {
    std::vector<ValueId> out;
    for (NodeId n : nodes)
        for (ValueId v : g.node(n).inputs)
            if (constantOf(g, v)) out.push_back(v);
    return out;
}

}  // namespace

void FuseHardSwish::runImpl(PassContext& ctx) const {
    const int64_t opset = defaultOpset(ctx.model());
    const std::string needs = "HardSwish needs opset " + std::to_string(kHardSwishOpset) + ", the model has opset " +
                              std::to_string(opset) + " (use --target-opset " + std::to_string(kHardSwishOpset) + ")";
    ctx.forEachGraph([&](Rewriter& rw) {
        const Graph& g = rw.graph();
        for (NodeId clipId : std::vector<NodeId>(g.nodeOrder())) {
            if (!g.hasNode(clipId) || !isOp(g.node(clipId), "Clip")) continue;
            NodeId addId = kNone;
            ValueId x = hardSigmoidCore(g, clipId, addId);
            if (x == kNone) continue;
            ValueId clipOut = g.node(clipId).outputs[0];
            const std::string where = "clip(x+3, 0, 6) at " + g.node(clipId).displayName();
            if (!onlyReadInside(g, g.node(addId).outputs[0], clipId)) {
                rw.setRule("hard-sigmoid");
                rw.missed({addId, clipId}, where + " not fused: '" + g.value(g.node(addId).outputs[0]).name + "' has " +
                                               std::to_string(readerCount(g, g.node(addId).outputs[0])) + " readers (" +
                                               readersOf(g, g.node(addId).outputs[0]) + ")",
                          {g.node(addId).outputs[0]});
                continue;
            }
            // x·clip(x+3, 0, 6)/6 → HardSwish. The /6 is a scalar step after the product: Div by 6 or
            // Mul by 1/6, or (after the algebraic pass merged it with a following scale) Mul by k or
            // Div by c; then HardSwish(x) keeps the step with its constant rescaled by 6.
            if (g.value(clipOut).consumers.size() == 1 && onlyReadInside(g, clipOut, g.value(clipOut).consumers[0])) {
                NodeId mulId = g.value(clipOut).consumers[0];
                ValueId prod = g.node(mulId).outputs[0];
                if (isOp(g.node(mulId), "Mul") && otherInput(g.node(mulId), clipOut) == x && g.value(prod).consumers.size() == 1 &&
                    onlyReadInside(g, prod, g.value(prod).consumers[0])) {
                    const NodeId stepId = g.value(prod).consumers[0];
                    const Node& step = g.node(stepId);
                    const ValueId k = otherInput(step, prod);
                    const auto kv = k == kNone ? std::nullopt : scalarOf(g, k);
                    const bool isDiv = isOp(step, "Div") && step.inputs[0] == prod;
                    if (kv && *kv != 0 && (isDiv || isOp(step, "Mul")) && constantOf(g, k)->dtype == DataType::Float) {
                        rw.setRule("hard-swish");
                        // What remains after HardSwish(x) = x·clip(x+3, 0, 6)/6: a factor of 6/c or 6k.
                        const double factor = isDiv ? 6.0 / *kv : 6.0 * *kv;
                        const bool absorb = near(factor, 1.0, 1e-5);
                        const size_t kSlot = step.inputs[0] == k ? 0 : 1;
                        const ValueId stepOut = step.outputs[0];
                        const std::string clipName = g.node(clipId).displayName(), stepName = step.displayName();
                        std::vector<NodeId> group{addId, clipId, mulId};
                        if (absorb) group.push_back(stepId);
                        auto constants = constantInputs(g, group);
                        auto rescale = [&] {
                            if (absorb) return;
                            const double c = isDiv ? *kv / 6.0 : *kv * 6.0;
                            ValueId nk = rw.newInitializer(g.value(k).name + "_hardswish",
                                                           makeTensorOf(DataType::Float, constantOf(g, k)->dims, std::vector<float>{float(c)}));
                            rw.setInput(stepId, kSlot, nk, "the /6 moved into the fused op; " + stepName + " keeps the rest of its scale");
                            constants.push_back(k);
                        };
                        const std::string rest = absorb ? "" : "; " + stepName + " keeps the remaining scale";
                        if (opset < kHardSwishOpset) {
                            // Below opset 14: x·(clip(x+3, 0, 6)/6) = x·HardSigmoid(x); the second loop
                            // then says which opset HardSwish needs.
                            rw.setRule("hard-sigmoid");
                            NodeId hs = rw.replaceNodes({addId, clipId}, "HardSigmoid", {x}, {clipOut},
                                                        {Attribute::makeFloat("alpha", 1.f / 6.f), Attribute::makeFloat("beta", 0.5f)},
                                                        "clip(x+3, 0, 6) and the /6 after the product are HardSigmoid(x, 1/6, 0.5)",
                                                        clipName + ".hardsigmoid");
                            if (absorb) rw.bypassNode(stepId, 0, 0, "the /6 moved into HardSigmoid");
                            rescale();
                            rw.applied({hs, mulId}, "x·clip(x+3, 0, 6)/6 at " + clipName + ": " + std::to_string(group.size()) +
                                                        " nodes became x·HardSigmoid(x)" + rest);
                            removeUnreadConstants(rw, constants, "hard-sigmoid fusion");
                            continue;
                        }
                        NodeId fused = rw.replaceNodes(group, "HardSwish", {x}, {absorb ? stepOut : prod}, {},
                                                       "x·clip(x+3, 0, 6)/6 is HardSwish(x)", g.node(mulId).displayName() + ".hardswish");
                        rescale();
                        rw.applied({fused}, "x·clip(x+3, 0, 6)/6 at " + clipName + ": " + std::to_string(group.size()) +
                                                " nodes fused into HardSwish" + rest);
                        removeUnreadConstants(rw, constants, "hard-swish fusion");
                        continue;
                    }
                }
            }
            // clip(x+3, 0, 6)/6 → HardSigmoid.
            NodeId divId = divideBySix(g, clipOut);
            if (divId == kNone || !onlyReadInside(g, clipOut, divId)) continue;
            rw.setRule("hard-sigmoid");
            std::vector<NodeId> group{addId, clipId, divId};
            auto constants = constantInputs(g, group);
            NodeId fused = rw.replaceNodes(group, "HardSigmoid", {x}, {g.node(divId).outputs[0]},
                                           {Attribute::makeFloat("alpha", 1.f / 6.f), Attribute::makeFloat("beta", 0.5f)},
                                           "clip(x+3, 0, 6)/6 is HardSigmoid(x, 1/6, 0.5)", g.node(clipId).displayName() + ".hardsigmoid");
            rw.applied({fused}, where + ": 3 nodes fused into HardSigmoid(alpha 1/6, beta 0.5)");
            removeUnreadConstants(rw, constants, "hard-sigmoid fusion");
        }
        // x·HardSigmoid(x, 1/6, 0.5) → HardSwish (including the HardSigmoids made above).
        rw.setRule("hard-swish");
        for (NodeId hsId : std::vector<NodeId>(g.nodeOrder())) {
            if (!g.hasNode(hsId) || !isOp(g.node(hsId), "HardSigmoid")) continue;
            const Node& hs = g.node(hsId);
            if (!near(hs.attrFloat("alpha", 0.2f), 1.0 / 6.0, 1e-5) || !near(hs.attrFloat("beta", 0.5f), 0.5)) continue;
            ValueId x = hs.inputs[0], h = hs.outputs[0];
            NodeId mulId = kNone;
            for (NodeId c : g.value(h).consumers)
                if (isOp(g.node(c), "Mul") && otherInput(g.node(c), h) == x) mulId = c;
            if (mulId == kNone) continue;
            const std::string where = "x·HardSigmoid(x) at " + g.node(mulId).displayName();
            if (!onlyReadInside(g, h, mulId)) {
                rw.missed({hsId, mulId}, where + " not fused: '" + g.value(h).name + "' has " + std::to_string(readerCount(g, h)) +
                                             " readers (" + readersOf(g, h) + ")",
                          {h});
                continue;
            }
            if (opset < kHardSwishOpset) {
                rw.missed({hsId, mulId}, where + " not fused: " + needs);
                continue;
            }
            NodeId fused = rw.replaceNodes({hsId, mulId}, "HardSwish", {x}, {g.node(mulId).outputs[0]}, {},
                                           "x·HardSigmoid(x, 1/6, 0.5) is HardSwish(x)", g.node(mulId).displayName() + ".hardswish");
            rw.applied({fused}, where + ": 2 nodes fused into HardSwish");
        }
    });
}

std::unique_ptr<Pass> makeFuseHardSwishPass() { return std::make_unique<FuseHardSwish>(); }

}  // namespace passlens::passes
