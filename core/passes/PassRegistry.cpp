#include "passes/PassRegistry.h"

#include <algorithm>

#include "ir/Error.h"

namespace passlens::passes {

Level parseLevel(const std::string& s) {
    if (s == "none") return Level::None;
    if (s == "basic") return Level::Basic;
    if (s == "extended") return Level::Extended;
    if (s == "all") return Level::All;
    throwBadInput("unknown level '" + s + "'; valid levels: none, basic, extended, all");
}

std::string_view levelName(Level l) {
    switch (l) {
    case Level::None: return "none";
    case Level::Basic: return "basic";
    case Level::Extended: return "extended";
    case Level::All: return "all";
    }
    return "?";
}

void PassRegistry::add(std::string name, std::string description, Level level, int order, PassFactory factory) {
    if (contains(name)) throw Error(ErrorKind::Internal, "pass '" + name + "' registered twice");
    passes_.push_back({std::move(name), std::move(description), level, order, std::move(factory)});
}

bool PassRegistry::contains(const std::string& name) const {
    return std::any_of(passes_.begin(), passes_.end(), [&](const PassInfo& p) { return p.name == name; });
}

std::vector<std::string> PassRegistry::names() const {
    std::vector<std::string> out;
    for (const auto& p : passes_) out.push_back(p.name);
    return out;
}

std::unique_ptr<Pass> PassRegistry::create(const std::string& name) const {
    for (const auto& p : passes_)
        if (p.name == name) return p.factory();
    std::string valid;
    for (const auto& n : names()) valid += (valid.empty() ? "" : ", ") + n;
    throwBadInput("unknown pass '" + name + "'; valid passes: " + valid);
}

std::vector<std::string> PassRegistry::pipeline(Level level) const {
    std::vector<const PassInfo*> chosen;
    for (const auto& p : passes_)
        if (p.level != Level::None && level != Level::None && static_cast<int>(p.level) <= static_cast<int>(level))
            chosen.push_back(&p);
    std::stable_sort(chosen.begin(), chosen.end(), [](const PassInfo* a, const PassInfo* b) { return a->order < b->order; });
    std::vector<std::string> out;
    for (const PassInfo* p : chosen) out.push_back(p->name);
    return out;
}

}  // namespace passlens::passes
