#pragma once
// The JSON report of a pipeline run (passlens-cli optimize --report, and the UI).
#include <nlohmann/json.hpp>

#include "passes/PassManager.h"

namespace passlens::passes {

nlohmann::ordered_json passResultToJson(const PassResult& r);
nlohmann::ordered_json pipelineToJson(const PipelineResult& r);

}  // namespace passlens::passes
