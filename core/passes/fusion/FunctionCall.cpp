// Pattern → model-local function call (see FunctionCall.h).
#include "passes/fusion/FunctionCall.h"

#include <algorithm>

#include "passes/fusion/GroupFunctions.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;

std::map<NodeId, size_t> topologicalPositions(const Graph& g) {
    std::map<NodeId, size_t> position;
    if (auto order = g.topologicalOrder())
        for (NodeId n : *order) position.emplace(n, position.size());
    return position;
}

NodeId replaceByFunctionCall(Rewriter& rw, std::vector<NodeId> nodes, const std::vector<ValueId>& ins, ValueId out,
                             const std::map<NodeId, size_t>& position, const std::string& baseName, const std::string& docString,
                             const std::string& at, NodeId anchor, const std::string& suffix) {
    const Graph& g = rw.graph();
    auto pos = [&](NodeId n) { auto it = position.find(n); return it == position.end() ? SIZE_MAX : it->second; };
    std::sort(nodes.begin(), nodes.end(), [&](NodeId a, NodeId b) { return pos(a) < pos(b); });
    std::vector<ValueId> constants;
    for (NodeId n : nodes)
        for (ValueId v : g.node(n).inputs)
            if (v != kNone && pattern::constantOf(g, v)) constants.push_back(v);
    std::string members;
    for (NodeId n : nodes) members += (members.empty() ? "" : ", ") + g.node(n).displayName();
    auto body = functionBodyOf(g, nodes, ins, {out}, baseName);
    // One body serves calls of every shape: keep no shapes of the first call's values.
    for (ValueId v : body->valueIds()) body->value(v).type = TypeInfo{};
    const std::string fname = addOrReuseFunction(rw, body, baseName, docString + " (first: " + members + ")");
    const size_t count = nodes.size();
    const NodeId call = rw.replaceNodes(nodes, fname, ins, {out}, {}, at + ": " + std::to_string(count) + " nodes become one call of " + fname,
                                        fname + "_" + g.node(anchor).displayName(), kFusedFunctionDomain);
    rw.applied({call}, at + ": " + std::to_string(count) + " nodes (" + members + ") become one call " + g.node(call).displayName() +
                           " of " + kFusedFunctionDomain + "." + fname + suffix);
    pattern::removeUnreadConstants(rw, constants, "read only by the nodes moved into " + fname);
    return call;
}

}  // namespace passlens::passes
