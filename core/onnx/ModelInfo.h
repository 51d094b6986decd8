#pragma once
// Facts about a model for `passlens-cli info` and the app's model-info dock.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/Model.h"

namespace passlens::onnxio {

struct ValueSummary {
    std::string name;
    std::string type;  ///< "float32[1x3x224x224]"
};

struct ModelInfo {
    std::string producer;
    int64_t irVersion = 0;
    std::vector<ir::OpsetImport> opsets;
    std::vector<ValueSummary> inputs, outputs;
    size_t nodeCount = 0;                   ///< every node, subgraphs and functions excluded
    size_t nodeCountWithSubgraphs = 0;      ///< every node, subgraphs included
    std::map<std::string, size_t> opCounts; ///< by op type ("domain:op" outside ai.onnx), subgraphs included
    int64_t parameterCount = 0;             ///< elements of initializers and Constant tensors
    int64_t parameterBytes = 0;
    size_t subgraphCount = 0;
    size_t functionCount = 0;
    size_t shapesKnown = 0;                 ///< main-graph inputs and node outputs with every dim known
    size_t shapesTotal = 0;                 ///< main-graph inputs and node outputs
    std::vector<std::string> warnings;
};

ModelInfo describeModel(const ir::Model& m);
std::string modelInfoToJson(const ModelInfo& info);  ///< pretty-printed JSON object
std::string modelInfoToText(const ModelInfo& info);

}  // namespace passlens::onnxio
