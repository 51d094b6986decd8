#include "passes/PassRegistry.h"

#include "ir/Error.h"

namespace passlens::passes {

Level parseLevel(const std::string& s) {
    if (s == "none") return Level::None;
    if (s == "basic") return Level::Basic;
    if (s == "extended") return Level::Extended;
    if (s == "all") return Level::All;
    throwBadInput("unknown level '" + s + "'; valid levels: none, basic, extended, all");
}

bool isLevelName(const std::string& s) { return s == "none" || s == "basic" || s == "extended" || s == "all"; }

std::string_view roleName(PassRole r) {
    switch (r) {
    case PassRole::Convert: return "convert";
    case PassRole::Simplify: return "simplify";
    case PassRole::Fusion: return "fusion";
    case PassRole::Layout: return "layout";
    case PassRole::Training: return "training";
    case PassRole::Profile: return "profile";
    }
    return "?";
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

void PassRegistry::add(Level level, PassRole role, std::unique_ptr<Pass> (*factory)()) {
    const auto probe = factory();
    add(probe->name(), probe->description(), level, role, factory);
}

void PassRegistry::add(std::string name, std::string description, Level level, PassRole role, PassFactory factory) {
    PassInfo info;
    info.options = factory()->options();
    info.name = std::move(name);
    info.description = std::move(description);
    info.level = level;
    info.role = role;
    info.factory = std::move(factory);
    add(info);
}

void PassRegistry::add(const PassInfo& info) {
    if (contains(info.name)) throw Error(ErrorKind::Internal, "pass '" + info.name + "' registered twice");
    // Pipeline text reads a level name as the level's passes, so no pass may take one.
    if (isLevelName(info.name)) throw Error(ErrorKind::Internal, "pass '" + info.name + "' is named like a level");
    passes_.push_back(info);
}

const PassInfo* PassRegistry::find(const std::string& name) const {
    for (const auto& p : passes_)
        if (p.name == name) return &p;
    return nullptr;
}

bool PassRegistry::contains(const std::string& name) const { return find(name) != nullptr; }

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
    std::vector<std::string> out;
    for (const auto& p : passes_)
        if (p.level != Level::None && level != Level::None && static_cast<int>(p.level) <= static_cast<int>(level))
            out.push_back(p.name);
    return out;
}

}  // namespace passlens::passes
