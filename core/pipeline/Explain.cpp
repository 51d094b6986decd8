// Explain: fusion groups plus the remarks of the pattern-fusion passes, per node.
#include "pipeline/Explain.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "ir/Error.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

namespace passlens::analysis {

using ir::kNone;
using ir::NodeId;
using ir::ValueId;
using nlohmann::ordered_json;

namespace {

using PassRemark = FusionRemarks::Entry;

bool isFusionPass(const std::string& name) {
    for (const auto& info : passes::PassRegistry::global().passes())
        if (info.name == name) return info.role == passes::PassRole::Fusion;
    return false;
}

/// The main-graph remarks of the run's fusion passes, plus one applied remark per fired fusion
/// naming the nodes it replaced (its change's provenance; the pass's own remark may not).
void addRunRemarks(const passes::PipelineResult& run, FusionRemarks& out) {
    for (const auto& step : run.steps) {
        if (!isFusionPass(step.result.name)) continue;
        ++out.fusionPasses;
        for (const auto& r : step.result.remarks)
            if (r.graphPath.empty() && !r.nodes.empty()) out.entries.push_back({step.result.name, r});
        for (const auto& c : step.result.changes) {
            if (c.kind != passes::ChangeKind::Replaced || !c.graphPath.empty() || c.provenance.empty()) continue;
            passes::Remark r;
            r.kind = passes::RemarkKind::Applied;
            r.pass = c.pass;
            r.rule = c.rule;
            r.nodes = c.provenance;
            for (NodeId n : c.provenance) {
                auto it = run.originalNodeNames.find(n);
                r.nodeNames.push_back(it == run.originalNodeNames.end() ? std::string() : it->second);
            }
            r.message = c.reason;
            out.entries.push_back({step.result.name, r});
        }
    }
}

}  // namespace

FusionRemarks runFusionRemarks(const ir::Model& model) {
    FusionRemarks out;
    out.source = "the extended pipeline, run on a copy of this model";
    ir::Model copy = model;
    passes::PassManager pm;
    pm.addLevel(passes::Level::Extended);
    passes::PipelineOptions po;
    po.keepSnapshots = false;
    try {
        addRunRemarks(pm.run(copy, po), out);
    } catch (const std::exception& e) {
        out.entries.clear();
        out.warnings.push_back(std::string("pattern-fusion passes could not run on this model: ") + e.what());
    }
    return out;
}

FusionRemarks fusionRemarksOf(const passes::PipelineResult& run) {
    FusionRemarks out;
    std::string passes;
    for (const auto& step : run.steps)
        if (isFusionPass(step.result.name) && passes.find(step.result.name) == std::string::npos)
            passes += (passes.empty() ? "" : ", ") + step.result.name;
    out.source = passes.empty() ? "the stepper's run, which has no fusion pass" : "the stepper's run (" + passes + ")";
    addRunRemarks(run, out);
    return out;
}

namespace {

std::string nodeName(const ir::Graph& g, NodeId n) {
    return n != kNone && g.hasNode(n) ? g.node(n).displayName() : std::string();
}

FusionConsideration fromRefusal(const ir::Graph& g, const FusionRefusal& r) {
    FusionConsideration c;
    c.source = "fusion-groups";
    c.rule = r.rule;
    c.applied = false;
    c.nodes.push_back(r.node);
    if (r.wanted != kNone) c.nodes.push_back(r.wanted);
    for (NodeId n : c.nodes) c.nodeNames.push_back(nodeName(g, n));
    c.blockingNode = r.blockingNode;
    c.blockingNodeName = nodeName(g, r.blockingNode);
    c.blockingValue = r.blockingValue;
    if (r.blockingValue != kNone && g.hasValue(r.blockingValue)) c.blockingValueName = g.value(r.blockingValue).name;
    c.message = r.message;
    return c;
}

/// A remark names the blocking edge in `values`; the blocking node is the reader (or producer) of that
/// edge the rule did not cover: for "the Conv output has a second consumer", that consumer.
FusionConsideration fromRemark(const ir::Graph& g, const PassRemark& pr) {
    const auto& r = pr.remark;
    FusionConsideration c;
    c.source = pr.pass;
    c.rule = r.rule;
    c.applied = r.kind == passes::RemarkKind::Applied;
    c.nodes = r.nodes;
    c.nodeNames = r.nodeNames;
    if (c.nodeNames.size() != c.nodes.size()) {
        c.nodeNames.clear();
        for (NodeId n : c.nodes) c.nodeNames.push_back(nodeName(g, n));
    }
    c.message = r.message;
    if (c.applied) return c;
    for (ValueId v : r.values) {
        if (v == kNone || !g.hasValue(v)) continue;
        c.blockingValue = v;
        c.blockingValueName = g.value(v).name;
        auto outside = [&](NodeId n) { return std::find(r.nodes.begin(), r.nodes.end(), n) == r.nodes.end(); };
        for (NodeId reader : g.value(v).consumers)
            if (outside(reader)) { c.blockingNode = reader; break; }
        if (c.blockingNode == kNone && g.value(v).producer != kNone && outside(g.value(v).producer))
            c.blockingNode = g.value(v).producer;
        c.blockingNodeName = nodeName(g, c.blockingNode);
        break;
    }
    return c;
}

/// For each node, the remarks that name it, in remark order (one lookup per node instead of a scan
/// of every remark).
using RemarksByNode = std::unordered_map<NodeId, std::vector<const PassRemark*>>;

RemarksByNode indexRemarks(const std::vector<PassRemark>& remarks) {
    RemarksByNode out;
    for (const auto& pr : remarks)
        for (NodeId n : pr.remark.nodes) {
            auto& list = out[n];
            if (list.empty() || list.back() != &pr) list.push_back(&pr);
        }
    return out;
}

/// The plan's refusals by node (FusionPlan::refusalFor scans them all: fine for one node, quadratic
/// for a whole model). The first refusal of a node wins, as in refusalFor.
using RefusalsByNode = std::unordered_map<NodeId, const FusionRefusal*>;

RefusalsByNode indexRefusals(const FusionPlan& plan) {
    RefusalsByNode out;
    for (const auto& r : plan.refusals) out.emplace(r.node, &r);
    return out;
}

struct ExplainIndex {
    RemarksByNode remarks;
    RefusalsByNode refusals;
};

NodeExplanation explainOne(const ir::Graph& g, const FusionPlan& plan, const ExplainIndex& index, NodeId n) {
    NodeExplanation e;
    e.node = n;
    e.name = g.node(n).displayName();
    e.opType = g.node(n).opType;
    e.pattern = patternOf(g, n);
    e.postDominator = plan.postDominatorOf(n);
    e.cost = costOf(g, n);
    if (const FusionGroup* grp = plan.groupFor(n)) {
        e.group = grp->id;
        e.anchor = grp->anchor;
        e.groupMembers = grp->members;
    }
    if (auto r = index.refusals.find(n); r != index.refusals.end()) e.considered.push_back(fromRefusal(g, *r->second));
    if (auto it = index.remarks.find(n); it != index.remarks.end())
        for (const PassRemark* pr : it->second) e.considered.push_back(fromRemark(g, *pr));
    return e;
}

Explanation explainNodes(const ir::Model& model, const std::vector<NodeId>* only, const ExplainOptions& options) {
    Explanation out;
    out.plan = computeFusionGroups(model.graph, options.fusion);
    size_t all = 0;
    model.graph.forEachGraph([&](const ir::Graph& sg) { all += sg.nodeCount(); });
    out.subgraphNodes = all - model.graph.nodeCount();
    // Broadcast ops count as ElemWise only when their shapes are proven equal (patternOf); the ones
    // left Broadcast with a non-static output might still be elementwise once dims are pinned.
    size_t unproven = 0;
    for (NodeId n : model.graph.nodeOrder()) {
        const auto& node = model.graph.node(n);
        if (patternOf(model.graph, n) != OpPattern::Broadcast || node.outputs.empty() || node.outputs[0] == kNone) continue;
        const auto& shape = model.graph.value(node.outputs[0]).type.shape;
        unproven += !shape || !shape->isStatic();
    }
    if (unproven > 0)
        out.hints.push_back(std::to_string(unproven) + " broadcast ops have non-static output shapes and fuse as Broadcast, "
                            "not ElemWise; pin symbolic dims with --dim NAME=VALUE for a tighter grouping");
    std::shared_ptr<const FusionRemarks> remarks = options.remarks;
    if (!remarks && options.runPatternPasses) remarks = std::make_shared<const FusionRemarks>(runFusionRemarks(model));
    static const std::vector<PassRemark> kNoRemarks;
    const std::vector<PassRemark>& remarkList = remarks && options.runPatternPasses ? remarks->entries : kNoRemarks;
    if (remarks && options.runPatternPasses) {
        out.warnings.insert(out.warnings.end(), remarks->warnings.begin(), remarks->warnings.end());
        out.remarksSource = remarks->source;
    }
    const ExplainIndex index{indexRemarks(remarkList), indexRefusals(out.plan)};
    if (only) {
        for (NodeId n : *only) out.nodes.push_back(explainOne(model.graph, out.plan, index, n));
    } else {
        for (const auto& grp : out.plan.groups)
            for (NodeId n : grp.members) out.nodes.push_back(explainOne(model.graph, out.plan, index, n));
        // Topological order: group order interleaves, so sort by the fuser's order of first appearance.
        auto topo = model.graph.topologicalOrder();
        if (topo) {
            std::vector<size_t> pos(model.graph.nodeIdLimit(), 0);
            for (size_t i = 0; i < topo->size(); ++i) pos[(*topo)[i]] = i;
            std::sort(out.nodes.begin(), out.nodes.end(),
                      [&](const NodeExplanation& a, const NodeExplanation& b) { return pos[a.node] < pos[b.node]; });
        }
    }
    return out;
}

ordered_json nameOrNull(const std::string& s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); }

ordered_json costJson(const OpCost& c) {
    ordered_json j;
    j["flops"] = c.flops;
    j["bytes"] = c.bytes;
    j["known"] = c.known;
    if (!c.known) j["note"] = c.note;
    return j;
}

ordered_json groupJson(const ir::Graph& g, const FusionGroup& grp) {
    ordered_json j;
    j["id"] = grp.id;
    j["anchor"] = g.node(grp.anchor).displayName();
    j["pattern"] = std::string(patternName(grp.pattern));
    auto members = ordered_json::array();
    OpCost total;
    for (NodeId m : grp.members) {
        members.push_back(g.node(m).displayName());
        OpCost c = costOf(g, m);
        total.flops += c.flops;
        total.known = total.known && c.known;
    }
    j["members"] = members;
    j["flops"] = total.flops;  // bytes of a fused group are not the sum of its members' (intermediates stay on chip)
    j["flops_known"] = total.known;
    return j;
}

std::string count(size_t n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

std::string human(double v, const char* unit) {
    const char* prefixes[] = {"", "K", "M", "G", "T"};
    int i = 0;
    while (v >= 1000 && i < 4) { v /= 1000; ++i; }
    std::ostringstream os;
    os.precision(v < 10 ? 2 : 3);
    os << v << " " << prefixes[i] << unit;
    return os.str();
}

}  // namespace

Explanation explainModel(const ir::Model& model, const ExplainOptions& options) {
    return explainNodes(model, nullptr, options);
}

Explanation explainNode(const ir::Model& model, NodeId node, const ExplainOptions& options) {
    if (!model.graph.hasNode(node))
        throw Error(ErrorKind::BadInput, "explain: the graph has no node with id " + std::to_string(node));
    std::vector<NodeId> only{node};
    return explainNodes(model, &only, options);
}

NodeId findNodeForExplain(const ir::Graph& g, const std::string& name) {
    for (NodeId n : g.nodeOrder())
        if (g.node(n).name == name) return n;
    for (NodeId n : g.nodeOrder())
        if (g.node(n).displayName() == name) return n;
    bool inSubgraph = false;
    g.forEachGraph([&](const ir::Graph& sg) {
        if (&sg == &g) return;
        for (NodeId n : sg.nodeOrder()) inSubgraph |= sg.node(n).name == name || sg.node(n).displayName() == name;
    });
    if (inSubgraph)
        throw Error(ErrorKind::BadInput, "explain: node '" + name + "' is inside a subgraph; fusion groups cover top-level nodes only");
    throw Error(ErrorKind::BadInput, "explain: no top-level node named '" + name + "'");
}

namespace {

ordered_json nodeJson(const ir::Graph& g, const NodeExplanation& n) {
    ordered_json jn;
    jn["id"] = n.node;
    jn["name"] = n.name;
    jn["op"] = n.opType;
    jn["pattern"] = std::string(patternName(n.pattern));
    jn["post_dominator"] = nameOrNull(nodeName(g, n.postDominator));
    jn["group"] = n.group;
    jn["anchor"] = nameOrNull(nodeName(g, n.anchor));
    auto members = ordered_json::array();
    for (NodeId m : n.groupMembers) members.push_back(g.node(m).displayName());
    jn["group_members"] = members;
    jn["fused"] = n.groupMembers.size() >= 2;
    jn["cost"] = costJson(n.cost);
    auto considered = ordered_json::array();
    for (const auto& c : n.considered) {
        ordered_json jc;
        jc["source"] = c.source;
        jc["rule"] = c.rule;
        jc["outcome"] = c.applied ? "applied" : "refused";
        jc["nodes"] = c.nodeNames;
        jc["blocking_node"] = nameOrNull(c.blockingNodeName);
        jc["blocking_edge"] = nameOrNull(c.blockingValueName);
        jc["message"] = c.message;
        considered.push_back(jc);
    }
    jn["considered"] = considered;
    return jn;
}

/// Everything but the per-node entries; `nodes` holds `nodesValue` (an array, or a placeholder).
ordered_json explanationFrame(const ir::Graph& g, const Explanation& e, ordered_json nodesValue) {
    ordered_json j;
    j["graph"] = g.name;
    j["nodes_total"] = g.nodeCount();
    j["kernels"] = e.plan.kernelCount(g);
    j["subgraph_nodes_not_explained"] = e.subgraphNodes;
    auto groups = ordered_json::array();
    std::vector<bool> wanted(e.plan.groups.size(), false);
    for (const auto& n : e.nodes)
        if (n.group >= 0) wanted[static_cast<size_t>(n.group)] = true;
    for (size_t gi = 0; gi < wanted.size(); ++gi)
        if (wanted[gi]) groups.push_back(groupJson(g, e.plan.groups[gi]));
    j["groups"] = groups;
    j["nodes"] = std::move(nodesValue);
    j["warnings"] = e.warnings;
    j["hints"] = e.hints;
    return j;
}

}  // namespace

ordered_json explanationToJson(const ir::Graph& g, const Explanation& e) {
    auto nodes = ordered_json::array();
    for (const auto& n : e.nodes) nodes.push_back(nodeJson(g, n));
    return explanationFrame(g, e, std::move(nodes));
}

void writeExplanationJson(std::ostream& os, const ir::Graph& g, const Explanation& e) {
    // dump(2) of the frame with a placeholder where the node array goes, the nodes dumped one at a
    // time in between, each line indented as dump(2) nests array elements (4 spaces).
    const std::string placeholder = "\\u0001nodes\\u0001";  // as dump() escapes the 0x01 marks
    const std::string frame = explanationFrame(g, e, std::string("\x01nodes\x01")).dump(2);
    const size_t at = frame.find("\"" + placeholder + "\"");
    os << frame.substr(0, at);
    if (e.nodes.empty()) {
        os << "[]";
    } else {
        os << "[\n";
        for (size_t i = 0; i < e.nodes.size(); ++i) {
            const std::string text = nodeJson(g, e.nodes[i]).dump(2);
            std::string indented = "    ";
            indented.reserve(text.size() + text.size() / 8);
            for (char c : text) {
                indented += c;
                if (c == '\n') indented += "    ";
            }
            indented += i + 1 < e.nodes.size() ? ",\n" : "\n";
            os.write(indented.data(), static_cast<std::streamsize>(indented.size()));
        }
        os << "  ]";
    }
    os << frame.substr(at + placeholder.size() + 2);
}

std::string explanationToText(const ir::Graph& g, const Explanation& e) {
    std::ostringstream os;
    if (e.nodes.size() != 1)
        os << count(g.nodeCount(), "node") << " -> " << count(e.plan.kernelCount(g), "kernel") << " ("
           << count(e.plan.groups.size(), "group") << ", " << e.plan.multiMemberGroupCount() << " with 2+ members)\n\n";
    for (const auto& w : e.warnings) os << "warning: " << w << "\n";
    for (const auto& h : e.hints) os << "hint: " << h << "\n";
    if (e.subgraphNodes > 0)
        os << "note: " << e.subgraphNodes << " nodes inside subgraphs (If/Loop bodies) are not explained here; at this "
           << "level their parent node is one Opaque kernel (optimize --group-functions groups the bodies too)\n\n";
    // In a whole-model listing, lone Constant nodes (data, never fused) get one summary line.
    const bool summarizeConstants = e.nodes.size() > 1;
    size_t constants = 0;
    for (const auto& n : e.nodes) {
        const bool loneConstant = n.opType == "Constant" && n.groupMembers.size() <= 1 && n.considered.size() <= 1;
        if (summarizeConstants && loneConstant) {
            ++constants;
            continue;
        }
        os << n.name << " (" << n.opType << ", " << patternName(n.pattern) << ")\n";
        if (n.group >= 0) {
            const auto& grp = e.plan.groups[n.group];
            os << "  group " << grp.id << " (" << patternName(grp.pattern) << "), anchor " << g.node(grp.anchor).displayName();
            if (grp.members.size() == 1) {
                os << ": alone\n";
            } else {
                os << ": ";
                for (size_t i = 0; i < grp.members.size(); ++i) os << (i ? ", " : "") << g.node(grp.members[i]).displayName();
                os << "\n";
            }
        }
        os << "  post-dominator: " << (n.postDominator == kNone ? std::string("none (graph exit)") : nodeName(g, n.postDominator)) << "\n";
        os << "  cost: " << human(n.cost.flops, "FLOP") << ", " << human(n.cost.bytes, "B") << " moved"
           << (n.cost.known ? "" : " (incomplete: " + n.cost.note + ")") << "\n";
        for (const auto& c : n.considered) {
            os << "  " << (c.applied ? "applied" : "refused") << " [" << c.source << ": " << c.rule << "] " << c.message << "\n";
            // The node itself as "blocker" (opaque, constant) says nothing the rule does not.
            const bool namesNode = !c.blockingNodeName.empty() && c.blockingNode != n.node;
            if (namesNode || !c.blockingValueName.empty()) {
                os << "      blocked by";
                if (namesNode) os << " node " << c.blockingNodeName << (c.blockingValueName.empty() ? "" : " via");
                if (!c.blockingValueName.empty()) os << " edge '" << c.blockingValueName << "'";
                os << "\n";
            }
        }
        os << "\n";
    }
    if (constants > 0)
        os << constants << " Constant nodes not listed: data, not kernels, never fused (--json lists them)\n";
    return os.str();
}

}  // namespace passlens::analysis
