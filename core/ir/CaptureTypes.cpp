#include "ir/CaptureTypes.h"

#include <vector>

namespace passlens::ir {

namespace {

bool dimKnown(const Dim& d) { return d.value.has_value() || !d.param.empty(); }

/// `mine` takes what `def` knows and it does not; false when nothing changed or they disagree
/// on what both know (then `mine` stays as it is).
bool fillFrom(TypeInfo& mine, const TypeInfo& def) {
    if (!def.known()) return false;
    if (!mine.known()) {
        mine = def;
        return true;
    }
    if (!mine.isTensor() || !def.isTensor()) return false;
    if (mine.elemType != DataType::Undefined && mine.elemType != def.elemType) return false;
    bool changed = false;
    if (mine.elemType == DataType::Undefined) {
        mine.elemType = def.elemType;
        changed = true;
    }
    if (!def.shape) return changed;
    if (!mine.shape) {
        mine.shape = def.shape;
        return true;
    }
    if (mine.shape->rank() != def.shape->rank()) return changed;
    for (size_t i = 0; i < mine.shape->rank(); ++i) {
        Dim& d = mine.shape->dims[i];
        if (!dimKnown(d) && dimKnown(def.shape->dims[i])) {
            d = def.shape->dims[i];
            changed = true;
        }
    }
    return changed;
}

const Value* definition(const std::vector<const Graph*>& scopes, const std::string& name) {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
        if (auto v = (*it)->findValue(name)) return &(*it)->value(*v);
    return nullptr;
}

size_t copyInto(Graph& g, std::vector<const Graph*>& scopes) {
    size_t changed = 0;
    scopes.push_back(&g);
    for (NodeId n : g.nodesWithSubgraphs()) {
        auto visit = [&](Graph& sg) {
            for (ValueId v : sg.valueIds()) {
                Value& val = sg.value(v);
                if (!val.isOuterScope) continue;
                // Scopes are filled outside in, so a definition that is itself a capture already
                // carries its own definition's type.
                if (const Value* def = definition(scopes, val.name)) changed += fillFrom(val.type, def->type);
            }
            changed += copyInto(sg, scopes);
        };
        for (auto& a : g.node(n).attributes) {
            if (a.g) visit(*a.g);
            for (auto& sg : a.graphs) visit(*sg);
        }
    }
    scopes.pop_back();
    return changed;
}

}  // namespace

size_t copyCaptureTypes(Graph& g) {
    std::vector<const Graph*> scopes;
    return copyInto(g, scopes);
}

}  // namespace passlens::ir
