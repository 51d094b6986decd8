// Common-subexpression elimination by value numbering: identical initializers are merged first
// (hash of bytes, then a full compare), then nodes keyed by op type, domain, attributes and
// input value ids (commutative ops with sorted inputs). Nondeterministic ops and ops with
// subgraphs are never merged.
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

class CsePass final : public Pass {
public:
    std::string name() const override { return "cse"; }
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
        auto order = g.topologicalOrder().value_or(g.nodeOrder());
        for (NodeId id : order) {
            if (!g.hasNode(id)) continue;
            const Node& n = g.node(id);
            if (kNondeterministic.count(n.opType) || n.outputs.empty()) continue;
            if (n.hasSubgraphs()) continue;
            if (n.opType == "Dropout" && n.inputs.size() > 2 && n.inputs[2] != kNone) continue;
            std::vector<ValueId> ins = n.inputs;
            if (kCommutative.count(n.opType) && n.domain.empty()) std::sort(ins.begin(), ins.end());
            std::ostringstream key;
            key << n.domain << '|' << n.opType << '|' << n.outputs.size() << '|';
            for (ValueId v : ins) key << v << ',';
            key << '|';
            std::vector<std::string> attrs;
            for (const Attribute& a : n.attributes) attrs.push_back(attributeKey(a));
            std::sort(attrs.begin(), attrs.end());
            for (auto& a : attrs) key << a << ';';
            auto [it, inserted] = seen.emplace(key.str(), id);
            if (inserted) continue;
            const Node& first = g.node(it->second);
            bool outputVisible = false;
            for (ValueId o : n.outputs)
                if (o != kNone && g.value(o).isGraphOutput) outputVisible = true;
            for (ValueId o : n.outputs)
                if (o != kNone && rw.isCapturedBySubgraph(o)) outputVisible = true;
            if (outputVisible) {
                rw.missed({id, it->second}, "not merged: an output of " + n.displayName() + " is a graph output or read by a subgraph");
                continue;
            }
            bool shapeOk = true;
            for (size_t i = 0; i < n.outputs.size(); ++i)
                if ((n.outputs[i] == kNone) != (first.outputs[i] == kNone)) shapeOk = false;
            if (!shapeOk) continue;
            std::string why = n.displayName() + " computes the same value as " + first.displayName();
            rw.applied({id, it->second}, why);
            std::vector<ValueId> outs = n.outputs, keep = first.outputs;
            for (size_t i = 0; i < outs.size(); ++i)
                if (outs[i] != kNone) rw.replaceAllUsesWith(outs[i], keep[i], why);
            rw.eraseNode(id, why);
        }
    }
};

}  // namespace

std::unique_ptr<Pass> makeCsePass() { return std::make_unique<CsePass>(); }

}  // namespace passlens::passes
