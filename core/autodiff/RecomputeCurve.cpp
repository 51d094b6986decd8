// The arena-vs-recompute trade-off of a training graph (Recompute.h: recomputeCurve) and the JSON
// and text forms the CLI prints.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "autodiff/Recompute.h"
#include "autodiff/RecomputeFacts.h"
#include "autodiff/TrainingMemory.h"

namespace passlens::autodiff {

using namespace passlens::ir;

namespace {

RecomputePoint pointOf(const Graph& g, const remat::Choice& c) {
    RecomputePoint p;
    p.label = c.label;
    p.arenaBytes = c.peak;
    p.extraFlops = c.flops;
    p.dropped = c.drop.size();
    for (ValueId v : c.drop) p.droppedNames.push_back(g.value(v).name);
    return p;
}

nlohmann::ordered_json pointJson(const RecomputePoint& p, double forwardFlops) {
    return {{"label", p.label},
            {"arena_bytes", p.arenaBytes},
            {"extra_flops", p.extraFlops},
            {"forward_passes", forwardFlops == 0 ? 0.0 : p.extraFlops / forwardFlops},
            {"dropped", p.droppedNames}};
}

}  // namespace

RecomputeCurve recomputeCurve(const Model& training, const RecomputeOptions& options) {
    RecomputeCurve out;
    if (!isTrainingGraph(training.graph)) {
        out.message = "not a training graph (no backward nodes): nothing to recompute";
        return out;
    }
    const remat::ForwardFacts facts(training.graph, options.allowsHeavy());
    out.forwardFlops = facts.forwardFlops();
    out.savedActivations = facts.candidates().size();
    const int64_t storeAll = plannedPeak(training);
    std::vector<remat::Choice> pool = remat::exploreChoices(training, facts, storeAll);
    out.evaluated = pool.size();
    std::vector<KeptTensor> kept;
    remat::Choice sq = remat::chooseSqrt(training, facts, kept, storeAll);
    sq.label = "sqrt";
    out.storeAll = {"store-all", storeAll, 0, 0, {}};
    out.sqrt = pointOf(training.graph, sq);
    for (const remat::Choice& c : pool)
        if (c.label == "all") out.all = pointOf(training.graph, c);
    // Non-dominated: sorted by arena (then FLOPs), a point stays when it needs fewer FLOPs than
    // every point with a lower arena.
    std::stable_sort(pool.begin(), pool.end(), [](const remat::Choice& a, const remat::Choice& b) {
        return a.peak != b.peak ? a.peak < b.peak : a.flops < b.flops;
    });
    for (const remat::Choice& c : pool)
        if (c.planned && (out.curve.empty() || c.flops < out.curve.back().extraFlops)) out.curve.push_back(pointOf(training.graph, c));
    return out;
}

std::string curveToText(const RecomputeCurve& c) {
    if (!c.message.empty()) return c.message + "\n";
    std::ostringstream o;
    char buf[256];
    o << "recompute pareto: " << c.curve.size() << " points on the curve, " << c.evaluated << " choices planned, "
      << c.savedActivations << " saved activations\n";
    o << "  arena bytes    extra FLOPs   forward passes  dropped  found by\n";
    auto line = [&](const RecomputePoint& p, const char* mark) {
        std::snprintf(buf, sizeof buf, "  %11lld  %12.4g  %15.3f  %7zu  %s%s\n", static_cast<long long>(p.arenaBytes), p.extraFlops,
                      c.forwardFlops == 0 ? 0.0 : p.extraFlops / c.forwardFlops, p.dropped, p.label.c_str(), mark);
        o << buf;
    };
    for (const auto& p : c.curve) line(p, "");
    o << "references:\n";
    line(c.storeAll, "  (store-all)");
    line(c.sqrt, "  (sqrt)");
    line(c.all, "  (all)");
    return o.str();
}

nlohmann::ordered_json curveToJson(const RecomputeCurve& c) {
    nlohmann::ordered_json j;
    if (!c.message.empty()) {
        j["message"] = c.message;
        return j;
    }
    j["forward_flops"] = c.forwardFlops;
    j["saved_activations"] = c.savedActivations;
    j["evaluated"] = c.evaluated;
    j["curve"] = nlohmann::ordered_json::array();
    for (const auto& p : c.curve) j["curve"].push_back(pointJson(p, c.forwardFlops));
    j["store_all"] = pointJson(c.storeAll, c.forwardFlops);
    j["sqrt"] = pointJson(c.sqrt, c.forwardFlops);
    j["all"] = pointJson(c.all, c.forwardFlops);
    return j;
}

nlohmann::ordered_json resultToJson(const RecomputeResult& r) {
    return {{"strategy", r.strategy},
            {"feasible", r.feasible},
            {"arena_before_bytes", r.peakBefore},
            {"arena_after_bytes", r.peakAfter},
            {"forward_flops", r.forwardFlops},
            {"extra_flops", r.extraFlops},
            {"forward_passes", r.forwardFlops == 0 ? 0.0 : r.extraFlops / r.forwardFlops},
            {"saved_activations", r.savedActivations.size()},
            {"dropped", r.dropped},
            {"checkpoints", r.checkpoints},
            {"kept_for_backward", r.keptForBackward},
            {"added_nodes", r.addedNodes.size()},
            {"message", r.message}};
}

}  // namespace passlens::autodiff
