#include "ir/Attribute.h"

#include <sstream>

#include "ir/Graph.h"

namespace passlens::ir {

std::string_view attrKindName(AttrKind k) {
    switch (k) {
    case AttrKind::Undefined: return "undefined";
    case AttrKind::Float: return "float";
    case AttrKind::Int: return "int";
    case AttrKind::String: return "string";
    case AttrKind::Tensor: return "tensor";
    case AttrKind::Graph: return "graph";
    case AttrKind::Floats: return "floats";
    case AttrKind::Ints: return "ints";
    case AttrKind::Strings: return "strings";
    case AttrKind::Tensors: return "tensors";
    case AttrKind::Graphs: return "graphs";
    case AttrKind::SparseTensor: return "sparse_tensor";
    case AttrKind::SparseTensors: return "sparse_tensors";
    case AttrKind::TypeProto: return "type_proto";
    case AttrKind::TypeProtos: return "type_protos";
    }
    return "?";
}

template <class T, class F>
static std::string listToString(const std::vector<T>& v, size_t maxItems, F fmt) {
    std::ostringstream os;
    os << '[';
    for (size_t i = 0; i < v.size() && i < maxItems; ++i) {
        if (i) os << ", ";
        os << fmt(v[i]);
    }
    if (v.size() > maxItems) os << ", … (" << v.size() << ")";
    os << ']';
    return os.str();
}

static std::string tensorSummary(const TensorPtr& t) {
    if (!t) return "<tensor>";
    std::string dims;
    for (size_t i = 0; i < t->dims.size(); ++i) dims += (i ? "x" : "") + std::to_string(t->dims[i]);
    return "<tensor " + std::string(dataTypeName(t->dtype)) + "[" + (dims.empty() ? "scalar" : dims) + "]>";
}

std::string Attribute::valueToString(size_t maxItems) const {
    if (!refAttrName.empty()) return "@" + refAttrName;
    auto id = [](const auto& x) { return x; };
    switch (kind) {
    case AttrKind::Float: { std::ostringstream os; os << f; return os.str(); }
    case AttrKind::Int: return std::to_string(i);
    case AttrKind::String: return "\"" + s + "\"";
    case AttrKind::Tensor: return tensorSummary(t);
    case AttrKind::Graph: return "<graph " + (g ? g->name : std::string()) + ", " + std::to_string(g ? g->nodeCount() : 0) + " nodes>";
    case AttrKind::Floats: return listToString(floats, maxItems, id);
    case AttrKind::Ints: return listToString(ints, maxItems, id);
    case AttrKind::Strings: return listToString(strings, maxItems, [](const std::string& x) { return "\"" + x + "\""; });
    case AttrKind::Tensors: return listToString(tensors, maxItems, tensorSummary);
    case AttrKind::Graphs: return "<" + std::to_string(graphs.size()) + " graphs>";
    default: return "<" + std::string(attrKindName(kind)) + ">";
    }
}

}  // namespace passlens::ir
