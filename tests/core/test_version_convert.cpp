// Opset upgrade through libonnx's version converter: a real opset-9 model reaches 17 and computes
// the same outputs; bad targets are clear errors; the CLI upgrades before the passes run.
#include <gtest/gtest.h>

#include <map>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "examples/Builder.h"
#include "ir/Error.h"
#include "onnx/Checker.h"
#include "onnx/Import.h"
#include "onnx/VersionConvert.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

const std::vector<std::pair<std::string, int64_t>> kRecDims = {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 320}};

std::vector<std::string> valueNames(const Graph& g, const std::vector<ValueId>& ids) {
    std::vector<std::string> out;
    for (ValueId v : ids) out.push_back(g.value(v).name);
    return out;
}

ErrorKind errorKindOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.kind();
    }
    return ErrorKind::Internal;
}

}  // namespace

TEST(VersionConvert, RecOcrOpset9To17StillMatches) {
    Model m = onnxio::importModelFile(test::realModel("ch_PP-OCRv4_rec_infer.onnx"));
    ASSERT_EQ(m.opsetFor(""), 9);
    Model up = onnxio::upgradeOpset(m, 17);
    EXPECT_EQ(up.opsetFor(""), 17);
    EXPECT_FALSE(onnxio::checkModel(up).has_value()) << *onnxio::checkModel(up);
    EXPECT_EQ(valueNames(up.graph, up.graph.inputs()), valueNames(m.graph, m.graph.inputs()));
    EXPECT_EQ(valueNames(up.graph, up.graph.outputs()), valueNames(m.graph, m.graph.outputs()));
    EXPECT_EQ(up.producerName, m.producerName);
    // Opset-9 attribute forms became the inputs the new opsets want (Clip min/max, Unsqueeze axes...).
    size_t clipsWithInputs = 0, clips = 0;
    for (NodeId n : up.graph.nodeOrder())
        if (up.graph.node(n).opType == "Clip") {
            ++clips;
            clipsWithInputs += up.graph.node(n).inputs.size() > 1 && !up.graph.node(n).attr("min");
        }
    EXPECT_EQ(clipsWithInputs, clips);
    auto inputs = eval::randomInputs(m, 5, kRecDims);
    eval::RunOptions ro;
    ro.dims = kRecDims;
    auto before = eval::run(m, inputs, ro);
    auto after = eval::run(up, inputs, ro);
    for (const auto& d : eval::compareOutputs(m, after, before, 1e-4, 1e-5)) EXPECT_TRUE(d.ok) << d.name << " " << d.maxAbs;
}

TEST(VersionConvert, SameOpsetIsUnchanged) {
    GraphBuilder b("relu", 13);
    b.output(b.op("Relu", {b.input("x", DataType::Float, {2, 3})}, {}, "relu"));
    Model m = b.finish();
    Model same = onnxio::upgradeOpset(m, 13);
    EXPECT_EQ(test::canonicalText(same), test::canonicalText(m));
}

TEST(VersionConvert, SmallModelUpgradesClipAttributesToInputs) {
    GraphBuilder b("clip", 9);
    auto x = b.input("x", DataType::Float, {2, 3});
    b.output(b.op("Clip", {x}, {Attribute::makeFloat("min", 0.f), Attribute::makeFloat("max", 6.f)}, "clip"));
    Model m = b.finish();
    Model up = onnxio::upgradeOpset(m, 14);
    EXPECT_EQ(up.opsetFor(""), 14);
    // The converter writes the bounds as Constant nodes feeding Clip's min/max inputs.
    const Node* clip = nullptr;
    for (NodeId n : up.graph.nodeOrder())
        if (up.graph.node(n).opType == "Clip") clip = &up.graph.node(n);
    ASSERT_NE(clip, nullptr);
    EXPECT_EQ(clip->inputs.size(), 3u);
    EXPECT_EQ(clip->attr("min"), nullptr);
    auto inputs = eval::randomInputs(m, 3);
    for (const auto& d : eval::compareOutputs(m, eval::run(up, inputs), eval::run(m, inputs), 1e-6, 1e-7)) EXPECT_TRUE(d.ok);
}

TEST(VersionConvert, BadTargetsAreClearErrors) {
    GraphBuilder b("relu", 13);
    b.output(b.op("Relu", {b.input("x", DataType::Float, {2, 3})}, {}, "relu"));
    Model m = b.finish();
    try {
        onnxio::upgradeOpset(m, 99);
        FAIL() << "no error for opset 99";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::BadInput);
        EXPECT_NE(std::string(e.what()).find("at most " + std::to_string(onnxio::maxSupportedOpset())), std::string::npos) << e.what();
    }
    EXPECT_EQ(errorKindOf([&] { onnxio::upgradeOpset(m, 11); }), ErrorKind::BadInput);
}

TEST(VersionConvert, CliTargetOpsetUpgradesAndVerifies) {
    const std::string dir = test::tempDir("version_convert_cli");
    auto r = test::runCli({"optimize", test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx"), "-o", dir + "/o.onnx", "--level", "none",
                           "--target-opset", "17", "--verify", "--dim", "p2o.DynamicDimension.0=1", "--dim",
                           "p2o.DynamicDimension.1=48", "--dim", "p2o.DynamicDimension.2=64"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(onnxio::importModelFile(dir + "/o.onnx").opsetFor(""), 17);
    auto bad = test::runCli({"optimize", test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx"), "-o", dir + "/p.onnx",
                             "--target-opset", "99"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("target opset 99"), std::string::npos) << bad.err;
}

TEST(VersionConvert, SoftmaxOverAMiddleAxisKeepsItsOldMeaning) {
    // Before opset 13 Softmax(axis=1) of a 3-D tensor normalizes over the flattened [1:] block.
    GraphBuilder b("softmax", 11);
    auto x = b.input("x", DataType::Float, {2, 3, 4});
    b.output(b.op("Softmax", {x}, {Attribute::makeInt("axis", 1)}, "softmax"));
    b.output(b.op("LogSoftmax", {x}, {Attribute::makeInt("axis", 2)}, "logsoftmax"));
    Model m = b.finish();
    Model up = onnxio::upgradeOpset(m, 13);
    EXPECT_EQ(up.opsetFor(""), 13);
    EXPECT_FALSE(onnxio::checkModel(up).has_value()) << *onnxio::checkModel(up);
    std::map<std::string, int> ops;
    for (NodeId n : up.graph.nodeOrder()) ++ops[up.graph.node(n).opType];
    EXPECT_EQ(ops, (std::map<std::string, int>{{"Flatten", 1}, {"LogSoftmax", 1}, {"Reshape", 1}, {"Shape", 1}, {"Softmax", 1}}));
    auto inputs = eval::randomInputs(m, 4);
    for (const auto& d : eval::compareOutputs(m, eval::run(up, inputs), eval::run(m, inputs), 1e-6, 1e-7)) EXPECT_TRUE(d.ok) << d.name;
}

TEST(VersionConvert, UpgradeWithoutBreakingChangesKeepsEverythingElse) {
    // Opset 16 → 17 changes no op that silero v5 uses: the model must come back as it was,
    // subgraphs, names and initializers included, with only the opset raised.
    Model m = onnxio::importModelFile(test::realModel("silero_vad_v5.onnx"));
    ASSERT_EQ(m.opsetFor(""), 16);
    Model up = onnxio::upgradeOpset(m, 17);
    EXPECT_EQ(up.opsetFor(""), 17);
    up.setOpset("", 16);
    EXPECT_EQ(test::canonicalText(up), test::canonicalText(m));
}

TEST(VersionConvert, CliExtendedAtOpset17OnRecOcrVerifies) {
    const std::string dir = test::tempDir("version_convert_rec");
    auto r = test::runCli({"optimize", test::realModel("ch_PP-OCRv4_rec_infer.onnx"), "-o", dir + "/o.onnx", "--level", "extended",
                           "--target-opset", "17", "--verify", "--dim", "p2o.DynamicDimension.0=1", "--dim", "p2o.DynamicDimension.1=320"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("verify: outputs match the original after every pass"), std::string::npos);
    EXPECT_EQ(r.err.find("checker"), std::string::npos) << r.err;
    Model out = onnxio::importModelFile(dir + "/o.onnx");
    EXPECT_EQ(out.opsetFor(""), 17);
    size_t layerNorms = 0;
    for (NodeId n : out.graph.nodeOrder()) layerNorms += out.graph.node(n).opType == "LayerNormalization";
    EXPECT_EQ(layerNorms, 5u);
}
