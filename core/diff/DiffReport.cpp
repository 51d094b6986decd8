#include "diff/DiffReport.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace passlens::diff {

using namespace passlens::ir;

namespace {

std::string qualifiedOp(const Node& n) { return n.domain.empty() ? n.opType : n.domain + "." + n.opType; }

/// The op a row is counted under: A's when the row has an A node, else B's.
std::string rowOp(const GraphComparison& g, const NodeDiff& r) {
    return r.a != kNone ? qualifiedOp(g.a->node(r.a)) : qualifiedOp(g.b->node(r.b));
}

void count(DiffSummary& s, NodeStatus status) {
    switch (status) {
    case NodeStatus::Same: ++s.same; break;
    case NodeStatus::Changed: ++s.changed; break;
    case NodeStatus::OnlyInA: ++s.onlyInA; break;
    case NodeStatus::OnlyInB: ++s.onlyInB; break;
    }
}

std::string fixed(double v, int digits) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string joined(const std::vector<std::string>& parts, const char* sep) {
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
    return out;
}

}  // namespace

bool constantMovedToInitializer(const GraphComparison& g, const NodeDiff& r) {
    if (r.matched()) return false;
    const bool inA = r.a != kNone;
    const Graph& own = inA ? *g.a : *g.b;
    const Graph& other = inA ? *g.b : *g.a;
    const Node& c = own.node(inA ? r.a : r.b);
    const Attribute* value = c.attr("value");
    if (c.opType != "Constant" || !c.domain.empty() || !value || !value->t || c.outputs.empty()) return false;
    const ValueId v = c.outputs[0];
    if (own.value(v).consumers.empty()) return false;
    for (NodeId reader : own.value(v).consumers) {
        const NodeDiff* row = inA ? g.rowForA(reader) : g.rowForB(reader);
        if (!row || !row->matched()) return false;
        const Node& counterpart = other.node(inA ? row->b : row->a);
        const auto& ins = own.node(reader).inputs;
        for (size_t s = 0; s < ins.size(); ++s) {
            if (ins[s] != v) continue;
            if (s >= counterpart.inputs.size() || counterpart.inputs[s] == kNone) return false;
            const TensorPtr& init = other.value(counterpart.inputs[s]).initializer;
            if (!init || !init->sameContents(*value->t)) return false;
        }
    }
    return true;
}

std::map<std::string, OpCounts> countsByOpType(const ModelComparison& d) {
    std::map<std::string, OpCounts> out;
    for (const GraphComparison& g : d.graphs)
        for (const NodeDiff& r : g.nodes) {
            OpCounts& c = out[rowOp(g, r)];
            count(c.counts, r.status);
            if (r.matched()) {
                const std::string opB = qualifiedOp(g.b->node(r.b));
                if (opB != rowOp(g, r)) ++c.becameOp[opB];
            }
        }
    return out;
}

nlohmann::ordered_json diffToJson(const ModelComparison& d) {
    nlohmann::ordered_json j;
    j["summary"] = {{"same", d.summary.same}, {"changed", d.summary.changed}, {"only_in_a", d.summary.onlyInA},
                    {"only_in_b", d.summary.onlyInB}};
    auto& nodes = j["nodes"] = nlohmann::ordered_json::array();
    for (const GraphComparison& g : d.graphs)
        for (const NodeDiff& r : g.nodes) {
            nlohmann::ordered_json n;
            n["a"] = r.a != kNone ? nlohmann::ordered_json(nodeLabel(*g.a, r.a)) : nlohmann::ordered_json();
            n["b"] = r.b != kNone ? nlohmann::ordered_json(nodeLabel(*g.b, r.b)) : nlohmann::ordered_json();
            n["status"] = statusName(r.status);
            n["how"] = r.matched() ? nlohmann::ordered_json(howName(r.how)) : nlohmann::ordered_json();
            n["score"] = std::round(r.score * 1000) / 1000;
            n["changes"] = r.changes;
            if (!g.path.empty()) n["graph"] = g.path;
            nodes.push_back(std::move(n));
        }
    return j;
}

std::string diffInShort(const ModelComparison& d) {
    // Constant nodes on one side that are initializers of equal content on the other are a
    // change of form, not of the computation: counted apart from the removed and added nodes.
    size_t toInitializers = 0, toConstants = 0;
    for (const GraphComparison& g : d.graphs)
        for (const NodeDiff& r : g.nodes)
            if (constantMovedToInitializer(g, r)) ++(r.a != kNone ? toInitializers : toConstants);
    std::vector<std::string> removed, added, replaced, changed;
    for (const auto& [op, c] : countsByOpType(d)) {
        const size_t movedA = op == "Constant" ? toInitializers : 0, movedB = op == "Constant" ? toConstants : 0;
        if (c.counts.onlyInA > movedA) removed.push_back(std::to_string(c.counts.onlyInA - movedA) + " " + op);
        if (c.counts.onlyInB > movedB) added.push_back(std::to_string(c.counts.onlyInB - movedB) + " " + op);
        size_t opChanges = 0;
        for (const auto& [to, n] : c.becameOp) {
            replaced.push_back(op + " → " + to + " ×" + std::to_string(n));
            opChanges += n;
        }
        if (c.counts.changed > opChanges) changed.push_back(std::to_string(c.counts.changed - opChanges) + " " + op);
    }
    std::vector<std::string> parts;
    if (toInitializers) parts.push_back(std::to_string(toInitializers) + " Constant nodes became initializers");
    if (toConstants) parts.push_back(std::to_string(toConstants) + " initializers became Constant nodes");
    if (!removed.empty()) parts.push_back("removed " + joined(removed, ", "));
    if (!added.empty()) parts.push_back("added " + joined(added, ", "));
    if (!replaced.empty()) parts.push_back("replaced " + joined(replaced, ", "));
    if (!changed.empty()) parts.push_back("attributes or weights changed in " + joined(changed, ", "));
    return parts.empty() ? "no differences" : joined(parts, "; ");
}

std::string diffToText(const ModelComparison& d) {
    std::ostringstream os;
    const DiffSummary& s = d.summary;
    os << "same " << s.same << ", changed " << s.changed << ", only in A " << s.onlyInA << ", only in B " << s.onlyInB << "\n";
    os << "in short: " << diffInShort(d) << "\n\n";
    const auto byOp = countsByOpType(d);
    size_t width = 7;
    for (const auto& [op, c] : byOp) width = std::max(width, op.size());
    char line[256];
    std::snprintf(line, sizeof line, "%-*s %8s %8s %10s %10s\n", static_cast<int>(width), "op type", "same", "changed",
                  "only_in_a", "only_in_b");
    os << line;
    for (const auto& [op, c] : byOp) {
        std::snprintf(line, sizeof line, "%-*s %8zu %8zu %10zu %10zu\n", static_cast<int>(width), op.c_str(), c.counts.same,
                      c.counts.changed, c.counts.onlyInA, c.counts.onlyInB);
        os << line;
    }
    bool header = false;
    for (const GraphComparison& g : d.graphs)
        for (const NodeDiff& r : g.nodes) {
            if (r.status == NodeStatus::Same) continue;
            if (!header) os << "\n", header = true;
            const std::string where = g.path.empty() ? "" : "[" + g.path + "] ";
            switch (r.status) {
            case NodeStatus::Changed:
                os << "changed    " << where << nodeLabel(*g.a, r.a) << " ↔ " << nodeLabel(*g.b, r.b) << " (" << howName(r.how)
                   << " " << fixed(r.score, 2) << "): " << joined(r.changes, "; ") << "\n";
                break;
            case NodeStatus::OnlyInA:
                os << "only in A  " << where << rowOp(g, r) << " " << nodeLabel(*g.a, r.a)
                   << (constantMovedToInitializer(g, r) ? "  (an initializer in B)" : "") << "\n";
                break;
            case NodeStatus::OnlyInB:
                os << "only in B  " << where << rowOp(g, r) << " " << nodeLabel(*g.b, r.b)
                   << (constantMovedToInitializer(g, r) ? "  (an initializer in A)" : "") << "\n";
                break;
            case NodeStatus::Same: break;
            }
        }
    return os.str();
}

}  // namespace passlens::diff
