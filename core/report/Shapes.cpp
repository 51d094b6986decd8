#include "report/Shapes.h"

#include <set>
#include <sstream>

#include "shape/Rules.h"

namespace passlens::report {

namespace {

using shape::Bindings;
using shape::ValueShape;

/// One dim as text: the expression, with its value at the bindings when they decide it.
std::string dimText(const shape::Dim& d, const Bindings& b) {
    if (!d) return "?";
    std::string s = d->toString();
    if (!b.empty() && !d->isConstant())
        if (auto v = d->evaluate(b)) s += "=" + std::to_string(*v);
    return s;
}

nlohmann::ordered_json dimJson(const shape::Dim& d) {
    if (!d) return nullptr;
    if (auto c = d->constantValue()) return *c;
    return d->toString();
}

/// Inputs, then node outputs in node order.
std::vector<ir::ValueId> reportOrder(const ir::Graph& g) {
    std::vector<ir::ValueId> order;
    for (ir::ValueId v : g.inputs())
        if (!g.value(v).initializer) order.push_back(v);
    for (ir::NodeId n : g.nodeOrder())
        for (ir::ValueId v : g.node(n).outputs)
            if (v != ir::kNone) order.push_back(v);
    return order;
}

}  // namespace

ShapesReport analyzeModelShapes(const ir::Model& model, const shape::Bindings& bindings) {
    ShapesReport r;
    r.bindings = bindings;
    r.analysis = shape::analyzeShapes(model.graph, &model);
    std::set<std::string> inputSymbols(r.analysis.inputSymbols.begin(), r.analysis.inputSymbols.end());
    r.inputSymbols.assign(inputSymbols.begin(), inputSymbols.end());
    for (const auto& [name, value] : bindings)
        if (!inputSymbols.count(name)) r.unknownBindings.push_back(name);
    return r;
}

nlohmann::ordered_json shapesToJson(const ir::Model& model, const ShapesReport& r) {
    const ir::Graph& g = model.graph;
    const auto& a = r.analysis;
    const auto& bindings = r.bindings;
    auto coverage = shape::shapeCoverage(g);
    auto producerName = [&](ir::ValueId v) {
        ir::NodeId p = g.value(v).producer;
        return p == ir::kNone ? std::string() : g.node(p).displayName();
    };
    nlohmann::ordered_json j;
    j["symbols"] = r.inputSymbols;
    auto fresh = nlohmann::ordered_json::array();
    for (const auto& f : a.fresh) fresh.push_back({{"name", f.name}, {"node", f.node}, {"reason", f.reason}});
    j["fresh_symbols"] = std::move(fresh);
    j["bindings"] = bindings;
    j["coverage"] = {{"known", coverage.known}, {"total", coverage.total}};
    auto values = nlohmann::ordered_json::array();
    for (ir::ValueId v : reportOrder(g)) {
        const ValueShape& s = a.of(v);
        nlohmann::ordered_json e;
        e["name"] = g.value(v).name;
        e["producer"] = producerName(v);
        e["dtype"] = std::string(ir::dataTypeName(s.dtype));
        if (s.dims) {
            auto dims = nlohmann::ordered_json::array();
            auto at = nlohmann::ordered_json::array();
            for (const auto& d : *s.dims) {
                dims.push_back(dimJson(d));
                std::optional<int64_t> value = d ? d->evaluate(bindings) : std::nullopt;
                at.push_back(value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr));
            }
            e["dims"] = std::move(dims);
            if (!bindings.empty()) e["dims_at_bindings"] = std::move(at);
        } else {
            e["dims"] = nullptr;
        }
        if (s.values) {  // the elements of a small integer tensor (a shape computation)
            auto elems = nlohmann::ordered_json::array();
            for (const auto& d : *s.values) elems.push_back(dimJson(d));
            e["elements"] = std::move(elems);
        }
        if (!s.why.empty()) e["why"] = s.why;
        values.push_back(std::move(e));
    }
    j["values"] = std::move(values);
    j["conflicts"] = a.conflicts;
    return j;
}

std::string shapesToText(const ir::Model& model, const ShapesReport& r) {
    const ir::Graph& g = model.graph;
    const auto& a = r.analysis;
    const auto& bindings = r.bindings;
    auto coverage = shape::shapeCoverage(g);
    std::ostringstream out;
    out << "symbols: ";
    if (r.inputSymbols.empty()) out << "(none)";
    bool first = true;
    for (const auto& s : r.inputSymbols) {
        out << (first ? "" : ", ") << s;
        if (auto it = bindings.find(s); it != bindings.end()) out << "=" << it->second;
        first = false;
    }
    out << "\ncoverage: " << coverage.known << " of " << coverage.total << " values with every dim known\n";
    if (!a.fresh.empty()) {
        out << "fresh symbols:\n";
        for (const auto& f : a.fresh) out << "  " << f.name << "  " << (f.node.empty() ? "graph input" : f.node) << ": " << f.reason << "\n";
    }
    out << "values:\n";
    for (ir::ValueId v : reportOrder(g)) {
        const ValueShape& s = a.of(v);
        out << "  " << g.value(v).name << "  " << ir::dataTypeName(s.dtype) << "[";
        if (!s.dims) out << "rank ?";
        else
            for (size_t i = 0; i < s.dims->size(); ++i) out << (i ? ", " : "") << dimText((*s.dims)[i], bindings);
        out << "]";
        if (s.values && shape::isIntegerType(s.dtype)) {
            out << " = [";
            for (size_t i = 0; i < s.values->size(); ++i) out << (i ? ", " : "") << dimText((*s.values)[i], bindings);
            out << "]";
        }
        if (!s.why.empty()) out << "   ← " << s.why;
        out << "\n";
    }
    for (const auto& c : a.conflicts) out << "conflict: " << c << "\n";
    return out.str();
}

}  // namespace passlens::report
