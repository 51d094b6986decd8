#include "passes/Diff.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace passlens::passes {

using namespace passlens::ir;

std::vector<NodeId> nodeIdSet(const Graph& g) {
    std::vector<NodeId> ids = g.nodeOrder();
    std::sort(ids.begin(), ids.end());
    return ids;
}

static bool sameNode(const Graph& ga, const Node& a, const Graph& gb, const Node& b) {
    if (a.opType != b.opType || a.domain != b.domain || a.inputs != b.inputs || a.outputs != b.outputs) return false;
    if (a.attributes.size() != b.attributes.size()) return false;
    for (size_t i = 0; i < a.attributes.size(); ++i) {
        const Attribute& x = a.attributes[i];
        const Attribute& y = b.attributes[i];
        if (x.name != y.name || x.kind != y.kind || x.i != y.i || x.f != y.f || x.s != y.s || x.ints != y.ints ||
            x.floats != y.floats || x.strings != y.strings || x.t != y.t)
            return false;
    }
    for (ValueId v : a.inputs)  // an input that became a constant (or lost one) is a change too
        if (v != kNone && ga.hasValue(v) && gb.hasValue(v) && (ga.value(v).initializer != gb.value(v).initializer))
            return false;
    return true;
}

static bool sameValue(const Value& a, const Value& b) {
    return a.type == b.type && a.producer == b.producer && a.initializer == b.initializer;
}

std::string cameFromSentence(const Graph& before, const Graph& after, NodeId n) {
    const Node& node = after.node(n);
    const std::string name = node.displayName();
    if (node.provenance.empty())
        return before.hasNode(n) ? name + " is an original node" : name + " is new (no provenance recorded)";
    std::string origins;
    for (NodeId o : node.provenance) {
        if (!origins.empty()) origins += " + ";
        if (o == n) origins += "itself";
        else if (before.hasNode(o)) origins += before.node(o).displayName();
        else if (after.hasNode(o)) origins += after.node(o).displayName();
        else origins += "#" + std::to_string(o);
    }
    return name + " came from " + origins;
}

std::string cameFromSentence(const Model& before, const Model& after, NodeId n) {
    return cameFromSentence(before.graph, after.graph, n);
}

GraphDiff diffGraphs(const Graph& a, const Graph& b, const std::string& path) {
    GraphDiff d;
    d.graphPath = path;
    for (NodeId n : nodeIdSet(b))
        if (!a.hasNode(n)) {
            d.addedNodes.push_back(n);
            d.cameFrom.push_back(cameFromSentence(a, b, n));
        }
    for (NodeId n : nodeIdSet(a)) {
        if (!b.hasNode(n)) d.removedNodes.push_back(n);
        else if (!sameNode(a, a.node(n), b, b.node(n))) d.changedNodes.push_back(n);
    }
    for (ValueId v : b.valueIds())
        if (!a.hasValue(v)) d.addedValues.push_back(v);
    for (ValueId v : a.valueIds()) {
        if (!b.hasValue(v)) d.removedValues.push_back(v);
        else if (!sameValue(a.value(v), b.value(v))) d.changedValues.push_back(v);
    }
    return d;
}

static void collectGraphs(const Graph& g, const std::string& path, std::map<std::string, const Graph*>& out) {
    out[path] = &g;
    for (NodeId n : g.nodeOrder()) {
        const Node& node = g.node(n);
        for (const auto& a : node.attributes) {
            // Subgraph paths use the node id, which is stable across snapshots (names may change).
            std::string sub = (path.empty() ? "" : path + "/") + "#" + std::to_string(n) + "/" + a.name;
            if (a.g) collectGraphs(*a.g, sub, out);
            for (size_t i = 0; i < a.graphs.size(); ++i) collectGraphs(*a.graphs[i], sub + "[" + std::to_string(i) + "]", out);
        }
    }
}

/// One diff per graph path of two graph trees (a graph and its subgraphs).
static std::vector<GraphDiff> diffGraphTrees(const Graph& a, const Graph& b) {
    std::map<std::string, const Graph*> ga, gb;
    collectGraphs(a, "", ga);
    collectGraphs(b, "", gb);
    std::set<std::string> paths;
    for (auto& [p, g] : ga) paths.insert(p);
    for (auto& [p, g] : gb) paths.insert(p);
    static const Graph empty;
    std::vector<GraphDiff> out;
    for (const auto& p : paths) {
        const Graph& x = ga.count(p) ? *ga[p] : empty;
        const Graph& y = gb.count(p) ? *gb[p] : empty;
        out.push_back(diffGraphs(x, y, p));
    }
    return out;
}

std::vector<GraphDiff> diffModels(const Model& a, const Model& b) { return diffGraphTrees(a.graph, b.graph); }

static std::string functionKey(const Function& f) { return f.domain + "::" + f.name; }

static bool sameFunction(const Function& a, const Function& b) {
    if (a.docString != b.docString || a.attributeNames != b.attributeNames ||
        a.rawAttributeProtos != b.rawAttributeProtos || a.opsetImports.size() != b.opsetImports.size())
        return false;
    for (size_t i = 0; i < a.opsetImports.size(); ++i)
        if (a.opsetImports[i].domain != b.opsetImports[i].domain || a.opsetImports[i].version != b.opsetImports[i].version)
            return false;
    if (a.body == b.body) return true;  // snapshots share unchanged bodies
    if (!a.body || !b.body) return false;
    if (a.body->inputs() != b.body->inputs() || a.body->outputs() != b.body->outputs()) return false;
    for (const GraphDiff& d : diffGraphTrees(*a.body, *b.body))
        if (!d.addedNodes.empty() || !d.removedNodes.empty() || !d.changedNodes.empty() || !d.addedValues.empty() ||
            !d.removedValues.empty() || !d.changedValues.empty())
            return false;
    return true;
}

bool ModelLevelDiff::empty() const {
    return addedFunctions.empty() && removedFunctions.empty() && changedFunctions.empty() && opsetChanges.empty() &&
           irVersionBefore == irVersionAfter;
}

std::vector<std::string> ModelLevelDiff::lines() const {
    std::vector<std::string> out;
    for (const auto& f : addedFunctions) out.push_back("+ function " + f);
    for (const auto& f : removedFunctions) out.push_back("- function " + f);
    for (const auto& f : changedFunctions) out.push_back("~ function " + f);
    auto version = [](int64_t v) { return v == 0 ? std::string("-") : std::to_string(v); };
    for (const auto& o : opsetChanges)
        out.push_back("opset " + (o.domain.empty() ? std::string("ai.onnx") : o.domain) + ": " + version(o.before) +
                      " -> " + version(o.after));
    if (irVersionBefore != irVersionAfter)
        out.push_back("ir_version: " + std::to_string(irVersionBefore) + " -> " + std::to_string(irVersionAfter));
    return out;
}

std::string ModelLevelDiff::summary() const {
    std::vector<std::string> parts;
    auto version = [](int64_t v) { return v == 0 ? std::string("none") : std::to_string(v); };
    for (const auto& o : opsetChanges)
        parts.push_back((o.domain.empty() ? std::string("ai.onnx") : o.domain) + " opset " + version(o.before) + " → " +
                        version(o.after));
    auto count = [&](const std::vector<std::string>& fs, const char* sign, const char* what) {
        if (fs.empty()) return;
        parts.push_back(sign + std::to_string(fs.size()) + " " + what + (fs.size() == 1 ? "" : "s"));
    };
    count(addedFunctions, "+", "function");
    count(removedFunctions, "−", "function");
    count(changedFunctions, "~", "changed function");
    if (irVersionBefore != irVersionAfter)
        parts.push_back("IR " + std::to_string(irVersionBefore) + " → " + std::to_string(irVersionAfter));
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : " · ") + p;
    return out;
}

ModelLevelDiff diffModelLevel(const Model& a, const Model& b) {
    ModelLevelDiff d;
    std::map<std::string, const Function*> fa, fb;
    for (const Function& f : a.functions) fa.emplace(functionKey(f), &f);
    for (const Function& f : b.functions) fb.emplace(functionKey(f), &f);
    for (const auto& [key, f] : fb) {
        auto it = fa.find(key);
        if (it == fa.end()) d.addedFunctions.push_back(key);
        else if (!sameFunction(*it->second, *f)) d.changedFunctions.push_back(key);
    }
    for (const auto& [key, f] : fa)
        if (!fb.count(key)) d.removedFunctions.push_back(key);
    std::set<std::string> domains;
    for (const auto& o : a.opsetImports) domains.insert(canonicalDomain(o.domain));
    for (const auto& o : b.opsetImports) domains.insert(canonicalDomain(o.domain));
    for (const std::string& dom : domains)
        if (a.opsetFor(dom) != b.opsetFor(dom)) d.opsetChanges.push_back({dom, a.opsetFor(dom), b.opsetFor(dom)});
    d.irVersionBefore = a.irVersion;
    d.irVersionAfter = b.irVersion;
    return d;
}

std::vector<NodeId> applyNodeDiff(const std::vector<NodeId>& ids, const GraphDiff& d) {
    std::set<NodeId> s(ids.begin(), ids.end());
    for (NodeId n : d.removedNodes) s.erase(n);
    for (NodeId n : d.addedNodes) s.insert(n);
    return {s.begin(), s.end()};
}

}  // namespace passlens::passes
