// A model written after `layout --target-layout NHWC` (ops in passlens.nhwc) re-imports with the
// importer's op validation on; unknown ops or versions of that domain are still rejected. CLI
// round trip: optimize -> file -> run / verify / optimize back to NCHW.
#include <gtest/gtest.h>

#include "examples/Builder.h"
#include "ir/Error.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "passes/layout/LayoutPasses.h"
#include "TestSupport.h"
#include "test_layout_support.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

Model smallCnn() {
    GraphBuilder b("cnn", 13);
    auto x = b.input("x", DataType::Float, {1, 3, 8, 8});
    auto c = b.op("Conv", {x, b.constant("w", randomFloats({4, 3, 3, 3}, 1))}, {Attribute::makeInts("pads", {1, 1, 1, 1})});
    auto p = b.op("MaxPool", {b.op("Relu", {c})},
                  {Attribute::makeInts("kernel_shape", {2, 2}), Attribute::makeInts("strides", {2, 2})});
    b.output(b.op("GlobalAveragePool", {p}));
    return b.finish();
}

Model toNhwc(const Model& m) {
    std::vector<std::unique_ptr<passes::Pass>> ps;
    ps.push_back(passes::makeLayoutPass());
    ps.push_back(passes::makeTransposePass());
    return test::optimizeAndCompare(m, ps, "NHWC");
}

/// Exports `m` to `path`, then imports the file with op validation on.
Model roundTrip(const Model& m, const std::string& path) {
    onnxio::exportModelFile(m, path);
    onnxio::ImportOptions io;
    io.validateOps = true;
    return onnxio::importModelFile(path, io);
}

std::string importError(const Model& m, const std::string& path) {
    try {
        roundTrip(m, path);
    } catch (const passlens::Error& e) {
        return e.what();
    }
    return {};
}

}  // namespace

TEST(LayoutReimport, NhwcModelImportsWithValidationAndRuns) {
    Model m = smallCnn();
    Model nhwc = toNhwc(m);
    ASSERT_EQ(passes::nonStandardDomains(nhwc), std::vector<std::string>{passes::kNhwcDomain});
    Model back = roundTrip(nhwc, test::tempDir("layout_reimport_ok") + "/cnn_nhwc.onnx");
    EXPECT_EQ(back.opsetFor(passes::kNhwcDomain), passes::kNhwcDomainVersion);
    EXPECT_EQ(test::countOp(back, "Conv"), 1u);
    EXPECT_EQ(passes::nonStandardDomains(back), std::vector<std::string>{passes::kNhwcDomain});
    // The re-imported model computes what the original does.
    auto inputs = eval::randomInputs(m, 3);
    auto ref = eval::run(m, inputs, {});
    auto got = eval::run(back, inputs, {});
    for (const auto& d : eval::compareOutputs(m, got, ref, 1e-4, 1e-5)) EXPECT_TRUE(d.ok) << d.name;
}

TEST(LayoutReimport, UnknownOpOfTheDomainRejected) {
    Model nhwc = toNhwc(smallCnn());
    for (NodeId n : nhwc.graph.nodeOrder())
        if (nhwc.graph.node(n).domain == passes::kNhwcDomain && nhwc.graph.node(n).opType == "MaxPool")
            nhwc.graph.node(n).opType = "MaxPoolFast";
    const std::string path = test::tempDir("layout_reimport_unknown") + "/unknown_op.onnx";
    const std::string err = importError(nhwc, path);
    EXPECT_NE(err.find("unknown operator 'MaxPoolFast' in domain 'passlens.nhwc'"), std::string::npos) << err;
    // Without validation the file still loads (the viewer can show it).
    onnxio::ImportOptions lax;
    lax.validateOps = false;
    EXPECT_NO_THROW(onnxio::importModelFile(path, lax));
}

TEST(LayoutReimport, NewerDomainVersionRejected) {
    Model nhwc = toNhwc(smallCnn());
    nhwc.setOpset(passes::kNhwcDomain, passes::kNhwcDomainVersion + 1);
    const std::string err = importError(nhwc, test::tempDir("layout_reimport_newer") + "/newer_version.onnx");
    EXPECT_NE(err.find("domain 'passlens.nhwc'"), std::string::npos) << err;
}

TEST(LayoutReimport, CliOptimizeThenRunAndVerifyTheFile) {
    const std::string dir = test::tempDir("layout_reimport_cli");
    const std::string original = test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx");
    const std::string nhwc = dir + "/cls_nhwc.onnx", nchw = dir + "/cls_nchw.onnx";
    const std::vector<std::string> dims = {"--dim", "p2o.DynamicDimension.0=1", "--dim", "p2o.DynamicDimension.1=48",
                                           "--dim", "p2o.DynamicDimension.2=96"};
    auto with = [&](std::vector<std::string> args) {
        args.insert(args.end(), dims.begin(), dims.end());
        return args;
    };
    auto opt = test::runCli({"optimize", original, "-o", nhwc, "--level", "none", "--passes", "layout,transpose",
                             "--target-layout", "NHWC"});
    ASSERT_EQ(opt.exitCode, 0) << opt.err;
    auto info = test::runCli({"info", nhwc});
    EXPECT_EQ(info.exitCode, 0) << info.err;
    EXPECT_NE(info.out.find("passlens.nhwc=1"), std::string::npos) << info.out;
    auto run = test::runCli(with({"run", nhwc}));
    EXPECT_EQ(run.exitCode, 0) << run.err;
    auto verify = test::runCli(with({"verify", original, nhwc, "--rtol", "1e-4"}));
    EXPECT_EQ(verify.exitCode, 0) << verify.out << verify.err;
    EXPECT_NE(verify.out.find("outputs match"), std::string::npos) << verify.out;
    // And back to standard ONNX from the file.
    auto back = test::runCli({"optimize", nhwc, "-o", nchw, "--level", "none", "--passes", "layout,transpose",
                              "--target-layout", "NCHW"});
    ASSERT_EQ(back.exitCode, 0) << back.err;
    auto info2 = test::runCli({"info", nchw});
    EXPECT_EQ(info2.out.find("passlens.nhwc"), std::string::npos) << info2.out;
    auto verify2 = test::runCli(with({"verify", original, nchw, "--rtol", "1e-4"}));
    EXPECT_EQ(verify2.exitCode, 0) << verify2.out << verify2.err;
}
