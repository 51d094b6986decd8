#include "onnx/Schemas.h"

#include <onnx/defs/schema.h>

#include <optional>

namespace passlens::onnxio {

using ir::AttrKind;
using ir::Attribute;

std::string schemaInputName(const std::string& opType, int64_t opset, size_t slot) {
    const auto* schema = onnx::OpSchemaRegistry::Schema(opType, static_cast<int>(opset), "");
    if (!schema) return {};
    const auto& ins = schema->inputs();
    if (ins.empty()) return {};
    if (slot < ins.size()) return ins[slot].GetName();
    if (ins.back().GetOption() == onnx::OpSchema::Variadic) return ins.back().GetName();
    return {};
}

namespace {

std::optional<Attribute> fromDefault(const std::string& name, const onnx::AttributeProto& p) {
    Attribute a;
    a.name = name;
    switch (p.type()) {
    case onnx::AttributeProto::FLOAT: a.kind = AttrKind::Float; a.f = p.f(); break;
    case onnx::AttributeProto::INT: a.kind = AttrKind::Int; a.i = p.i(); break;
    case onnx::AttributeProto::STRING: a.kind = AttrKind::String; a.s = p.s(); break;
    case onnx::AttributeProto::FLOATS: a.kind = AttrKind::Floats; a.floats.assign(p.floats().begin(), p.floats().end()); break;
    case onnx::AttributeProto::INTS: a.kind = AttrKind::Ints; a.ints.assign(p.ints().begin(), p.ints().end()); break;
    case onnx::AttributeProto::STRINGS: a.kind = AttrKind::Strings; a.strings.assign(p.strings().begin(), p.strings().end()); break;
    default: return std::nullopt;  // no default (or a kind no schema defaults)
    }
    return a;
}

}  // namespace

std::vector<Attribute> schemaAttributeDefaults(const std::string& domain, const std::string& opType) {
    std::vector<Attribute> out;
    if (const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(opType, domain))
        for (const auto& [name, attr] : schema->attributes())
            if (auto a = fromDefault(name, attr.default_value)) out.push_back(std::move(*a));
    return out;
}

}  // namespace passlens::onnxio
