// The `transpose` pass: a sweep over the graph in topological order (repeated to a fixed point)
// that simplifies every Transpose (identity, constant fold, compose with a producing Transpose),
// pushes Transposes down through ops with a push rule (TransposeRules.cpp, as ONNX Runtime's
// transpose optimizer) and takes 2-D [1,0] Transposes into Gemm's transA/transB (a MatMul becomes
// a Gemm). Afterwards a Transpose that only moves length-1 axes becomes a Reshape, and every
// Transpose left gets a missed remark naming the op that stopped it. Every mutation goes through
// the Rewriter, each with its rule name.
#include <set>
#include <unordered_map>

#include "onnx/SchemaValidation.h"
#include "passes/layout/LayoutPasses.h"
#include "passes/layout/TransposeRules.h"
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

bool isTranspose(const Node& n) { return n.opType == "Transpose" && n.domain.empty() && onnxio::fitsSchemaEnvelope(n); }

bool isStdOp(const Node& n, const char* op) {
    return n.opType == op && (n.domain.empty() || n.domain == "ai.onnx") && onnxio::fitsSchemaEnvelope(n);
}

/// Ops a Transpose can move into or through: the push rules plus the Gemm flags (and MatMul
/// becoming a Gemm).
bool takesTranspose(const Node& n) {
    return isTranspose(n) || pushRuleFor(n) || isStdOp(n, "Gemm") || isStdOp(n, "MatMul");
}

int64_t onnxOpset(const Model& m) {
    const int64_t v = m.opsetFor("");
    return v ? v : m.opsetFor("ai.onnx");
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
                else if (isStdOp(node, "Gemm")) changed |= absorbIntoGemm(n);
                else if (isStdOp(node, "MatMul") && (swappedMatrix(node, 0) != kNone || swappedMatrix(node, 1) != kNone))
                    changed |= matmulToGemm(n);
                else if (const PushRule* r = pushRuleFor(node)) changed |= push(n, *r);
            }
            if (!changed) break;
        }
        for (NodeId t : std::vector<NodeId>(g_.nodeOrder()))
            if (g_.hasNode(t) && isTranspose(g_.node(t))) toReshape(t);
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
        std::vector<size_t> outs;  // present outputs; each gets a Transpose back to the old layout
        for (size_t i = 0; i < node.outputs.size(); ++i)
            if (node.outputs[i] != kNone) outs.push_back(i);
        if (outs.empty()) return false;
        std::vector<size_t> slots;
        for (size_t s : rule.slots(node))
            if (s < node.inputs.size()) slots.push_back(s);
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
        const auto keepRank = static_cast<size_t>(rule.keepRankAtMost);
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
                if (k->dims.size() <= keepRank) continue;
                if (k->dims.size() > rank) { why = "constant operand has a higher rank"; break; }
                Tensor padded = *k;
                padded.dims.insert(padded.dims.begin(), rank - k->dims.size(), 1);
                TensorPtr moved = transposeTensor(padded, inv);
                if (!moved) { why = "constant operand has no fixed element size"; break; }
                plans[s] = {Kind::Constant, kNone, moved};
                continue;
            }
            int64_t r = rankOf(g_, v);
            if (r == 0 || (r > 0 && static_cast<size_t>(r) <= keepRank)) continue;
            if (r != static_cast<int64_t>(rank)) {
                why = "operand '" + g_.value(v).name + "' has " + (r < 0 ? "an unknown rank" : "a lower rank");
                break;
            }
            plans[s] = {Kind::Insert, v, nullptr};
            ++added;
        }
        PushEdit edit;
        if (why.empty()) rule.edit(RuleInput{rw_.model(), g_, node, *perm, onnxOpset(rw_.model())}, edit, why);
        // Cost: the Transposes added (inserted inputs, one per output) against those likely removed.
        // Extra outputs (Split) are free when their readers are likely to take the Transpose further.
        const Perm outPerm = edit.outputPerm.value_or(*perm);
        size_t outputCost = isIdentity(outPerm) ? 0 : 1;
        for (size_t k = 1; k < outs.size(); ++k)
            if (!outputTakesTranspose(node.outputs[outs[k]])) ++outputCost;
        if (why.empty() && added + outputCost > removable.size())
            why = "pushing would add " + std::to_string(added + outputCost) + " Transpose(s) and remove " +
                  std::to_string(removable.size());
        if (!why.empty()) {
            blocked_[c] = why;
            return false;
        }

        const std::string name = node.displayName();
        const std::string reason = "Transpose " + permText(*perm) + " pushed below " + name;
        rw_.setRule("transpose-push-" + node.opType);
        std::vector<ValueId> inputs = node.inputs;
        // Read the node before the first edit below: it is replaced, and no reference survives an edit.
        std::vector<ValueId> oldOuts = node.outputs, newOuts = node.outputs;
        const std::string opType = node.opType, nodeName = node.name, domain = node.domain;
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
        for (const auto& [slot, tensor] : edit.inputs) {  // axes / pads rewritten for the new layout
            if (slot >= inputs.size()) inputs.resize(slot + 1, kNone);
            const std::string hint = inputs[slot] != kNone ? g_.value(inputs[slot]).name : name + "_axes";
            if (inputs[slot] != kNone) oldInputs.push_back(inputs[slot]);
            inputs[slot] = rw_.newInitializer(hint + "_perm", tensor);
        }
        const bool outputTransposed = !isIdentity(outPerm);
        if (outputTransposed)
            for (size_t k : outs)
                newOuts[k] = rw_.newValue(g_.value(oldOuts[k]).name + "_pre",
                                          permutedType(g_.value(oldOuts[k]).type, invert(outPerm)));
        std::vector<bool> read(oldOuts.size(), false);
        for (size_t k : outs) read[k] = !g_.value(oldOuts[k]).consumers.empty() || g_.value(oldOuts[k]).isGraphOutput;
        NodeId moved = rw_.replaceNodes({c}, opType, inputs, newOuts, edit.attrs, reason, nodeName, domain);
        for (auto [from, to] : inserted)
            rw_.addNode("Transpose", {from}, {to}, {Attribute::makeInts("perm", inv)}, {}, reason, "Transpose");
        for (size_t k : outs)
            if (read[k] && outputTransposed)
                rw_.addNode("Transpose", {newOuts[k]}, {oldOuts[k]}, {Attribute::makeInts("perm", outPerm)}, {firstT},
                            reason, "Transpose");
        for (ValueId v : oldInputs) dropIfDead(v);
        rw_.applied({moved}, reason);
        blocked_.erase(c);
        return true;
    }

    /// Input `slot` of `node` is a 2-D Transpose [1,0]: its input, else kNone.
    ValueId swappedMatrix(const Node& node, size_t slot) const {
        if (slot >= node.inputs.size() || node.inputs[slot] == kNone) return kNone;
        NodeId p = g_.value(node.inputs[slot]).producer;
        if (p == kNone || !isTranspose(g_.node(p))) return kNone;
        auto q = permOf(g_, p);
        return q && *q == Perm{1, 0} ? g_.node(p).inputs[0] : kNone;
    }

    /// Gemm(Transpose(A), B) = Gemm(A, B, transA = !transA); the same for B. C has no flag.
    bool absorbIntoGemm(NodeId c) {
        bool changed = false;
        for (size_t s = 0; s < 2; ++s) {
            ValueId x = swappedMatrix(g_.node(c), s);
            if (x == kNone) continue;
            const char* flag = s == 0 ? "transA" : "transB";
            const ValueId old = g_.node(c).inputs[s];
            const int64_t was = g_.node(c).attrInt(flag, 0);
            const std::string reason = g_.node(g_.value(old).producer).displayName() + " [1,0] absorbed into " +
                                       g_.node(c).displayName() + " as " + flag + "=" + std::to_string(1 - was);
            rw_.setRule("transpose-into-Gemm");
            rw_.setInput(c, s, x, reason);
            rw_.setAttribute(c, Attribute::makeInt(flag, 1 - was), reason);
            dropIfDead(old);
            rw_.applied({c}, reason);
            changed = true;
        }
        const Node& node = g_.node(c);
        if (!changed && node.inputs.size() > 2 && node.inputs[2] != kNone && g_.value(node.inputs[2]).producer != kNone &&
            isTranspose(g_.node(g_.value(node.inputs[2]).producer)))
            blocked_[c] = "Gemm has no transpose flag for C";
        return changed;
    }

    /// MatMul(Transpose(A), B) with 2-D operands becomes Gemm(A, B, transA=1) (same for B).
    bool matmulToGemm(NodeId c) {
        const Node& node = g_.node(c);
        const ValueId a = swappedMatrix(node, 0), b = swappedMatrix(node, 1);
        const DataType dt = g_.value(node.inputs[0]).type.elemType;
        const int64_t opset = onnxOpset(rw_.model());
        std::string why;
        if (rankOf(g_, node.inputs[0]) != 2 || rankOf(g_, node.inputs[1]) != 2)
            why = "MatMul with a batched or 1-D operand has no transpose flag (only 2-D operands become a Gemm)";
        else if (dt != DataType::Float && dt != DataType::Double)
            why = "MatMul on this element type does not become a Gemm";
        else if (opset < 7)
            why = "Gemm before opset 7 does not broadcast";
        if (!why.empty()) {
            blocked_[c] = why;
            return false;
        }
        std::vector<ValueId> inputs = {a != kNone ? a : node.inputs[0], b != kNone ? b : node.inputs[1]};
        // Read the node before the first edit (the zero constant below): it is replaced.
        const std::vector<ValueId> oldInputs = node.inputs, outputs = node.outputs;
        const std::string nodeName = node.name, shownName = node.displayName();
        if (opset < 11) {  // C is required before opset 11: a zero scalar
            TensorPtr zero = dt == DataType::Float ? makeTensorOf(dt, {}, std::vector<float>{0.f})
                                                   : makeTensorOf(dt, {}, std::vector<double>{0.0});
            inputs.push_back(rw_.newInitializer(shownName + "_zero", zero));
        }
        std::vector<Attribute> attrs;
        if (a != kNone) attrs.push_back(Attribute::makeInt("transA", 1));
        if (b != kNone) attrs.push_back(Attribute::makeInt("transB", 1));
        const std::string reason = "MatMul " + shownName + " of a transposed 2-D operand becomes a Gemm with " +
                                   (a != kNone ? std::string("transA") : "") + (a != kNone && b != kNone ? " and " : "") +
                                   (b != kNone ? std::string("transB") : "");
        rw_.setRule("transpose-into-MatMul");
        NodeId gemm = rw_.replaceNodes({c}, "Gemm", inputs, outputs, attrs, reason, nodeName);
        for (ValueId v : oldInputs) dropIfDead(v);
        rw_.applied({gemm}, reason);
        blocked_.erase(c);
        return true;
    }

    /// Every reader of `v` is likely to take a Transpose further (a Transpose in conservative mode).
    bool outputTakesTranspose(ValueId v) const {
        const Value& val = g_.value(v);
        if (val.isGraphOutput) return false;
        for (NodeId r : val.consumers)
            if (conservative_ ? !isTranspose(g_.node(r)) : !takesTranspose(g_.node(r))) return false;
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
            if (!takesTranspose(g_.node(r))) return false;
        return true;
    }

    /// A Transpose that keeps the order of every axis longer than 1 (e.g. NHWC [N,1,1,C] to NCHW
    /// [N,C,1,1]) does not move data: it becomes a Reshape. Dynamic axes must stay in place (0 in
    /// the target shape), except one that the target's -1 can take.
    bool toReshape(NodeId t) {
        const Node& node = g_.node(t);
        auto perm = permOf(g_, t);
        if (!perm || onnxOpset(rw_.model()) < 5 || node.outputs[0] == kNone) return false;
        const TypeInfo& type = g_.value(node.inputs[0]).type;
        if (!type.isTensor() || !type.shape || type.shape->rank() != perm->size()) return false;
        std::vector<int64_t> target;
        int64_t lastMoved = -1;
        bool inferredUsed = false;
        for (size_t i = 0; i < perm->size(); ++i) {
            const auto src = static_cast<size_t>((*perm)[i]);
            const Dim& d = type.shape->dims[src];
            if (d.isStatic() && *d.value == 1) { target.push_back(1); continue; }
            if (static_cast<int64_t>(src) < lastMoved) return false;  // data order changes
            lastMoved = static_cast<int64_t>(src);
            if (d.isStatic() && *d.value > 0) target.push_back(*d.value);
            else if (d.isStatic()) return false;  // 0 would mean "copy" in a Reshape shape
            else if (src == i) target.push_back(0);
            else if (!inferredUsed) { target.push_back(-1); inferredUsed = true; }
            else return false;
        }
        const std::string reason = node.displayName() + " " + permText(*perm) +
                                   " only moves axes of length 1, so the data order is unchanged: a Reshape";
        const ValueId x = node.inputs[0], y = node.outputs[0];
        const std::string name = node.name;
        rw_.setRule("transpose-to-reshape");
        const ValueId shape = rw_.newInitializer(node.displayName() + "_shape",
                                                 makeTensorOf(DataType::Int64, {static_cast<int64_t>(target.size())}, target));
        NodeId r = rw_.replaceNodes({t}, "Reshape", {x, shape}, {y}, {}, reason, name);
        rw_.applied({r}, reason);
        return true;
    }

    /// "conv (Conv)", or just "Conv#12" for an unnamed node.
    static std::string opLabel(const Node& n) {
        const std::string op = n.domain.empty() ? n.opType : n.domain + "." + n.opType;
        return n.name.empty() ? n.displayName() : n.name + " (" + op + ")";
    }

    /// One missed remark per Transpose left in the graph, naming the op that stopped it.
    void reportStuck() {
        rw_.setRule("transpose-push");
        for (NodeId t : g_.nodeOrder()) {
            const Node& node = g_.node(t);
            if (!isTranspose(node) || node.outputs.empty() || node.outputs[0] == kNone) continue;
            const Value& y = g_.value(node.outputs[0]);
            std::string why;
            NodeId stopper = kNone;
            if (!permOf(g_, t)) why = "its perm is invalid or its input rank is unknown";
            else if (y.isGraphOutput) why = "its output is a graph output";
            for (NodeId r : y.consumers) {  // the first reader that refused, else one with no rule
                if (!why.empty()) break;
                const Node& rn = g_.node(r);
                if (auto it = blocked_.find(r); it != blocked_.end()) why = it->second;
                else if (rn.domain == kNhwcDomain) why = "a channels-last op reads NHWC data here (layout boundary)";
                else if (!takesTranspose(rn)) why = "layout-sensitive, no push rule";
                else continue;
                stopper = r;
            }
            for (NodeId r : y.consumers)
                if (why.empty() && !isTranspose(g_.node(r))) {
                    stopper = r;
                    why = "no push rule fired";
                }
            if (why.empty()) why = y.consumers.empty() ? "nothing reads its output" : "no rule applies";
            std::string message = node.displayName() + " not pushed: ";
            if (stopper != kNone) message += "stopped by " + opLabel(g_.node(stopper)) + ": ";
            std::vector<NodeId> nodes = {t};
            if (stopper != kNone) nodes.push_back(stopper);
            rw_.missed(nodes, message + why, {node.outputs[0]});
        }
    }

    Rewriter& rw_;
    const Graph& g_;
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
    // The dry run edits copies the pass owns: the graph, and a model holding only the opset
    // imports the rules read (its own graph stays empty).
    Graph scratch = rw.graph();
    Model scratchModel;
    scratchModel.irVersion = rw.model().irVersion;
    scratchModel.opsetImports = rw.model().opsetImports;
    std::vector<Change> changes;
    std::vector<Remark> remarks;
    Rewriter dry(scratchModel, scratch, "transpose", rw.graphPath(), changes, remarks);
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
