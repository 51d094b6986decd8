#include "onnx/NewerOpsets.h"
#include "onnx/ShapeInference.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <google/protobuf/arena.h>

#include <functional>
#include <unordered_map>

#include "onnx/Export.h"
#include "onnx/InferenceGuards.h"
#include "onnx/ProtoConvert.h"
#include "shape/ShapeEngine.h"

namespace passlens::onnxio {

using namespace passlens::ir;

namespace {

void copyTypes(const onnx::GraphProto& gp, Graph& g) {
    std::unordered_map<std::string, const onnx::TypeProto*> types;
    for (const auto& vi : gp.value_info()) types[vi.name()] = &vi.type();
    for (const auto& vi : gp.output()) types[vi.name()] = &vi.type();
    for (ValueId v : g.valueIds()) {
        Value& val = g.value(v);
        if (val.isGraphInput || val.initializer || val.isOuterScope) continue;
        auto it = types.find(val.name);
        if (it == types.end()) continue;
        TypeInfo t = typeFromProto(*it->second);
        if (t.known()) val.type = t;
    }
    // Subgraphs: match nodes by position (export writes nodes in list order).
    const auto& order = g.nodeOrder();
    for (int i = 0; i < gp.node_size() && i < static_cast<int>(order.size()); ++i) {
        Node& n = g.node(order[static_cast<size_t>(i)]);
        const auto& np = gp.node(i);
        for (auto& a : n.attributes)
            for (const auto& ap : np.attribute()) {
                if (ap.name() != a.name) continue;
                if (a.g && ap.has_g()) copyTypes(ap.g(), *a.g);
                for (size_t k = 0; k < a.graphs.size() && static_cast<int>(k) < ap.graphs_size(); ++k)
                    copyTypes(ap.graphs(static_cast<int>(k)), *a.graphs[k]);
            }
    }
}

}  // namespace

namespace {

/// inferShapes, with `keep` naming main-graph values whose types stay value_info (inference
/// starts from them).
std::vector<std::string> inferShapesKeeping(Model& m, bool symbolic, const std::function<bool(ValueId)>& keep) {
    registerNewerOpsets();
    std::vector<std::string> warnings;
    // The proto lives on an arena: a 24k-node model's proto has ~10^6 small allocations, and
    // freeing them one by one cost as much as the inference itself.
    google::protobuf::Arena arena;
    onnx::ModelProto& mp = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
    exportToProto(m, mp);
    // Drop stale intermediate types so inference recomputes them after a rewrite.
    mp.mutable_graph()->clear_value_info();
    if (keep)
        for (ValueId v : m.graph.valueIds())
            if (keep(v) && m.graph.value(v).type.known()) {
                auto* vi = mp.mutable_graph()->add_value_info();
                vi->set_name(m.graph.value(v).name);
                typeToProto(m.graph.value(v).type, *vi->mutable_type());
            }
    if (auto hazard = findRankHazard(mp.graph())) {
        warnings.push_back("shape inference skipped: " + *hazard);
        return warnings;
    }
    try {
        onnx::shape_inference::InferShapes(mp, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions(false, 1, false));
    } catch (const std::exception& e) {
        std::string msg = e.what();
        for (char& c : msg)
            if (c == '\n') c = ' ';
        warnings.push_back("shape inference: " + msg);
        try {
            mp.mutable_graph()->clear_value_info();
            onnx::shape_inference::InferShapes(mp, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions(false, 0, false));
        } catch (const std::exception& e2) {
            warnings.push_back(std::string("shape inference gave up: ") + e2.what());
        }
    }
    copyTypes(mp.graph(), m.graph);
    // Where libonnx leaves dims unknown (shape arithmetic on symbols), the symbolic engine fills in.
    if (symbolic)
        for (auto& w : shape::refineShapesSymbolically(m)) warnings.push_back(std::move(w));
    return warnings;
}

}  // namespace

std::vector<std::string> inferShapes(Model& m, bool symbolic) { return inferShapesKeeping(m, symbolic, {}); }

namespace {
bool onnxDomain(const std::string& d) { return d.empty() || d == "ai.onnx" || d == "ai.onnx.ml"; }

/// Forgets the dims of values computed by ONNX-domain nodes (a contrib op's outputs keep theirs:
/// ONNX Runtime has the contrib schemas libonnx lacks).
void forgetComputedShapes(Graph& g) {
    for (ValueId v : g.valueIds()) {
        Value& val = g.value(v);
        if (val.producer != kNone && onnxDomain(g.node(val.producer).domain)) val.type.shape.reset();
    }
    for (NodeId n : g.nodesWithSubgraphs())
        for (auto& a : g.node(n).attributes) {
            if (a.g) forgetComputedShapes(*a.g);
            for (auto& sub : a.graphs) forgetComputedShapes(*sub);
        }
}
}  // namespace

std::vector<std::string> resetToOnnxInferredShapes(Model& m) {
    forgetComputedShapes(m.graph);
    const Graph& g = m.graph;
    return inferShapesKeeping(m, /*symbolic=*/false, [&g](ValueId v) {
        const NodeId p = g.value(v).producer;
        return p != kNone && !onnxDomain(g.node(p).domain);
    });
}

std::optional<std::unordered_map<std::string, TypeInfo>> libonnxTypesWithPins(
    const Model& m, const std::vector<std::pair<std::string, TypeInfo>>& pinned) {
    google::protobuf::Arena arena;  // one bulk free instead of one per message
    onnx::ModelProto& mp = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
    exportToProto(m, mp);
    mp.mutable_graph()->clear_value_info();
    for (const auto& [name, type] : pinned) {
        auto* vi = mp.mutable_graph()->add_value_info();
        vi->set_name(name);
        typeToProto(type, *vi->mutable_type());
    }
    try {
        onnx::shape_inference::InferShapes(mp, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions(false, 0, false));
    } catch (const std::exception&) {
        return std::nullopt;
    }
    std::unordered_map<std::string, TypeInfo> types;
    for (const auto& vi : mp.graph().value_info()) types[vi.name()] = typeFromProto(vi.type());
    for (const auto& vi : mp.graph().output()) types[vi.name()] = typeFromProto(vi.type());
    return types;
}

}  // namespace passlens::onnxio
