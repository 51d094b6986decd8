// ONNX Runtime's TransposeOptimizer (transpose_optimization/onnx_transpose_optimization.cc), as it
// runs last in Level1 and first in Level2 (CPU): nodes are visited once in topological order; a
// node reading a Transpose gets the Transpose pushed through it (its inputs transposed by the
// inverse perm, its output transposed by the perm) when ONNX Runtime's cost estimate says the
// number of transposed dims strictly drops:
//   each transposable input costs 0 when constant, -rank when its producer is a Transpose with
//   the same perm whose readers all have handlers (it will cancel), 0 for another Transpose, and
//   rank otherwise (rank = dims other than 1, 5 when unknown); when that sum is negative and the
//   node's output gets a Transpose, the output's rank is added unless a path of handled ops
//   leads from it to a Transpose.
// Handlers reproduced: element-wise (unary, broadcasting with Unsqueeze of lower-rank inputs),
// Clip/CastLike, Transpose (cancel or merge), Reshape acting as a Transpose, Concat, Softmax
// family (opset 13+), Squeeze, Unsqueeze, Slice, Reduce*, Shape (→ Gather of the shape) and
// Gather with a scalar constant index (onnxruntime#28755). Split, Pad, Tile, ArgMin/ArgMax (and
// Resize at Level2) count as handled ops for the cost but are not pushed through: a refusal
// says so. Constants are transposed into new initializers (ONNX Runtime transposes them in place
// and its next constant-folding step folds the Transposes it adds for other readers).
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "ir/IntsText.h"
#include "passes/layout/TransposeUtil.h"
#include "passes/match/Match.h"
#include "passes/onnxruntime/OrtPasses.h"
#include "passes/onnxruntime/OrtUtil.h"

namespace passlens::passes::ort {

using namespace passlens::ir;
using layoututil::Perm;

namespace {

enum class Inputs { All, First, NonScalar };

struct Handler {
    Inputs inputs = Inputs::First;
    bool transposesOutputs = true;
    bool reproduced = true;  ///< false: ONNX Runtime has a handler PassLens does not reproduce
};

const std::set<std::string>& unaryOps() {
    static const std::set<std::string> ops{"Cast", "Exp", "Gelu", "Identity", "LeakyRelu", "Log", "Reciprocal", "Relu", "Sigmoid",
                                           "Sqrt", "Tanh", "Abs", "Not", "Ceil", "Floor", "Neg", "Erf", "HardSigmoid", "Round",
                                           "IsInf", "IsNaN", "Selu", "Shrink", "Sign", "Softplus", "Softsign", "ThresholdedRelu",
                                           "Celu", "HardSwish", "Sin", "Cos", "Tan", "Sinh", "Cosh", "Asin", "Acos", "Atan",
                                           "Asinh", "Acosh", "Atanh"};
    return ops;
}

const std::set<std::string>& broadcastOps() {
    static const std::set<std::string> ops{"Add", "Max", "Min", "Mul", "Sub", "Div", "And", "Or", "Xor", "Mod", "PRelu", "BitShift",
                                           "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "Mean", "Sum", "Pow", "Where"};
    return ops;
}

const std::set<std::string>& reduceOps() {
    static const std::set<std::string> ops{"ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
                                           "ReduceProd", "ReduceSum", "ReduceSumSquare", "ReduceL1", "ReduceL2"};
    return ops;
}

std::optional<Handler> handlerOf(const Node& n, bool level2) {
    if (!canonicalDomain(n.domain).empty()) return std::nullopt;
    const std::string& op = n.opType;
    if (unaryOps().count(op)) return Handler{Inputs::All};
    if (broadcastOps().count(op)) return Handler{Inputs::NonScalar};
    if (reduceOps().count(op)) return Handler{};
    if (op == "Clip" || op == "CastLike" || op == "Softmax" || op == "Hardmax" || op == "LogSoftmax" || op == "Squeeze" ||
        op == "Unsqueeze" || op == "Slice" || op == "Gather")
        return Handler{};
    if (op == "Concat") return Handler{Inputs::All};
    if (op == "Transpose" || op == "Reshape" || op == "Shape") return Handler{Inputs::First, false};
    if (op == "Split" || op == "Pad" || op == "Tile" || op == "ArgMin" || op == "ArgMax" || (level2 && op == "Resize"))
        return Handler{Inputs::First, true, false};
    return std::nullopt;
}

/// Dims other than 1 (EstimateValueRank); 5 when the shape is unknown.
int estimatedRank(const Graph& g, ValueId v) {
    auto s = shapeOf(g, v);
    if (!s) return 5;
    int r = 0;
    for (const Dim& d : s->dims) r += !(d.isStatic() && *d.value == 1);
    return r;
}

bool isConstant(const Graph& g, ValueId v) { return match::constantOf(g, v) != nullptr; }

std::optional<Perm> permAttr(const Graph& g, NodeId t) {
    if (!isOp(g, t, "Transpose") || !g.node(t).attr("perm")) return std::nullopt;
    Perm p = g.node(t).attrInts("perm");
    if (!layoututil::isPermutation(p)) return std::nullopt;
    return p;
}

/// SqueezePerm: the perm left when `axes` (of the transposed input) are removed.
Perm squeezePerm(const std::vector<int64_t>& axes, const Perm& perm) {
    std::vector<bool> removed(perm.size());
    for (int64_t a : axes) removed[size_t(a)] = true;
    std::vector<int64_t> newIndex(perm.size());
    int64_t j = 0;
    for (size_t i = 0; i < perm.size(); ++i)
        if (!removed[i]) newIndex[i] = j++;
    Perm out;
    for (int64_t p : perm)
        if (!removed[size_t(p)]) out.push_back(newIndex[size_t(p)]);
    return out;
}

/// UnsqueezePerm: the perm of the unsqueezed tensor (new 1-dims stay in place).
Perm unsqueezePerm(const std::vector<int64_t>& axes, const Perm& perm) {
    const size_t rank = perm.size() + axes.size();
    std::vector<bool> added(rank);
    for (int64_t a : axes) added[size_t(a)] = true;
    std::vector<int64_t> kept;
    for (size_t i = 0; i < rank; ++i)
        if (!added[i]) kept.push_back(int64_t(i));
    Perm out;
    size_t j = 0;
    for (size_t i = 0; i < rank; ++i) out.push_back(added[i] ? int64_t(i) : kept[size_t(perm[j++])]);
    return out;
}

bool normalizeAxes(std::vector<int64_t>& axes, size_t rank) {
    std::vector<bool> used(rank);
    for (int64_t& a : axes) {
        if (a < 0) a += int64_t(rank);
        if (a < 0 || a >= int64_t(rank) || used[size_t(a)]) return false;
        used[size_t(a)] = true;
    }
    return true;
}

class TransposeOptimizer {
public:
    TransposeOptimizer(Rewriter& rw, int64_t opset, bool level2) : rw_(rw), g_(rw.graph()), opset_(opset), level2_(level2) {}

    void run() {
        const std::vector<NodeId> nodes = g_.nodeOrder();
        markOutputsLeadingToTranspose(nodes);
        for (NodeId n : nodes) {
            if (!g_.hasNode(n)) continue;
            const std::vector<ValueId> inputs = g_.node(n).inputs;
            for (size_t j = 0; j < inputs.size(); ++j) {
                if (inputs[j] == kNone || !g_.hasValue(inputs[j])) continue;
                const NodeId t = g_.value(inputs[j]).producer;
                auto perm = permAttr(g_, t);
                if (perm && process(t, n, *perm, j)) break;
            }
        }
        for (NodeId t : maybeDead_)
            if (g_.hasNode(t) && outputEdges(g_, t) == 0 && !producesGraphOutput(g_, t) &&
                match::subgraphReaders(g_, g_.node(t).outputs[0]).empty())
                rw_.eraseNode(t, "TransposeOptimizer: " + q(g_, t) + " is no longer read");
        rw_.restoreTopologicalOrder();
    }

private:
    // Walk back from every Transpose through handled ops whose outputs get transposed.
    void markOutputsLeadingToTranspose(const std::vector<NodeId>& nodes) {
        for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
            const Node& node = g_.node(*it);
            if (isOp(g_, *it, "Transpose")) {
                leadsToTranspose_.insert(node.inputs[0]);
                continue;
            }
            for (ValueId out : node.outputs) {
                if (!leadsToTranspose_.count(out)) continue;
                auto h = handlerOf(node, level2_);
                if (h && h->transposesOutputs)
                    for (size_t j : transposable(node, *h)) leadsToTranspose_.insert(node.inputs[j]);
            }
        }
    }

    std::vector<size_t> transposable(const Node& node, const Handler& h) const {
        std::vector<size_t> out;
        for (size_t i = 0; i < node.inputs.size(); ++i) {
            if (h.inputs == Inputs::First && i > 0) break;
            if (h.inputs == Inputs::NonScalar) {
                auto s = shapeOf(g_, node.inputs[i]);
                if (s && s->rank() == 0) continue;
            }
            out.push_back(i);
        }
        return out;
    }

    bool canLikelyRemove(NodeId t) const {
        const ValueId out = g_.node(t).outputs[0];
        if (g_.value(out).isGraphOutput || !match::subgraphReaders(g_, out).empty()) return false;
        for (NodeId c : g_.value(out).consumers)
            if (!handlerOf(g_.node(c), level2_)) return false;
        return true;
    }

    int valueCost(ValueId v, const Perm& perm) const {
        if (isConstant(g_, v)) return 0;
        const NodeId p = g_.value(v).producer;
        if (auto perm2 = permAttr(g_, p)) return *perm2 == perm && canLikelyRemove(p) ? -estimatedRank(g_, v) : 0;
        return estimatedRank(g_, v);
    }

    bool process(NodeId t, NodeId n, const Perm& perm, size_t slot) {
        const Node& node = g_.node(n);
        auto h = handlerOf(node, level2_);
        if (!h) return false;
        const std::vector<size_t> indices = transposable(node, *h);
        if (std::find(indices.begin(), indices.end(), slot) == indices.end()) return false;
        if (!isOp(g_, n, "Transpose")) {
            int cost = 0;
            for (size_t i : indices) cost += valueCost(node.inputs[i], perm);
            int outCost = 0;
            if (cost < 0 && h->transposesOutputs) {
                bool leads = false;
                for (ValueId out : node.outputs) {
                    if (out == kNone) continue;
                    outCost = std::max(outCost, estimatedRank(g_, out));
                    leads = leads || leadsToTranspose_.count(out);
                }
                if (!leads) cost += outCost;
            }
            if (cost >= 0) {
                refuse(rw_, {t, n}, "TransposeOptimizer: " + q(g_, t) + " stays above " + q(g_, n) + ": pushing it through would not reduce the transposed dims (cost " +
                                        std::to_string(cost) + (outCost ? ", with " + std::to_string(outCost) + " for the Transpose its output would need" : "") + ")",
                       {g_.node(t).outputs[0]});
                return false;
            }
        }
        if (!h->reproduced) {
            refuse(rw_, {t, n}, "TransposeOptimizer: ONNX Runtime pushes " + q(g_, t) + " through " + q(g_, n) + " (" + node.opType +
                                    "); PassLens does not reproduce that handler yet",
                   {g_.node(t).outputs[0]});
            return false;
        }
        return push(t, n, perm, indices);
    }

    // ---- building blocks (TransposeInputImpl, UnsqueezeInput, TransposeOutputs) --------------

    ValueId addNode(const std::string& op, std::vector<ValueId> inputs, TypeInfo type, std::vector<Attribute> attrs, NodeId cause) {
        ValueId out = rw_.newValue(op + "_token", std::move(type));
        rw_.addNode(op, std::move(inputs), {out}, std::move(attrs), {}, "TransposeOptimizer: pushing " + q(g_, cause), op + "_token");
        return out;
    }

    ValueId constantInput(const std::string& hint, TensorPtr t) { return rw_.newInitializer(hint, std::move(t)); }

    /// `v` transposed by `perm` (TransposeInputImpl).
    ValueId transposeInput(ValueId v, const Perm& perm, NodeId cause) {
        const Perm inv = layoututil::invert(perm);
        if (const TensorPtr c = match::constantOf(g_, v)) {
            if (c->elementCount() == 1) return v;
            if (c->dims.size() == 1 && c->dims[0] == int64_t(perm.size())) {
                // A 1-D constant with one entry per axis is permuted, not transposed.
                const size_t bytes = c->byteSize() / perm.size();
                std::vector<std::byte> data(c->byteSize());
                for (size_t j = 0; j < perm.size(); ++j)
                    std::copy_n(c->data.data() + size_t(perm[j]) * bytes, bytes, data.data() + j * bytes);
                return constantInput(g_.value(v).name + "_permuted", makeTensor(c->dtype, c->dims, data.data(), data.size()));
            }
            return constantInput(g_.value(v).name + "_transposed", layoututil::transposeTensor(*c, perm));
        }
        const NodeId p = g_.value(v).producer;
        if (auto perm2 = permAttr(g_, p); perm2 && perm2->size() == perm.size()) {
            maybeDead_.push_back(p);
            const ValueId pre = g_.node(p).inputs[0];
            if (*perm2 == inv) return pre;
            const Perm combined = layoututil::compose(*perm2, perm);
            return addNode("Transpose", {pre}, layoututil::permutedType(g_.value(v).type, perm), {Attribute::makeInts("perm", combined)}, cause);
        }
        for (NodeId c : g_.value(v).consumers)
            if (auto pc = permAttr(g_, c); pc && *pc == perm) return g_.node(c).outputs[0];
        return addNode("Transpose", {v}, layoututil::permutedType(g_.value(v).type, perm), {Attribute::makeInts("perm", perm)}, cause);
    }

    /// `v` with 1-dims inserted at `axes` (UnsqueezeInput).
    ValueId unsqueezeInput(ValueId v, const std::vector<int64_t>& axes, NodeId cause) {
        TypeInfo type = g_.value(v).type;
        if (type.shape) {
            Shape s;
            size_t j = 0;
            const size_t rank = type.shape->rank() + axes.size();
            for (size_t i = 0; i < rank; ++i)
                s.dims.push_back(std::find(axes.begin(), axes.end(), int64_t(i)) != axes.end() ? Dim::of(1) : type.shape->dims[j++]);
            type.shape = s;
        }
        if (const TensorPtr c = match::constantOf(g_, v)) {
            std::vector<int64_t> dims;
            size_t j = 0;
            for (size_t i = 0; i < c->dims.size() + axes.size(); ++i)
                dims.push_back(std::find(axes.begin(), axes.end(), int64_t(i)) != axes.end() ? 1 : c->dims[j++]);
            return constantInput(g_.value(v).name + "_unsqueezed", makeTensor(c->dtype, dims, c->data.data(), c->byteSize()));
        }
        std::vector<ValueId> inputs{v};
        std::vector<Attribute> attrs;
        if (opset_ >= 13) inputs.push_back(constantInput("unsqueeze_axes", int64Tensor({int64_t(axes.size())}, axes)));
        else attrs.push_back(Attribute::makeInts("axes", axes));
        return addNode("Unsqueeze", inputs, type, attrs, cause);
    }

    /// Rebuilds `n` with `inputs` and `attrs`; with `outPerm`, its output becomes the input of a
    /// Transpose by `outPerm` that keeps the output value (and name).
    void rebuild(NodeId n, std::vector<ValueId> inputs, std::vector<Attribute> attrs, const std::optional<Perm>& outPerm, const std::string& why) {
        const Node& node = g_.node(n);
        const std::string name = node.name, op = node.opType, domain = node.domain;
        const ValueId out = node.outputs[0];
        if (!outPerm || layoututil::isIdentity(*outPerm)) {
            rw_.replaceNodes({n}, op, std::move(inputs), node.outputs, std::move(attrs), why, name, domain);
            return;
        }
        ValueId inner = rw_.newValue(g_.value(out).name + "_transposed", layoututil::permutedType(g_.value(out).type, layoututil::invert(*outPerm)));
        rw_.addNode(op, std::move(inputs), {inner}, std::move(attrs), {n}, why, name, domain);
        rw_.replaceNodes({n}, "Transpose", {inner}, {out}, {Attribute::makeInts("perm", *outPerm)}, why, "Transpose_token");
    }

    std::vector<Attribute> attrsWith(const Node& node, const Attribute& a) const {
        std::vector<Attribute> attrs;
        for (const Attribute& x : node.attributes)
            if (x.name != a.name) attrs.push_back(x);
        attrs.push_back(a);
        return attrs;
    }

    // ---- handlers ------------------------------------------------------------------------------

    bool push(NodeId t, NodeId n, const Perm& perm, const std::vector<size_t>& indices) {
        const Node node = g_.node(n);  // a copy: the handlers below edit the graph while they read it
        const Perm inv = layoututil::invert(perm);
        const size_t rank = perm.size();
        const std::string what = "TransposeOptimizer: " + q(g_, t) + " (perm " + intsText(perm) + ") pushed through " + q(g_, n);
        std::vector<ValueId> inputs = node.inputs;
        const std::string op = node.opType;
        auto transposeFirst = [&] { inputs[0] = transposeInput(inputs[0], inv, n); };

        if (op == "Transpose" || op == "Reshape") {
            std::optional<Perm> second = op == "Transpose" ? std::optional<Perm>(node.attrInts("perm")) : reshapeAsPerm(t, n);
            if (!second || second->size() != rank) return false;
            const ValueId pre = g_.node(t).inputs[0];
            const std::string nName = q(g_, n);
            maybeDead_.push_back(t);
            if (*second == inv) {
                NodeId id = rw_.replaceNodes({n}, "Identity", {pre}, {node.outputs[0]}, {}, what, "Identity");
                rw_.bypassNode(id, 0, 0, "TransposeOptimizer: " + q(g_, t) + " and " + nName + " cancel");
                rw_.applied({}, "TransposeOptimizer: " + q(g_, t) + " and " + nName + " cancel");
                return true;
            }
            NodeId id = rw_.replaceNodes({n}, "Transpose", {pre}, {node.outputs[0]}, {Attribute::makeInts("perm", layoututil::compose(perm, *second))},
                                         what, op == "Transpose" ? node.name : "Transpose");
            rw_.applied({id}, "TransposeOptimizer: " + q(g_, t) + " merged into " + nName);
            return true;
        }
        std::vector<Attribute> attrs = node.attributes;
        std::optional<Perm> outPerm = perm;
        if (unaryOps().count(op) || op == "Clip" || op == "CastLike" || broadcastOps().count(op)) {
            if (broadcastOps().count(op)) {
                for (size_t i : indices) {
                    auto s = shapeOf(g_, inputs[i]);
                    if (!s || s->rank() > rank) return false;
                }
                for (size_t i : indices) {
                    const size_t r = shapeOf(g_, inputs[i])->rank();
                    if (r == rank) continue;
                    std::vector<int64_t> axes;
                    for (size_t a = 0; a < rank - r; ++a) axes.push_back(int64_t(a));
                    inputs[i] = unsqueezeInput(inputs[i], axes, n);
                }
            }
            for (size_t i : indices) inputs[i] = transposeInput(inputs[i], inv, n);
        } else if (op == "Concat" || op == "Softmax" || op == "Hardmax" || op == "LogSoftmax") {
            if (op != "Concat" && opset_ < 13) return false;
            if (op == "Concat" && !node.attr("axis")) return false;
            std::vector<int64_t> axis{node.attrInt("axis", -1)};
            if (!normalizeAxes(axis, rank)) return false;
            for (size_t i : indices) inputs[i] = transposeInput(inputs[i], inv, n);
            attrs = attrsWith(node, Attribute::makeInt("axis", perm[size_t(axis[0])]));
        } else if (op == "Gather") {
            const TensorPtr idx = match::constantOf(g_, node.inputs[1]);
            if (!idx || !idx->dims.empty()) return false;
            std::vector<int64_t> axis{node.attrInt("axis", 0)};
            if (!normalizeAxes(axis, rank)) return false;
            const int64_t newAxis = perm[size_t(axis[0])];
            transposeFirst();
            attrs = attrsWith(node, Attribute::makeInt("axis", newAxis));
            outPerm = squeezePerm({newAxis}, perm);
        } else if (op == "Squeeze" || op == "Unsqueeze") {
            std::optional<std::vector<int64_t>> axes;
            if (opset_ < 13) axes = node.attrInts("axes");
            else if (node.inputs.size() > 1 && node.inputs[1] != kNone)
                if (const TensorPtr a = match::constantOf(g_, node.inputs[1])) axes = layoututil::intValues(*a);
            if (!axes || axes->empty()) return false;
            if (op == "Squeeze") {
                if (!normalizeAxes(*axes, rank)) return false;
                std::vector<int64_t> newAxes;
                for (size_t a = 0; a < rank; ++a)
                    for (int64_t x : *axes)
                        if (perm[size_t(x)] == int64_t(a)) newAxes.push_back(int64_t(a));
                if (opset_ < 13) attrs = attrsWith(node, Attribute::makeInts("axes", newAxes));
                else inputs[1] = constantInput("squeeze_axes", int64Tensor({int64_t(newAxes.size())}, newAxes));
                outPerm = squeezePerm(newAxes, perm);
            } else {
                if (!normalizeAxes(*axes, rank + axes->size())) return false;
                outPerm = unsqueezePerm(*axes, perm);
            }
            transposeFirst();
        } else if (op == "Slice" && opset_ < 10) {
            // Slice-1: starts, ends and axes are attributes; no axes means 0 .. len(starts) - 1.
            std::vector<int64_t> axes = node.attrInts("axes");
            if (!node.attr("axes"))
                for (size_t i = 0; i < node.attrInts("starts").size(); ++i) axes.push_back(int64_t(i));
            if (!normalizeAxes(axes, rank)) return false;
            for (int64_t& a : axes) a = perm[size_t(a)];
            attrs = attrsWith(node, Attribute::makeInts("axes", axes));
            transposeFirst();
        } else if (op == "Slice") {
            std::vector<int64_t> axes;
            DataType dtype = DataType::Int64;
            if (node.inputs.size() < 4 || node.inputs[3] == kNone) {
                auto s = shapeOf(g_, node.inputs[1]);
                if (!s || s->rank() != 1 || !s->dims[0].isStatic()) return false;
                for (int64_t i = 0; i < *s->dims[0].value; ++i) axes.push_back(i);
                dtype = g_.value(node.inputs[1]).type.elemType;
            } else {
                const TensorPtr a = match::constantOf(g_, node.inputs[3]);
                if (!a) return false;
                auto v = layoututil::intValues(*a);
                if (!v) return false;
                axes = *v;
                dtype = a->dtype;
            }
            if (!normalizeAxes(axes, rank)) return false;
            for (int64_t& a : axes) a = perm[size_t(a)];
            inputs.resize(std::max<size_t>(inputs.size(), 4), kNone);
            inputs[3] = constantInput("slice_axes", layoututil::intTensor(dtype, axes));
            transposeFirst();
        } else if (reduceOps().count(op)) {
            const bool keepdims = node.attrInt("keepdims", 1) != 0;
            const bool axesAttr = (op == "ReduceSum" && opset_ < 13) || (op != "ReduceSum" && opset_ < 18);
            std::optional<std::vector<int64_t>> axes;
            if (axesAttr) {
                if (node.attr("axes")) axes = node.attrInts("axes");
            } else if (node.inputs.size() > 1 && node.inputs[1] != kNone) {
                const TensorPtr a = match::constantOf(g_, node.inputs[1]);
                if (!a) return false;
                axes = layoututil::intValues(*a);
                if (axes && axes->empty()) axes.reset();
            }
            if (axes) {
                if (!normalizeAxes(*axes, rank)) return false;
                std::vector<int64_t> newAxes;
                for (size_t a = 0; a < rank; ++a)
                    for (int64_t x : *axes)
                        if (perm[size_t(x)] == int64_t(a)) newAxes.push_back(int64_t(a));
                if (axesAttr) attrs = attrsWith(node, Attribute::makeInts("axes", newAxes));
                else inputs[1] = constantInput("reduce_axes", int64Tensor({int64_t(newAxes.size())}, newAxes));
                if (!keepdims) outPerm = squeezePerm(newAxes, perm);
            } else if (!keepdims && !(node.attrInt("noop_with_empty_axes", 0) && !axesAttr)) {
                outPerm = Perm{};
            }
            transposeFirst();
        } else if (op == "Shape") {
            // Shape(Transpose(x, perm)) = Gather(Shape(x), perm[start:end]).
            Perm gathered = perm;
            if (opset_ >= 15) {
                int64_t start = node.attrInt("start", 0), end = node.attrInt("end", int64_t(rank));
                if (start < 0) start += int64_t(rank);
                if (end < 0) end += int64_t(rank);
                start = std::clamp<int64_t>(start, 0, int64_t(rank));
                end = std::clamp<int64_t>(end, 0, int64_t(rank));
                gathered.assign(perm.begin() + start, perm.begin() + std::max(start, end));
            }
            transposeFirst();
            const ValueId out = node.outputs[0];
            ValueId full = rw_.newValue(g_.value(out).name + "_full", TypeInfo::tensor(DataType::Int64, Shape{{Dim::of(int64_t(rank))}}));
            rw_.addNode("Shape", {inputs[0]}, {full}, {}, {n}, what, node.name);
            ValueId indices = constantInput("shape_perm", int64Tensor({int64_t(gathered.size())}, gathered));
            NodeId gid = rw_.replaceNodes({n}, "Gather", {full, indices}, {out}, {Attribute::makeInt("axis", 0)}, what, "Gather");
            rw_.applied({gid}, what + ": Shape of its input, gathered by " + intsText(gathered));
            return true;
        } else {
            return false;
        }
        rebuild(n, std::move(inputs), std::move(attrs), outPerm, what);
        rw_.applied({}, what);
        return true;
    }

    /// HandleReshape: the perm a Reshape of `t`'s output amounts to (same rank, the dims other than
    /// 1 in the same order), when it is one.
    std::optional<Perm> reshapeAsPerm(NodeId t, NodeId n) const {
        auto in = shapeOf(g_, g_.node(t).inputs[0]), out = shapeOf(g_, g_.node(t).outputs[0]);
        const TensorPtr shapeConst = match::constantOf(g_, g_.node(n).inputs[1]);
        if (!in || !out || !out->isStatic() || !shapeConst) return std::nullopt;
        auto requested = layoututil::intValues(*shapeConst);
        if (!requested || requested->empty() || requested->size() != in->rank()) return std::nullopt;
        const std::vector<int64_t> dims = out->staticDims();
        const bool allowZero = g_.node(n).attrInt("allowzero", 0) != 0;
        std::vector<int64_t> target = *requested;
        int64_t total = 1, size = 1;
        for (int64_t d : dims) total *= d;
        int unknown = -1;
        for (size_t i = 0; i < target.size(); ++i) {
            if (target[i] == -1) {
                if (unknown != -1) return std::nullopt;
                unknown = int(i);
                continue;
            }
            if (!allowZero && target[i] == 0) target[i] = dims[i];
            size *= target[i];
        }
        if (unknown != -1) {
            if (size == 0 || total % size) return std::nullopt;
            target[size_t(unknown)] = total / size;
        } else if (size != total) {
            return std::nullopt;
        }
        std::vector<int64_t> inputDims = dims;
        Perm perm(target.size(), -1);
        for (size_t i = 0; i < target.size(); ++i) {
            size_t cur = 0;
            while (inputDims[cur] != target[i]) {
                if (inputDims[cur] != -1 && inputDims[cur] != 1 && target[i] != 1) return std::nullopt;
                if (++cur == inputDims.size()) return std::nullopt;
            }
            perm[i] = int64_t(cur);
            inputDims[cur] = -1;
        }
        return perm;
    }

    Rewriter& rw_;
    const Graph& g_;
    int64_t opset_;
    bool level2_;
    std::set<ValueId> leadsToTranspose_;
    std::vector<NodeId> maybeDead_;
};

}  // namespace

void transposeOptimizer(Rewriter& rw, int64_t opset, bool level2) {
    // The optimizer supports ONNX opsets 7 to 23 (kMinSupportedOpset, kMaxSupportedOpset).
    if (opset < 7 || opset > 23) return;
    rw.setRule("TransposeOptimizer");
    TransposeOptimizer(rw, opset, level2).run();
    rw.setRule("");
}

}  // namespace passlens::passes::ort
