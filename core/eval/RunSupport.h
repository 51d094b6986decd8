#pragma once
// Helpers shared by the run/verify commands and tests: input folders in ONNX's backend test-data
// layout and short tensor summaries.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/Model.h"

namespace passlens::eval {

/// Reads input_<i>.pb for every runtime input of `m` (graph order) from `dir`.
std::vector<ir::TensorPtr> readInputDir(const ir::Model& m, const std::string& dir);
/// Writes tensors as <prefix>_<i>.pb into `dir` (created when missing).
void writeTensorDir(const std::vector<ir::TensorPtr>& tensors, const std::string& dir, const std::string& prefix);

struct TensorSummary {
    std::string shape, dtype;
    double min = 0, max = 0, mean = 0;
    bool allFinite = true;
    std::vector<double> first;  ///< the first few values
};
TensorSummary summarize(const ir::Tensor& t, size_t firstN = 6);
nlohmann::ordered_json summaryToJson(const std::string& name, const TensorSummary& s);

}  // namespace passlens::eval
