#pragma once
// A corpus of malformed ONNX models, one (or a few) per class of defect, built with libonnx's
// protobuf types. Tests run every CLI command on each; the fuzzers use them as seeds; the app's
// tests open a few. Nothing here is hand-edited bytes: each file says what is wrong with it.
#include <string>
#include <vector>

namespace passlens::malformed {

struct MalformedModel {
    std::string name;         ///< file stem, e.g. "erf_no_inputs"
    std::string defect;       ///< what is wrong, one sentence
    std::string bytes;        ///< the serialized ModelProto (or deliberately broken bytes)
    std::string mustName;     ///< the node or value the error message must name
    /// A model that is valid ONNX but too heavy (folding or running would need gigabytes): import
    /// and the static commands succeed; `run` must stop with an error naming `mustName`.
    bool validButHeavy = false;
};

/// Every malformed model, in a fixed order.
std::vector<MalformedModel> malformedModels();

/// Writes each model as DIR/<name>.onnx; returns the paths in the same order.
std::vector<std::string> writeMalformedModels(const std::string& dir);

}  // namespace passlens::malformed
