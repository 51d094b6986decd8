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

#include "passes/BasicPasses.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

const std::set<std::string> kCommutative = {"Add", "Mul", "Max", "Min", "Sum", "Mean", "And", "Or", "Xor", "Equal"};
const std::set<std::string> kNondeterministic = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                                  "RandomUniformLike", "Multinomial", "Bernoulli"};

std::string attributeKey(const Attribute& a) {
    std::ostringstream os;
    os << a.name << ':' << (int)a.kind << ':' << a.refAttrName << ':';
    switch (a.kind) {
    case AttrKind::Float: { uint32_t bits; std::memcpy(&bits, &a.f, 4); os << bits; break; }
    case AttrKind::Int: os << a.i; break;
    case AttrKind::String: os << a.s.size() << ':' << a.s; break;
    case AttrKind::Ints: for (auto v : a.ints) os << v << ','; break;
    case AttrKind::Floats: for (auto v : a.floats) { uint32_t bits; std::memcpy(&bits, &v, 4); os << bits << ','; } break;
    case AttrKind::Strings: for (auto& s : a.strings) os << s.size() << ':' << s << ','; break;
    case AttrKind::Tensor:
        if (a.t) os << (int)a.t->dtype << '/' << a.t->dims.size() << '/' << std::string_view((const char*)a.t->data.data(), a.t->byteSize()).size()
                    << '/' << std::hash<std::string_view>{}(std::string_view((const char*)a.t->data.data(), a.t->byteSize()));
        os << "@" << (const void*)a.t.get();  // distinct tensors never merge (conservative)
        break;
    default: os << "@" << (const void*)&a; break;  // unique: never equal
    }
    return os.str();
}

bool sameAttributes(const std::vector<Attribute>& a, const std::vector<Attribute>& b);

/// Structural equality of two subgraphs: values are matched by position (inputs, node outputs,
/// outputs); initializers by contents; outer-scope captures by name. Order-sensitive on purpose
/// (conservative: two bodies that only differ in node order are reported as different).
bool sameGraph(const Graph& a, const Graph& b) {
    if (a.nodeCount() != b.nodeCount() || a.inputs().size() != b.inputs().size() || a.outputs().size() != b.outputs().size())
        return false;
    std::unordered_map<ValueId, ValueId> map;
    auto match = [&](ValueId x, ValueId y) {
        if (x == kNone || y == kNone) return x == y;
        if (auto it = map.find(x); it != map.end()) return it->second == y;
        const Value& vx = a.value(x);
        const Value& vy = b.value(y);
        if (vx.isOuterScope != vy.isOuterScope || vx.isGraphInput != vy.isGraphInput) return false;
        if (vx.isOuterScope && vx.name != vy.name) return false;  // captures resolve by name
        if ((vx.initializer == nullptr) != (vy.initializer == nullptr)) return false;
        if (vx.initializer && !vx.initializer->sameContents(*vy.initializer)) return false;
        if (!vx.isOuterScope && !vx.initializer && vx.producer == kNone && !vx.isGraphInput) return false;
        map.emplace(x, y);
        return true;
    };
    for (size_t i = 0; i < a.inputs().size(); ++i) {
        if (a.value(a.inputs()[i]).type != b.value(b.inputs()[i]).type) return false;
        map.emplace(a.inputs()[i], b.inputs()[i]);
    }
    for (size_t k = 0; k < a.nodeCount(); ++k) {
        const Node& x = a.node(a.nodeOrder()[k]);
        const Node& y = b.node(b.nodeOrder()[k]);
        if (x.opType != y.opType || x.domain != y.domain || x.inputs.size() != y.inputs.size() ||
            x.outputs.size() != y.outputs.size() || kNondeterministic.count(x.opType) || !sameAttributes(x.attributes, y.attributes))
            return false;
        for (size_t i = 0; i < x.inputs.size(); ++i)
            if (!match(x.inputs[i], y.inputs[i])) return false;
        for (size_t i = 0; i < x.outputs.size(); ++i) {
            if ((x.outputs[i] == kNone) != (y.outputs[i] == kNone)) return false;
            if (x.outputs[i] != kNone) map[x.outputs[i]] = y.outputs[i];
        }
    }
    for (size_t i = 0; i < a.outputs().size(); ++i)
        if (!match(a.outputs()[i], b.outputs()[i])) return false;
    return true;
}

bool sameAttributes(const std::vector<Attribute>& a, const std::vector<Attribute>& b) {
    if (a.size() != b.size()) return false;
    auto byName = [](std::vector<const Attribute*> v) {
        std::sort(v.begin(), v.end(), [](const Attribute* x, const Attribute* y) { return x->name < y->name; });
        return v;
    };
    std::vector<const Attribute*> pa, pb;
    for (const auto& x : a) pa.push_back(&x);
    for (const auto& x : b) pb.push_back(&x);
    pa = byName(pa);
    pb = byName(pb);
    for (size_t i = 0; i < pa.size(); ++i) {
        const Attribute& x = *pa[i];
        const Attribute& y = *pb[i];
        if (x.name != y.name || x.kind != y.kind || x.refAttrName != y.refAttrName) return false;
        switch (x.kind) {
        case AttrKind::Graph:
            if (!x.g || !y.g || !sameGraph(*x.g, *y.g)) return false;
            break;
        case AttrKind::Graphs:
            if (x.graphs.size() != y.graphs.size()) return false;
            for (size_t k = 0; k < x.graphs.size(); ++k)
                if (!sameGraph(*x.graphs[k], *y.graphs[k])) return false;
            break;
        case AttrKind::Tensor:
            if (!x.t || !y.t || !x.t->sameContents(*y.t)) return false;
            break;
        case AttrKind::Float: case AttrKind::Int: case AttrKind::String: case AttrKind::Ints: case AttrKind::Floats:
        case AttrKind::Strings:
            if (attributeKey(x) != attributeKey(y)) return false;
            break;
        default: return false;  // kinds kept as opaque bytes: never assumed equal
        }
    }
    return true;
}

bool hasNondeterministicOp(const Graph& g) {
    bool found = false;
    g.forEachGraph([&](const Graph& sub) {
        for (NodeId n : sub.nodeOrder()) found |= kNondeterministic.count(sub.node(n).opType) > 0;
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
        Graph& g = rw.graph();
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
        Graph& g = rw.graph();
        rw.setRule("value-numbering");
        std::unordered_map<std::string, NodeId> seen;
        std::unordered_map<std::string, std::vector<NodeId>> withBodies;  ///< key without graph attributes
        auto order = g.topologicalOrder().value_or(g.nodeOrder());
        for (NodeId id : order) {
            if (!g.hasNode(id)) continue;
            const Node& n = g.node(id);
            if (kNondeterministic.count(n.opType) || n.outputs.empty()) continue;
            if (n.hasSubgraphs()) {
                mergeNodeWithBodies(rw, id, withBodies);
                continue;
            }
            if (n.opType == "Dropout" && n.inputs.size() > 2 && n.inputs[2] != kNone) continue;
            auto [it, inserted] = seen.emplace(nodeKey(n), id);
            if (inserted) continue;
            merge(rw, id, it->second);
        }
    }

    static std::string nodeKey(const Node& n) {
        std::vector<ValueId> ins = n.inputs;
        if (kCommutative.count(n.opType) && n.domain.empty()) std::sort(ins.begin(), ins.end());
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
        Graph& g = rw.graph();
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
            if (!g.hasNode(c) || !sameAttributes(n.attributes, g.node(c).attributes)) continue;
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
        Graph& g = rw.graph();
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
