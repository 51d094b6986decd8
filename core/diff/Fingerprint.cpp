#include "diff/Fingerprint.h"

#include "diff/SchemaDefaults.h"

#include <algorithm>
#include <cstring>

namespace passlens::diff {

using namespace passlens::ir;

uint64_t mixHash(uint64_t seed, uint64_t v) {
    uint64_t z = seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t hashBytes(const void* data, size_t size, uint64_t seed) {
    // Eight bytes per step: weights are hashed once per diff, so this runs over every payload.
    const auto* p = static_cast<const unsigned char*>(data);
    uint64_t h = mixHash(seed, size);
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    uint64_t tail = 0;
    std::memcpy(&tail, p + i, size - i);
    return mixHash(h, tail);
}

uint64_t hashString(std::string_view s, uint64_t seed) { return hashBytes(s.data(), s.size(), seed); }

uint64_t hashTensor(const Tensor& t) {
    uint64_t h = mixHash(static_cast<uint64_t>(t.dtype), t.dims.size());
    for (int64_t d : t.dims) h = mixHash(h, static_cast<uint64_t>(d));
    h = hashBytes(t.data.data(), t.data.size(), h);
    for (const auto& s : t.strings) h = hashString(s, h);
    return h;
}

uint64_t hashType(const TypeInfo& t) {
    uint64_t h = mixHash(static_cast<uint64_t>(t.kind), static_cast<uint64_t>(t.elemType));
    if (!t.shape) return mixHash(h, 0xffff);
    h = mixHash(h, t.shape->rank());
    for (const Dim& d : t.shape->dims) h = d.value ? mixHash(h, static_cast<uint64_t>(*d.value)) : hashString(d.param, mixHash(h, 1));
    return h;
}

static uint64_t hashAttribute(const Attribute& a) {
    uint64_t h = hashString(a.name, static_cast<uint64_t>(a.kind));
    h = hashString(a.refAttrName, h);
    switch (a.kind) {
    case AttrKind::Float: return hashBytes(&a.f, sizeof a.f, h);
    case AttrKind::Int: return mixHash(h, static_cast<uint64_t>(a.i));
    case AttrKind::String: return hashString(a.s, h);
    case AttrKind::Floats: return hashBytes(a.floats.data(), a.floats.size() * sizeof(float), h);
    case AttrKind::Ints: return hashBytes(a.ints.data(), a.ints.size() * sizeof(int64_t), h);
    case AttrKind::Strings: for (const auto& s : a.strings) h = hashString(s, h); return h;
    case AttrKind::Tensor: return a.t ? mixHash(h, hashTensor(*a.t)) : h;
    case AttrKind::Tensors: for (const auto& t : a.tensors) h = mixHash(h, t ? hashTensor(*t) : 0); return h;
    case AttrKind::Graph: return a.g ? mixHash(h, graphFingerprint(*a.g)) : h;
    case AttrKind::Graphs: for (const auto& g : a.graphs) h = mixHash(h, g ? graphFingerprint(*g) : 0); return h;
    default: for (const auto& s : a.opaque) h = hashString(s, h); return h;
    }
}

uint64_t hashAttributes(const std::vector<Attribute>& attrs) {
    std::vector<const Attribute*> sorted;
    for (const auto& a : attrs) sorted.push_back(&a);
    std::sort(sorted.begin(), sorted.end(), [](const Attribute* x, const Attribute* y) { return x->name < y->name; });
    uint64_t h = mixHash(0, sorted.size());
    for (const Attribute* a : sorted) h = mixHash(h, hashAttribute(*a));
    return h;
}

const Tensor* GraphFacts::constTensor(ValueId v) const {
    const Value& val = graph.value(v);
    if (val.initializer) return val.initializer.get();
    if (val.isOuterScope && enclosing) {
        auto outer = enclosing->graph.findValue(val.name);
        return outer ? enclosing->constTensor(*outer) : nullptr;
    }
    if (val.producer == kNone) return nullptr;
    const Node& p = graph.node(val.producer);
    if (p.opType != "Constant" || !p.domain.empty()) return nullptr;
    const Attribute* a = p.attr("value");
    return a && a->kind == AttrKind::Tensor && a->t ? a->t.get() : nullptr;
}

int GraphFacts::outputSlot(ValueId v) const {
    const NodeId p = graph.value(v).producer;
    if (p == kNone) return -1;
    const auto& outs = graph.node(p).outputs;
    return static_cast<int>(std::find(outs.begin(), outs.end(), v) - outs.begin());
}

GraphFacts::GraphFacts(const Graph& g, const GraphFacts* enclosingFacts) : graph(g), enclosing(enclosingFacts) {
    if (auto t = g.topologicalOrder()) topo = std::move(*t);
    else topo = g.nodeOrder();
    const size_t nodeLimit = g.nodeIdLimit(), valueLimit = g.valueIdLimit();
    position.assign(nodeLimit, 0);
    opKey.assign(nodeLimit, 0);
    attrHash.assign(nodeLimit, 0);
    inputTypesHash.assign(nodeLimit, 0);
    nodePrint.assign(nodeLimit, 0);
    valuePrint.assign(valueLimit, 0);
    constHash.assign(valueLimit, std::nullopt);
    inputPosition.assign(valueLimit, -1);
    for (size_t i = 0; i < g.inputs().size(); ++i) inputPosition[g.inputs()[i]] = static_cast<int>(i);

    for (ValueId v : g.valueIds()) {
        const Value& val = g.value(v);
        if (val.initializer) {
            constHash[v] = hashTensor(*val.initializer);
            valuePrint[v] = mixHash(0xc0, *constHash[v]);
        } else if (inputPosition[v] >= 0) {
            valuePrint[v] = mixHash(mixHash(0x1a, static_cast<uint64_t>(inputPosition[v])), hashType(val.type));
        } else if (val.isOuterScope) {
            auto outer = enclosing ? enclosing->graph.findValue(val.name) : std::nullopt;
            if (outer && enclosing->constHash[*outer]) {
                constHash[v] = enclosing->constHash[*outer];
                valuePrint[v] = mixHash(0xc0, *constHash[v]);
            } else {
                valuePrint[v] = mixHash(0x0e, hashType(val.type));  // captures: renamed copies rename them too
            }
        } else {
            valuePrint[v] = 0xf3;  // produced below, or undefined
        }
    }
    const double denom = topo.size() > 1 ? static_cast<double>(topo.size() - 1) : 1.0;
    for (size_t i = 0; i < topo.size(); ++i) {
        const NodeId n = topo[i];
        const Node& node = g.node(n);
        position[n] = static_cast<double>(i) / denom;
        opKey[n] = hashString(node.opType, hashString(node.domain));
        // Attributes written out at their schema default count as absent.
        std::vector<Attribute> explicitAttrs;
        for (const Attribute& a : node.attributes)
            if (!isSchemaDefault(node.domain, node.opType, a)) explicitAttrs.push_back(a);
        attrHash[n] = explicitAttrs.size() == node.attributes.size() ? hashAttributes(node.attributes) : hashAttributes(explicitAttrs);
        uint64_t types = 0, print = mixHash(opKey[n], attrHash[n]);
        for (ValueId v : node.inputs) {
            types = mixHash(types, v == kNone ? 0 : hashType(g.value(v).type));
            print = mixHash(print, v == kNone ? 0 : valuePrint[v]);
        }
        inputTypesHash[n] = types;
        nodePrint[n] = print;
        for (size_t k = 0; k < node.outputs.size(); ++k) {
            const ValueId out = node.outputs[k];
            if (out == kNone) continue;
            valuePrint[out] = mixHash(print, k);
            if (node.opType == "Constant" && node.domain.empty()) {
                const Tensor* t = constTensor(out);
                constHash[out] = t ? hashTensor(*t) : attrHash[n];
                valuePrint[out] = mixHash(0xc0, *constHash[out]);  // a Constant equals an initializer of that content
            }
        }
    }
}

uint64_t graphFingerprint(const Graph& g) {
    GraphFacts facts(g);
    uint64_t h = mixHash(0x9a, g.nodeCount());
    for (ValueId o : g.outputs()) h = mixHash(h, facts.valuePrint[o]);
    return h;
}

}  // namespace passlens::diff
