// Common-subexpression elimination by value numbering: identical initializers are merged first
// (hash of bytes, then a full compare), then nodes keyed by op type, domain, attributes and
// input value ids (commutative ops with sorted inputs). Nondeterministic ops are never merged;
// ops with subgraphs (If/Loop/Scan) only when their bodies are structurally equal (same nodes in
// the same order with equal attributes, equal initializers, same captured names).
#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "analysis/OpRegistry.h"
#include "passes/BasicPasses.h"
#include "passes/PassRegistry.h"
#include "passes/match/Equality.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

const GraphEquality kCseEquality{.randomOpsDiffer = true};

bool hasNondeterministicOp(const Graph& g) {
    bool found = false;
    g.forEachGraph([&](const Graph& sub) {
        for (NodeId n : sub.nodeOrder()) found |= analysis::isNondeterministic(sub, n);
    });
    return found;
}

class CsePass final : public Pass {
public:
    std::string name() const override { return "cse"; }
    bool preservesValueTypes() const override { return true; }
    std::string description() const override { return "Merges nodes and initializers that compute the same value"; }

protected:
    void runImpl(PassContext& ctx) const override {
        ctx.forEachGraph([&](Rewriter& rw) {
            mergeInitializers(rw);
            mergeNodes(rw);
            rw.setRule({});
        });
    }

private:
    static void mergeInitializers(Rewriter& rw) {
        const Graph& g = rw.graph();
        rw.setRule("merge-initializers");
        std::unordered_map<size_t, std::vector<ValueId>> byHash;
        std::vector<ValueId> inits = g.initializerOrder();
        for (ValueId v : inits) {
            const Value& val = g.value(v);
            if (val.isGraphInput || val.isGraphOutput || !val.initializer || val.initializer->dtype == DataType::String) continue;
            if (rw.isCapturedBySubgraph(v)) continue;
            const Tensor& t = *val.initializer;
            size_t h = std::hash<std::string_view>{}(std::string_view((const char*)t.data.data(), t.byteSize())) ^ (size_t)t.dtype;
            for (int64_t d : t.dims) h = h * 31 + (size_t)d;
            auto& bucket = byHash[h];
            ValueId keep = kNone;
            for (ValueId k : bucket)
                if (g.value(k).initializer->sameContents(t)) { keep = k; break; }
            if (keep == kNone) { bucket.push_back(v); continue; }
            std::string why = "initializer '" + val.name + "' has the same contents as '" + g.value(keep).name + "'";
            rw.replaceAllUsesWith(v, keep, why);
            rw.removeInitializer(v, why);
        }
    }

    static void mergeNodes(Rewriter& rw) {
        const Graph& g = rw.graph();
        rw.setRule("value-numbering");
        std::unordered_map<std::string, NodeId> seen;
        std::unordered_map<std::string, std::vector<NodeId>> withBodies;  ///< key without graph attributes
        auto order = g.topologicalOrder().value_or(g.nodeOrder());
        for (NodeId id : order) {
            if (!g.hasNode(id)) continue;
            const Node& n = g.node(id);
            if (analysis::isNondeterministic(g, id) || n.outputs.empty()) continue;
            if (n.hasSubgraphs()) {
                mergeNodeWithBodies(rw, id, withBodies);
                continue;
            }
            auto [it, inserted] = seen.emplace(nodeKey(n), id);
            if (inserted) continue;
            merge(rw, id, it->second);
        }
    }

    static std::string nodeKey(const Node& n) {
        std::vector<ValueId> ins = n.inputs;
        if (analysis::isCommutative(n.opType, n.domain)) std::sort(ins.begin(), ins.end());
        std::ostringstream key;
        key << n.domain << '|' << n.opType << '|' << n.outputs.size() << '|';
        for (ValueId v : ins) key << v << ',';
        key << '|';
        std::vector<std::string> attrs;
        for (const Attribute& a : n.attributes)
            if (a.kind != AttrKind::Graph && a.kind != AttrKind::Graphs) attrs.push_back(attributeKey(a));
        std::sort(attrs.begin(), attrs.end());
        for (auto& a : attrs) key << a << ';';
        return key.str();
    }

    /// If/Loop/Scan: merged with an earlier node of the same key whose bodies are equal.
    static void mergeNodeWithBodies(Rewriter& rw, NodeId id, std::unordered_map<std::string, std::vector<NodeId>>& seen) {
        const Graph& g = rw.graph();
        const Node& n = g.node(id);
        rw.setRule("value-numbering");
        bool nondeterministic = false;
        for (const Attribute& a : n.attributes) {
            if (a.g) nondeterministic |= hasNondeterministicOp(*a.g);
            for (const auto& sub : a.graphs) nondeterministic |= hasNondeterministicOp(*sub);
        }
        if (nondeterministic) return;
        auto& candidates = seen[nodeKey(n)];
        for (NodeId c : candidates) {
            if (!g.hasNode(c) || !sameAttributes(n.attributes, g.node(c).attributes, kCseEquality)) continue;
            merge(rw, id, c);
            return;
        }
        if (!candidates.empty())
            rw.missed({id, candidates.front()}, "not merged: " + n.displayName() + " has the same op and inputs as " +
                      g.node(candidates.front()).displayName() + " but different bodies");
        candidates.push_back(id);
    }

    /// Readers of `id`'s outputs read `keepId`'s instead; `id` is erased. False when refused.
    static bool merge(Rewriter& rw, NodeId id, NodeId keepId) {
        const Graph& g = rw.graph();
        const Node& n = g.node(id);
        const Node& first = g.node(keepId);
        bool outputVisible = false;
        for (ValueId o : n.outputs)
            if (o != kNone && g.value(o).isGraphOutput) outputVisible = true;
        for (ValueId o : n.outputs)
            if (o != kNone && rw.isCapturedBySubgraph(o)) outputVisible = true;
        if (outputVisible) {
            rw.missed({id, keepId}, "not merged: an output of " + n.displayName() + " is a graph output or read by a subgraph");
            return false;
        }
        bool shapeOk = true;
        for (size_t i = 0; i < n.outputs.size(); ++i)
            if ((n.outputs[i] == kNone) != (first.outputs[i] == kNone)) shapeOk = false;
        if (!shapeOk) return false;
        std::string why = n.displayName() + " computes the same value as " + first.displayName() +
                          (n.hasSubgraphs() ? " (equal bodies)" : "");
        rw.applied({id, keepId}, why);
        std::vector<ValueId> outs = n.outputs, keep = first.outputs;
        for (size_t i = 0; i < outs.size(); ++i)
            if (outs[i] != kNone) rw.replaceAllUsesWith(outs[i], keep[i], why);
        rw.eraseNode(id, why);
        return true;
    }
};

}  // namespace

std::unique_ptr<Pass> makeCsePass() { return std::make_unique<CsePass>(); }

}  // namespace passlens::passes
