#pragma once
// "Why did (not) this node fuse?": per node, its fusion group (FusionGroups) and every fusion that
// was considered for it, combining the fusion-group refusals with the remarks (applied and missed)
// of the pattern-fusion passes: those of a run the caller already has (the app's stepper), or of
// the `extended` pipeline run once on a copy of the model.
// Used by `passlens-cli explain` and the app's "Why not fused?".
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <memory>

#include "analysis/FusionGroups.h"
#include "ir/Model.h"
#include "passes/PassManager.h"

namespace passlens::analysis {

/// One fusion considered for a node.
struct FusionConsideration {
    std::string source;       ///< "fusion-groups" or the pass name ("fuse-conv-bn", ...)
    std::string rule;         ///< reason code (fusion groups) or the pass's rule ("fold-conv-bn")
    bool applied = false;     ///< true: it fired; false: refused / missed
    std::vector<ir::NodeId> nodes;           ///< nodes it was about (ids of the explained graph)
    std::vector<std::string> nodeNames;
    ir::NodeId blockingNode = ir::kNone;     ///< the node that stopped it (kNone if none/unknown)
    std::string blockingNodeName;
    ir::ValueId blockingValue = ir::kNone;   ///< the edge (value) that stopped it
    std::string blockingValueName;
    std::string message;
};

struct NodeExplanation {
    ir::NodeId node = ir::kNone;
    std::string name;                        ///< display name
    std::string opType;
    OpPattern pattern = OpPattern::Opaque;
    ir::NodeId postDominator = ir::kNone;    ///< immediate post-dominator (kNone: none / virtual exit)
    int group = -1;                          ///< fusion group id
    ir::NodeId anchor = ir::kNone;           ///< the group's anchor
    std::vector<ir::NodeId> groupMembers;
    std::vector<FusionConsideration> considered;  ///< fusion-group refusal first, then pass remarks
    OpCost cost;                             ///< the op registry's estimate for this node
};

/// The remarks of the pattern-fusion passes of one pipeline run (main graph only), with the nodes
/// a fired fusion replaced. Computed once per run or per model and reused for every node asked about.
struct FusionRemarks {
    struct Entry {
        std::string pass;
        passes::Remark remark;
    };
    std::vector<Entry> entries;
    std::vector<std::string> warnings;   ///< e.g. the pipeline failed on this model
    std::string source;                  ///< where they came from, for the reader
    size_t fusionPasses = 0;             ///< fusion passes of the run (0: the run had none to offer)
};
/// Runs the `extended` pipeline on a copy of `model` and keeps its fusion passes' remarks.
FusionRemarks runFusionRemarks(const ir::Model& model);
/// Reads them from a run the caller already has (the stepper's): no pass runs again.
FusionRemarks fusionRemarksOf(const passes::PipelineResult& run);

struct ExplainOptions {
    FusionOptions fusion;
    bool runPatternPasses = true;   ///< collect pattern-pass remarks (from `remarks`, else by a run on a copy)
    /// Remarks to use instead of running the pipeline (fusionRemarksOf the stepper's run, or a cache).
    std::shared_ptr<const FusionRemarks> remarks;
};

struct Explanation {
    FusionPlan plan;                        ///< fusion groups of the top-level graph
    std::vector<NodeExplanation> nodes;     ///< topological order (or the one node asked for)
    std::vector<std::string> warnings;      ///< e.g. the pattern passes could not run on this model
    std::vector<std::string> hints;         ///< e.g. pin symbolic dims to let broadcasts count as ElemWise
    size_t subgraphNodes = 0;               ///< nodes inside If/Loop bodies: not explained (top level only)
    std::string remarksSource;              ///< where the pass remarks came from (FusionRemarks::source)
};

/// Explains every top-level node of the model.
Explanation explainModel(const ir::Model& model, const ExplainOptions& options = {});
/// Explains one node (by id); throws BadInput if the graph has no such node.
Explanation explainNode(const ir::Model& model, ir::NodeId node, const ExplainOptions& options = {});
/// Finds a top-level node by name or display name ("Conv_7", "Conv#12"); throws BadInput naming it.
ir::NodeId findNodeForExplain(const ir::Graph& g, const std::string& name);

/// Stable JSON (documented in the explain command's help): {"groups": [...], "nodes": [...]}.
nlohmann::ordered_json explanationToJson(const ir::Graph& g, const Explanation& e);
/// The same JSON as explanationToJson(g, e).dump(2), written node by node, so a 50k-node model's
/// explanation never exists as one JSON tree in memory.
void writeExplanationJson(std::ostream& os, const ir::Graph& g, const Explanation& e);
/// Readable text, one block per node.
std::string explanationToText(const ir::Graph& g, const Explanation& e);

}  // namespace passlens::analysis
