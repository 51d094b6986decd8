// Relu and Clip merges (ONNX Runtime's level-1 FuseReluClip): Relu(Clip(x, lo, hi)) and
// Clip(Relu(x), lo, hi) are both Clip(x, max(lo, 0), hi) when lo <= hi and hi >= 0. With hi < 0 the
// pair is constant (0 or hi) and a Clip with min > max would give hi instead, so it is refused.
#include <algorithm>
#include <limits>

#include "passes/algebraic/Rules.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

/// The bounds of a float32 Clip: attributes before opset 11, optional constant inputs from 11.
/// nullopt when a bound is a non-constant input or not a float32 scalar.
struct ClipBounds {
    float lo = -std::numeric_limits<float>::infinity();
    float hi = std::numeric_limits<float>::infinity();
    bool fromInputs = false;
};

std::optional<float> floatScalar(const Graph& g, ValueId v) {
    const Value& val = g.value(v);
    if (!val.initializer || val.isGraphInput || val.initializer->dtype != DataType::Float ||
        val.initializer->elementCount() != 1 || val.initializer->byteSize() < 4)
        return std::nullopt;
    return val.initializer->as<float>()[0];
}

std::optional<ClipBounds> boundsOf(const Graph& g, const Node& clip) {
    ClipBounds b;
    if (clip.attr("min") || clip.attr("max")) {
        b.lo = clip.attrFloat("min", b.lo);
        b.hi = clip.attrFloat("max", b.hi);
        return b;
    }
    b.fromInputs = true;
    for (size_t slot : {size_t{1}, size_t{2}}) {
        if (slot >= clip.inputs.size() || clip.inputs[slot] == kNone) continue;
        auto s = floatScalar(g, clip.inputs[slot]);
        if (!s) return std::nullopt;
        (slot == 1 ? b.lo : b.hi) = *s;
    }
    return b;
}

bool isDefaultOp(const Node& n, const char* op) { return n.opType == op && (n.domain.empty() || n.domain == "ai.onnx"); }

}  // namespace

bool mergeReluClip(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& outer = g.node(id);
    if (!isDefaultOp(outer, "Relu") && !isDefaultOp(outer, "Clip")) return false;
    const NodeId innerId = g.value(outer.inputs[0]).producer;
    if (innerId == kNone) return false;
    const Node& inner = g.node(innerId);
    const bool reluOfClip = isDefaultOp(outer, "Relu") && isDefaultOp(inner, "Clip");
    const bool clipOfRelu = isDefaultOp(outer, "Clip") && isDefaultOp(inner, "Relu");
    if (!reluOfClip && !clipOfRelu) return false;
    const Node& clip = reluOfClip ? inner : outer;
    const ValueId x = inner.inputs.empty() ? kNone : inner.inputs[0];
    if (x == kNone || g.value(x).type.elemType != DataType::Float) return false;
    rw.setRule(reluOfClip ? "relu-clip" : "clip-relu");
    const std::string pair = inner.displayName() + " → " + outer.displayName();
    if (!match::hasSingleReader(rw.graph(), outer.inputs[0])) {
        rw.missed({innerId, id}, pair + " not merged: '" + g.value(outer.inputs[0]).name + "' has other readers");
        return true;
    }
    auto b = boundsOf(g, clip);
    if (!b) {
        rw.missed({innerId, id}, pair + " not merged: " + clip.displayName() + "'s bounds are not float32 constants");
        return true;
    }
    if (!(b->lo <= b->hi) || b->hi < 0.f) {
        rw.missed({innerId, id}, pair + " not merged: the Clip bounds [" + std::to_string(b->lo) + ", " +
                                     std::to_string(b->hi) + "] are empty or below 0, where Relu and Clip do not commute");
        return true;
    }
    const float lo = std::max(b->lo, 0.f);
    std::vector<ValueId> inputs{x};
    std::vector<Attribute> attrs;
    // Read the nodes before the first edit (newInitializer): no reference is kept past it.
    const std::string clipName = clip.displayName();
    const ValueId out = outer.outputs[0];
    const ValueId hi = clip.inputs.size() > 2 ? clip.inputs[2] : kNone;
    const bool hasMaxAttr = clip.attr("max") != nullptr;
    if (b->fromInputs) {
        inputs.push_back(rw.newInitializer(clipName + "_min", makeTensorOf<float>(DataType::Float, {}, {lo})));
        if (hi != kNone) inputs.push_back(hi);
    } else {
        attrs.push_back(Attribute::makeFloat("min", lo));
        if (hasMaxAttr) attrs.push_back(Attribute::makeFloat("max", b->hi));
    }
    const std::string why = pair + ": Relu and Clip merge into one Clip with min " + std::to_string(lo);
    const NodeId merged = rw.replaceNodes({innerId, id}, "Clip", inputs, {out}, attrs, why, clipName);
    rw.applied({merged}, why);
    revisit.push_back(merged);
    return true;
}

}  // namespace passlens::passes::algebraic
