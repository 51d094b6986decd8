// shape-chain-folding (level basic): constant folding through symbolic shapes.
//  - Shape of a value whose dims are partly symbolic still has static entries: a Gather/Slice
//    (and the Unsqueeze/Concat/Cast after it) that only reads static dims is a constant
//    (x: [batch, seq, 768] → Gather(Shape(x), 2) = 768).
//  - Shape nodes of different values whose shapes are provably equal (every dim static or a
//    dim_param, dim by dim the same) compute the same vector: their readers read the first one, so
//    CSE can merge the Gathers after them.
// Symbolic dims come from the importer's shape inference; an unnamed unknown dim proves nothing.
#include <map>

#include "ir/Tensor.h"
#include "passes/BasicPasses.h"
#include "passes/PassRegistry.h"
#include "passes/ShapeChain.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

bool isDefault(const Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }

/// "768,$batch,$seq|0|3": the shape a Shape node reads (every dim static or named) and its
/// start/end; empty when some dim is unknown, so nothing can be proven about it.
std::string shapeSignature(const Graph& g, const Node& shape) {
    if (shape.inputs.empty() || shape.inputs[0] == kNone) return {};
    const TypeInfo& t = g.value(shape.inputs[0]).type;
    if (!t.isTensor() || !t.shape) return {};
    std::string s;
    for (const Dim& d : t.shape->dims) {
        if (d.isStatic()) s += std::to_string(*d.value) + ",";
        else if (!d.param.empty()) s += "$" + d.param + ",";
        else return {};
    }
    const int64_t rank = (int64_t)t.shape->rank();
    return s + "|" + std::to_string(shape.attrInt("start", 0)) + "|" + std::to_string(shape.attrInt("end", rank));
}

bool isChainOp(const std::string& op) {
    return op == "Gather" || op == "Slice" || op == "Unsqueeze" || op == "Squeeze" || op == "Concat" || op == "Cast";
}

class ShapeChainFoldingPass final : public Pass {
public:
    std::string name() const override { return "shape-chain-folding"; }
    std::string description() const override {
        return "Folds static dims read through Shape of symbolically shaped values; merges Shape nodes of equal shapes";
    }

protected:
    void runImpl(PassContext& ctx) const override {
        ctx.forEachGraph([&](Rewriter& rw) {
            mergeEqualShapes(rw);
            foldStaticEntries(rw);
            rw.setRule({});
        });
    }

private:
    static void mergeEqualShapes(Rewriter& rw) {
        const Graph& g = rw.graph();
        const bool captures = hasSubgraphNodes(g);
        rw.setRule("merge-equal-shapes");
        std::map<std::string, NodeId> first;
        const std::vector<NodeId> order = g.nodeOrder();  // topological: the kept Shape comes before every reader
        for (NodeId id : order) {
            const Node& n = g.node(id);
            if (n.opType != "Shape" || !isDefault(n) || n.outputs.size() != 1) continue;
            const std::string sig = shapeSignature(g, n);
            if (sig.empty()) continue;
            auto [it, fresh] = first.emplace(sig, id);
            if (fresh) continue;
            const ValueId out = n.outputs[0];
            if (g.value(out).isGraphOutput || (captures && rw.isCapturedBySubgraph(out))) continue;
            const Node& kept = g.node(it->second);
            const std::string why = n.displayName() + " reads '" + g.value(n.inputs[0]).name + "', whose shape " +
                                    g.value(n.inputs[0]).type.shape->toString() + " is provably that of '" +
                                    g.value(kept.inputs[0]).name + "' (read by " + kept.displayName() + ")";
            const std::string name = n.displayName();
            rw.replaceAllUsesWith(out, kept.outputs[0], why);
            rw.eraseNode(id, why);
            rw.applied({it->second}, name + " merged into " + kept.displayName() + ": " + why);
        }
    }

    static void foldStaticEntries(Rewriter& rw) {
        const Graph& g = rw.graph();
        const bool captures = hasSubgraphNodes(g);
        rw.setRule("fold-static-dims");
        const std::vector<NodeId> order = g.nodeOrder();
        for (NodeId id : order) {
            if (!g.hasNode(id)) continue;
            const Node& n = g.node(id);
            if (!isDefault(n) || !isChainOp(n.opType) || n.outputs.size() != 1 || n.outputs[0] == kNone) continue;
            const ValueId out = n.outputs[0];
            if (g.value(out).isGraphOutput || (captures && rw.isCapturedBySubgraph(out))) continue;
            const ShapeTrace trace = traceShapeVector(g, out);
            // Shape vectors are short; a long int vector is data, constant folding's business.
            if (!trace.ok() || trace.entries.empty() || trace.entries.size() > 64) continue;
            std::vector<int64_t> values;
            std::string dims;
            for (const ShapeEntry& e : trace.entries) {
                auto s = staticValueOf(g, e);
                if (!s) { values.clear(); break; }
                values.push_back(*s);
                if (!e.literal) dims += (dims.empty() ? "" : ", ") + describeEntry(g, e);
            }
            if (values.size() != trace.entries.size()) continue;
            const std::string name = n.displayName();
            // Dims folded earlier in this sweep reach the Unsqueeze/Concat after them as constants.
            const std::string why = dims.empty() ? name + " reads only constants folded from static dims"
                                                 : name + " reads only static dims through Shape (" + dims + ")";
            std::vector<int64_t> shape;
            if (!trace.scalar) shape.push_back((int64_t)values.size());
            TensorPtr folded = int64Tensor(shape, values);
            if (g.value(out).type.elemType == DataType::Int32) {  // after an exporter's Cast to int32
                std::vector<int32_t> narrow(values.begin(), values.end());
                folded = makeTensorOf<int32_t>(DataType::Int32, shape, narrow);
            } else if (g.value(out).type.elemType != DataType::Int64) {
                continue;
            }
            rw.foldToConstant(out, folded, why);
            rw.applied({}, why);
        }
    }
};

}  // namespace

std::unique_ptr<Pass> makeShapeChainFoldingPass() { return std::make_unique<ShapeChainFoldingPass>(); }

void registerShapeChainFoldingPass(PassRegistry& reg) {
    // Before constant-folding, so a ConstantOfShape, Range or Expand whose shape input it makes
    // constant folds in the same run.
    reg.add<ShapeChainFoldingPass>(Level::Basic, 95);
}

}  // namespace passlens::passes
