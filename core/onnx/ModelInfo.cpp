#include "onnx/ModelInfo.h"

#include <nlohmann/json.hpp>

#include <sstream>

#include "shape/ShapeEngine.h"

namespace passlens::onnxio {

using namespace passlens::ir;

namespace {

void countGraph(const Graph& g, ModelInfo& info, bool top) {
    for (ValueId v : g.initializerOrder()) {
        const Tensor& t = *g.value(v).initializer;
        info.parameterCount += t.elementCount();
        info.parameterBytes += static_cast<int64_t>(t.byteSize());
    }
    for (NodeId id : g.nodeOrder()) {
        const Node& n = g.node(id);
        if (top) ++info.nodeCount;
        ++info.nodeCountWithSubgraphs;
        ++info.opCounts[n.domain.empty() || n.domain == "ai.onnx" ? n.opType : n.domain + ":" + n.opType];
        for (const auto& a : n.attributes) {
            if (n.opType == "Constant" && a.kind == AttrKind::Tensor && a.t) {
                info.parameterCount += a.t->elementCount();
                info.parameterBytes += static_cast<int64_t>(a.t->byteSize());
            }
            if (a.g) { ++info.subgraphCount; countGraph(*a.g, info, false); }
            for (const auto& sg : a.graphs) { ++info.subgraphCount; countGraph(*sg, info, false); }
        }
    }
}

}  // namespace

ModelInfo describeModel(const Model& m) {
    ModelInfo info;
    info.producer = m.producerName + (m.producerVersion.empty() ? "" : " " + m.producerVersion);
    info.irVersion = m.irVersion;
    info.opsets = m.opsetImports;
    for (ValueId v : m.graph.inputs()) {
        const Value& val = m.graph.value(v);
        if (!val.initializer) info.inputs.push_back({val.name, val.type.toString()});
    }
    for (ValueId v : m.graph.outputs()) info.outputs.push_back({m.graph.value(v).name, m.graph.value(v).type.toString()});
    countGraph(m.graph, info, true);
    info.functionCount = m.functions.size();
    auto coverage = shape::shapeCoverage(m.graph);
    info.shapesKnown = coverage.known;
    info.shapesTotal = coverage.total;
    info.warnings = m.warnings;
    return info;
}

std::string modelInfoToJson(const ModelInfo& info) {
    nlohmann::ordered_json j;
    j["producer"] = info.producer;
    j["ir_version"] = info.irVersion;
    auto& opsets = j["opsets"] = nlohmann::ordered_json::object();
    for (const auto& o : info.opsets) opsets[o.domain.empty() ? "ai.onnx" : o.domain] = o.version;
    auto values = [](const std::vector<ValueSummary>& vs) {
        auto arr = nlohmann::ordered_json::array();
        for (const auto& v : vs) arr.push_back({{"name", v.name}, {"type", v.type}});
        return arr;
    };
    j["inputs"] = values(info.inputs);
    j["outputs"] = values(info.outputs);
    j["node_count"] = info.nodeCount;
    j["node_count_with_subgraphs"] = info.nodeCountWithSubgraphs;
    j["op_counts"] = info.opCounts;
    j["parameter_count"] = info.parameterCount;
    j["parameter_bytes"] = info.parameterBytes;
    j["subgraph_count"] = info.subgraphCount;
    j["function_count"] = info.functionCount;
    j["shape_coverage"] = {{"known", info.shapesKnown}, {"total", info.shapesTotal}};
    j["warnings"] = info.warnings;
    return j.dump(2);
}

std::string modelInfoToText(const ModelInfo& info) {
    std::ostringstream os;
    os << "producer:    " << (info.producer.empty() ? "(none)" : info.producer) << "\n";
    os << "ir_version:  " << info.irVersion << "\n";
    os << "opsets:     ";
    for (const auto& o : info.opsets) os << " " << (o.domain.empty() ? "ai.onnx" : o.domain) << "=" << o.version;
    os << "\ninputs:\n";
    for (const auto& v : info.inputs) os << "  " << v.name << ": " << v.type << "\n";
    os << "outputs:\n";
    for (const auto& v : info.outputs) os << "  " << v.name << ": " << v.type << "\n";
    os << "nodes:       " << info.nodeCount << " (" << info.nodeCountWithSubgraphs << " with subgraphs)\n";
    os << "subgraphs:   " << info.subgraphCount << "\n";
    os << "functions:   " << info.functionCount << "\n";
    os << "shapes:      " << info.shapesKnown << " of " << info.shapesTotal << " values with every dim known\n";
    os << "parameters:  " << info.parameterCount << " (" << info.parameterBytes << " bytes)\n";
    os << "ops:\n";
    for (const auto& [op, n] : info.opCounts) os << "  " << op << ": " << n << "\n";
    for (const auto& w : info.warnings) os << "warning: " << w << "\n";
    return os.str();
}

}  // namespace passlens::onnxio
