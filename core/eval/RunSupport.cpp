#include "eval/RunSupport.h"

#include <cmath>
#include <filesystem>
#include <limits>

#include "eval/Interpreter.h"
#include "eval/TensorOps.h"
#include "ir/Error.h"
#include "onnx/TensorIO.h"

namespace passlens::eval {

using namespace passlens::ir;

std::vector<TensorPtr> readInputDir(const Model& m, const std::string& dir) {
    if (!std::filesystem::is_directory(dir)) throwBadInput("input folder '" + dir + "' does not exist");
    std::vector<TensorPtr> out;
    auto ins = runtimeInputs(m.graph);
    for (size_t i = 0; i < ins.size(); ++i) {
        const std::string path = (std::filesystem::path(dir) / ("input_" + std::to_string(i) + ".pb")).string();
        if (!std::filesystem::exists(path))
            throwBadInput("input folder '" + dir + "' has no input_" + std::to_string(i) + ".pb for input '" + m.graph.value(ins[i]).name + "'");
        out.push_back(onnxio::readTensorFile(path));
    }
    return out;
}

void writeTensorDir(const std::vector<TensorPtr>& tensors, const std::string& dir, const std::string& prefix) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throwBadInput("cannot create folder '" + dir + "': " + ec.message());
    for (size_t i = 0; i < tensors.size(); ++i)
        onnxio::writeTensorFile(*tensors[i], (std::filesystem::path(dir) / (prefix + "_" + std::to_string(i) + ".pb")).string());
}

TensorSummary summarize(const Tensor& t, size_t firstN) {
    TensorSummary s;
    s.shape = shapeText(t.dims);
    s.dtype = std::string(dataTypeName(t.dtype));
    if (t.dtype == DataType::String) return s;
    auto v = toDoubles(t);
    s.min = v.empty() ? 0 : std::numeric_limits<double>::infinity();
    s.max = v.empty() ? 0 : -std::numeric_limits<double>::infinity();
    double sum = 0;
    for (double x : v) {
        if (!std::isfinite(x)) s.allFinite = false;
        s.min = std::min(s.min, x);
        s.max = std::max(s.max, x);
        sum += x;
    }
    s.mean = v.empty() ? 0 : sum / double(v.size());
    for (size_t i = 0; i < std::min(firstN, v.size()); ++i) s.first.push_back(v[i]);
    return s;
}

nlohmann::ordered_json summaryToJson(const std::string& name, const TensorSummary& s) {
    nlohmann::ordered_json j;
    j["name"] = name;
    j["shape"] = s.shape;
    j["dtype"] = s.dtype;
    j["min"] = s.min;
    j["max"] = s.max;
    j["mean"] = s.mean;
    j["all_finite"] = s.allFinite;
    j["first"] = s.first;
    return j;
}

}  // namespace passlens::eval
