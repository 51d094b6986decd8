#include "onnx/Checker.h"

#include <onnx/checker.h>
#include <onnx/common/file_utils.h>
#include <onnx/onnx_pb.h>
#include <google/protobuf/arena.h>

#include "onnx/Export.h"
#include "onnx/NewerOpsets.h"

namespace passlens::onnxio {

namespace {

/// libonnx's checker refuses IR versions above its own (8) before looking at anything else. The
/// fields IR 9–11 add are unknown to it and kept aside by protobuf, so the rest of the model is
/// checked as it would be at IR 8.
std::optional<std::string> checkProto(onnx::ModelProto& mp) {
    registerNewerOpsets();
    if (mp.ir_version() > kLibonnxMaxIrVersion && mp.ir_version() <= kMaxIrVersion) mp.set_ir_version(kLibonnxMaxIrVersion);
    try {
        onnx::checker::check_model(mp);
    } catch (const std::exception& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> checkModel(const ir::Model& m) {
    google::protobuf::Arena arena;  // one bulk free instead of one per message
    onnx::ModelProto& mp = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
    exportToProto(m, mp);
    return checkProto(mp);
}

std::optional<std::string> checkModelFile(const std::string& path) {
    try {
        registerNewerOpsets();
        onnx::ModelProto mp;
        onnx::LoadProtoFromPath(path, mp);
        // check_model(path) resolves external data next to the file; IR 9+ files go through the
        // in-memory check (which cannot see external data) after the IR clamp above.
        if (mp.ir_version() > kLibonnxMaxIrVersion) return checkProto(mp);
        onnx::checker::check_model(path);
    } catch (const std::exception& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

}  // namespace passlens::onnxio
