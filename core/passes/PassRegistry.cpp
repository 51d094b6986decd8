#include "passes/PassRegistry.h"

#include <algorithm>

#include "ir/Error.h"

namespace passlens::passes {

Level parseLevel(const std::string& s) {
    if (s == "none") return Level::None;
    if (s == "basic") return Level::Basic;
    if (s == "extended") return Level::Extended;
    if (s == "all") return Level::All;
    throwBadInput("unknown level '" + s + "' (expected none, basic, extended or all)");
}

const PassRegistry& PassRegistry::instance() {
    static const PassRegistry registry = [] {
        PassRegistry r;
        registerBasicPasses(r);
        return r;
    }();
    return registry;
}

void PassRegistry::add(PassInfo info) {
    passes_.push_back(std::move(info));
    std::stable_sort(passes_.begin(), passes_.end(), [](const PassInfo& a, const PassInfo& b) { return a.order < b.order; });
}

const PassInfo* PassRegistry::find(const std::string& name) const {
    for (const auto& p : passes_)
        if (p.name == name) return &p;
    return nullptr;
}

std::unique_ptr<Pass> PassRegistry::create(const std::string& name) const {
    if (const PassInfo* p = find(name)) return p->factory();
    std::string valid;
    for (const auto& p : passes_) valid += (valid.empty() ? "" : ", ") + p.name;
    throwBadInput("unknown pass '" + name + "' (valid passes: " + valid + ")");
}

std::vector<std::string> PassRegistry::pipeline(Level level) const {
    std::vector<std::string> out;
    if (level == Level::None) return out;
    for (const auto& p : passes_)
        if (p.level != Level::None && static_cast<int>(p.level) <= static_cast<int>(level)) out.push_back(p.name);
    return out;
}

}  // namespace passlens::passes
