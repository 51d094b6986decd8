// Golden tests for the interpreter: one behaviour each, with negative cases.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "eval/TensorOps.h"
#include "examples/Builder.h"
#include "ir/Error.h"

namespace passlens {
namespace {

using namespace passlens::ir;

std::vector<float> floats(const TensorPtr& t) { return eval::toFloats(*t); }

TEST(EvalKernels, AddBroadcastsLikeNumPy) {
    GraphBuilder b("add");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto y = b.constant("y", floatTensor({3}, {10, 20, 30}));
    b.output(b.op("Add", {x, y}));
    Model m = b.finish();
    auto out = eval::run(m, {floatTensor({2, 3}, {1, 2, 3, 4, 5, 6})});
    EXPECT_EQ(out[0]->dims, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(floats(out[0]), (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST(EvalKernels, IncompatibleBroadcastIsBadInput) {
    GraphBuilder b("add");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto y = b.constant("y", floatTensor({2}, {1, 2}));
    b.output(b.op("Add", {x, y}));
    Model m = b.model();  // skip shape inference, which would reject it
    try {
        eval::run(m, {floatTensor({2, 3}, {1, 2, 3, 4, 5, 6})});
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::BadInput);
        EXPECT_NE(std::string(e.what()).find("broadcast"), std::string::npos) << e.what();
    }
}

TEST(EvalKernels, ConvMatchesNaiveLoop) {
    GraphBuilder b("conv");
    auto x = b.input("x", DataType::Float, {1, 4, 7, 6});
    auto wt = randomFloats({6, 2, 3, 3}, 3);
    auto bt = randomFloats({6}, 4);
    auto w = b.constant("w", wt);
    auto bias = b.constant("b", bt);
    b.output(b.op("Conv", {x, w, bias}, {Attribute::makeInts("pads", {1, 0, 1, 2}), Attribute::makeInts("strides", {2, 1}),
                                          Attribute::makeInt("group", 2)}));
    Model m = b.finish();
    auto xt = randomFloats({1, 4, 7, 6}, 5);
    auto out = eval::run(m, {xt});
    // output: H = (7+2-3)/2+1 = 4, W = (6+2-3)/1+1 = 6
    ASSERT_EQ(out[0]->dims, (std::vector<int64_t>{1, 6, 4, 6}));
    auto X = floats(xt), W = floats(wt), B = floats(bt), Y = floats(out[0]);
    for (int m2 = 0; m2 < 6; ++m2)
        for (int oh = 0; oh < 4; ++oh)
            for (int ow = 0; ow < 6; ++ow) {
                double s = B[m2];
                const int g = m2 / 3;
                for (int c = 0; c < 2; ++c)
                    for (int kh = 0; kh < 3; ++kh)
                        for (int kw = 0; kw < 3; ++kw) {
                            const int ih = oh * 2 - 1 + kh, iw = ow - 0 + kw;
                            if (ih < 0 || ih >= 7 || iw < 0 || iw >= 6) continue;
                            s += X[((g * 2 + c) * 7 + ih) * 6 + iw] * W[((m2 * 2 + c) * 3 + kh) * 3 + kw];
                        }
                EXPECT_NEAR(Y[(m2 * 4 + oh) * 6 + ow], s, 1e-4) << m2 << "," << oh << "," << ow;
            }
}

TEST(EvalKernels, DepthwiseConvMatchesNaiveLoop) {
    GraphBuilder b("dw");
    auto x = b.input("x", DataType::Float, {1, 3, 9, 8});
    auto wt = randomFloats({3, 1, 3, 3}, 13);
    auto w = b.constant("w", wt);
    b.output(b.op("Conv", {x, w}, {Attribute::makeInts("pads", {2, 1, 0, 2}), Attribute::makeInts("strides", {2, 2}),
                                    Attribute::makeInts("dilations", {1, 2}), Attribute::makeInt("group", 3)}));
    Model m = b.finish();
    auto xt = randomFloats({1, 3, 9, 8}, 14);
    auto out = eval::run(m, {xt});
    // H = (9+2-3)/2+1 = 5, W = (8+3-5)/2+1 = 4
    ASSERT_EQ(out[0]->dims, (std::vector<int64_t>{1, 3, 5, 4}));
    auto X = floats(xt), W = floats(wt), Y = floats(out[0]);
    for (int c = 0; c < 3; ++c)
        for (int oh = 0; oh < 5; ++oh)
            for (int ow = 0; ow < 4; ++ow) {
                double s = 0;
                for (int kh = 0; kh < 3; ++kh)
                    for (int kw = 0; kw < 3; ++kw) {
                        const int ih = oh * 2 - 2 + kh, iw = ow * 2 - 1 + kw * 2;
                        if (ih < 0 || ih >= 9 || iw < 0 || iw >= 8) continue;
                        s += X[(c * 9 + ih) * 8 + iw] * W[(c * 3 + kh) * 3 + kw];
                    }
                EXPECT_NEAR(Y[(c * 5 + oh) * 4 + ow], s, 1e-4) << c << "," << oh << "," << ow;
            }
}

TEST(EvalKernels, ZeroStrideIsBadInputNotACrash) {
    GraphBuilder b("pool");
    auto x = b.input("x", DataType::Float, {1, 1, 4, 4});
    b.output(b.op("MaxPool", {x}, {Attribute::makeInts("kernel_shape", {2, 2}), Attribute::makeInts("strides", {0, 1})}));
    Model m = b.model();
    try {
        eval::run(m, {randomFloats({1, 1, 4, 4}, 1)});
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::BadInput);
        EXPECT_NE(std::string(e.what()).find("strides"), std::string::npos) << e.what();
    }
}

TEST(EvalKernels, UnsupportedOpNamesOpDomainAndOpset) {
    GraphBuilder b("custom");
    auto x = b.input("x", DataType::Float, {2});
    b.output(b.op("FancyOp", {x}, {}, "f", "com.example"));
    Model m = b.model();
    m.setOpset("com.example", 3);
    std::string why;
    EXPECT_FALSE(eval::isSupported(m, m.graph.node(m.graph.nodeOrder()[0]), &why));
    EXPECT_NE(why.find("FancyOp"), std::string::npos);
    try {
        eval::run(m, {floatTensor({2}, {1, 2})});
        FAIL() << "expected Unsupported";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
        const std::string msg = e.what();
        EXPECT_NE(msg.find("FancyOp"), std::string::npos) << msg;
        EXPECT_NE(msg.find("com.example"), std::string::npos) << msg;
        EXPECT_NE(msg.find("opset 3"), std::string::npos) << msg;
    }
}

TEST(EvalKernels, UnsupportedAttributeIsReportedBeforeRunning) {
    GraphBuilder b("resize");
    auto x = b.input("x", DataType::Float, {1, 1, 2, 2});
    auto roi = b.constant("roi", floatTensor({0}, {}));
    auto sc = b.constant("scales", floatTensor({4}, {1, 1, 2, 2}));
    b.output(b.op("Resize", {x, roi, sc}, {Attribute::makeString("coordinate_transformation_mode", "tf_crop_and_resize")}));
    Model m = b.finish();
    std::string why;
    EXPECT_FALSE(eval::isModelSupported(m, &why));
    EXPECT_NE(why.find("tf_crop_and_resize"), std::string::npos) << why;
}

TEST(EvalKernels, IfReadsOuterScopeValues) {
    GraphBuilder b("if");
    auto cond = b.input("cond", DataType::Bool, {});
    (void)b.input("x", DataType::Float, {2});
    auto makeBranch = [&](const std::string& op) {
        auto g = std::make_shared<Graph>();
        g->name = op;
        ValueId outer = g->addOuterScopeValue("x");
        ValueId out = g->addValue(op + "_out", TypeInfo::tensor(DataType::Float));
        g->addNode(op, {outer, outer}, {out});
        g->markOutput(out);
        return g;
    };
    b.output(b.op("If", {cond}, {Attribute::makeGraph("then_branch", makeBranch("Add")), Attribute::makeGraph("else_branch", makeBranch("Mul"))}));
    Model m = b.model();
    auto xt = floatTensor({2}, {3, 4});
    auto yes = eval::run(m, {makeTensorOf<uint8_t>(DataType::Bool, {}, {1}), xt});
    auto no = eval::run(m, {makeTensorOf<uint8_t>(DataType::Bool, {}, {0}), xt});
    EXPECT_EQ(floats(yes[0]), (std::vector<float>{6, 8}));
    EXPECT_EQ(floats(no[0]), (std::vector<float>{9, 16}));
}

TEST(EvalKernels, ModelLocalFunctionIsEvaluated) {
    GraphBuilder b("fn");
    auto x = b.input("x", DataType::Float, {3});
    b.output(b.op("DoubleRelu", {x}, {}, "call", "local"));
    Model m = b.model();
    m.setOpset("local", 1);
    Function f;
    f.name = "DoubleRelu";
    f.domain = "local";
    f.opsetImports = {{"", 17}};
    f.body = std::make_shared<Graph>();
    ValueId in = f.body->addValue("a");
    f.body->setInputs({in});
    ValueId r = f.body->addValue("r");
    f.body->addNode("Relu", {in}, {r});
    ValueId o = f.body->addValue("o");
    f.body->addNode("Add", {r, r}, {o});
    f.body->markOutput(o);
    m.functions.push_back(f);
    EXPECT_TRUE(eval::isModelSupported(m));
    auto out = eval::run(m, {floatTensor({3}, {-1, 2, 3})});
    EXPECT_EQ(floats(out[0]), (std::vector<float>{0, 4, 6}));
}

TEST(EvalKernels, EvalNodeFoldsOneNode) {
    GraphBuilder b("fold");
    auto x = b.input("x", DataType::Float, {2, 2});
    b.output(b.op("Transpose", {x}, {Attribute::makeInts("perm", {1, 0})}));
    Model m = b.finish();
    auto out = eval::evalNode(m, m.graph, m.graph.nodeOrder()[0], {floatTensor({2, 2}, {1, 2, 3, 4})});
    EXPECT_EQ(floats(out[0]), (std::vector<float>{1, 3, 2, 4}));
}

TEST(EvalKernels, Float16ComputesInFloat) {
    GraphBuilder b("half");
    auto x = b.input("x", DataType::Float16, {3});
    b.output(b.op("Sigmoid", {x}));
    Model m = b.finish();
    auto in = eval::castTensor(*floatTensor({3}, {0, 2, -2}), DataType::Float16);
    auto out = eval::run(m, {in});
    EXPECT_EQ(out[0]->dtype, DataType::Float16);
    auto v = floats(out[0]);
    EXPECT_NEAR(v[0], 0.5, 1e-3);
    EXPECT_NEAR(v[1], 1 / (1 + std::exp(-2.0)), 1e-3);
}

TEST(EvalKernels, WrongInputTypeIsBadInput) {
    GraphBuilder b("relu");
    auto x = b.input("x", DataType::Float, {2});
    b.output(b.op("Relu", {x}));
    Model m = b.finish();
    EXPECT_THROW(eval::run(m, {makeTensorOf<int64_t>(DataType::Int64, {2}, {1, 2})}), Error);
    EXPECT_THROW(eval::run(m, {floatTensor({3}, {1, 2, 3})}), Error);
    EXPECT_THROW(eval::run(m, {}), Error);
}

TEST(EvalKernels, CancelStopsTheRun) {
    GraphBuilder b("relu");
    auto x = b.input("x", DataType::Float, {2});
    b.output(b.op("Relu", {x}));
    Model m = b.finish();
    std::atomic<bool> cancel{true};
    eval::RunOptions o;
    o.cancel = &cancel;
    try {
        eval::run(m, {floatTensor({2}, {1, 2})}, o);
        FAIL() << "expected Cancelled";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Cancelled);
    }
}

TEST(EvalKernels, RandomInputsAreSeededAndPinDims) {
    GraphBuilder b("sym");
    auto x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("batch"), Dim::of(4)});
    b.output(b.op("Relu", {x}));
    Model m = b.finish();
    auto a = eval::randomInputs(m, 42, {{"batch", 3}});
    auto a2 = eval::randomInputs(m, 42, {{"batch", 3}});
    auto c = eval::randomInputs(m, 43, {{"batch", 3}});
    EXPECT_EQ(a[0]->dims, (std::vector<int64_t>{3, 4}));
    EXPECT_TRUE(a[0]->sameContents(*a2[0]));
    EXPECT_FALSE(a[0]->sameContents(*c[0]));
    EXPECT_EQ(eval::randomInputs(m, 1)[0]->dims, (std::vector<int64_t>{1, 4}));
    EXPECT_EQ(eval::unpinnedDims(m, {}), (std::vector<std::string>{"batch"}));
    for (float v : floats(a[0])) EXPECT_TRUE(v >= -1 && v < 1);
}

TEST(EvalKernels, CompareOutputsUsesAtolPlusRtol) {
    GraphBuilder b("id");
    auto x = b.input("x", DataType::Float, {2});
    b.output(b.op("Identity", {x}));
    Model m = b.finish();
    auto ref = floatTensor({2}, {1.0f, 100.0f});
    auto close = floatTensor({2}, {1.0f, 100.009f});
    auto far = floatTensor({2}, {1.0f, 100.2f});
    EXPECT_TRUE(eval::compareOutputs(m, {close}, {ref}, 1e-4, 1e-5)[0].ok);
    auto d = eval::compareOutputs(m, {far}, {ref}, 1e-4, 1e-5)[0];
    EXPECT_FALSE(d.ok);
    EXPECT_NEAR(d.maxAbs, 0.2, 1e-3);
    EXPECT_TRUE(eval::compareOutputs(m, {floatTensor({1}, {1})}, {ref}, 1, 1)[0].shapeMismatch);
}

TEST(EvalCli, RunPrintsOutputsAndWritesTestData) {
    const auto model = test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx");
    const auto dir = test::tempDir("eval_cli_run");
    auto r = test::runCli({"run", model, "--dim", "p2o.DynamicDimension.1=48", "--dim", "p2o.DynamicDimension.2=64", "--seed", "3", "--out-dir", dir});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("softmax_0.tmp_0: float32[1,2]"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("p2o.DynamicDimension.0"), std::string::npos) << "unpinned dim should be reported: " << r.err;
    // re-running from the written inputs reproduces the same outputs
    auto r2 = test::runCli({"run", model, "--input-dir", dir});
    ASSERT_EQ(r2.exitCode, 0) << r2.err;
    EXPECT_EQ(r.out, r2.out);
}

TEST(EvalCli, BadArgumentsExitTwo) {
    const auto model = test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx");
    EXPECT_EQ(test::runCli({"run", model, "--seed", "abc"}).exitCode, 2);
    EXPECT_EQ(test::runCli({"run", model, "--input-dir", "/nonexistent/dir"}).exitCode, 2);
    EXPECT_EQ(test::runCli({"verify", model}).exitCode, 2);
    EXPECT_EQ(test::runCli({"verify", model, test::realModel("silero_vad_v5.onnx")}).exitCode, 2);
}

TEST(EvalCli, VerifyDetectsADifferentModel) {
    // Two testdata models with the same interface but different ops: Relu vs. LeakyRelu.
    const auto dir = test::tempDir("eval_cli_verify");
    const std::string a = test::testdataDir() + "/node/test_relu/model.onnx";
    const std::string b = test::testdataDir() + "/node/test_leakyrelu/model.onnx";
    auto r = test::runCli({"verify", a, b});
    EXPECT_EQ(r.exitCode, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
    EXPECT_EQ(test::runCli({"verify", a, a}).exitCode, 0);
    (void)dir;
}

}  // namespace
}  // namespace passlens
