// Constant folding. Constant nodes become initializers, Shape and Size of statically shaped
// values become int64 constants (no kernel needed), and any other deterministic node whose
// inputs are all constant is evaluated with the interpreter; all its outputs fold together.
#include <algorithm>
#include <numeric>
#include <optional>
#include <set>

#include "analysis/OpRegistry.h"
#include "eval/Interpreter.h"
#include "eval/MemoryBudget.h"
#include "ir/Tensor.h"
#include "ir/Error.h"
#include "passes/BasicPasses.h"
#include "passes/IfInlining.h"
#include "passes/PassRegistry.h"
#include "ir/CheckedMath.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {


/// The tensor a Constant node stands for, or nullptr for forms we do not handle (sparse).
TensorPtr constantValue(const Node& n) {
    for (const Attribute& a : n.attributes) {
        if (!a.refAttrName.empty()) return nullptr;
        if (a.name == "value" && a.t) return a.t;
        if (a.name == "value_float") return makeTensorOf<float>(DataType::Float, {}, {a.f});
        if (a.name == "value_floats") return makeTensorOf<float>(DataType::Float, {(int64_t)a.floats.size()}, a.floats);
        if (a.name == "value_int") return makeTensorOf<int64_t>(DataType::Int64, {}, {a.i});
        if (a.name == "value_ints") return makeTensorOf<int64_t>(DataType::Int64, {(int64_t)a.ints.size()}, a.ints);
    }
    return nullptr;
}

class ConstantFoldingPass final : public Pass {
public:
    std::string name() const override { return "constant-folding"; }
    std::string description() const override { return "Evaluates nodes whose inputs are all constant; Constant nodes become initializers"; }
    std::vector<PassOption> options() const override {
        return {{"size-limit", PassOption::Type::Int, {}, std::to_string(PassOptions().foldSizeLimitBytes),
                 "largest output, in bytes, a fold may make (larger nodes stay)",
                 [](PassOptions& o, const std::string& v) {
                     o.foldSizeLimitBytes = std::stoll(v);
                     if (o.foldSizeLimitBytes < 0) throwBadInput("constant-folding{size-limit=...}: must be 0 or more, got " + v);
                 }}};
    }

protected:
    void runImpl(PassContext& ctx) const override {
        const int64_t limit = ctx.options().foldSizeLimitBytes;
        ctx.forEachGraph([&](Rewriter& rw) {
            // An If whose condition is constant, on arrival or once this sweep folded it, gives
            // way to its branch, whose nodes (an If among them included) the next sweep sees;
            // each round removes one level of nesting, so the loop ends.
            inlineIfsWithKnownCondition(rw);
            for (NodeId firstNew = 0;;) {
                foldSweep(ctx, rw, firstNew, limit);
                firstNew = rw.graph().nodeIdLimit();  // the next sweep sees only inlined nodes
                if (inlineIfsWithKnownCondition(rw) == 0) break;
            }
        });
    }

private:
    /// Folds, in list order, every node with id `firstNew` or later that it can.
    static void foldSweep(PassContext& ctx, Rewriter& rw, NodeId firstNew, int64_t limit) {
        const Graph& g = rw.graph();
        std::vector<NodeId> order;
        for (NodeId id : g.nodeOrder())
            if (id >= firstNew) order.push_back(id);
        for (NodeId id : order) {
            if (!g.hasNode(id)) continue;
            const Node& n = g.node(id);
            if (!n.domain.empty() && n.domain != "ai.onnx") continue;
            if (n.outputs.size() != 1 || n.outputs[0] == kNone) { foldWithInterpreter(ctx, rw, id, limit); continue; }
            ValueId out = n.outputs[0];
            TensorPtr folded;
            std::string why;
            if (n.opType == "Constant") {
                rw.setRule("constant-to-initializer");
                folded = constantValue(n);
                if (!folded) { rw.missed({id}, "not folded: Constant in a form not handled (sparse or attribute reference)"); continue; }
                why = n.displayName() + " is a Constant: its value becomes an initializer";
            } else if ((n.opType == "Shape" || n.opType == "Size") && !n.inputs.empty() && n.inputs[0] != kNone) {
                rw.setRule(n.opType == "Shape" ? "fold-shape" : "fold-size");
                auto dims = g.value(n.inputs[0]).staticDims();
                if (!dims) {
                    rw.missed({id}, "not folded: the shape of '" + g.value(n.inputs[0]).name + "' is not static", {n.inputs[0]});
                    continue;
                }
                if (n.opType == "Shape") {
                    int64_t rank = (int64_t)dims->size();
                    int64_t start = n.attrInt("start", 0), end = n.attrInt("end", rank);
                    if (start < 0) start += rank;
                    if (end < 0) end += rank;
                    start = std::clamp<int64_t>(start, 0, rank);
                    end = std::clamp<int64_t>(end, start, rank);
                    std::vector<int64_t> sl(dims->begin() + start, dims->begin() + end);
                    folded = makeTensorOf<int64_t>(DataType::Int64, {(int64_t)sl.size()}, sl);
                } else {
                    int64_t count = checkedElementCount(*dims, "the input of " + n.displayName());
                    folded = makeTensorOf<int64_t>(DataType::Int64, {}, {count});
                }
                why = n.displayName() + " reads only the static shape of '" + g.value(n.inputs[0]).name + "'";
            } else {
                foldWithInterpreter(ctx, rw, id, limit);
                continue;
            }
            if ((int64_t)folded->byteSize() > limit) {
                rw.missed({id}, "not folded: output would be " + std::to_string(folded->byteSize()) +
                                    " bytes, above the fold limit of " + std::to_string(limit) + " bytes");
                continue;
            }
            if (g.value(out).isGraphOutput) {
                rw.missed({id}, "not folded: '" + g.value(out).name + "' is a graph output");
                continue;
            }
            rw.applied({id}, why);
            rw.foldToConstant(out, folded, why);
        }
        rw.setRule({});
    }

    /// Total bytes of the node's outputs when every output's shape and element type are known.
    static std::optional<int64_t> predictedBytes(const Graph& g, const Node& n) {
        int64_t total = 0;
        for (ValueId v : n.outputs) {
            if (v == kNone) continue;
            const auto& type = g.value(v).type;
            auto dims = g.value(v).staticDims();
            const size_t elem = type.isTensor() ? elementSize(type.elemType) : 0;
            if (!dims || elem == 0) return std::nullopt;
            auto bytes = checkedProduct(*dims, static_cast<int64_t>(elem));
            if (!bytes || *bytes > INT64_MAX - total) return INT64_MAX;
            total += *bytes;
        }
        return total;
    }

    static void foldWithInterpreter(PassContext& ctx, Rewriter& rw, NodeId id, int64_t limit) {
        const Graph& g = rw.graph();
        const Node& n = g.node(id);
        if (analysis::isNondeterministic(g, id) || n.hasSubgraphs() || n.inputs.empty()) return;
        std::vector<TensorPtr> inputs;
        for (ValueId v : n.inputs) {
            if (v == kNone) { inputs.push_back(nullptr); continue; }
            if (!g.value(v).initializer || g.value(v).isGraphInput) return;  // not all constant
            inputs.push_back(g.value(v).initializer);
        }
        rw.setRule("fold-node");
        std::string why;
        if (!eval::isSupported(ctx.model(), g, n, &why)) {
            rw.missed({id}, "not folded: interpreter has no kernel for " + n.opType + (why.empty() ? "" : " (" + why + ")"));
            return;
        }
        // Size the outputs from their shapes before evaluating: a ConstantOfShape or Expand to
        // gigabytes must be refused, not materialized. Unknown shapes evaluate under a budget.
        if (auto predicted = predictedBytes(g, n); predicted && *predicted > limit) {
            rw.missed({id}, "not folded: output would be " + std::to_string(*predicted) + " bytes, above the fold limit of " +
                                std::to_string(limit) + " bytes");
            return;
        }
        std::vector<TensorPtr> outs;
        try {
            eval::MemoryBudgetScope budget(std::min(limit, eval::currentMemoryBudget()));
            outs = eval::evalNode(ctx.model(), g, id, inputs);
        } catch (const Error& e) {
            rw.missed({id}, std::string("not folded: the interpreter could not evaluate it: ") + e.what());
            return;
        }
        int64_t total = 0;
        for (auto& t : outs) total += t ? (int64_t)t->byteSize() : 0;
        if (total > limit) {
            rw.missed({id}, "not folded: output would be " + std::to_string(total) + " bytes, above the fold limit of " +
                                std::to_string(limit) + " bytes");
            return;
        }
        std::vector<ValueId> outVals = n.outputs;
        for (size_t i = 0; i < outVals.size(); ++i) {
            if (outVals[i] == kNone) continue;
            if (i >= outs.size() || !outs[i] || g.value(outVals[i]).isGraphOutput) {
                rw.missed({id}, "not folded: output '" + g.value(outVals[i]).name + "' is a graph output or was not computed");
                return;
            }
        }
        std::string reason = n.displayName() + " has only constant inputs: evaluated at compile time";
        rw.applied({id}, reason);
        for (size_t i = 0; i < outVals.size(); ++i)
            if (outVals[i] != kNone) rw.foldToConstant(outVals[i], outs[i], reason);
    }
};

}  // namespace

std::unique_ptr<Pass> makeConstantFoldingPass() { return std::make_unique<ConstantFoldingPass>(); }

}  // namespace passlens::passes
