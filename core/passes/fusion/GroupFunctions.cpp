// Fusion groups exported as model-local functions (see GroupFunctions.h).
#include "passes/fusion/GroupFunctions.h"
#include "passes/match/Equality.h"
#include "passes/match/Match.h"

#include <functional>
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
void groupGraph(Rewriter& rw, const analysis::FusionOptions& options, const std::vector<OpsetImport>& bodyOpsets,
                GroupFunctionsResult& result, bool topLevel) {
    const Model& model = rw.model();
    const Graph& g = rw.graph();
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
        auto body = functionBodyOf(g, grp.members, ins, outs, fname);
        Function f;
        f.name = fname;
        f.domain = kFusedFunctionDomain;
        std::string memberList;
        for (NodeId n : grp.members) memberList += (memberList.empty() ? "" : ", ") + g.node(n).displayName();
        f.docString = "Fusion group " + std::to_string(grp.id) + " (" + std::string(analysis::patternName(grp.pattern)) +
                      "), anchor " + g.node(grp.anchor).displayName() + ": " + memberList;
        f.opsetImports = bodyOpsets;
        f.body = body;

        // Replace the members by one call (values used only inside the group go away with them).
        const std::string reason = "fusion group " + std::to_string(grp.id) + " (" +
                                   std::string(analysis::patternName(grp.pattern)) + ") becomes a call of " + fname;
        const std::string callName = "fused_" + g.node(grp.anchor).displayName();
        rw.replaceNodes(grp.members, fname, ins, outs, {}, reason, callName, kFusedFunctionDomain);
        rw.addFunction(std::move(f), reason);
        ++result.functions;
        if (!topLevel) ++result.subgraphFunctions;
        result.fusedNodes += grp.members.size();
        changed = true;
    }
    // The call stands where the group's last member stood; a reader between members moves after it.
    if (changed) rw.restoreTopologicalOrder();
}

size_t deepCount(const Graph& g) {
    size_t n = 0;
    g.forEachGraph([&](const Graph& sg) { n += sg.nodeCount(); });
    return n;
}

}  // namespace

std::shared_ptr<Graph> functionBodyOf(const Graph& g, const std::vector<NodeId>& nodes, const std::vector<ValueId>& ins,
                                      const std::vector<ValueId>& outs, const std::string& name) {
    auto body = std::make_shared<Graph>();
    body->name = name;
    std::map<ValueId, ValueId> inBody;
    for (ValueId v : ins) inBody[v] = body->addInput(g.value(v).name, TypeInfo{});
    for (NodeId n : nodes) {
        const Node& node = g.node(n);
        std::vector<ValueId> bi, bo;
        for (ValueId v : node.inputs) {
            if (v == kNone) { bi.push_back(kNone); continue; }
            if (!inBody.count(v)) {
                const Value& val = g.value(v);
                const TensorPtr constant = match::constantOf(g, v);  // an initializer or a Constant node's value
                if (!constant)
                    throw Error(ErrorKind::Internal, "function " + name + ": '" + val.name + "' is neither a formal input nor a constant");
                ValueId c = body->addValue(val.name, val.type);
                body->addNode("Constant", {}, {c}, {Attribute::makeTensor("value", constant)}, val.name + "_const");
                inBody[v] = c;
            }
            bi.push_back(inBody.at(v));
        }
        for (ValueId v : node.outputs) {
            if (v == kNone) { bo.push_back(kNone); continue; }
            bo.push_back(inBody[v] = body->addValue(g.value(v).name, g.value(v).type));
        }
        body->addNode(node.opType, bi, bo, node.attributes, node.name, node.domain);
    }
    std::vector<ValueId> bodyOuts;
    for (ValueId v : outs) bodyOuts.push_back(inBody.at(v));
    body->setOutputs(bodyOuts);
    return body;
}

std::string addOrReuseFunction(Rewriter& rw, std::shared_ptr<Graph> body, const std::string& baseName, const std::string& docString) {
    const Model& model = rw.model();
    // Reuse a function whose body computes the same (ops, wiring, attributes and constants
    // compared exactly; value names and the body's name do not matter).
    for (const Function& f : model.functions)
        if (f.domain == kFusedFunctionDomain && f.body && sameGraph(*f.body, *body)) return f.name;
    std::string name = baseName;
    for (int k = 2; model.findFunction(kFusedFunctionDomain, name); ++k) name = baseName + "_" + std::to_string(k);
    body->name = name;
    Function f;
    f.name = name;
    f.domain = kFusedFunctionDomain;
    f.docString = docString;
    for (const auto& op : model.opsetImports)
        if (op.domain != kFusedFunctionDomain) f.opsetImports.push_back(op);
    f.body = std::move(body);
    rw.addFunction(std::move(f), "model-local function " + name + " for " + baseName + " calls");
    rw.setOpsetImport(kFusedFunctionDomain, 1, "calls of " + std::string(kFusedFunctionDomain) + " functions need its opset import");
    rw.requireIrVersion(8, "model-local functions need IR version 8");
    return name;
}

namespace {

/// Groups every graph of the model through its rewriter, in the order Graph::forEachGraph visits
/// them (the order fixes the function numbers).
GroupFunctionsResult groupGraphs(const Model& model, const std::function<Rewriter&(const Graph&)>& rewriterOf,
                                 const analysis::FusionOptions& options, bool subgraphs) {
    const Graph& g = model.graph;
    GroupFunctionsResult result;
    result.nodesBefore = g.nodeCount();
    result.deepNodesBefore = deepCount(g);
    std::vector<OpsetImport> bodyOpsets;
    for (const auto& op : model.opsetImports)
        if (op.domain != kFusedFunctionDomain) bodyOpsets.push_back(op);
    // Collect the graphs first: grouping edits node lists that forEachGraph walks.
    std::vector<const Graph*> graphs;
    model.graph.forEachGraph([&](const Graph& sg) { graphs.push_back(&sg); });
    for (const Graph* sg : graphs) {
        if (sg != &g && !subgraphs) continue;
        groupGraph(rewriterOf(*sg), options, bodyOpsets, result, sg == &g);
    }
    if (result.functions > 0) {
        Rewriter& top = rewriterOf(model.graph);
        top.setOpsetImport(kFusedFunctionDomain, 1, "calls of " + std::string(kFusedFunctionDomain) + " functions need its opset import");
        top.requireIrVersion(8, "model-local functions need IR version 8");
    }
    result.nodesAfter = g.nodeCount();
    result.deepNodesAfter = deepCount(g);
    for (NodeId n : g.nodeOrder())
        if (g.node(n).opType == "Constant" && canonicalDomain(g.node(n).domain).empty()) ++result.constantNodes;
    return result;
}

class GroupFunctionsPass : public Pass {
public:
    std::string name() const override { return "group-functions"; }
    std::string description() const override {
        return "Turns each fusion group of two or more nodes into one call of a model-local function";
    }

protected:
    void runImpl(PassContext& ctx) const override {
        std::map<const Graph*, Rewriter*> byGraph;
        ctx.forEachGraph([&](Rewriter& rw) { byGraph[&rw.graph()] = &rw; });
        const GroupFunctionsResult r =
            groupGraphs(ctx.model(), [&](const Graph& sg) -> Rewriter& { return *byGraph.at(&sg); }, {}, true);
        ctx.count("functions", static_cast<int64_t>(r.functions));
        ctx.count("functions_in_subgraphs", static_cast<int64_t>(r.subgraphFunctions));
        ctx.count("fused_nodes", static_cast<int64_t>(r.fusedNodes));
        ctx.count("nodes_before", static_cast<int64_t>(r.nodesBefore));
        ctx.count("nodes_after", static_cast<int64_t>(r.nodesAfter));
        ctx.count("constant_nodes", static_cast<int64_t>(r.constantNodes));
        ctx.count("kernels", static_cast<int64_t>(r.kernels()));
        ctx.count("deep_nodes_before", static_cast<int64_t>(r.deepNodesBefore));
        ctx.count("deep_nodes_after", static_cast<int64_t>(r.deepNodesAfter));
    }
};

}  // namespace

GroupFunctionsResult groupIntoFunctions(Model& model, const analysis::FusionOptions& options, bool subgraphs) {
    std::vector<Change> changes;
    std::vector<Remark> remarks;
    std::map<const Graph*, std::unique_ptr<Rewriter>> rewriters;
    std::map<const Graph*, Graph*> mutableGraphs;  // the caller holds the model mutably
    model.graph.forEachGraph([&](Graph& g) { mutableGraphs[&g] = &g; });
    auto rewriterOf = [&](const Graph& g) -> Rewriter& {
        auto& rw = rewriters[&g];
        if (!rw) rw = std::make_unique<Rewriter>(model, *mutableGraphs.at(&g), "group-functions", "", changes, remarks);
        return *rw;
    };
    return groupGraphs(model, rewriterOf, options, subgraphs);
}

std::unique_ptr<Pass> makeGroupFunctionsPass() { return std::make_unique<GroupFunctionsPass>(); }


GroupFunctionsResult groupFunctionsResultOf(const PassResult& r) {
    auto get = [&](const char* key) {
        auto it = r.counters.find(key);
        return it == r.counters.end() ? size_t{0} : static_cast<size_t>(it->second);
    };
    GroupFunctionsResult g;
    g.functions = get("functions");
    g.subgraphFunctions = get("functions_in_subgraphs");
    g.fusedNodes = get("fused_nodes");
    g.nodesBefore = get("nodes_before");
    g.nodesAfter = get("nodes_after");
    g.constantNodes = get("constant_nodes");
    g.deepNodesBefore = get("deep_nodes_before");
    g.deepNodesAfter = get("deep_nodes_after");
    return g;
}

std::optional<GroupFunctionsResult> groupFunctionsResultOf(const PipelineResult& r) {
    std::optional<GroupFunctionsResult> grouped;
    for (const auto& s : r.steps)
        if (s.result.name == "group-functions" && (!grouped || s.result.changed)) grouped = groupFunctionsResultOf(s.result);
    return grouped;
}

}  // namespace passlens::passes
