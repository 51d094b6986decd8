#include "onnx/Checker.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "onnx/Export.h"

namespace passlens::onnxio {

std::optional<std::string> checkModel(const ir::Model& m) {
    onnx::ModelProto mp;
    exportToProto(m, mp);
    try {
        onnx::checker::check_model(mp);
    } catch (const std::exception& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

std::optional<std::string> checkModelFile(const std::string& path) {
    try {
        onnx::checker::check_model(path);
    } catch (const std::exception& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

}  // namespace passlens::onnxio
