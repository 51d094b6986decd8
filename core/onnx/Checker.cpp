#include "onnx/Checker.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <google/protobuf/arena.h>

#include "onnx/Export.h"

namespace passlens::onnxio {

std::optional<std::string> checkModel(const ir::Model& m) {
    google::protobuf::Arena arena;  // one bulk free instead of one per message
    onnx::ModelProto& mp = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
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
