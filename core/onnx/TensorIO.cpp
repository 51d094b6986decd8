#include "onnx/TensorIO.h"

#include <fstream>
#include <sstream>

#include "ir/Error.h"
#include "onnx/ProtoConvert.h"

namespace passlens::onnxio {

ir::TensorPtr tensorFromProtoBytes(std::string_view bytes) {
    onnx::TensorProto tp;
    if (!tp.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) throwBadInput("not a serialized TensorProto");
    TensorLoader loader(".");
    if (tp.data_location() == onnx::TensorProto::EXTERNAL) throwBadInput("tensor file uses external data, which is not supported here");
    return loader.load(tp);
}

ir::TensorPtr readTensorFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throwBadInput("cannot open tensor file '" + path + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    try {
        return tensorFromProtoBytes(ss.str());
    } catch (const Error& e) {
        throwBadInput("tensor file '" + path + "': " + e.what());
    }
}

void writeTensorFile(const ir::Tensor& t, const std::string& path) {
    onnx::TensorProto tp;
    tensorToProto(t, tp);
    std::ofstream out(path, std::ios::binary);
    if (!out || !tp.SerializeToOstream(&out)) throwBadInput("cannot write tensor file '" + path + "'");
}

}  // namespace passlens::onnxio
