#include "passes/Report.h"

#include "passes/fusion/GroupFunctions.h"

namespace passlens::passes {

nlohmann::ordered_json passResultToJson(const PassResult& r, const std::map<ir::NodeId, std::string>* originalNames) {
    nlohmann::ordered_json j;
    j["name"] = r.name;
    j["nodes_before"] = r.nodesBefore;
    j["nodes_after"] = r.nodesAfter;
    j["ms"] = r.ms;
    auto& changes = j["changes"] = nlohmann::ordered_json::array();
    for (const Change& c : r.changes) {
        nlohmann::ordered_json e;
        e["kind"] = changeKindName(c.kind);
        e["rule"] = c.rule;
        e["graph"] = c.graphPath;
        e["nodes"] = c.nodeNames;
        e["node_ids"] = c.nodes;
        e["provenance"] = c.provenance;
        // Provenance ids are ids of the model before the pipeline: name them while it is at hand.
        if (originalNames && c.graphPath.empty() && !c.provenance.empty()) {
            auto& names = e["came_from"] = nlohmann::ordered_json::array();
            for (ir::NodeId id : c.provenance)
                if (auto it = originalNames->find(id); it != originalNames->end()) names.push_back(it->second);
        }
        if (!c.touched.empty()) e["touched_ids"] = c.touched;
        e["reason"] = c.reason;
        changes.push_back(std::move(e));
    }
    auto& remarks = j["remarks"] = nlohmann::ordered_json::array();
    for (const Remark& m : r.remarks) {
        nlohmann::ordered_json e;
        e["kind"] = remarkKindName(m.kind);
        e["rule"] = m.rule;
        e["graph"] = m.graphPath;
        e["nodes"] = m.nodeNames;
        e["message"] = m.message;
        remarks.push_back(std::move(e));
    }
    return j;
}

nlohmann::ordered_json pipelineToJson(const PipelineResult& r) {
    nlohmann::ordered_json j;
    j["iterations"] = r.iterations;
    auto& passes = j["passes"] = nlohmann::ordered_json::array();
    for (const auto& s : r.steps) passes.push_back(passResultToJson(s.result, &r.originalNodeNames));
    return j;
}

nlohmann::ordered_json optimizeReportToJson(const PipelineResult& r) {
    nlohmann::ordered_json j = pipelineToJson(r);
    if (const auto grouped = groupFunctionsResultOf(r)) {
        auto& gj = j["group_functions"];
        gj["functions"] = grouped->functions;
        gj["functions_in_subgraphs"] = grouped->subgraphFunctions;
        gj["fused_nodes"] = grouped->fusedNodes;
        gj["nodes_before"] = grouped->nodesBefore;
        gj["nodes_after"] = grouped->nodesAfter;
        gj["kernels"] = grouped->kernels();
    }
    return j;
}

}  // namespace passlens::passes
