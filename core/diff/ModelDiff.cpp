#include "diff/ModelDiff.h"

#include "diff/Changes.h"
#include "diff/Matcher.h"
#include "onnx/Import.h"

namespace passlens::diff {

using namespace passlens::ir;

std::string_view howName(MatchHow h) {
    switch (h) {
    case MatchHow::Name: return "name";
    case MatchHow::Weights: return "weights";
    case MatchHow::Structure: return "structure";
    case MatchHow::Neighbors: return "neighbors";
    case MatchHow::Similarity: return "similarity";
    }
    return "?";
}

std::string_view statusName(NodeStatus s) {
    switch (s) {
    case NodeStatus::Same: return "same";
    case NodeStatus::Changed: return "changed";
    case NodeStatus::OnlyInA: return "only_in_a";
    case NodeStatus::OnlyInB: return "only_in_b";
    }
    return "?";
}

std::string nodeLabel(const Graph& g, NodeId n) {
    const std::string& name = g.node(n).name;
    return name.empty() ? "#" + std::to_string(n) : name;
}

DiffSummary GraphComparison::summary() const {
    DiffSummary s;
    for (const NodeDiff& d : nodes) {
        switch (d.status) {
        case NodeStatus::Same: ++s.same; break;
        case NodeStatus::Changed: ++s.changed; break;
        case NodeStatus::OnlyInA: ++s.onlyInA; break;
        case NodeStatus::OnlyInB: ++s.onlyInB; break;
        }
    }
    return s;
}

namespace {

/// Capture names of A's node `a` (read by its bodies) mapped to B's names through the matching.
CaptureNames captureNamesFor(const Matcher& m, const Graph& ga, const Graph& gb, NodeId a) {
    CaptureNames out;
    for (const std::string& name : ga.capturedNames(a)) {
        auto va = ga.findValue(name);
        if (!va) continue;
        const ValueId vb = m.mappedValue(*va);
        out[name] = vb != kNone ? gb.value(vb).name : name;
    }
    return out;
}

void compareGraphs(const Graph& ga, const Graph& gb, const std::string& path, const CaptureNames& captures,
                   const GraphFacts* enclosingA, const GraphFacts* enclosingB, const DiffOptions& options,
                   std::vector<GraphComparison>& out) {
    const GraphFacts fa(ga, enclosingA), fb(gb, enclosingB);
    Matcher matcher(fa, fb, captures);
    matcher.run(options);

    GraphComparison cmp;
    cmp.path = path;
    cmp.a = &ga;
    cmp.b = &gb;
    cmp.rowOfA.assign(ga.nodeIdLimit(), GraphComparison::kNoRow);
    cmp.rowOfB.assign(gb.nodeIdLimit(), GraphComparison::kNoRow);
    struct Body {
        const Graph* a;
        const Graph* b;
        std::string path;
        CaptureNames captures;
    };
    std::vector<Body> bodies;
    for (NodeId a : fa.topo) {
        NodeDiff row;
        row.a = a;
        row.b = matcher.counterpartOfA(a);
        if (row.b == kNone) {
            row.status = NodeStatus::OnlyInA;
        } else {
            row.how = matcher.how(a);
            row.score = matcher.score(a);
            row.changes = describeChanges(fa, a, fb, row.b);
            row.status = row.changes.empty() ? NodeStatus::Same : NodeStatus::Changed;
            cmp.rowOfB[row.b] = cmp.nodes.size();
            // Bodies of matched nodes, attribute by attribute (same name and kind on both sides).
            const Node& na = ga.node(a);
            const Node& nb = gb.node(row.b);
            for (const Attribute& x : na.attributes) {
                const Attribute* y = nb.attr(x.name);
                if (!y || y->kind != x.kind) continue;
                const std::string prefix = (path.empty() ? "" : path + "/") + nodeLabel(ga, a) + "/" + x.name;
                if (x.g && y->g) bodies.push_back({x.g.get(), y->g.get(), prefix, captureNamesFor(matcher, ga, gb, a)});
                for (size_t i = 0; i < std::min(x.graphs.size(), y->graphs.size()); ++i)
                    bodies.push_back({x.graphs[i].get(), y->graphs[i].get(), prefix + "[" + std::to_string(i) + "]",
                                      captureNamesFor(matcher, ga, gb, a)});
            }
        }
        cmp.rowOfA[a] = cmp.nodes.size();
        cmp.nodes.push_back(std::move(row));
    }
    for (NodeId b : fb.topo) {
        if (matcher.counterpartOfB(b) != kNone) continue;
        NodeDiff row;
        row.b = b;
        row.status = NodeStatus::OnlyInB;
        cmp.rowOfB[b] = cmp.nodes.size();
        cmp.nodes.push_back(std::move(row));
    }
    out.push_back(std::move(cmp));
    for (const Body& body : bodies) compareGraphs(*body.a, *body.b, body.path, body.captures, &fa, &fb, options, out);
}

}  // namespace

ModelComparison compareModels(const Model& a, const Model& b, const DiffOptions& options) {
    ModelComparison result;
    compareGraphs(a.graph, b.graph, "", {}, nullptr, nullptr, options, result.graphs);
    for (const GraphComparison& g : result.graphs) {
        const DiffSummary s = g.summary();
        result.summary.same += s.same;
        result.summary.changed += s.changed;
        result.summary.onlyInA += s.onlyInA;
        result.summary.onlyInB += s.onlyInB;
    }
    return result;
}

Model importForDiff(const std::string& path, const std::vector<std::pair<std::string, int64_t>>& pinnedDims) {
    onnxio::ImportOptions options;
    options.validateOps = false;
    options.pinnedDims = pinnedDims;
    return onnxio::importModelFile(path, options);
}

}  // namespace passlens::diff
