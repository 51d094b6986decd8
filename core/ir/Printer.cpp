#include "ir/Printer.h"

#include <sstream>

namespace passlens::ir {

namespace {

std::string ref(const Graph& g, ValueId v) {
    if (v == kNone) return "_";
    const Value& val = g.value(v);
    return (val.initializer ? "@" : "%") + val.name;
}

}  // namespace

std::string printGraph(const Graph& g, int indent) {
    std::ostringstream os;
    std::string pad(static_cast<size_t>(indent) * 2, ' ');
    os << pad << "graph " << g.name << "(";
    bool first = true;
    for (ValueId v : g.inputs()) {
        if (g.value(v).initializer) continue;
        os << (first ? "" : ", ") << "%" << g.value(v).name << ": " << g.value(v).type.toString();
        first = false;
    }
    os << ")\n";
    for (ValueId v : g.initializerOrder()) {
        const Tensor& t = *g.value(v).initializer;
        os << pad << "  @" << g.value(v).name << " = initializer " << g.value(v).type.toString() << " (" << t.byteSize()
           << " bytes)\n";
    }
    for (NodeId n : g.nodeOrder()) {
        const Node& node = g.node(n);
        os << pad << "  ";
        for (size_t i = 0; i < node.outputs.size(); ++i) {
            if (i) os << ", ";
            os << ref(g, node.outputs[i]);
            if (node.outputs[i] != kNone && g.value(node.outputs[i]).type.known())
                os << ": " << g.value(node.outputs[i]).type.toString();
        }
        os << " = " << (node.domain.empty() ? "" : node.domain + ".") << node.opType << "(";
        for (size_t i = 0; i < node.inputs.size(); ++i) os << (i ? ", " : "") << ref(g, node.inputs[i]);
        os << ")";
        std::vector<const Attribute*> subgraphs;
        bool any = false;
        for (const auto& a : node.attributes) {
            if (a.kind == AttrKind::Graph || a.kind == AttrKind::Graphs) {
                subgraphs.push_back(&a);
                continue;
            }
            os << (any ? ", " : " {") << a.name << "=" << a.valueToString();
            any = true;
        }
        if (any) os << "}";
        os << "  # " << node.displayName() << "\n";
        for (const Attribute* a : subgraphs) {
            os << pad << "    " << a->name << ":\n";
            if (a->g) os << printGraph(*a->g, indent + 3);
            for (const auto& sg : a->graphs) os << printGraph(*sg, indent + 3);
        }
    }
    os << pad << "  return";
    for (size_t i = 0; i < g.outputs().size(); ++i) os << (i ? ", " : " ") << ref(g, g.outputs()[i]);
    os << "\n";
    return os.str();
}

std::string printModel(const Model& m) {
    std::ostringstream os;
    os << "model ir_version=" << m.irVersion << " opsets=";
    for (size_t i = 0; i < m.opsetImports.size(); ++i)
        os << (i ? "," : "") << (m.opsetImports[i].domain.empty() ? "ai.onnx" : m.opsetImports[i].domain) << ":"
           << m.opsetImports[i].version;
    os << "\n";
    for (const auto& f : m.functions) {
        os << "function " << (f.domain.empty() ? "" : f.domain + ".") << f.name << "\n";
        if (f.body) os << printGraph(*f.body, 1);
    }
    os << printGraph(m.graph);
    return os.str();
}

std::string fileCheck(const std::string& text, const std::vector<std::string>& checks) {
    std::vector<std::string> lines;
    std::istringstream is(text);
    for (std::string line; std::getline(is, line);) lines.push_back(line);
    size_t pos = 0;  // next line a CHECK may match
    std::vector<std::string> pendingNot;
    auto failNot = [&](size_t from, size_t to) -> std::string {
        for (const auto& pattern : pendingNot)
            for (size_t i = from; i < to && i < lines.size(); ++i)
                if (lines[i].find(pattern) != std::string::npos)
                    return "CHECK-NOT: '" + pattern + "' found on line " + std::to_string(i + 1) + ": " + lines[i];
        return {};
    };
    for (const auto& c : checks) {
        if (c.rfind("CHECK-NOT:", 0) == 0) {
            std::string p = c.substr(10);
            p.erase(0, p.find_first_not_of(' '));
            pendingNot.push_back(p);
            continue;
        }
        std::string p = c.rfind("CHECK:", 0) == 0 ? c.substr(6) : c;
        p.erase(0, p.find_first_not_of(' '));
        size_t found = lines.size();
        for (size_t i = pos; i < lines.size(); ++i)
            if (lines[i].find(p) != std::string::npos) { found = i; break; }
        if (found == lines.size()) return "CHECK: '" + p + "' not found after line " + std::to_string(pos);
        if (auto err = failNot(pos, found); !err.empty()) return err;
        pendingNot.clear();
        pos = found + 1;
    }
    return failNot(pos, lines.size());
}

}  // namespace passlens::ir
