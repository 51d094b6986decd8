#include "passes/RewriteRules.h"

#include <algorithm>

#include "ir/Model.h"

namespace passlens::passes {

using namespace passlens::ir;

bool anchors(const RewriteRule& rule, const Node& n) {
    const std::string domain = canonicalDomain(n.domain);
    if (domain != rule.domain) return false;
    return rule.opTypes.empty() || std::find(rule.opTypes.begin(), rule.opTypes.end(), n.opType) != rule.opTypes.end();
}

size_t applyRewriteRules(Rewriter& rw, const std::vector<RewriteRule>& rules) {
    size_t rewrites = 0;
    const std::vector<NodeId> order = rw.graph().topologicalOrder().value_or(rw.graph().nodeOrder());
    for (NodeId id : order) {
        for (const RewriteRule& rule : rules) {
            if (!rw.graph().hasNode(id) || !anchors(rule, rw.graph().node(id))) continue;
            rw.setRule(rule.name);
            if (rule.apply(rw, id)) {
                ++rewrites;
                break;
            }
        }
    }
    rw.setRule({});
    return rewrites;
}

}  // namespace passlens::passes
