// outer-sum-windows: the window partition of an outer sum is the outer sum of partitioned sides.
// Swin's shifted-window mask labels an image as row[r] + col[c] (an Add of a [P, 1] and a [Q]
// tensor; box-grid-labels writes it so) and cuts it into k1 × k2 windows:
//   Transpose(Reshape(row + col, [P/k1, k1, Q/k2, k2]), [0, 2, 1, 3])[i, j, a, b]
//     = row[k1·i + a] + col[k2·j + b]
//     = Reshape(row, [-1, 1, k1, 1])[i, 0, a, 0] + Reshape(col, [1, -1, 1, k2])[0, j, 0, b].
// The computed target (a Shape of the padded feature map in a size-dynamic export) and the
// Transpose go; the two Reshapes have constant targets. Exact when k1 divides P and the target's
// first dim is P/k1 (and the same for Q), which the shape engine proves on the expressions; a
// -1 of a side with no elements is 0, as the original's.
#include "ir/Tensor.h"
#include "passes/SymbolicRewrites.h"
#include "passes/match/Match.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

struct Candidate {
    NodeId add = kNone, reshape = kNone, transpose = kNone;
};

/// Transpose([0, 2, 1, 3]) of Reshape(Add(x, y), computed target), each middle value read once.
std::optional<Candidate> candidateAt(const Graph& g, NodeId id) {
    const Node& tr = g.node(id);
    if (tr.opType != "Transpose" || !match::inDefaultDomain(tr) || tr.inputs.size() != 1 || tr.outputs.size() != 1 ||
        tr.inputs[0] == kNone || tr.attrInts("perm") != std::vector<int64_t>{0, 2, 1, 3})
        return std::nullopt;
    const ValueId windows = tr.inputs[0];
    const NodeId r = g.value(windows).producer;
    if (r == kNone || !match::hasSingleReader(g, windows)) return std::nullopt;
    const Node& reshape = g.node(r);
    if (reshape.opType != "Reshape" || !match::inDefaultDomain(reshape) || reshape.inputs.size() != 2 ||
        reshape.inputs[0] == kNone || reshape.inputs[1] == kNone || reshape.attrInt("allowzero", 0) != 0)
        return std::nullopt;
    // A constant target leaves nothing to remove: the rewrite would only move nodes.
    if (match::constantOf(g, reshape.inputs[1])) return std::nullopt;
    const ValueId sum = reshape.inputs[0];
    const NodeId add = g.value(sum).producer;
    if (add == kNone || !match::hasSingleReader(g, sum)) return std::nullopt;
    const Node& a = g.node(add);
    if (a.opType != "Add" || !match::inDefaultDomain(a) || a.inputs.size() != 2 || a.inputs[0] == kNone ||
        a.inputs[1] == kNone)
        return std::nullopt;
    return Candidate{add, r, id};
}

bool isConstant(const shape::Dim& d, int64_t k) { return d && d->constantValue() == std::optional<int64_t>(k); }


/// `whole` cut into windows of `k`: k divides it and the window count is `count`.
bool cutsEvenly(const shape::Dim& whole, const shape::Dim& count, int64_t k) {
    if (!whole || !count || k < 1) return false;
    try {
        return shape::mod(*whole, shape::DimExpr::constant(k)).constantValue() == std::optional<int64_t>(0) &&
               shape::floorDiv(*whole, shape::DimExpr::constant(k)) == *count;
    } catch (const shape::ExprError&) {
        return false;
    }
}

ValueId int64Constant(Rewriter& rw, const std::string& hint, std::vector<int64_t> v) {
    return rw.newInitializer(hint, makeTensorOf<int64_t>(DataType::Int64, {(int64_t)v.size()}, v));
}

}  // namespace

void splitOuterSumWindows(Rewriter& rw) {
    std::vector<Candidate> found;
    for (NodeId id : rw.graph().nodeOrder())
        if (auto c = candidateAt(rw.graph(), id)) found.push_back(*c);
    if (found.empty()) return;
    const shape::ShapeAnalysis a = shape::analyzeShapes(rw.graph(), &rw.model());
    bool changed = false;
    rw.setRule("outer-sum-windows");
    for (const Candidate& c : found) {
        const Graph& g = rw.graph();
        const Node& add = g.node(c.add);
        const Node& reshape = g.node(c.reshape);
        auto dimsOf = [&](ValueId v) -> std::optional<std::vector<shape::Dim>> {
            return v < a.values.size() ? a.of(v).dims : std::nullopt;
        };
        auto sum = dimsOf(add.outputs[0]), windows = dimsOf(reshape.outputs[0]);
        if (!sum || !windows || sum->size() != 2 || windows->size() != 4) continue;
        const int64_t k1 = (*windows)[1] ? (*windows)[1]->constantValue().value_or(0) : 0;
        const int64_t k2 = (*windows)[3] ? (*windows)[3]->constantValue().value_or(0) : 0;
        if (k1 < 1 || k2 < 1) continue;  // a window of unknown or no size
        if (!cutsEvenly((*sum)[0], (*windows)[0], k1) || !cutsEvenly((*sum)[1], (*windows)[2], k2)) continue;
        // Which operand varies along rows only ([P, 1]) and which along columns only ([Q] or [1, Q]).
        int rowSlot = -1;
        for (int s = 0; s < 2; ++s) {
            auto row = dimsOf(add.inputs[s]), col = dimsOf(add.inputs[1 - s]);
            if (!row || !col || row->size() != 2 || !isConstant((*row)[1], 1) || !(*row)[0] || !(*sum)[0] ||
                *(*row)[0] != *(*sum)[0])
                continue;
            const bool colOk = (col->size() == 1 && (*col)[0] && (*sum)[1] && *(*col)[0] == *(*sum)[1]) ||
                               (col->size() == 2 && isConstant((*col)[0], 1) && (*col)[1] && (*sum)[1] &&
                                *(*col)[1] == *(*sum)[1]);
            if (colOk) rowSlot = s;
        }
        if (rowSlot < 0) continue;
        const ValueId row = add.inputs[rowSlot], col = add.inputs[1 - rowSlot];
        const ValueId out = g.node(c.transpose).outputs[0];
        const std::string name = g.node(c.transpose).displayName();
        const std::string why = name + " cuts " + add.displayName() + " (rows + columns) into " + std::to_string(k1) + " x " +
                                std::to_string(k2) + " windows: the sum of the rows and the columns each cut alone";
        const TypeInfo& outType = g.value(out).type;
        const DataType dtype = outType.isTensor() ? outType.elemType : DataType::Undefined;
        auto typed = [&](std::vector<Dim> dims) {
            return dtype == DataType::Undefined ? TypeInfo{} : TypeInfo::tensor(dtype, Shape{dims});
        };
        const ValueId rows = rw.newValue(g.value(row).name + "_windows", typed({Dim{}, Dim::of(1), Dim::of(k1), Dim::of(1)}));
        const ValueId cols = rw.newValue(g.value(col).name + "_windows", typed({Dim::of(1), Dim{}, Dim::of(1), Dim::of(k2)}));
        rw.addNode("Reshape", {row, int64Constant(rw, "window_rows", {-1, 1, k1, 1})}, {rows}, {}, {c.reshape}, why,
                   g.value(row).name + "_windows");
        rw.addNode("Reshape", {col, int64Constant(rw, "window_cols", {1, -1, 1, k2})}, {cols}, {}, {c.reshape}, why,
                   g.value(col).name + "_windows");
        std::vector<ValueId> inputs = rowSlot == 0 ? std::vector<ValueId>{rows, cols} : std::vector<ValueId>{cols, rows};
        const NodeId merged = rw.replaceNodes({c.add, c.reshape, c.transpose}, "Add", inputs, {out}, {}, why, name);
        rw.applied({merged}, why);
        changed = true;
    }
    if (changed) rw.restoreTopologicalOrder();
}

}  // namespace passlens::passes
