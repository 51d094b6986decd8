// Conv followed by Mul or Add of a per-channel constant, folded into the Conv:
//   Mul(Conv(x, W, b), s) → Conv(x, W·s[c], b·s[c])      Add(Conv(x, W, b), t) → Conv(x, W, b + t[c])
// s/t must broadcast over the output channel only ([C,1,1], [1,C,1,1], a scalar...) and the
// Conv's output must have the Mul/Add as its only reader. Chains (Mul then Add) fold one by one.
#include <cmath>

#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::pattern;

namespace {

/// Per-output-channel values of `t` for a Conv output of rank `rank` with `channels` channels, or
/// nullopt when `t` varies along any other axis (or would raise the output's rank).
std::optional<std::vector<double>> perChannel(const Graph& g, ValueId t, size_t rank, int64_t channels) {
    auto vals = floatValues(g, t);
    const TensorPtr tensor = constantOf(g, t);
    if (!vals || !tensor || tensor->dims.size() > rank) return std::nullopt;
    std::vector<int64_t> dims(rank - tensor->dims.size(), 1);
    dims.insert(dims.end(), tensor->dims.begin(), tensor->dims.end());
    for (size_t i = 0; i < rank; ++i)
        if (dims[i] != 1 && !(i == 1 && dims[i] == channels)) return std::nullopt;
    if (vals->size() == 1) return std::vector<double>(size_t(channels), (*vals)[0]);
    return vals;
}

}  // namespace

void FuseConvScaleShift::runImpl(PassContext& ctx) const {
    ctx.forEachGraph([&](Rewriter& rw) {
        const Graph& g = rw.graph();
        rw.setRule("fold-conv-mul-add");
        for (NodeId start : std::vector<NodeId>(g.nodeOrder())) {
            NodeId convId = start;
            while (g.hasNode(convId) && isOp(g.node(convId), "Conv")) {
                const Node& conv = g.node(convId);
                ValueId y = conv.outputs[0];
                if (g.value(y).consumers.empty()) break;
                NodeId opId = g.value(y).consumers[0];
                const Node& op = g.node(opId);
                if ((!isOp(op, "Mul") && !isOp(op, "Add")) || op.inputs.size() != 2) break;
                const bool isMul = op.opType == "Mul";
                const TensorPtr w = conv.inputs.size() > 1 ? constantOf(g, conv.inputs[1]) : nullptr;
                if (!w || w->dtype != DataType::Float || w->dims.size() < 3 || w->dims[0] <= 0) break;
                const int64_t channels = w->dims[0];
                ValueId k = otherInput(op, y);
                auto coeff = k == kNone ? std::nullopt : perChannel(g, k, w->dims.size(), channels);
                if (!coeff) break;  // not a per-channel constant: not this pattern
                const std::string pair = conv.displayName() + " + " + op.displayName();
                if (readerCount(g, y) != 1) {
                    rw.missed({convId, opId}, pair + " not folded: " + conv.displayName() + "'s output has " +
                                                  std::to_string(readerCount(g, y)) + " readers (" + readersOf(g, y) + ")",
                              {y});
                    break;
                }
                const TensorPtr b = conv.inputs.size() > 2 && conv.inputs[2] != kNone ? constantOf(g, conv.inputs[2]) : nullptr;
                if (conv.inputs.size() > 2 && conv.inputs[2] != kNone && (!b || b->dtype != DataType::Float)) {
                    rw.missed({convId, opId}, pair + " not folded: " + conv.displayName() + "'s bias is not a float32 constant");
                    break;
                }
                // Mul: y·s (weights and bias scale); Add: y + s (the bias shifts, the weights stay).
                const std::vector<double> zeros(static_cast<size_t>(channels), 0.0), ones(static_cast<size_t>(channels), 1.0);
                const auto [newW, newB] = isMul ? foldChannelAffine(*w, b.get(), zeros, *coeff, zeros)
                                                : foldChannelAffine(*w, b.get(), zeros, ones, *coeff);
                std::vector<ValueId> oldConstants{conv.inputs[1], k};
                if (b) oldConstants.push_back(conv.inputs[2]);
                // Everything read from the two nodes is read here, before the first edit.
                const std::string convName = conv.displayName();
                std::vector<Attribute> attrs = conv.attributes;
                const ValueId x = conv.inputs[0], weights = conv.inputs[1];
                const ValueId out = op.outputs[0];
                ValueId wv = isMul ? rw.newInitializer(g.value(weights).name + "_scaled", makeTensorOf(DataType::Float, w->dims, newW))
                                   : weights;
                ValueId bv = rw.newInitializer(convName + ".bias_folded", makeTensorOf(DataType::Float, {channels}, newB));
                convId = rw.replaceNodes({convId, opId}, "Conv", {x, wv, bv}, {out}, std::move(attrs),
                                         pair + ": the per-channel " + (isMul ? "scale" : "shift") + " folded into the Conv's " +
                                             (isMul ? "weights and bias" : "bias"),
                                         convName);
                rw.applied({convId}, pair + " folded into one Conv (per-channel " + std::string(isMul ? "Mul" : "Add") + ")");
                removeUnreadConstants(rw, oldConstants, "folding into the Conv");
            }
        }
    });
}

std::unique_ptr<Pass> makeFuseConvScaleShiftPass() { return std::make_unique<FuseConvScaleShift>(); }

}  // namespace passlens::passes
