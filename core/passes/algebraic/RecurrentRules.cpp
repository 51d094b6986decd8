// LSTM, GRU and RNN: an initial hidden or cell state that is provably all zeros, of exactly the
// state's shape, is what the op assumes when the optional input is absent (the ONNX spec: "If
// not specified - assumed to be 0"), so the input is dropped. A batch-dynamic PyTorch export
// builds those zeros at run time (Shape → Gather → Unsqueeze → Concat → ConstantOfShape → Slice
// of [num_directions, batch, hidden]); the chain then becomes dead code.
#include "passes/algebraic/Rules.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

bool allZero(const Tensor& t) {
    const int64_t n = t.elementCount();
    if (n < 0 || (int64_t)t.byteSize() < n * (int64_t)elementSize(t.dtype)) return false;
    if (t.dtype == DataType::Float) {
        for (int64_t i = 0; i < n; ++i)
            if (t.as<float>()[i] != 0.0f) return false;  // -0 is a zero too
        return true;
    }
    if (t.dtype == DataType::Double) {
        for (int64_t i = 0; i < n; ++i)
            if (t.as<double>()[i] != 0.0) return false;
        return true;
    }
    if (t.dtype == DataType::String) return false;
    for (std::byte b : t.data.bytes())
        if (b != std::byte{0}) return false;
    return true;
}

/// True when every element of `v` is 0 whatever the inputs: a zero constant, a ConstantOfShape
/// of 0, or data movement (Slice, Expand, Reshape, ...) and Concat of such values.
bool provablyZero(const Graph& g, ValueId v, int depth = 0) {
    if (v == kNone || depth > 16) return false;
    if (TensorPtr c = match::constantOf(g, v)) return allZero(*c);
    const Value& value = g.value(v);
    if (value.isGraphInput || value.producer == kNone) return false;
    const Node& p = g.node(value.producer);
    if (!p.domain.empty() && p.domain != "ai.onnx") return false;
    const std::string& op = p.opType;
    if (op == "ConstantOfShape") {
        const Attribute* fill = p.attr("value");
        return !fill || (fill->t && fill->t->elementCount() == 1 && allZero(*fill->t));  // no value: float 0
    }
    if (op == "Concat") {
        for (ValueId in : p.inputs)
            if (!provablyZero(g, in, depth + 1)) return false;
        return !p.inputs.empty();
    }
    static const char* kMovers[] = {"Slice", "Expand", "Reshape", "Squeeze", "Unsqueeze", "Identity",
                                    "Transpose", "Tile", "Flatten", "Cast", "Gather"};
    for (const char* mover : kMovers)
        if (op == mover) return !p.inputs.empty() && provablyZero(g, p.inputs[0], depth + 1);
    return false;
}

bool sameDim(const ir::Dim& a, const ir::Dim& b) {
    if (a.isStatic() && b.isStatic()) return *a.value == *b.value;
    // A dim_param names one value wherever it appears (the shape engine writes canonical names).
    return !a.isStatic() && !b.isStatic() && !a.param.empty() && a.param == b.param;
}

/// Why `state` is not of the shape the op gives a missing initial state ("" when it is):
/// [num_directions, batch, hidden] (layout 0) or [batch, num_directions, hidden] (layout 1),
/// batch read from X.
std::string stateShapeMismatch(const Graph& g, const Node& n, ValueId state) {
    const TypeInfo& x = g.value(n.inputs[0]).type;
    const TypeInfo& s = g.value(state).type;
    if (!x.isTensor() || !x.shape || x.shape->rank() != 3) return "X's shape is not known as 3-D";
    if (!s.isTensor() || !s.shape || s.shape->rank() != 3) return "its shape is not known as 3-D";
    if (s.elemType != x.elemType) return "its element type is not X's";
    const Attribute* hidden = n.attr("hidden_size");
    if (!hidden) return "hidden_size is not set";
    const bool batchFirst = n.attrInt("layout", 0) != 0;
    const int64_t directions = n.attrString("direction", "forward") == "bidirectional" ? 2 : 1;
    const auto& xd = x.shape->dims;
    const auto& sd = s.shape->dims;
    const ir::Dim& batch = batchFirst ? xd[0] : xd[1];
    const ir::Dim& sBatch = batchFirst ? sd[0] : sd[1];
    const ir::Dim& sDirections = batchFirst ? sd[1] : sd[0];
    if (!sDirections.isStatic() || *sDirections.value != directions)
        return "its num_directions dim is not known to be " + std::to_string(directions);
    if (!sd[2].isStatic() || *sd[2].value != hidden->i) return "its last dim is not known to be hidden_size " + std::to_string(hidden->i);
    if (!sameDim(batch, sBatch)) return "its batch dim is not provably X's";
    return {};
}

}  // namespace

bool dropZeroInitialStates(Rewriter& rw, NodeId id, Revisit&) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    if (n.opType != "LSTM" && n.opType != "GRU" && n.opType != "RNN") return false;
    bool changed = false;
    // Slot 5 is initial_h for all three; LSTM's slot 6 is initial_c.
    for (size_t slot : {size_t(5), size_t(6)}) {
        const Node& node = rw.graph().node(id);
        if (slot == 6 && node.opType != "LSTM") break;
        if (slot >= node.inputs.size() || node.inputs[slot] == kNone) continue;
        const ValueId state = node.inputs[slot];
        if (!provablyZero(rw.graph(), state)) continue;
        rw.setRule("zero-initial-state");
        const std::string what = slot == 5 ? "initial_h" : "initial_c";
        const std::string name = node.displayName(), stateName = rw.graph().value(state).name;
        if (const std::string why = stateShapeMismatch(rw.graph(), node, state); !why.empty()) {
            rw.missed({id}, what + " '" + stateName + "' is all zeros but stays: " + why, {state});
            continue;
        }
        const std::string why = name + "'s " + what + " '" + stateName +
                                "' is all zeros of the state's shape, what the op assumes when it is absent";
        rw.setInput(id, slot, kNone, why);
        rw.applied({id}, why);
        changed = true;
    }
    return changed;
}

}  // namespace passlens::passes::algebraic
