// Constant folding. Without the interpreter (branch eval, not merged yet) this folds what needs
// no kernel: Constant nodes become initializers, Shape and Size of statically shaped values
// become int64 constants. Everything else whose inputs are all constant gets a missed remark.
#include <algorithm>
#include <numeric>
#include <optional>

#include "ir/Builder.h"
#include "passes/BasicPasses.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

std::optional<std::vector<int64_t>> staticDims(const Value& v) {
    if (v.initializer) return v.initializer->dims;
    if (!v.type.shape) return std::nullopt;
    std::vector<int64_t> dims;
    for (const Dim& d : v.type.shape->dims) {
        if (!d.isStatic()) return std::nullopt;
        dims.push_back(*d.value);
    }
    return dims;
}

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

protected:
    void runImpl(PassContext& ctx) const override {
        const int64_t limit = ctx.options().foldSizeLimitBytes;
        ctx.forEachGraph([&](Rewriter& rw) {
            Graph& g = rw.graph();
            std::vector<NodeId> order = g.nodeOrder();
            for (NodeId id : order) {
                if (!g.hasNode(id)) continue;
                const Node& n = g.node(id);
                if (!n.domain.empty() && n.domain != "ai.onnx") continue;
                if (n.outputs.size() != 1 || n.outputs[0] == kNone) continue;
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
                    auto dims = staticDims(g.value(n.inputs[0]));
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
                        int64_t count = std::accumulate(dims->begin(), dims->end(), int64_t{1}, std::multiplies<>());
                        folded = makeTensorOf<int64_t>(DataType::Int64, {}, {count});
                    }
                    why = n.displayName() + " reads only the static shape of '" + g.value(n.inputs[0]).name + "'";
                } else {
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
        });
    }
};

}  // namespace

std::unique_ptr<Pass> makeConstantFoldingPass() { return std::make_unique<ConstantFoldingPass>(); }

}  // namespace passlens::passes
