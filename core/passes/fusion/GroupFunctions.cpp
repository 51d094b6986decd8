// Fusion groups exported as model-local functions (see GroupFunctions.h).
#include "passes/fusion/GroupFunctions.h"

#include <map>
#include <memory>
#include <set>

#include "ir/Error.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

/// Every node of `g` that reads each value, explicitly or through a subgraph capture.
std::map<ValueId, std::vector<NodeId>> readersOf(const Graph& g) {
    std::map<ValueId, std::vector<NodeId>> out;
    for (NodeId n : g.nodeOrder())
        for (ValueId v : g.readsOf(n))
            if (v != kNone) out[v].push_back(n);
    return out;
}

/// Groups one graph (the main graph or a subgraph body) into calls, counting into `result`.
void groupGraph(Model& model, Graph& g, const analysis::FusionOptions& options, const std::vector<OpsetImport>& bodyOpsets,
                GroupFunctionsResult& result, bool topLevel) {
    const analysis::FusionPlan plan = analysis::computeFusionGroups(g, options);
    const auto readers = readersOf(g);
    bool changed = false;
    for (const auto& grp : plan.groups) {
        if (grp.members.size() < 2) continue;
        const std::set<NodeId> members(grp.members.begin(), grp.members.end());
        std::set<ValueId> produced;
        for (NodeId n : grp.members)
            for (ValueId v : g.node(n).outputs)
                if (v != kNone) produced.insert(v);
        // Formal inputs: values read from outside the group (outer-scope captures included), in first-read order.
        std::vector<ValueId> ins, outs;
        std::set<ValueId> seen;
        for (NodeId n : grp.members)
            for (ValueId v : g.node(n).inputs)
                if (v != kNone && !produced.count(v) && seen.insert(v).second) ins.push_back(v);
        // Formal outputs: values read outside the group or leaving the graph.
        for (NodeId n : grp.members)
            for (ValueId v : g.node(n).outputs) {
                if (v == kNone) continue;
                bool external = g.value(v).isGraphOutput;
                if (auto it = readers.find(v); it != readers.end())
                    for (NodeId r : it->second) external |= !members.count(r);
                if (external) outs.push_back(v);
            }

        const std::string anchorOp = g.node(grp.anchor).opType;
        // Calls of earlier groupings are Opaque (custom domain), so a second run only adds new names.
        std::string fname;
        for (size_t k = result.functions;; ++k) {
            fname = "fused_" + std::to_string(k) + "_" + anchorOp;
            if (!model.findFunction(kFusedFunctionDomain, fname)) break;
        }
        auto body = std::make_shared<Graph>();
        body->name = fname;
        std::map<ValueId, ValueId> inBody;
        for (ValueId v : ins) inBody[v] = body->addInput(g.value(v).name, TypeInfo{});
        for (NodeId n : grp.members) {
            const Node& node = g.node(n);
            std::vector<ValueId> bi, bo;
            for (ValueId v : node.inputs) bi.push_back(v == kNone ? kNone : inBody.at(v));
            for (ValueId v : node.outputs) {
                if (v == kNone) { bo.push_back(kNone); continue; }
                bo.push_back(inBody[v] = body->addValue(g.value(v).name, g.value(v).type));
            }
            body->addNode(node.opType, bi, bo, node.attributes, node.name, node.domain);
        }
        std::vector<ValueId> bodyOuts;
        for (ValueId v : outs) bodyOuts.push_back(inBody.at(v));
        body->setOutputs(bodyOuts);

        Function f;
        f.name = fname;
        f.domain = kFusedFunctionDomain;
        std::string memberList;
        for (NodeId n : grp.members) memberList += (memberList.empty() ? "" : ", ") + g.node(n).displayName();
        f.docString = "Fusion group " + std::to_string(grp.id) + " (" + std::string(analysis::patternName(grp.pattern)) +
                      "), anchor " + g.node(grp.anchor).displayName() + ": " + memberList;
        f.opsetImports = bodyOpsets;
        f.body = body;

        // Replace the members by one call; values used only inside the group go away.
        const std::string callName = g.uniqueNodeName("fused_" + g.node(grp.anchor).displayName());
        for (NodeId n : grp.members) g.eraseNode(n);
        const std::set<ValueId> kept(outs.begin(), outs.end());
        for (ValueId v : produced)
            if (!kept.count(v)) g.removeValue(v);
        g.addNode(fname, ins, outs, {}, callName, kFusedFunctionDomain);
        model.functions.push_back(std::move(f));
        ++result.functions;
        if (!topLevel) ++result.subgraphFunctions;
        result.fusedNodes += grp.members.size();
        changed = true;
    }
    if (changed) g.sortTopologically();
}

size_t deepCount(const Graph& g) {
    size_t n = 0;
    g.forEachGraph([&](const Graph& sg) { n += sg.nodeCount(); });
    return n;
}

}  // namespace

GroupFunctionsResult groupIntoFunctions(Model& model, const analysis::FusionOptions& options, bool subgraphs) {
    Graph& g = model.graph;
    GroupFunctionsResult result;
    result.nodesBefore = g.nodeCount();
    result.deepNodesBefore = deepCount(g);
    std::vector<OpsetImport> bodyOpsets;
    for (const auto& op : model.opsetImports)
        if (op.domain != kFusedFunctionDomain) bodyOpsets.push_back(op);
    // Collect the graphs first: grouping edits node lists that forEachGraph walks.
    std::vector<Graph*> graphs;
    g.forEachGraph([&](Graph& sg) { graphs.push_back(&sg); });
    for (Graph* sg : graphs) {
        if (sg != &g && !subgraphs) continue;
        groupGraph(model, *sg, options, bodyOpsets, result, sg == &g);
    }
    if (result.functions > 0) {
        model.setOpset(kFusedFunctionDomain, 1);
        if (model.irVersion < 8) model.irVersion = 8;  // model-local functions arrived with IR 8
    }
    result.nodesAfter = g.nodeCount();
    result.deepNodesAfter = deepCount(g);
    for (NodeId n : g.nodeOrder())
        if (g.node(n).opType == "Constant" && canonicalDomain(g.node(n).domain).empty()) ++result.constantNodes;
    return result;
}

}  // namespace passlens::passes
