#pragma once
// The staged node matcher behind compareModels (see ModelDiff.h for the stages). Internal to
// core/diff; tests reach it through compareModels.
#include <string>
#include <unordered_map>
#include <vector>

#include "diff/Fingerprint.h"
#include "diff/ModelDiff.h"

namespace passlens::diff {

/// A capture name in A's subgraph → the name the matching capture has in B's.
using CaptureNames = std::unordered_map<std::string, std::string>;

class Matcher {
public:
    Matcher(const GraphFacts& a, const GraphFacts& b, const CaptureNames& captures);
    void run(const DiffOptions& options);

    ir::NodeId counterpartOfA(ir::NodeId a) const { return bOfA_[a]; }
    ir::NodeId counterpartOfB(ir::NodeId b) const { return aOfB_[b]; }
    MatchHow how(ir::NodeId a) const { return how_[a]; }
    double score(ir::NodeId a) const { return score_[a]; }
    /// B's value that A's value `va` corresponds to through matched producers, graph-input
    /// positions or captures; kNone when unresolved or constant (constants compare by content).
    ir::ValueId mappedValue(ir::ValueId va) const;

private:
    enum class Slot { Exact, ConstDiffers, Mismatch };
    struct Fit {
        bool viable = false;
        bool exact = false;
        double score = 0;
    };

    bool freeA(ir::NodeId a) const { return bOfA_[a] == ir::kNone; }
    bool freeB(ir::NodeId b) const { return aOfB_[b] == ir::kNone; }
    void link(ir::NodeId a, ir::NodeId b, MatchHow how, double score);
    Slot compareSlot(ir::ValueId va, ir::ValueId vb) const;
    /// How well B's node `b` fits A's node `a` given their inputs and attributes (same op assumed).
    Fit fit(ir::NodeId a, ir::NodeId b) const;

    void matchNames();
    void matchWeights();
    void matchExactFingerprints();
    size_t propagate();
    bool bottomUp(ir::NodeId a);
    bool topDown(ir::NodeId a);
    void matchSimilar();
    double similarity(ir::NodeId a, ir::NodeId b) const;

    const GraphFacts& fa_;
    const GraphFacts& fb_;
    const ir::Graph& ga_;
    const ir::Graph& gb_;
    const CaptureNames& captures_;
    std::vector<ir::NodeId> bOfA_, aOfB_;
    std::vector<MatchHow> how_;
    std::vector<double> score_;
};

}  // namespace passlens::diff
