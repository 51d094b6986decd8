#pragma once
// The push-through rules of the `transpose` pass: for each layout-agnostic op, which inputs carry
// the layout and how the op's axes, pads or other index inputs change when a Transpose(perm)
// feeding it moves below it. The optimizer (TransposeOptimizer.cpp) does the graph surgery.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/Model.h"
#include "passes/layout/TransposeUtil.h"

namespace passlens::passes::layoututil {

/// What moving Transpose(perm) from above to below a node changes on the node itself.
struct PushEdit {
    std::vector<ir::Attribute> attrs;                      ///< the node's attributes, axes rewritten
    std::vector<std::pair<size_t, ir::TensorPtr>> inputs;  ///< index inputs replaced by new constants
    /// Perm of the Transpose put back after the outputs when it is not the pushed perm (a reduce
    /// without keepdims drops axes); identity = no Transpose needed.
    std::optional<Perm> outputPerm;
};

struct RuleInput {
    const ir::Model& model;
    const ir::Graph& graph;
    const ir::Node& node;
    const Perm& perm;  ///< perm of the Transpose(s) feeding the layout slots
    int64_t opset;     ///< the model's ai.onnx opset
};

struct PushRule {
    /// Input slots that carry the layout (broadcast together with the data).
    std::vector<size_t> (*slots)(const ir::Node&);
    /// Fills `edit` for data in the pre-transpose layout; false and `why` to refuse.
    bool (*edit)(const RuleInput&, PushEdit& edit, std::string& why);
    /// Non-constant operands of a known rank up to this stay untouched (MatMul's matrices
    /// broadcast over any batch order); 0 = only scalars.
    int64_t keepRankAtMost = 0;
};

/// The push rule for a standard-domain op, nullptr when the op is layout-sensitive or unknown.
const PushRule* pushRuleFor(const ir::Node& n);

/// The perm that maps reduce(x, axes of x, keepdims=0) to reduce(transpose(x, perm), ...):
/// `perm` with the removed axes (`removed`, axes of x) taken out and renumbered.
Perm squeezePerm(const Perm& perm, const std::vector<int64_t>& removed);

/// Axis `a` of transpose(x, perm) is axis perm[a] of x; nullopt when out of range.
std::optional<int64_t> axisBeforeTranspose(int64_t a, const Perm& perm);

}  // namespace passlens::passes::layoututil
