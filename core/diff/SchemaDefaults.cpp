#include "diff/SchemaDefaults.h"

#include <map>
#include <mutex>
#include <optional>

#include "diff/Fingerprint.h"
#include "onnx/Schemas.h"

namespace passlens::diff {

using namespace passlens::ir;

namespace {

/// (domain, op) → attribute name → hash of its default.
using Defaults = std::map<std::string, uint64_t>;

const Defaults& defaultsOf(const std::string& domain, const std::string& opType) {
    static std::mutex mutex;
    static std::map<std::pair<std::string, std::string>, Defaults> cache;
    std::lock_guard<std::mutex> lock(mutex);
    auto [it, fresh] = cache.try_emplace({domain, opType});
    if (!fresh) return it->second;
    for (const Attribute& a : onnxio::schemaAttributeDefaults(domain, opType)) it->second[a.name] = hashAttributes({a});
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
