// Recomputation strategies on a training graph (see Recompute.h): parsing, the strategy switch and
// the one-line report. The facts, the copy rewrite and Chen's segments are in RecomputeFacts.cpp;
// the min cut and the budget/Pareto search in RecomputeSearch.cpp.
#include "autodiff/Recompute.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_set>

#include "autodiff/Autodiff.h"
#include "autodiff/RecomputeFacts.h"
#include "ir/Error.h"
#include "memory/MemoryPlan.h"
#include "passes/Rewriter.h"

namespace passlens::autodiff {

using namespace passlens::ir;

namespace {

using namespace remat;

std::string formatFlops(double f) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", f);
    return buf;
}

std::string formatRatio(double a, double b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", b == 0 ? 0.0 : a / b);
    return buf;
}

std::vector<std::string> namesOf(const Graph& g, const std::vector<ValueId>& vs) {
    std::vector<std::string> out;
    for (ValueId v : vs) out.push_back(g.value(v).name);
    return out;
}

}  // namespace

std::string RecomputeOptions::text() const {
    std::string s = strategy == Strategy::None   ? "none"
                    : strategy == Strategy::Sqrt ? "sqrt"
                    : strategy == Strategy::All  ? "all"
                    : strategy == Strategy::MinCut ? "mincut"
                    : strategy == Strategy::Pareto ? "pareto"
                                                   : "budget=" + std::to_string(budgetBytes);
    if (heavy) s += *heavy ? ":heavy" : ":no-heavy";
    return s;
}

RecomputeOptions parseRecomputeOptions(const std::string& text) {
    const std::string usage = "--recompute must be none, sqrt, all, mincut, pareto or budget=BYTES (K/M/G suffix allowed), optionally followed by "
                              ":heavy or :no-heavy; not '" + text + "'";
    RecomputeOptions o;
    std::string s = text;
    if (auto colon = s.find(':'); colon != std::string::npos) {
        const std::string suffix = s.substr(colon + 1);
        if (suffix == "heavy") o.heavy = true;
        else if (suffix == "no-heavy") o.heavy = false;
        else throwBadInput(usage);
        s = s.substr(0, colon);
    }
    if (s == "none") return o;
    using S = RecomputeOptions::Strategy;
    static const std::map<std::string, S> named = {{"sqrt", S::Sqrt}, {"all", S::All}, {"mincut", S::MinCut}, {"pareto", S::Pareto}};
    if (auto it = named.find(s); it != named.end()) {
        o.strategy = it->second;
        return o;
    }
    if (s.rfind("budget=", 0) != 0) throwBadInput(usage);
    std::string num = s.substr(7);
    int64_t scale = 1;
    if (!num.empty() && std::string("KMG").find(static_cast<char>(std::toupper(num.back()))) != std::string::npos) {
        scale = int64_t{1} << (10 * (1 + static_cast<int>(std::string("KMG").find(static_cast<char>(std::toupper(num.back()))))));
        num.pop_back();
    }
    if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos || num.size() > 15) throwBadInput(usage);
    o.strategy = RecomputeOptions::Strategy::Budget;
    o.budgetBytes = std::stoll(num) * scale;
    return o;
}

int64_t plannedPeak(const Model& m) {
    memory::PlanOptions po;
    po.planner = "best";
    return memory::planMemory(m, m.graph, po).arenaBytes;
}

RecomputeResult applyRecompute(passes::Rewriter& rw, const RecomputeOptions& options) {
    RecomputeResult r;
    r.strategy = options.text();
    const Model& m = rw.model();
    const Graph& g = rw.graph();
    bool backward = false, recomputed = false;
    for (NodeId n : g.nodeOrder()) {
        Role role = provenanceOf(g.node(n)).role;
        backward |= role == Role::Backward;
        recomputed |= role == Role::Recompute;
    }
    if (!backward) {
        r.message = "not a training graph (no backward nodes): nothing to recompute";
        return r;
    }
    if (recomputed) {
        r.message = "the graph already has recomputed nodes: recompute runs once, on the training graph autodiff built";
        return r;
    }
    ForwardFacts facts(g, options.allowsHeavy());
    r.savedActivations = namesOf(g, facts.candidates());
    r.forwardFlops = facts.forwardFlops();
    r.peakBefore = plannedPeak(m);
    Choice c;
    c.peak = r.peakBefore;
    int64_t lowest = r.peakBefore;
    switch (options.strategy) {
    case RecomputeOptions::Strategy::None:
    case RecomputeOptions::Strategy::Pareto: break;  // the curve is recomputeCurve's; the graph stays
    case RecomputeOptions::Strategy::Sqrt: c = chooseSqrt(m, facts, r.keptByRule, r.peakBefore); break;
    case RecomputeOptions::Strategy::All: c = chooseAll(m, facts, r.keptByRule); break;
    case RecomputeOptions::Strategy::MinCut:
        droppable(facts, {}, r.keptByRule, true);  // what the banned ops keep, for the remarks
        c = chooseMinCut(m, facts);
        if (c.peak > r.peakBefore) {  // never worse than store-all: keep everything
            c = Choice{};
            c.peak = r.peakBefore;
            c.label = "mincut";
        }
        break;
    case RecomputeOptions::Strategy::Budget:
        droppable(facts, {}, r.keptByRule, true);
        c = solveBudget(m, facts, options.budgetBytes, r.peakBefore, &lowest);
        if (r.peakBefore > options.budgetBytes && c.drop.empty()) {
            r.feasible = false;
            std::string rules;
            std::map<std::string, int> perRule;
            for (const auto& k : r.keptByRule) ++perRule[k.rule];
            for (const auto& [rule, n] : perRule) rules += (rules.empty() ? "" : ", ") + std::to_string(n) + " by " + rule;
            r.message = "recompute " + r.strategy + " is infeasible: the lowest planned arena is " + std::to_string(lowest) +
                        " bytes (no recomputation: " + std::to_string(r.peakBefore) + "); " +
                        std::to_string(r.savedActivations.size() - r.keptByRule.size()) + " of " +
                        std::to_string(r.savedActivations.size()) + " saved activations may be recomputed" +
                        (rules.empty() ? std::string() : " (kept " + rules + ")");
            r.peakAfter = r.peakBefore;
            return r;
        }
        break;
    }
    r.checkpoints = namesOf(g, c.checkpoints);
    r.dropped = namesOf(g, c.drop);
    r.keptForBackward = namesOf(g, c.keep);
    r.extraFlops = facts.flopsOf(c.copies);
    if (!c.drop.empty()) {
        std::unordered_set<ValueId> drop(c.drop.begin(), c.drop.end());
        r.addedNodes = insertCopies(rw, facts, c.copies, drop);
    }
    r.peakAfter = c.peak;
    r.message = r.strategy + ": " + std::to_string(r.dropped.size()) + " of " + std::to_string(r.savedActivations.size()) +
                " saved activations recomputed by " + std::to_string(r.addedNodes.size()) + " nodes" +
                (r.checkpoints.empty() ? std::string() : ", " + std::to_string(r.checkpoints.size()) + " checkpoints") +
                (r.keptForBackward.empty() ? std::string()
                                           : ", " + std::to_string(r.keptForBackward.size()) + " other forward values kept instead") +
                "; planned arena " + std::to_string(r.peakBefore) + " -> " + std::to_string(r.peakAfter) + " bytes (" +
                formatRatio(static_cast<double>(r.peakAfter), static_cast<double>(r.peakBefore)) + "x); extra " +
                formatFlops(r.extraFlops) + " FLOPs = " + formatRatio(r.extraFlops, r.forwardFlops) + " forward passes";
    if (options.strategy == RecomputeOptions::Strategy::Sqrt && r.dropped.empty())
        r.message += " (no segmentation lowers the planned arena)";
    if (options.strategy == RecomputeOptions::Strategy::Budget && r.dropped.empty())
        r.message += " (the plan fits the budget already)";
    if (options.strategy == RecomputeOptions::Strategy::Budget && !r.dropped.empty() && !c.label.empty())
        r.message += " (found from " + c.label + ")";
    if (options.strategy == RecomputeOptions::Strategy::Pareto)
        r.message += " (pareto changes nothing: `grad --recompute pareto` prints the curve, recomputeCurve() computes it)";
    if (options.strategy == RecomputeOptions::Strategy::MinCut && r.dropped.empty())
        r.message += " (the minimum cut keeps every saved activation, or lowers no arena)";
    return r;
}

RecomputeResult recomputeModel(Model& m, const RecomputeOptions& options, bool throwIfInfeasible) {
    std::vector<passes::Change> changes;
    std::vector<passes::Remark> remarks;
    passes::Rewriter rw(m, m.graph, "recompute", "", changes, remarks);
    RecomputeResult r = applyRecompute(rw, options);
    if (!r.feasible && throwIfInfeasible) throwBadInput(r.message);
    return r;
}

}  // namespace passlens::autodiff
