#include "passes/match/Equality.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "analysis/OpRegistry.h"

namespace passlens::passes {

using namespace passlens::ir;

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
        if (a.t && a.t->strings.empty() && a.t->byteSize() <= 256) {
            // Small tensors (ConstantOfShape's fill value, a Constant scalar) by their exact
            // contents, so equal ones compare equal; bigger ones by identity (conservative).
            os << (int)a.t->dtype << '[';
            for (int64_t d : a.t->dims) os << d << ',';
            os << ']' << a.t->byteSize() << ':';
            os.write((const char*)a.t->data.data(), (std::streamsize)a.t->byteSize());
        } else {
            os << "@" << (const void*)a.t.get();
        }
        break;
    default: os << "@" << (const void*)&a; break;  // unique: never equal
    }
    return os.str();
}

/// Structural equality of two subgraphs: values are matched by position (inputs, node outputs,
/// outputs); initializers by contents; outer-scope captures by name. Order-sensitive on purpose
/// (conservative: two bodies that only differ in node order are reported as different).
bool sameGraph(const Graph& a, const Graph& b, const GraphEquality& options) {
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
        if (options.randomOpsDiffer && analysis::isNondeterministic(a, x.id)) return false;
        if (x.opType != y.opType || x.domain != y.domain || x.inputs.size() != y.inputs.size() ||
            x.outputs.size() != y.outputs.size() || !sameAttributes(x.attributes, y.attributes, options))
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

bool sameAttributes(const std::vector<Attribute>& a, const std::vector<Attribute>& b, const GraphEquality& options) {
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
            if (!x.g || !y.g || !sameGraph(*x.g, *y.g, options)) return false;
            break;
        case AttrKind::Graphs:
            if (x.graphs.size() != y.graphs.size()) return false;
            for (size_t k = 0; k < x.graphs.size(); ++k)
                if (!sameGraph(*x.graphs[k], *y.graphs[k], options)) return false;
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

}  // namespace passlens::passes
