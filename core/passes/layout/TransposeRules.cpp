#include "passes/layout/TransposeRules.h"

#include <algorithm>
#include <map>

namespace passlens::passes::layoututil {

using namespace passlens::ir;

std::optional<int64_t> axisBeforeTranspose(int64_t a, const Perm& perm) {
    const auto rank = static_cast<int64_t>(perm.size());
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return std::nullopt;
    return perm[static_cast<size_t>(a)];
}

Perm squeezePerm(const Perm& perm, const std::vector<int64_t>& removed) {
    auto isRemoved = [&](int64_t a) { return std::find(removed.begin(), removed.end(), a) != removed.end(); };
    Perm out;
    for (int64_t src : perm) {
        if (isRemoved(src)) continue;
        int64_t below = 0;  // position of x-axis `src` once the removed axes are gone
        for (int64_t a = 0; a < src; ++a) below += isRemoved(a) ? 0 : 1;
        out.push_back(below);
    }
    return out;
}

namespace {

std::vector<size_t> allSlots(const Node& n) {
    std::vector<size_t> s;
    for (size_t i = 0; i < n.inputs.size(); ++i) s.push_back(i);
    return s;
}
std::vector<size_t> firstSlot(const Node&) { return {0}; }
std::vector<size_t> firstTwoSlots(const Node&) { return {0, 1}; }

void setAttr(std::vector<Attribute>& attrs, Attribute a) {
    for (auto& at : attrs)
        if (at.name == a.name) { at = std::move(a); return; }
    attrs.push_back(std::move(a));
}

/// Maps every axis in `axes` through the perm; false when one is out of range.
bool mapAxes(std::vector<int64_t>& axes, const Perm& perm) {
    for (auto& a : axes) {
        auto m = axisBeforeTranspose(a, perm);
        if (!m) return false;
        a = *m;
    }
    return true;
}

/// The constant int values of optional input `slot` (nullopt + why when absent or not constant).
std::optional<std::vector<int64_t>> constInts(const RuleInput& in, size_t slot, const char* what, std::string& why) {
    ValueId v = slot < in.node.inputs.size() ? in.node.inputs[slot] : kNone;
    TensorPtr t = v == kNone ? nullptr : constantOf(in.graph, v);
    auto vals = t ? intValues(*t) : std::nullopt;
    if (!vals) why = std::string(what) + (t ? " is not an int32/int64 tensor" : " is not a constant");
    return vals;
}

bool keepAttrs(const RuleInput& in, PushEdit& e, std::string&) {
    e.attrs = in.node.attributes;
    return true;
}

bool singleAxis(const RuleInput& in, PushEdit& e, std::string& why, int64_t dflt) {
    e.attrs = in.node.attributes;
    auto a = axisBeforeTranspose(in.node.attrInt("axis", dflt), in.perm);
    if (!a) { why = "axis out of range"; return false; }
    setAttr(e.attrs, Attribute::makeInt("axis", *a));
    return true;
}

bool concatEdit(const RuleInput& in, PushEdit& e, std::string& why) { return singleAxis(in, e, why, 0); }
bool splitEdit(const RuleInput& in, PushEdit& e, std::string& why) { return singleAxis(in, e, why, 0); }

bool softmaxEdit(const RuleInput& in, PushEdit& e, std::string& why) {
    if (in.opset >= 13) return singleAxis(in, e, why, -1);
    // Before opset 13 the input is coerced to 2-D at `axis`: the result is unchanged only when the
    // perm maps the trailing block [axis, rank) onto itself (softmax ignores order inside it).
    e.attrs = in.node.attributes;
    const auto rank = static_cast<int64_t>(in.perm.size());
    int64_t a = in.node.attrInt("axis", 1);
    if (a < 0) a += rank;
    for (int64_t i = 0; i < rank; ++i)
        if ((i >= a) != (in.perm[static_cast<size_t>(i)] >= a)) {
            why = in.node.opType + " (opset " + std::to_string(in.opset) + ") flattens to 2-D at axis " +
                  std::to_string(a) + " and the perm moves axes across that boundary";
            return false;
        }
    return true;
}

bool reduceEdit(const RuleInput& in, PushEdit& e, std::string& why) {
    e.attrs = in.node.attributes;
    const bool keepdims = in.node.attrInt("keepdims", 1) != 0;
    const bool axesAsInput = (in.node.opType == "ReduceSum" && in.opset >= 13) || in.opset >= 18;
    std::optional<std::vector<int64_t>> axes;  // nullopt = all axes
    if (axesAsInput) {
        if (in.node.inputs.size() > 1 && in.node.inputs[1] != kNone) {
            axes = constInts(in, 1, "axes", why);
            if (!axes) return false;
            if (axes->empty()) axes.reset();
        }
        if (!axes && in.node.attrInt("noop_with_empty_axes", 0) != 0) return true;  // identity
    } else if (const Attribute* a = in.node.attr("axes")) {
        axes = a->ints;
    }
    if (axes) {
        if (!mapAxes(*axes, in.perm)) { why = "axis out of range"; return false; }
        if (axesAsInput) e.inputs.emplace_back(1, intTensor(DataType::Int64, *axes));
        else setAttr(e.attrs, Attribute::makeInts("axes", *axes));
    }
    if (!keepdims) {  // the reduced axes disappear: the Transpose after drops them too
        std::vector<int64_t> removed;
        if (axes) removed = *axes;
        else
            for (size_t i = 0; i < in.perm.size(); ++i) removed.push_back(static_cast<int64_t>(i));
        e.outputPerm = squeezePerm(in.perm, removed);
    }
    return true;
}

bool sliceEdit(const RuleInput& in, PushEdit& e, std::string& why) {
    e.attrs = in.node.attributes;
    if (in.opset < 10) {
        std::vector<int64_t> axes = in.node.attrInts("axes");
        if (!in.node.attr("axes"))
            for (size_t i = 0; i < in.node.attrInts("starts").size(); ++i) axes.push_back(static_cast<int64_t>(i));
        if (!mapAxes(axes, in.perm)) { why = "axis out of range"; return false; }
        setAttr(e.attrs, Attribute::makeInts("axes", axes));
        return true;
    }
    // Inputs: data, starts, ends, [axes, steps]; the new axes keep the order of starts/ends/steps.
    const bool hasAxes = in.node.inputs.size() > 3 && in.node.inputs[3] != kNone;
    std::vector<int64_t> axes;
    DataType dtype = DataType::Int64;
    if (hasAxes) {
        auto vals = constInts(in, 3, "axes", why);
        if (!vals) return false;
        axes = *vals;
        dtype = constantOf(in.graph, in.node.inputs[3])->dtype;
    } else {
        const ValueId starts = in.node.inputs.size() > 1 ? in.node.inputs[1] : kNone;
        int64_t count = -1;
        if (TensorPtr c = constantOf(in.graph, starts)) {
            count = c->elementCount();
            dtype = c->dtype;
        } else if (starts != kNone) {
            const TypeInfo& t = in.graph.value(starts).type;
            if (t.isTensor() && t.shape && t.shape->rank() == 1 && t.shape->dims[0].isStatic()) {
                count = *t.shape->dims[0].value;
                dtype = t.elemType;
            }
        }
        if (count < 0) { why = "starts has an unknown length, so the default axes are unknown"; return false; }
        for (int64_t i = 0; i < count; ++i) axes.push_back(i);
    }
    if (!mapAxes(axes, in.perm)) { why = "axis out of range"; return false; }
    e.inputs.emplace_back(3, intTensor(dtype, axes));
    return true;
}

bool padEdit(const RuleInput& in, PushEdit& e, std::string& why) {
    e.attrs = in.node.attributes;
    const size_t rank = in.perm.size();
    const Perm inv = invert(in.perm);
    // pads = [begin_0 .. begin_{r-1}, end_0 .. end_{r-1}]; axis j of x is axis inv[j] of the input.
    auto permutePads = [&](const std::vector<int64_t>& pads) {
        std::vector<int64_t> out(2 * rank);
        for (size_t j = 0; j < rank; ++j) {
            out[j] = pads[static_cast<size_t>(inv[j])];
            out[rank + j] = pads[rank + static_cast<size_t>(inv[j])];
        }
        return out;
    };
    if (in.opset < 11) {
        const char* name = in.node.attr("pads") ? "pads" : "paddings";
        std::vector<int64_t> pads = in.node.attrInts(name);
        if (pads.size() != 2 * rank) { why = "pads do not have 2 x rank entries"; return false; }
        setAttr(e.attrs, Attribute::makeInts(name, permutePads(pads)));
        return true;
    }
    if (in.node.inputs.size() > 3 && in.node.inputs[3] != kNone) {  // opset 18 axes: pads follow the axes
        auto axes = constInts(in, 3, "axes", why);
        if (!axes) return false;
        if (!mapAxes(*axes, in.perm)) { why = "axis out of range"; return false; }
        e.inputs.emplace_back(3, intTensor(constantOf(in.graph, in.node.inputs[3])->dtype, *axes));
        return true;
    }
    auto pads = constInts(in, 1, "pads", why);
    if (!pads) return false;
    if (pads->size() != 2 * rank) { why = "pads do not have 2 x rank entries"; return false; }
    e.inputs.emplace_back(1, intTensor(DataType::Int64, permutePads(*pads)));
    return true;
}

/// Only a perm of the batch axes commutes with MatMul; a swap of the matrix axes of 2-D operands
/// is taken by the optimizer's MatMul -> Gemm rewrite instead.
bool matmulEdit(const RuleInput& in, PushEdit& e, std::string& why) {
    e.attrs = in.node.attributes;
    const size_t r = in.perm.size();
    if (r < 3 || in.perm[r - 2] != static_cast<int64_t>(r - 2) || in.perm[r - 1] != static_cast<int64_t>(r - 1)) {
        why = "the perm moves the matrix axes (MatMul has no transpose flag; only 2-D operands become a Gemm)";
        return false;
    }
    for (size_t s = 0; s < 2; ++s)
        if (rankOf(in.graph, in.node.inputs[s]) < 2) {
            why = "an operand has rank below 2 or an unknown rank";
            return false;
        }
    return true;
}

}  // namespace

const PushRule* pushRuleFor(const Node& n) {
    static const std::map<std::string, PushRule> table = [] {
        std::map<std::string, PushRule> t;
        for (const char* op : {"Relu", "Sigmoid", "Tanh", "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Floor",
                               "Ceil", "Round", "Erf", "Sign", "Not", "Softplus", "Softsign", "HardSigmoid",
                               "HardSwish", "LeakyRelu", "Elu", "Selu", "Celu", "ThresholdedRelu", "Identity", "Cast",
                               "Sin", "Cos", "Clip", "IsNaN", "IsInf", "Mish", "Gelu"})
            t[op] = {firstSlot, keepAttrs};
        for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Equal", "Greater",
                               "Less", "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor", "Where", "PRelu", "Mod",
                               "BitShift"})
            t[op] = {allSlots, keepAttrs};
        t["Concat"] = {allSlots, concatEdit};
        t["Split"] = {firstSlot, splitEdit};
        t["Slice"] = {firstSlot, sliceEdit};
        t["Pad"] = {firstSlot, padEdit};
        t["MatMul"] = {firstTwoSlots, matmulEdit, 2};
        for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) t[op] = {firstSlot, softmaxEdit};
        for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd", "ReduceL1",
                               "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
            t[op] = {firstSlot, reduceEdit};
        return t;
    }();
    if (!n.domain.empty() && n.domain != "ai.onnx") return nullptr;
    auto it = table.find(n.opType);
    return it == table.end() ? nullptr : &it->second;
}

}  // namespace passlens::passes::layoututil
