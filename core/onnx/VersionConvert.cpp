#include "onnx/VersionConvert.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "ir/Error.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "onnx/NewerOpsets.h"

namespace passlens::onnxio {

int64_t maxSupportedOpset() {
    // libonnx's converter has adapters up to its own newest opset; the schemas PassLens adds
    // for later opsets (NewerOpsets) do not come with adapters.
    return kLibonnxMaxOpset;
}

namespace {

/// The converter reports skipped custom-domain nodes on std::cerr; keep them as warnings instead.
class CerrCapture {
public:
    CerrCapture() : old_(std::cerr.rdbuf(text_.rdbuf())) {}
    ~CerrCapture() { std::cerr.rdbuf(old_); }
    std::vector<std::string> lines() const {
        std::vector<std::string> out;
        std::istringstream in(text_.str());
        for (std::string line; std::getline(in, line);)
            if (!line.empty() && std::find(out.begin(), out.end(), line) == out.end()) out.push_back(line);
        return out;
    }

private:
    std::ostringstream text_;
    std::streambuf* old_;
};

/// Rank of `v` from its type, or from the ops that fix it (Transpose's perm, a constant Reshape
/// target, MatMul/elementwise over known ranks). Shape inference loses ranks behind dynamic
/// Reshapes, but the converter's Softmax adapter needs them.
std::optional<size_t> rankOf(const ir::Graph& g, ir::ValueId v, int depth = 0) {
    using namespace passlens::ir;
    const Value& val = g.value(v);
    if (val.type.isTensor() && val.type.shape) return val.type.shape->rank();
    if (val.initializer) return val.initializer->dims.size();
    if (val.producer == kNone || depth > 32) return std::nullopt;
    const Node& n = g.node(val.producer);
    if (!canonicalDomain(n.domain).empty()) return std::nullopt;
    static const std::vector<std::string> sameRank = {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg", "Abs",
                                                      "Softmax", "LogSoftmax", "Clip", "Cast", "Erf", "HardSigmoid",
                                                      "LeakyRelu", "Identity", "Dropout", "Reciprocal", "Slice",
                                                      "Concat", "Pad"};
    static const std::vector<std::string> broadcast = {"Add", "Sub", "Mul", "Div", "Pow", "Where", "MatMul"};
    if (n.opType == "Transpose" && n.attr("perm")) return n.attrInts("perm").size();
    if (n.opType == "Reshape" && n.inputs.size() > 1 && g.value(n.inputs[1]).initializer)
        return size_t(g.value(n.inputs[1]).initializer->elementCount());
    if ((n.opType == "Squeeze" || n.opType == "Unsqueeze") && n.attr("axes")) {  // opset < 13 form
        auto in = rankOf(g, n.inputs[0], depth + 1);
        const size_t k = n.attrInts("axes").size();
        if (!in || (n.opType == "Squeeze" && *in < k)) return std::nullopt;
        return n.opType == "Squeeze" ? *in - k : *in + k;
    }
    if (std::find(sameRank.begin(), sameRank.end(), n.opType) != sameRank.end()) return rankOf(g, n.inputs[0], depth + 1);
    if (std::find(broadcast.begin(), broadcast.end(), n.opType) != broadcast.end()) {
        size_t r = 0;
        for (ir::ValueId in : n.inputs) {
            if (in == kNone) continue;
            auto ri = rankOf(g, in, depth + 1);
            if (!ri) return std::nullopt;
            r = std::max(r, *ri);
        }
        return r;
    }
    return std::nullopt;
}

/// Softmax, LogSoftmax and Hardmax change meaning at opset 13 (one axis instead of "flatten at
/// axis"). libonnx's adapter needs the input's static shape; instead, an axis known to be the last
/// becomes -1 (same meaning in both), and any other becomes Flatten → op(axis -1) → Reshape back
/// to Shape(x), which needs no shape at all.
void prepareSoftmaxFor13(ir::Graph& g) {
    using namespace passlens::ir;
    for (NodeId id : std::vector<NodeId>(g.nodeOrder())) {
        Node& n = g.node(id);
        if (!canonicalDomain(n.domain).empty() || (n.opType != "Softmax" && n.opType != "LogSoftmax" && n.opType != "Hardmax"))
            continue;
        const int64_t axis = n.attrInt("axis", 1);
        auto rank = rankOf(g, n.inputs[0]);
        if (axis == -1 || (rank && axis == int64_t(*rank) - 1)) {
            n.setAttr(Attribute::makeInt("axis", -1));
            continue;
        }
        const ValueId x = n.inputs[0], y = n.outputs[0];
        const std::string base = n.name.empty() ? n.opType : n.name;
        ValueId flat = g.addValue(g.uniqueValueName(g.value(x).name + "_flat2d"));
        ValueId inner = g.addValue(g.uniqueValueName(g.value(y).name + "_2d"));
        ValueId shape = g.addValue(g.uniqueValueName(g.value(x).name + "_shape"));
        g.addNode("Flatten", {x}, {flat}, {Attribute::makeInt("axis", axis)}, g.uniqueNodeName(base + "_flatten"), "", id);
        g.addNode("Shape", {x}, {shape}, {}, g.uniqueNodeName(base + "_shape"), "", id);
        g.setNodeInput(id, 0, flat);
        g.setNodeOutput(id, 0, inner);
        g.node(id).setAttr(Attribute::makeInt("axis", -1));
        NodeId next = kNone;
        const auto& order = g.nodeOrder();
        auto it = std::find(order.begin(), order.end(), id);
        if (it + 1 != order.end()) next = *(it + 1);
        g.addNode("Reshape", {inner, shape}, {y}, {}, g.uniqueNodeName(base + "_unflatten"), "", next);
    }
}

}  // namespace

ir::Model upgradeOpset(const ir::Model& m, int64_t target) {
    const int64_t current = m.opsetFor("");
    if (current == 0) throwBadInput("cannot convert the opset: the model imports no ai.onnx opset");
    const int64_t highest = maxSupportedOpset();
    if (target > highest)
        throwBadInput("target opset " + std::to_string(target) + " is newer than this build's ONNX supports (at most " +
                      std::to_string(highest) + ")");
    if (target < current)
        throwBadInput("target opset " + std::to_string(target) + " is below the model's opset " + std::to_string(current) +
                      "; only upgrades are supported");
    if (target == current) return m;

    onnx::ModelProto in;
    if (current < 13 && target >= 13) {
        ir::Model prepared = m;
        prepared.graph.forEachGraph([](ir::Graph& g) { prepareSoftmaxFor13(g); });
        exportToProto(prepared, in);
    } else {
        exportToProto(m, in);
    }
    onnx::ModelProto converted;
    std::vector<std::string> converterWarnings;
    try {
        CerrCapture capture;
        converted = onnx::version_conversion::ConvertVersion(in, static_cast<int>(target));
        converterWarnings = capture.lines();
    } catch (const std::exception& e) {
        std::string what = e.what();
        if (auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
        throwUnsupported("cannot convert opset " + std::to_string(current) + " to " + std::to_string(target) + ": " + what);
    }
    std::string bytes;
    if (!converted.SerializeToString(&bytes)) throwUnsupported("cannot serialize the converted model");
    std::string baseDir = m.sourcePath.empty() ? "." : std::filesystem::path(m.sourcePath).parent_path().string();
    ImportOptions io;
    ir::Model out = importModelBytes(bytes, baseDir.empty() ? "." : baseDir, io);
    // What the converter's IR round trip drops comes back from the original.
    if (out.functions.empty()) out.functions = m.functions;
    if (out.trainingInfo.empty()) out.trainingInfo = m.trainingInfo;
    out.sourcePath = m.sourcePath;
    for (const auto& w : converterWarnings) out.warnings.push_back("version converter: " + w);
    return out;
}

}  // namespace passlens::onnxio
