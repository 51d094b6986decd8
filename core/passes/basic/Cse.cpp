// CSE: identical initializers are merged first, then value numbering over (domain, op type,
// attributes, inputs), with commutative inputs sorted. Nondeterministic ops and ops with
// subgraphs are never merged.
#include <algorithm>
#include <functional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "passes/basic/BasicPasses.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

const std::set<std::string> kNondeterministic = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                                 "Multinomial", "Bernoulli"};
const std::set<std::string> kCommutative = {"Add", "Mul", "Max", "Min", "Sum", "Mean", "And", "Or", "Xor", "Equal"};

uint64_t hashBytes(const Tensor& t) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < t.data.size(); ++i) h = (h ^ static_cast<uint8_t>(t.data.data()[i])) * 1099511628211ull;
    for (const auto& s : t.strings) h = (h ^ std::hash<std::string>{}(s)) * 1099511628211ull;
    return h;
}

std::string tensorKey(const Tensor& t) {
    std::ostringstream os;
    os << static_cast<int>(t.dtype) << "[";
    for (auto d : t.dims) os << d << ",";
    os << "]" << t.data.size() << ":" << hashBytes(t);
    return os.str();
}

std::string attributeKey(const Attribute& a) {
    std::string k = a.name + "=" + std::to_string(static_cast<int>(a.kind)) + ":" + a.valueToString(SIZE_MAX);
    if (a.t) k += "#" + tensorKey(*a.t);
    for (const auto& t : a.tensors) k += "#" + tensorKey(*t);
    return k;
}

bool isNondeterministic(const Graph& g, const Node& n) {
    if (kNondeterministic.count(n.opType)) return true;
    if (n.opType == "Dropout") {
        // Training mode (input 2 not a constant false) makes Dropout random.
        if (n.inputs.size() < 3 || n.inputs[2] == kNone) return false;
        const Value& tm = g.value(n.inputs[2]);
        return !(tm.initializer && tm.initializer->data.size() == 1 && tm.initializer->data.data()[0] == std::byte{0});
    }
    return false;
}

}  // namespace

void CommonSubexpressionElimination::runImpl(PassContext& ctx) const {
    ctx.forEachGraph([&](Rewriter& rw) {
        Graph& g = rw.graph();
        // 1. Identical initializers.
        rw.setRule("merge-initializers");
        std::unordered_map<std::string, ValueId> firstByContent;
        for (ValueId v : std::vector<ValueId>(g.initializerOrder())) {
            const Value& val = g.value(v);
            if (val.isGraphInput) continue;  // overridable: not a true constant
            std::string key = tensorKey(*val.initializer);
            auto [it, fresh] = firstByContent.emplace(key, v);
            if (fresh) continue;
            const Tensor& kept = *g.value(it->second).initializer;
            if (!kept.sameContents(*val.initializer)) continue;  // hash collision
            if (val.isGraphOutput) {
                rw.missed({}, "initializer '" + val.name + "' not merged: value is a graph output", {v});
                continue;
            }
            std::string name = val.name;
            rw.replaceAllUsesWith(v, it->second, "initializer '" + name + "' equals '" + g.value(it->second).name + "'");
            rw.removeInitializer(v, "merged into '" + g.value(it->second).name + "'");
        }
        // 2. Value numbering in topological order.
        rw.setRule("cse");
        auto order = g.topologicalOrder();
        if (!order) return;
        std::unordered_map<std::string, NodeId> seen;
        for (NodeId n : *order) {
            if (!g.hasNode(n)) continue;
            const Node& node = g.node(n);
            if (node.hasSubgraphs() || isNondeterministic(g, node)) continue;
            std::vector<ValueId> ins = node.inputs;
            if (kCommutative.count(node.opType) && canonicalDomain(node.domain).empty()) std::sort(ins.begin(), ins.end());
            std::string key = node.domain + "|" + node.opType + "|" + std::to_string(node.outputs.size()) + "|";
            for (ValueId v : ins) key += std::to_string(v) + ",";
            std::vector<std::string> attrs;
            for (const auto& a : node.attributes) attrs.push_back(attributeKey(a));
            std::sort(attrs.begin(), attrs.end());
            for (const auto& a : attrs) key += "|" + a;
            auto [it, fresh] = seen.emplace(key, n);
            if (fresh) continue;
            const Node& kept = g.node(it->second);
            bool outputVisible = false;
            for (ValueId v : node.outputs)
                if (v != kNone && g.value(v).isGraphOutput) outputVisible = true;
            if (outputVisible) {
                rw.missed({n, it->second}, "not eliminated: " + node.displayName() + " computes a graph output (its name must stay)");
                continue;
            }
            std::string dup = node.displayName(), keep = kept.displayName();
            std::vector<ValueId> outs = node.outputs, keptOuts = kept.outputs;
            for (size_t i = 0; i < outs.size(); ++i)
                if (outs[i] != kNone && keptOuts[i] != kNone)
                    rw.replaceAllUsesWith(outs[i], keptOuts[i], dup + " computes the same as " + keep);
            bool unused = true;
            for (ValueId v : g.node(n).outputs)
                if (v != kNone && !g.value(v).consumers.empty()) unused = false;
            if (unused) {
                rw.eraseNode(n, dup + " is a duplicate of " + keep);
                rw.applied({it->second}, dup + " merged into " + keep);
            }
        }
    });
}

}  // namespace passlens::passes
