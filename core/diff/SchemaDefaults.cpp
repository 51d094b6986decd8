#include "diff/SchemaDefaults.h"

#include <map>
#include <mutex>
#include <optional>

#include <onnx/defs/schema.h>

#include "diff/Fingerprint.h"

namespace passlens::diff {

using namespace passlens::ir;

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

/// (domain, op) → attribute name → hash of its default.
using Defaults = std::map<std::string, uint64_t>;

const Defaults& defaultsOf(const std::string& domain, const std::string& opType) {
    static std::mutex mutex;
    static std::map<std::pair<std::string, std::string>, Defaults> cache;
    std::lock_guard<std::mutex> lock(mutex);
    auto [it, fresh] = cache.try_emplace({domain, opType});
    if (!fresh) return it->second;
    if (const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(opType, domain))
        for (const auto& [name, attr] : schema->attributes())
            if (auto a = fromDefault(name, attr.default_value)) it->second[name] = hashAttributes({*a});
    return it->second;
}

}  // namespace

bool isSchemaDefault(const std::string& domain, const std::string& opType, const Attribute& a) {
    if (!a.refAttrName.empty()) return false;
    const Defaults& d = defaultsOf(domain, opType);
    auto it = d.find(a.name);
    return it != d.end() && it->second == hashAttributes({a});
}

}  // namespace passlens::diff
