// shape-chain-folding (level basic): constant folding through symbolic shapes.
//  - Shape of a value whose dims are partly symbolic still has static entries: a Gather/Slice
//    (and the Unsqueeze/Concat/Cast after it) that only reads static dims is a constant
//    (x: [batch, seq, 768] → Gather(Shape(x), 2) = 768).
//  - Shape nodes of different values whose shapes are provably equal (every dim static or a
//    dim_param, dim by dim the same) compute the same vector: their readers read the first one, so
//    CSE can merge the Gathers after them.
//  - A Reshape whose target is computed at run time but known symbolically (core/shape's value
//    propagation: [batch, 197, 3, 64]) gets a constant target ([0, 197, 3, 64]); other shape
//    vectors are rebuilt with fewer nodes (SymbolicRewrites.h, ShapeCodegen.h).
//  - An Expand whose output shape is provably its input's shape (same expressions) is removed.
// Symbolic dims come from the importer's shape inference; an unnamed unknown dim proves nothing.
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/IntsText.h"
#include "ir/Tensor.h"
#include "passes/BasicPasses.h"
#include "passes/PassRegistry.h"
#include "passes/IfInlining.h"
#include "passes/SymbolicRewrites.h"
#include "passes/ShapeChain.h"
#include "passes/fusion/PatternUtil.h"
#include "passes/match/Match.h"
#include "shape/ShapeEngine.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {


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
            inlineIfsWithKnownCondition(rw);  // before the analysis, which then sees one graph
            mergeEqualShapes(rw);
            foldStaticEntries(rw);
            const size_t beforeSymbolic = rw.changeCount();
            if (auto a = foldSymbolicShapes(rw)) {
                // Values the sweep above made are unknown to `a`; the others compute the same.
                const bool captures = hasSubgraphNodes(rw.graph());
                rewriteFloatSizes(rw, *a, captures);
                gatherPermutedVectors(rw, *a, captures);
                rewriteScatterBoxFills(rw, *a, captures);
                // The rebuild costs whole vectors: it reads a fresh analysis when the rules above
                // made values `a` does not know, or a second run would find them to rebuild.
                if (rw.changeCount() != beforeSymbolic) a = shape::analyzeShapes(rw.graph(), &rw.model());
                rebuildShapeVectors(rw, *a, captures);
            }
            rewriteBoxGridLabels(rw, hasSubgraphNodes(rw.graph()));
            splitOuterSumWindows(rw);  // the labels box-grid-labels wrote, cut into windows
            tabulateWindowTypes(rw, hasSubgraphNodes(rw.graph()));  // a mask over those windows: its table of types
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
            if (n.opType != "Shape" || !match::inDefaultDomain(n) || n.outputs.size() != 1) continue;
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
            const std::string applied = n.displayName() + " merged into " + kept.displayName() + ": " + why;
            rw.replaceAllUsesWith(out, kept.outputs[0], why);
            rw.eraseNode(id, why);
            rw.applied({it->second}, applied);
        }
    }

    static std::optional<shape::ShapeAnalysis> foldSymbolicShapes(Rewriter& rw) {
        const Graph& g = rw.graph();
        if (g.nodeOrder().empty()) return std::nullopt;
        shape::ShapeAnalysis a = shape::analyzeShapes(g, &rw.model());
        const bool captures = hasSubgraphNodes(g);
        const std::vector<NodeId> order = g.nodeOrder();
        std::unordered_map<std::string, ValueId> firstWithValues;  // symbolic value numbering
        std::unordered_map<std::string, ValueId> firstWithShape;   // values computed so far, by shape
        bool addedShapes = false;
        for (ValueId v : g.inputs())
            if (v < a.values.size()) firstWithShape.emplace(shapeKey(a.of(v)), v);
        firstWithShape.erase(std::string());
        for (NodeId id : order) {
            if (!g.hasNode(id)) continue;
            const Node& n = g.node(id);
            if (!match::inDefaultDomain(n)) {
                rememberShapes(g, a, id, firstWithShape);
                continue;
            }
            if (foldKnownValue(rw, a, id, captures)) continue;
            if (mergeEqualSymbolicValue(rw, a, id, captures, firstWithValues)) continue;
            if (ValueId shaped = replaceByShapeOfEqualValue(rw, a, id, captures, firstWithShape); shaped != kNone) {
                // Later equal computations read the new Shape, not the retired chain.
                firstWithValues[valuesKey(a.of(g.node(id).outputs[0]))] = shaped;
                addedShapes = true;
                continue;
            }
            rememberShapes(g, a, id, firstWithShape);
            if (n.inputs.size() < 2 || n.inputs[0] == kNone || n.inputs[1] == kNone) continue;
            // A computed target is rebuilt below (rebuild-shape-vector); one that only inserts 1s
            // needs none: the Reshape is an Unsqueeze.
            if (n.opType == "Reshape" && !match::constantOf(g, n.inputs[1])) reshapeToUnsqueeze(rw, a, id);
            else if (n.opType == "Expand") removeSymbolicNoOpExpand(rw, a, id);
            else if (n.opType == "Slice") removeSymbolicNoOpSlice(rw, a, id);
        }
        if (addedShapes) rw.restoreTopologicalOrder();
        return a;
    }

    /// "dtype|e1,e2,...": a value's shape when every dim is known ("" otherwise).
    static std::string shapeKey(const shape::ValueShape& s) {
        if (!s.fullyKnown()) return {};
        std::string key;
        for (const shape::Dim& d : *s.dims) key += std::to_string(d->id()) + ",";
        return key;
    }

    static void rememberShapes(const Graph& g, const shape::ShapeAnalysis& a, NodeId id,
                               std::unordered_map<std::string, ValueId>& first) {
        if (!g.hasNode(id)) return;
        for (ValueId v : g.node(id).outputs)
            if (v != kNone && v < a.values.size())
                if (auto k = shapeKey(a.of(v)); !k.empty()) first.emplace(k, v);
    }

    /// Nodes that only exist to compute `v`: its producer, and back through producers whose every
    /// output is read only by nodes already counted.
    static size_t exclusiveChain(const Rewriter& rw, ValueId v, bool captures) {
        const Graph& g = rw.graph();
        std::set<NodeId> dead;
        std::vector<NodeId> work{g.value(v).producer};
        while (!work.empty()) {
            NodeId p = work.back();
            work.pop_back();
            if (p == kNone || dead.count(p) || g.node(p).hasSubgraphs()) continue;
            bool onlyFeedsDead = true;
            for (ValueId o : g.node(p).outputs) {
                if (o == kNone) continue;
                if (g.value(o).isGraphOutput || (captures && rw.isCapturedBySubgraph(o))) onlyFeedsDead = false;
                for (NodeId r : g.value(o).consumers)
                    if (!dead.count(r) && o != v) onlyFeedsDead = false;
            }
            if (!onlyFeedsDead) continue;
            dead.insert(p);
            for (ValueId in : g.node(p).inputs)
                if (in != kNone && !g.value(in).initializer) work.push_back(g.value(in).producer);
        }
        return dead.size();
    }

    /// A computed 1-D size vector that equals the whole shape of a value computed earlier
    /// (DeepLab's Resize sizes [batch, 16, floor((h - 1)/16) + 1, ...] = the shape of the ASPP
    /// branch beside it) becomes one Shape of that value, when that retires two nodes or more.
    static ValueId replaceByShapeOfEqualValue(Rewriter& rw, const shape::ShapeAnalysis& a, NodeId id, bool captures,
                                              const std::unordered_map<std::string, ValueId>& firstWithShape) {
        const Graph& g = rw.graph();
        const Node& n = g.node(id);
        if (n.opType == "Shape" || n.opType == "Constant" || n.outputs.size() != 1 || n.outputs[0] == kNone ||
            n.outputs[0] >= a.values.size())
            return kNone;
        const ValueId out = n.outputs[0];
        const shape::ValueShape& s = a.of(out);
        if (s.dtype != DataType::Int64 || g.value(out).type.elemType != DataType::Int64 || !s.values || !s.dims ||
            s.dims->size() != 1)
            return kNone;
        std::string key;
        bool symbolic = false;
        for (const shape::Dim& e : *s.values) {
            if (!e) return kNone;
            symbolic = symbolic || !e->isConstant();
            key += std::to_string(e->id()) + ",";
        }
        if (!symbolic) return kNone;  // all numbers: fold-known-values' business
        // Only where a whole shape is expected (the readers are sizes of a new tensor).
        for (NodeId r : g.value(out).consumers) {
            const Node& rn = g.node(r);
            const bool sizeSlot = (rn.opType == "Resize" && rn.inputs.size() > 3 && rn.inputs[3] == out) ||
                                  ((rn.opType == "Reshape" || rn.opType == "Expand") && rn.inputs.size() > 1 && rn.inputs[1] == out) ||
                                  (rn.opType == "ConstantOfShape" && rn.inputs[0] == out);
            if (!sizeSlot || !match::inDefaultDomain(rn)) return kNone;
        }
        auto it = firstWithShape.find(key);
        if (it == firstWithShape.end()) return kNone;
        if (g.value(out).isGraphOutput || (captures && rw.isCapturedBySubgraph(out))) return kNone;
        if (exclusiveChain(rw, out, captures) < 3) return kNone;
        rw.setRule("shape-of-equal-value");
        const ValueId source = it->second;
        const std::string why = n.displayName() + " computes " + describeValues(*s.values) + ", the shape of '" +
                                g.value(source).name + "'";
        ir::Shape vecShape;
        vecShape.dims.push_back(ir::Dim::of((int64_t)s.values->size()));
        const std::string nameHint = n.displayName() + "_shape";  // n is not read after the first edit
        ValueId shaped = rw.newValue(g.value(out).name + "_shape", TypeInfo::tensor(DataType::Int64, vecShape));
        NodeId added = rw.addNode("Shape", {source}, {shaped}, {}, {id}, why, nameHint);
        rw.replaceAllUsesWith(out, shaped, why);
        rw.applied({added}, why);
        return shaped;
    }

    /// An integer result whose every element the engine knows as a number (Gather(Shape(x), -1)
    /// of a static last dim, Mod/Div/Where over such entries) becomes a constant.
    static bool foldKnownValue(Rewriter& rw, const shape::ShapeAnalysis& a, NodeId id, bool captures) {
        const Graph& g = rw.graph();
        const Node& n = g.node(id);
        if (n.opType == "Constant" || n.outputs.size() != 1 || n.outputs[0] == kNone || n.outputs[0] >= a.values.size()) return false;
        for (const Attribute& at : n.attributes)
            if (at.kind == AttrKind::Graph || at.kind == AttrKind::Graphs) return false;
        const ValueId out = n.outputs[0];
        const Value& v = g.value(out);
        if (v.isGraphOutput || (captures && rw.isCapturedBySubgraph(out))) return false;
        const shape::ValueShape& s = a.of(out);
        if (!s.values || (s.dtype != DataType::Int64 && s.dtype != DataType::Int32) || v.type.elemType != s.dtype) return false;
        auto dims = s.staticDims();
        if (!dims) return false;
        std::vector<int64_t> values;
        for (const shape::Dim& e : *s.values) {
            auto c = e ? e->constantValue() : std::nullopt;
            if (!c) return false;
            values.push_back(*c);
        }
        int64_t count = 1;
        for (int64_t d : *dims) count *= d;
        if (count != (int64_t)values.size()) return false;
        rw.setRule("fold-known-values");
        const std::string why = n.displayName() + " computes " + intsText(values) + " whatever the input dims are";
        TensorPtr folded = int64Tensor(*dims, values);
        if (s.dtype == DataType::Int32) folded = makeTensorOf<int32_t>(DataType::Int32, *dims, std::vector<int32_t>(values.begin(), values.end()));
        rw.foldToConstant(out, folded, why);
        rw.applied({}, why);
        return true;
    }

    /// "dtype|dims|element ids" of a small integer tensor whose every element is known ("" else).
    static std::string valuesKey(const shape::ValueShape& s) {
        if (!s.values) return {};
        auto dims = s.staticDims();
        if (!dims) return {};
        std::string key = std::to_string(int(s.dtype)) + "|";
        for (int64_t d : *dims) key += std::to_string(d) + ",";
        key += "|";
        for (const shape::Dim& e : *s.values) {
            if (!e) return {};
            key += std::to_string(e->id()) + ",";
        }
        return key;
    }

    /// Integer results with the same elements as an earlier one ([batch, seq] computed from two
    /// different Shape nodes, seq gathered in every block) read the earlier one: common
    /// subexpressions over symbols, which plain CSE cannot see because the inputs differ.
    static bool mergeEqualSymbolicValue(Rewriter& rw, const shape::ShapeAnalysis& a, NodeId id, bool captures,
                                        std::unordered_map<std::string, ValueId>& first) {
        const Graph& g = rw.graph();
        const Node& n = g.node(id);
        if (n.opType == "Constant" || n.outputs.size() != 1 || n.outputs[0] == kNone || n.outputs[0] >= a.values.size()) return false;
        if (n.hasSubgraphs()) return false;
        const ValueId out = n.outputs[0];
        const shape::ValueShape& s = a.of(out);
        if (!s.values || s.values->empty() || (s.dtype != DataType::Int64 && s.dtype != DataType::Int32) ||
            g.value(out).type.elemType != s.dtype)
            return false;
        const std::string key = valuesKey(s);
        if (key.empty()) return false;
        auto [it, fresh] = first.emplace(key, out);
        if (fresh) return false;
        if (g.value(out).isGraphOutput || (captures && rw.isCapturedBySubgraph(out))) return false;
        rw.setRule("merge-equal-symbolic-values");
        const ValueId keep = it->second;
        const std::string name = n.displayName();
        const std::string why = name + " computes " + describeValues(*s.values) + ", as '" + g.value(keep).name + "' already does";
        rw.replaceAllUsesWith(out, keep, why);
        rw.eraseNode(id, why);
        rw.applied({}, why);
        return true;
    }

    /// The output's dims when the node's one output provably has its first input's shape and
    /// bypassing it would not wire a graph input straight to a graph output; else nullptr.
    static const std::vector<shape::Dim>* keptInputShape(const Graph& g, const shape::ShapeAnalysis& a, const Node& n) {
        if (n.outputs.size() != 1 || n.outputs[0] == kNone || n.outputs[0] >= a.values.size() || n.inputs[0] >= a.values.size())
            return nullptr;
        const auto& in = a.of(n.inputs[0]);
        const auto& out = a.of(n.outputs[0]);
        if (!in.fullyKnown() || !out.fullyKnown() || *in.dims != *out.dims) return nullptr;
        if (g.value(n.outputs[0]).isGraphOutput && g.value(n.inputs[0]).isGraphInput) return nullptr;
        return &*out.dims;
    }

    static void removeSymbolicNoOpExpand(Rewriter& rw, const shape::ShapeAnalysis& a, NodeId id) {
        const auto* dims = keptInputShape(rw.graph(), a, rw.graph().node(id));
        if (!dims) return;
        rw.setRule("expand-noop-symbolic");
        bypassNodeChecked(rw, id, "Expand to " + describeValues(*dims) + ", the shape its input already has");
    }

    /// A Reshape whose result is its input with 1s inserted ([1, 6, h, w] → [1, 6, 1, h, w]) is an
    /// Unsqueeze with constant axes: no target to compute, however many symbolic dims there are.
    static bool reshapeToUnsqueeze(Rewriter& rw, const shape::ShapeAnalysis& a, NodeId id) {
        const Graph& g = rw.graph();
        const Node& n = g.node(id);
        if (n.outputs.size() != 1 || n.outputs[0] == kNone || n.outputs[0] >= a.values.size()) return false;
        const auto& in = a.of(n.inputs[0]);
        const auto& out = a.of(n.outputs[0]);
        if (!in.fullyKnown() || !out.fullyKnown() || out.dims->size() <= in.dims->size()) return false;
        std::vector<int64_t> axes;
        size_t p = 0;
        for (size_t j = 0; j < out.dims->size(); ++j) {
            const shape::DimExpr& o = *(*out.dims)[j];
            if (p < in.dims->size() && o == *(*in.dims)[p]) ++p;
            else if (o.constantValue() == int64_t(1)) axes.push_back((int64_t)j);
            else return false;
        }
        if (p != in.dims->size()) return false;
        rw.setRule("reshape-as-unsqueeze");
        const std::string name = n.displayName();
        const std::string why = name + " gives " + describeValues(*out.dims) + ", its input " + describeValues(*in.dims) +
                                " with 1s at " + intsText(axes) + ": an Unsqueeze";
        const ValueId x = n.inputs[0], y = n.outputs[0];
        NodeId u = kNone;
        if (pattern::defaultOpset(rw.model()) >= 13) {  // axes became an input in opset 13
            ValueId axesValue = rw.newInitializer(name + "_axes", int64Tensor({(int64_t)axes.size()}, axes));
            u = rw.replaceNodes({id}, "Unsqueeze", {x, axesValue}, {y}, {}, why, name);
        } else {
            u = rw.replaceNodes({id}, "Unsqueeze", {x}, {y}, {Attribute::makeInts("axes", axes)}, why, name);
        }
        rw.applied({u}, why);
        return true;
    }

    /// Steps of 1 (or none) and an output shape provably the input's: every start is 0 and every
    /// end at or past its dim (a step -1 could keep the length and reverse, so it never matches).
    static void removeSymbolicNoOpSlice(Rewriter& rw, const shape::ShapeAnalysis& a, NodeId id) {
        const Graph& g = rw.graph();
        const Node& n = g.node(id);
        if (n.inputs.size() > 4 && n.inputs[4] != kNone) {
            TensorPtr steps = match::constantOf(g, n.inputs[4]);
            if (!steps || steps->dtype != DataType::Int64) return;
            for (int64_t i = 0; i < steps->elementCount(); ++i)
                if (steps->as<int64_t>()[i] != 1) return;
        }
        const auto* dims = keptInputShape(g, a, n);
        if (!dims) return;
        rw.setRule("slice-noop-symbolic");
        bypassNodeChecked(rw, id, "Slice with steps 1 to " + describeValues(*dims) + ", the shape its input already has");
    }

    static void bypassNodeChecked(Rewriter& rw, NodeId id, const std::string& why) {
        const std::string name = rw.graph().node(id).displayName();
        rw.bypassNode(id, 0, 0, why);
        rw.applied({}, name + " removed: " + why);
    }

    static std::string describeValues(const std::vector<shape::Dim>& v) {
        std::string s = "[";
        for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + (v[i] ? v[i]->toString() : std::string("?"));
        return s + "]";
    }
        static void foldStaticEntries(Rewriter& rw) {
        const Graph& g = rw.graph();
        const bool captures = hasSubgraphNodes(g);
        rw.setRule("fold-static-dims");
        const std::vector<NodeId> order = g.nodeOrder();
        for (NodeId id : order) {
            if (!g.hasNode(id)) continue;
            const Node& n = g.node(id);
            if (!match::inDefaultDomain(n) || !isChainOp(n.opType) || n.outputs.size() != 1 || n.outputs[0] == kNone) continue;
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

}  // namespace passlens::passes
