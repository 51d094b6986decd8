// A hash of a group's structure that does not depend on node or value names, so layer.0 and
// layer.23 of a transformer hash alike and a changed attribute in one of them does not.
#include <cstring>
#include <functional>
#include <unordered_map>

#include "hierarchy/Hierarchy.h"

namespace passlens::hierarchy {

namespace {

// splitmix64 finalizer as the combining step: cheap and well mixed.
uint64_t mix(uint64_t h, uint64_t v) {
    uint64_t z = h + 0x9e3779b97f4a7c15ull + v;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t hashText(std::string_view s) { return std::hash<std::string_view>{}(s); }

uint64_t hashDims(uint64_t h, const std::vector<int64_t>& dims) {
    h = mix(h, dims.size());
    for (int64_t d : dims) h = mix(h, uint64_t(d));
    return h;
}

uint64_t hashAttribute(const ir::Attribute& a) {
    uint64_t h = mix(hashText(a.name), uint64_t(a.kind));
    h = mix(h, uint64_t(a.i));
    uint32_t fbits;
    std::memcpy(&fbits, &a.f, sizeof fbits);
    h = mix(h, fbits);
    h = mix(h, hashText(a.s));
    for (int64_t v : a.ints) h = mix(h, uint64_t(v));
    for (float f : a.floats) {
        std::memcpy(&fbits, &f, sizeof fbits);
        h = mix(h, fbits);
    }
    for (const auto& s : a.strings) h = mix(h, hashText(s));
    if (a.t) h = hashDims(mix(h, uint64_t(a.t->dtype)), a.t->dims);  // payloads differ per layer: dims only
    for (const auto& t : a.tensors) h = hashDims(h, t->dims);
    if (a.g) h = mix(h, a.g->nodeOrder().size());
    for (const auto& g : a.graphs) h = mix(h, g->nodeOrder().size());
    return h;
}

uint64_t hashNode(const ir::Node& n) {
    uint64_t h = mix(hashText(n.opType), hashText(n.domain));
    h = mix(h, n.inputs.size());
    h = mix(h, n.outputs.size());
    for (const auto& a : n.attributes) h = mix(h, hashAttribute(a));
    return h;
}

}  // namespace

uint64_t structuralHash(const ir::Graph& g, const std::vector<ir::NodeId>& members) {
    std::unordered_map<ir::NodeId, size_t> local;
    local.reserve(members.size());
    for (size_t i = 0; i < members.size(); ++i) local.emplace(members[i], i);
    uint64_t h = mix(0, members.size());
    for (ir::NodeId id : members) {
        const ir::Node& n = g.node(id);
        h = mix(h, hashNode(n));
        for (ir::ValueId v : n.inputs) {
            if (v == ir::kNone) { h = mix(h, 1); continue; }
            const ir::Value& val = g.value(v);
            if (auto it = local.find(val.producer); val.producer != ir::kNone && it != local.end()) {
                const auto& outs = g.node(val.producer).outputs;
                size_t slot = size_t(std::find(outs.begin(), outs.end(), v) - outs.begin());
                h = mix(mix(h, 2 + it->second), slot);
            } else if (val.initializer) {
                h = hashDims(mix(h, 3), val.initializer->dims);
            } else {
                h = mix(h, 4);  // from outside the group
            }
        }
    }
    return h;
}

}  // namespace passlens::hierarchy
