#include "memory/PlanJson.h"

#include <cstdio>
#include <sstream>

namespace passlens::memory {

namespace {
std::string human(int64_t b) {
    char buf[64];
    if (b >= (int64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1 << 20));
    else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024);
    else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
    return std::to_string(b) + " (" + buf + ")";
}
std::string ratio(int64_t a, int64_t b) {
    if (b == 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(a) / static_cast<double>(b));
    return buf;
}
}  // namespace

nlohmann::ordered_json planToJson(const MemoryPlan& p) {
    nlohmann::ordered_json j;
    j["planner"] = p.planner;
    j["parallel_aware"] = p.parallelAware;
    j["arena_bytes"] = p.arenaBytes;
    j["lower_bound_bytes"] = p.lowerBoundBytes;
    j["naive_bytes"] = p.naiveBytes;
    j["static_bytes"] = p.staticBytes;
    j["static"] = {{"parameters", p.parameterBytes}, {"constants", p.constantBytes},
                   {"inputs", p.inputBytes}, {"outputs", p.outputBytes}};
    j["dynamic_bytes"] = p.dynamicBytes;
    j["workspace_bytes"] = p.workspaceBytes;
    j["note"] = "graph inputs/outputs, initializers and Constant outputs are static: counted, not planned in the arena";
    j["schedule"] = p.scheduleNames;
    auto buffers = nlohmann::ordered_json::array();
    for (const auto& b : p.buffers) {
        nlohmann::ordered_json e;
        e["value"] = b.name;
        e["bytes"] = b.bytes;
        e["first"] = b.first;
        e["last"] = b.last;
        e["offset"] = b.offset;
        if (b.value == ir::kNone) e["workspace"] = true;
        if (b.inplaceOfIndex >= 0) e["inplace_of"] = p.buffers[static_cast<size_t>(b.inplaceOfIndex)].name;
        buffers.push_back(std::move(e));
    }
    j["buffers"] = std::move(buffers);
    j["live_bytes_per_step"] = p.liveBytesPerStep;
    j["unknown_size_values"] = p.unknownSizeValues;
    return j;
}

std::string planToText(const MemoryPlan& p, const std::vector<MemoryPlan>& others) {
    std::ostringstream o;
    o << "planner:        " << p.planner << (p.parallelAware ? " (parallel-aware)" : "") << "\n";
    o << "schedule:       " << p.scheduleNames.size() << " steps\n";
    o << "static:         " << human(p.staticBytes) << "  (parameters " << p.parameterBytes << ", constants "
      << p.constantBytes << ", inputs " << p.inputBytes << ", outputs " << p.outputBytes << "; not in the arena)\n";
    o << "dynamic:        " << human(p.dynamicBytes) << "  (" << p.lifetimes.size() << " tensors, workspace "
      << p.workspaceBytes << ")\n";
    o << "naive:          " << human(p.naiveBytes) << "\n";
    o << "lower bound:    " << human(p.lowerBoundBytes) << "\n";
    o << "arena:          " << human(p.arenaBytes) << "  (" << ratio(p.arenaBytes, p.lowerBoundBytes)
      << "x lower bound, " << ratio(p.naiveBytes, p.arenaBytes) << "x smaller than naive)\n";
    if (!others.empty()) {
        o << "per planner:\n";
        for (const auto& q : others)
            o << "  " << q.planner << std::string(q.planner.size() < 30 ? 30 - q.planner.size() : 1, ' ') << q.arenaBytes
              << "  saving vs naive " << ratio(p.naiveBytes, q.arenaBytes) << "x, vs lower bound "
              << ratio(q.arenaBytes, p.lowerBoundBytes) << "x\n";
    }
    if (!p.unknownSizeValues.empty()) {
        o << "unknown size (" << p.unknownSizeValues.size() << ", not counted):";
        for (size_t i = 0; i < p.unknownSizeValues.size() && i < 10; ++i) o << " " << p.unknownSizeValues[i];
        if (p.unknownSizeValues.size() > 10) o << " ...";
        o << "\n";
    }
    return o.str();
}

}  // namespace passlens::memory
