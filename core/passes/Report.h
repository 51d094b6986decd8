#pragma once
// The JSON report of a pipeline run (passlens-cli optimize --report, and the UI).
#include <nlohmann/json.hpp>

#include "passes/PassManager.h"

namespace passlens::passes {

/// `originalNames` (main-graph node names before the pipeline, by id) lets changes name the nodes
/// they came from ("came_from").
nlohmann::ordered_json passResultToJson(const PassResult& r, const std::map<ir::NodeId, std::string>* originalNames = nullptr);
nlohmann::ordered_json pipelineToJson(const PipelineResult& r);
/// `optimize --report` (CLI and Python): pipelineToJson plus, with a group-functions step, its
/// figures under "group_functions".
nlohmann::ordered_json optimizeReportToJson(const PipelineResult& r);

}  // namespace passlens::passes
