// The `transpose` pass: a sweep over the graph in topological order (repeated to a fixed point)
// that simplifies every Transpose (identity, constant fold, compose with a producing Transpose)
// and pushes Transposes down through ops that have a push rule in the handler table below
// (as ONNX Runtime's transpose_optimizer). Every mutation goes through the Rewriter.
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include "passes/layout/LayoutPasses.h"
#include "passes/layout/TransposeUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::layoututil;

namespace {

std::string permText(const Perm& p) {
    std::string s = "[";
    for (size_t i = 0; i < p.size(); ++i) s += (i ? "," : "") + std::to_string(p[i]);
    return s + "]";
}

bool isTranspose(const Node& n) { return n.opType == "Transpose" && n.domain.empty(); }

// ---- handler table: op type -> how a perm moves through it ---------------------------------------
struct PushRule {
    /// Input slots that carry the layout (broadcast together with the data).
    std::function<std::vector<size_t>(const Node&)> slots;
    /// Rewrites axis attributes for data now in the pre-transpose layout; false + why to refuse.
    std::function<bool(const Model&, const Node&, const Perm&, std::vector<Attribute>&, std::string&)> attrs;
};

std::vector<size_t> allSlots(const Node& n) {
    std::vector<size_t> s;
    for (size_t i = 0; i < n.inputs.size(); ++i) s.push_back(i);
    return s;
}
std::vector<size_t> firstSlot(const Node&) { return {0}; }

bool keepAttrs(const Model&, const Node&, const Perm&, std::vector<Attribute>&, std::string&) { return true; }

int64_t normalizeAxis(int64_t a, size_t rank) { return a < 0 ? a + static_cast<int64_t>(rank) : a; }

bool rewriteSingleAxis(const Node& n, const Perm& p, std::vector<Attribute>& attrs, int64_t dflt) {
    int64_t a = normalizeAxis(n.attrInt("axis", dflt), p.size());
    if (a < 0 || a >= static_cast<int64_t>(p.size())) return false;
    for (auto& at : attrs)
        if (at.name == "axis") at.i = p[static_cast<size_t>(a)];
    if (!n.attr("axis")) attrs.push_back(Attribute::makeInt("axis", p[static_cast<size_t>(a)]));
    return true;
}

bool concatAttrs(const Model&, const Node& n, const Perm& p, std::vector<Attribute>& attrs, std::string& why) {
    if (!rewriteSingleAxis(n, p, attrs, 0)) { why = "axis out of range"; return false; }
    return true;
}

bool softmaxAttrs(const Model& m, const Node& n, const Perm& p, std::vector<Attribute>& attrs, std::string& why) {
    const int64_t opset = m.opsetFor("");
    if (opset >= 13) {
        if (!rewriteSingleAxis(n, p, attrs, -1)) { why = "axis out of range"; return false; }
        return true;
    }
    // Before opset 13 the input is coerced to 2-D at `axis`: the result is unchanged only when the
    // perm maps the trailing block [axis, rank) onto itself (softmax ignores order inside it).
    int64_t a = normalizeAxis(n.attrInt("axis", 1), p.size());
    for (size_t i = 0; i < p.size(); ++i)
        if ((static_cast<int64_t>(i) >= a) != (p[i] >= a)) {
            why = n.opType + " (opset " + std::to_string(opset) + ") flattens at axis " + std::to_string(a) +
                  " and the perm mixes the two blocks";
            return false;
        }
    return true;
}

bool reduceAttrs(const Model& m, const Node& n, const Perm& p, std::vector<Attribute>& attrs, std::string& why) {
    if (n.attrInt("keepdims", 1) == 0) { why = n.opType + " with keepdims=0 changes the rank"; return false; }
    const int64_t opset = m.opsetFor("");
    const bool axesAsInput = (n.opType == "ReduceSum" && opset >= 13) || opset >= 18;
    if (axesAsInput && n.inputs.size() > 1 && n.inputs[1] != kNone) { why = "axes given as an input"; return false; }
    for (auto& at : attrs)
        if (at.name == "axes")
            for (auto& a : at.ints) {
                int64_t na = normalizeAxis(a, p.size());
                if (na < 0 || na >= static_cast<int64_t>(p.size())) { why = "axis out of range"; return false; }
                a = p[static_cast<size_t>(na)];
            }
    return true;
}

const std::map<std::string, PushRule>& pushRules() {
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
        t["Concat"] = {allSlots, concatAttrs};
        t["Softmax"] = {firstSlot, softmaxAttrs};
        t["LogSoftmax"] = {firstSlot, softmaxAttrs};
        for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd", "ReduceL1",
                               "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
            t[op] = {firstSlot, reduceAttrs};
        return t;
    }();
    return table;
}

const PushRule* ruleFor(const Node& n) {
    if (!n.domain.empty()) return nullptr;
    auto it = pushRules().find(n.opType);
    return it == pushRules().end() ? nullptr : &it->second;
}

class TransposeOptimizer {
public:
    TransposeOptimizer(Rewriter& rw, bool conservative) : rw_(rw), g_(rw.graph()), conservative_(conservative) {}

    void run() {
        for (int sweep = 0; sweep < 64; ++sweep) {
            auto order = g_.topologicalOrder();
            if (!order) return;
            bool changed = false;
            for (NodeId n : *order) {
                if (!g_.hasNode(n)) continue;
                const Node& node = g_.node(n);
                if (isTranspose(node)) changed |= simplify(n);
                else if (const PushRule* r = ruleFor(node)) changed |= push(n, *r);
            }
            if (!changed) break;
        }
        reportStuck();
    }

private:
    void dropIfDead(ValueId v) {
        if (v == kNone || !g_.hasValue(v)) return;
        const Value& val = g_.value(v);
        if (!val.consumers.empty() || val.isGraphOutput) return;
        if (val.initializer && !val.isGraphInput) {
            rw_.removeInitializer(v, "no reader left after transpose optimization");
        } else if (val.producer != kNone) {
            const Node& p = g_.node(val.producer);
            bool allDead = true;
            for (ValueId o : p.outputs)
                if (o != kNone && (!g_.value(o).consumers.empty() || g_.value(o).isGraphOutput)) allDead = false;
            if (allDead) rw_.eraseNode(val.producer, "no reader left after transpose optimization");
        }
    }

    bool simplify(NodeId t) {
        auto perm = permOf(g_, t);
        if (!perm) return false;
        const Node& node = g_.node(t);
        const std::string name = node.displayName();
        ValueId x = node.inputs[0], y = node.outputs[0];
        if (y == kNone) return false;
        if (isIdentity(*perm)) {
            const Value& xv = g_.value(x);
            if (g_.value(y).isGraphOutput && (xv.isGraphInput || xv.isGraphOutput || xv.initializer || xv.producer == kNone))
                return false;
            rw_.setRule("transpose-identity");
            rw_.bypassNode(t, 0, 0, name + " has the identity perm " + permText(*perm));
            return true;
        }
        if (TensorPtr c = constantOf(g_, x); c && !g_.value(y).isGraphOutput) {
            if (TensorPtr folded = transposeTensor(*c, *perm)) {
                rw_.setRule("transpose-fold-constant");
                rw_.foldToConstant(y, folded, name + " of a constant becomes the permuted constant");
                dropIfDead(x);
                return true;
            }
        }
        NodeId p = g_.value(x).producer;
        if (p != kNone && isTranspose(g_.node(p))) {
            auto q = permOf(g_, p);
            if (!q || q->size() != perm->size()) return false;
            Perm r = compose(*q, *perm);
            const std::string inner = g_.node(p).displayName();
            ValueId x0 = g_.node(p).inputs[0];
            rw_.setRule(isIdentity(r) ? "transpose-cancel" : "transpose-compose");
            rw_.setInput(t, 0, x0, name + " reads the input of " + inner + " directly");
            rw_.setAttribute(t, Attribute::makeInts("perm", r),
                             inner + " " + permText(*q) + " then " + name + " " + permText(*perm) + " = " + permText(r));
            dropIfDead(x);
            if (isIdentity(r)) simplify(t);
            return true;
        }
        return false;
    }

    /// Pushes the Transposes feeding node `c` below it when that does not add Transposes.
    bool push(NodeId c, const PushRule& rule) {
        const Node& node = g_.node(c);
        if (node.outputs.size() != 1 || node.outputs[0] == kNone) return false;
        std::vector<size_t> slots = rule.slots(node);
        std::optional<Perm> perm;
        NodeId firstT = kNone;
        for (size_t s : slots) {
            ValueId v = node.inputs[s];
            if (v == kNone || g_.value(v).producer == kNone) continue;
            NodeId p = g_.value(v).producer;
            if (!isTranspose(g_.node(p))) continue;
            if (auto q = permOf(g_, p)) { perm = q; firstT = p; break; }
        }
        if (!perm) return false;
        const size_t rank = perm->size();
        const Perm inv = invert(*perm);

        enum class Kind { Keep, Bypass, Constant, Insert };
        struct Plan { Kind kind = Kind::Keep; ValueId v = kNone; TensorPtr tensor; };
        std::vector<Plan> plans(node.inputs.size());
        std::set<NodeId> removable;
        size_t added = 0;
        std::string why;
        for (size_t s : slots) {
            ValueId v = node.inputs[s];
            if (v == kNone) continue;
            NodeId p = g_.value(v).producer;
            if (p != kNone && isTranspose(g_.node(p)) && permOf(g_, p) == perm) {
                plans[s] = {Kind::Bypass, g_.node(p).inputs[0], nullptr};
                if (likelyRemovable(p)) removable.insert(p);
                continue;
            }
            if (TensorPtr k = constantOf(g_, v)) {
                if (k->elementCount() == 1 && k->dims.size() <= rank) continue;  // broadcasts either way
                if (k->dims.size() > rank) { why = "constant operand has a higher rank"; break; }
                Tensor padded = *k;
                padded.dims.insert(padded.dims.begin(), rank - k->dims.size(), 1);
                TensorPtr moved = transposeTensor(padded, inv);
                if (!moved) { why = "constant operand has no fixed element size"; break; }
                plans[s] = {Kind::Constant, kNone, moved};
                continue;
            }
            int64_t r = rankOf(g_, v);
            if (r == 0) continue;
            if (r != static_cast<int64_t>(rank)) {
                why = "operand '" + g_.value(v).name + "' has " + (r < 0 ? "an unknown rank" : "a lower rank");
                break;
            }
            plans[s] = {Kind::Insert, v, nullptr};
            ++added;
        }
        std::vector<Attribute> attrs = node.attributes;
        if (why.empty()) rule.attrs(rw_.model(), node, *perm, attrs, why);
        if (why.empty() && added >= removable.size())
            why = "pushing would add " + std::to_string(added + 1) + " Transpose(s) and remove " +
                  std::to_string(removable.size());
        if (!why.empty()) {
            blocked_[c] = why;
            return false;
        }

        const std::string name = node.displayName();
        const std::string reason = "Transpose " + permText(*perm) + " pushed below " + name;
        rw_.setRule("transpose-push-" + node.opType);
        std::vector<ValueId> inputs = node.inputs;
        std::vector<std::pair<ValueId, ValueId>> inserted;
        std::vector<ValueId> oldInputs;
        for (size_t s = 0; s < plans.size(); ++s) {
            switch (plans[s].kind) {
            case Kind::Keep: break;
            case Kind::Bypass: oldInputs.push_back(inputs[s]); inputs[s] = plans[s].v; break;
            case Kind::Constant:
                oldInputs.push_back(inputs[s]);
                inputs[s] = rw_.newInitializer(g_.value(inputs[s]).name + "_perm", plans[s].tensor);
                break;
            case Kind::Insert: {
                ValueId w = rw_.newValue(g_.value(plans[s].v).name + "_t", permutedType(g_.value(plans[s].v).type, inv));
                inserted.emplace_back(plans[s].v, w);
                inputs[s] = w;
                break;
            }
            }
        }
        ValueId out = node.outputs[0];
        ValueId newOut = rw_.newValue(g_.value(out).name + "_pre", permutedType(g_.value(out).type, inv));
        const std::string opType = node.opType, nodeName = node.name, domain = node.domain;
        NodeId moved = rw_.replaceNodes({c}, opType, inputs, {newOut}, attrs, reason, nodeName, domain);
        for (auto [from, to] : inserted)
            rw_.addNode("Transpose", {from}, {to}, {Attribute::makeInts("perm", inv)}, {}, reason, "Transpose");
        rw_.addNode("Transpose", {newOut}, {out}, {Attribute::makeInts("perm", *perm)}, {firstT}, reason, "Transpose");
        for (ValueId v : oldInputs) dropIfDead(v);
        rw_.applied({moved}, reason);
        blocked_.erase(c);
        return true;
    }

    /// Every reader of the Transpose's output can take the Transpose away (a push rule or another
    /// Transpose), so using its input here is likely to delete it.
    bool likelyRemovable(NodeId t) const {
        const Value& y = g_.value(g_.node(t).outputs[0]);
        if (y.isGraphOutput) return false;
        if (conservative_) {
            for (NodeId r : y.consumers)
                if (r != y.consumers.front()) return false;
        }
        for (NodeId r : y.consumers)
            if (!isTranspose(g_.node(r)) && !ruleFor(g_.node(r))) return false;
        return true;
    }

    void reportStuck() {
        rw_.setRule("transpose-push");
        for (NodeId t : g_.nodeOrder()) {
            const Node& node = g_.node(t);
            if (!isTranspose(node) || node.outputs[0] == kNone) continue;
            const Value& y = g_.value(node.outputs[0]);
            std::string why;
            if (y.isGraphOutput) why = "its output is a graph output";
            for (NodeId r : y.consumers) {
                if (!why.empty()) break;
                const Node& rn = g_.node(r);
                if (isTranspose(rn)) continue;
                if (auto it = blocked_.find(r); it != blocked_.end()) why = rn.displayName() + ": " + it->second;
                else if (!ruleFor(rn)) why = rn.displayName() + " is layout-sensitive";
            }
            if (why.empty()) why = "no rule applies";
            rw_.missed({t}, node.displayName() + " not pushed: " + why, {node.outputs[0]});
        }
    }

    Rewriter& rw_;
    Graph& g_;
    bool conservative_ = false;
    std::unordered_map<NodeId, std::string> blocked_;
};

size_t countTransposes(const Graph& g) {
    size_t n = 0;
    for (NodeId id : g.nodeOrder()) n += isTranspose(g.node(id)) ? 1 : 0;
    return n;
}

/// Pushing into every reader of a multi-reader Transpose usually ends in cancellation (x * f(x)
/// patterns), but not always; a dry run on a copy decides whether the optimistic cost model may
/// be used or the conservative one (a Transpose counts as removable only with a single reader).
void optimizeGraph(Rewriter& rw) {
    Graph scratch = rw.graph();
    std::vector<Change> changes;
    std::vector<Remark> remarks;
    Rewriter dry(rw.model(), scratch, "transpose", rw.graphPath(), changes, remarks);
    TransposeOptimizer(dry, false).run();
    const bool conservative = countTransposes(scratch) > countTransposes(rw.graph());
    TransposeOptimizer(rw, conservative).run();
}

class TransposePass : public Pass {
public:
    std::string name() const override { return "transpose"; }
    std::string description() const override {
        return "Cancels, composes and folds Transposes and pushes them through layout-agnostic ops";
    }

protected:
    void runImpl(PassContext& ctx) const override {
        ctx.forEachGraph([](Rewriter& rw) { optimizeGraph(rw); });
    }
};

}  // namespace

std::unique_ptr<Pass> makeTransposePass() { return std::make_unique<TransposePass>(); }

}  // namespace passlens::passes
