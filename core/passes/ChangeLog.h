#pragma once
// What a pass changed (the change log) and what it looked at (remarks). Written only by the
// Rewriter, so no pass can forget to report a mutation.
#include <string>
#include <vector>

#include "ir/Graph.h"

namespace passlens::passes {

enum class ChangeKind { Added, Removed, Replaced, Rewired, Folded, Modified };
std::string_view changeKindName(ChangeKind k);

struct Change {
    ChangeKind kind = ChangeKind::Modified;
    std::string pass;
    std::string rule;                    ///< the rule that made it ("fold-conv-bn"), may be empty
    std::string graphPath;               ///< "" = main graph; "If_3/then_branch" for a subgraph
    std::vector<ir::NodeId> nodes;       ///< the nodes this change is about (new ones for Added/Replaced/Folded)
    std::vector<std::string> nodeNames;  ///< their display names, for reports that outlive the graph
    std::vector<ir::NodeId> provenance;  ///< original node ids a new node came from
    std::vector<ir::ValueId> values;     ///< values (edges) involved
    std::string reason;                  ///< one human sentence
    /// Other nodes whose inputs or outputs this change rewired (readers of a bypassed or folded
    /// value, the producer that took over a graph output), so a diff can be matched to the log.
    std::vector<ir::NodeId> touched;
};

enum class RemarkKind { Applied, Missed };
std::string_view remarkKindName(RemarkKind k);

/// As LLVM's -Rpass / -Rpass-missed: "applied" says a rule fired, "missed" says a rule matched
/// partway and which precondition stopped it.
struct Remark {
    RemarkKind kind = RemarkKind::Applied;
    std::string pass;
    std::string rule;
    std::string graphPath;
    std::vector<ir::NodeId> nodes;
    std::vector<std::string> nodeNames;
    std::vector<ir::ValueId> values;     ///< the blocking edge(s), for missed remarks
    std::string message;
};

}  // namespace passlens::passes
