#include <algorithm>
#include <ostream>

#include <nlohmann/json.hpp>

#include "cli/Command.h"
#include "passes/PassRegistry.h"
#include "passes/onnxruntime/OrtPasses.h"

namespace passlens::cli {

namespace {

/// Pipeline order first (as `optimize` runs them), then the passes that run only when named: the
/// registry's order, which is the table's (core/pipeline/PassTable.def), the named-only rows last.
std::vector<const passes::PassInfo*> catalog() {
    std::vector<const passes::PassInfo*> all;
    for (const auto& p : passes::PassRegistry::global().passes()) all.push_back(&p);
    std::stable_partition(all.begin(), all.end(), [](const auto* p) { return p->level != passes::Level::None; });
    return all;
}

nlohmann::ordered_json optionsJson(const passes::PassInfo& p) {
    auto arr = nlohmann::ordered_json::array();
    for (const auto& o : p.options)
        arr.push_back({{"name", o.name}, {"type", passes::typeText(o)}, {"default", o.defaultValue}, {"doc", o.doc}});
    return arr;
}

/// The lowest --level running the pass, "onnxruntime basic|extended" for a pass only the
/// onnxruntime profile runs, or "named" for passes that run only from --passes.
std::string levelLabel(const passes::PassInfo& p) {
    if (p.level != passes::Level::None) return std::string(passes::levelName(p.level));
    const std::string profile = passes::ort::profileLevelOf(p.name);
    return profile.empty() ? "named" : profile;
}

}  // namespace

REGISTER_COMMAND({
    "passes", "passes [--json]",
    "The pass catalog: every registered pass with its level (the lowest --level that runs it, "
    "'onnxruntime basic|extended' for the onnxruntime profile's passes, or 'named' for passes that run "
    "only from --passes or --pipeline), what it does, and below it the options --pipeline may set "
    "(name=type, default: doc). --json adds each pass's role and options.",
    {},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"--json"});
        args.noteNoEffect("--dim", "does not apply to passes: it reads no model", err);
        const auto all = catalog();
        if (args.flag("--json")) {
            auto arr = nlohmann::ordered_json::array();
            for (const auto* p : all)
                arr.push_back({{"name", p->name},
                               {"level", levelLabel(*p)},
                               {"description", p->description},
                               {"role", std::string(passes::roleName(p->role))},
                               {"options", optionsJson(*p)}});
            out << arr.dump(2) << "\n";
            return 0;
        }
        size_t width = 0, levelWidth = 0;
        for (const auto* p : all) {
            width = std::max(width, p->name.size());
            levelWidth = std::max(levelWidth, levelLabel(*p).size());
        }
        for (const auto* p : all) {
            out << p->name << std::string(width + 2 - p->name.size(), ' ') << levelLabel(*p)
                << std::string(levelWidth + 2 - levelLabel(*p).size(), ' ') << p->description << "\n";
            for (const auto& o : p->options)
                out << "    " << o.name << "=" << passes::typeText(o) << " (default: " << o.defaultValue << ") " << o.doc << "\n";
        }
        return 0;
    }});

}  // namespace passlens::cli
