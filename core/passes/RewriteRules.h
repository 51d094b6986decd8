#pragma once
// A small rule driver for pattern rewrites (as ONNX Runtime's RewriteRule / RuleBasedGraphTransformer
// and MLIR's RewritePattern): each rule names the op types it anchors on, a cheap test the driver
// makes before calling it, and an apply function that either rewrites through the Rewriter
// (recording changes and an applied remark) or stops partway with a missed remark
// (notifyMatchFailure style). Rules are offered each node of one graph in topological order.
#include <functional>
#include <string>
#include <vector>

#include "passes/Rewriter.h"

namespace passlens::passes {

struct RewriteRule {
    std::string name;                  ///< stamped on the changes and remarks it makes ("SkipLayerNormFusion")
    std::vector<std::string> opTypes;  ///< anchor op types (empty: every node)
    std::string domain;                ///< anchor domain ("" = ai.onnx)
    /// Called for an anchor node that is still in the graph; true when it rewrote something.
    std::function<bool(Rewriter&, ir::NodeId)> apply;
};

/// True when `n` is one of the rule's anchor op types in its domain.
bool anchors(const RewriteRule& rule, const ir::Node& n);

/// Offers every node of the rewriter's graph (the order as it was when the walk started; nodes
/// erased on the way are skipped) to each rule whose anchor matches, in rule order; a node a rule
/// rewrote is not offered to the later rules. Returns the number of rewrites.
size_t applyRewriteRules(Rewriter& rw, const std::vector<RewriteRule>& rules);

}  // namespace passlens::passes
