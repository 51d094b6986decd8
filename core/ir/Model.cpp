#include "ir/Model.h"

namespace passlens::ir {

int64_t Model::opsetFor(const std::string& d) const {
    const std::string want = canonicalDomain(d);
    for (const auto& o : opsetImports)
        if (canonicalDomain(o.domain) == want) return o.version;
    return 0;
}

void Model::setOpset(const std::string& d, int64_t version) {
    const std::string want = canonicalDomain(d);
    for (auto& o : opsetImports)
        if (canonicalDomain(o.domain) == want) { o.version = version; return; }
    opsetImports.push_back({d, version});
}

const Function* Model::findFunction(const std::string& d, const std::string& n) const {
    for (const auto& f : functions)
        if (f.name == n && canonicalDomain(f.domain) == canonicalDomain(d)) return &f;
    return nullptr;
}

}  // namespace passlens::ir
