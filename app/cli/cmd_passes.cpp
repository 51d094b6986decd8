#include <algorithm>
#include <ostream>

#include <nlohmann/json.hpp>

#include "cli/Command.h"
#include "passes/PassRegistry.h"
#include "passes/onnxruntime/OrtPasses.h"

namespace passlens::cli {

namespace {

/// Pipeline order first (as `optimize` runs them), then the passes that run only when named.
std::vector<const passes::PassInfo*> catalog() {
    std::vector<const passes::PassInfo*> all;
    for (const auto& p : passes::PassRegistry::global().passes()) all.push_back(&p);
    std::stable_sort(all.begin(), all.end(), [](const auto* a, const auto* b) {
        bool aNamedOnly = a->level == passes::Level::None, bNamedOnly = b->level == passes::Level::None;
        if (aNamedOnly != bNamedOnly) return bNamedOnly;
        return a->order < b->order;
    });
    return all;
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
    "only from --passes) and what it does.",
    {},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"--json"});
        args.noteNoEffect("--dim", "does not apply to passes: it reads no model", err);
        const auto all = catalog();
        if (args.flag("--json")) {
            auto arr = nlohmann::ordered_json::array();
            for (const auto* p : all)
                arr.push_back({{"name", p->name}, {"level", levelLabel(*p)}, {"description", p->description}});
            out << arr.dump(2) << "\n";
            return 0;
        }
        size_t width = 0, levelWidth = 0;
        for (const auto* p : all) {
            width = std::max(width, p->name.size());
            levelWidth = std::max(levelWidth, levelLabel(*p).size());
        }
        for (const auto* p : all)
            out << p->name << std::string(width + 2 - p->name.size(), ' ') << levelLabel(*p)
                << std::string(levelWidth + 2 - levelLabel(*p).size(), ' ') << p->description << "\n";
        return 0;
    }});

}  // namespace passlens::cli
