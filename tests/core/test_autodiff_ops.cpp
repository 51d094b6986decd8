// Every covered op's gradient against central finite differences in float64 (AutodiffTestSupport),
// for several shapes, broadcast cases and attribute combinations, at rtol 1e-3 in float32.
#include <gtest/gtest.h>

#include <functional>

#include "AutodiffTestSupport.h"
#include "autodiff/Autodiff.h"

using namespace passlens;
using namespace passlens::ir;
using passlens::test::expectGradientsMatch;
using passlens::test::GradCheck;

namespace {

using Body = std::function<ValueId(GraphBuilder&)>;

/// Builds `body`, reduces its result with L = Σ y·r, and checks the gradients of `wrt`.
void checkOp(const std::string& name, const Body& body, const std::vector<std::string>& wrt, const GradCheck& c = {}) {
    SCOPED_TRACE(name);
    GraphBuilder b(name);
    ValueId y = body(b);
    test::addWeightedSumLoss(b, y);
    Model m = b.finish();
    auto report = expectGradientsMatch(m, "none", wrt, c);
    EXPECT_GT(report.checked, 0u);
}

ValueId param(GraphBuilder& b, const std::string& name, std::vector<int64_t> dims, uint64_t seed, float lo = -1.f, float hi = 1.f) {
    return b.constant(name, randomFloats(std::move(dims), seed, lo, hi));
}

Attribute ints(const char* n, std::vector<int64_t> v) { return Attribute::makeInts(n, std::move(v)); }
Attribute i(const char* n, int64_t v) { return Attribute::makeInt(n, v); }
Attribute f(const char* n, float v) { return Attribute::makeFloat(n, v); }

const std::vector<std::vector<int64_t>> kShapes = {{5}, {3, 4}, {2, 3, 4}};

}  // namespace

TEST(AutodiffOps, Unary) {
    struct U { const char* op; float lo, hi; std::vector<Attribute> attrs; };
    const std::vector<U> ops = {
        {"Neg", -1, 1, {}},    {"Sqrt", 0.2f, 2, {}}, {"Exp", -1, 1, {}},     {"Log", 0.2f, 2, {}},
        {"Sin", -2, 2, {}},    {"Cos", -2, 2, {}},    {"Tanh", -2, 2, {}},    {"Sigmoid", -3, 3, {}},
        {"Relu", -1, 1, {}},   {"LeakyRelu", -1, 1, {f("alpha", 0.1f)}},      {"LeakyRelu", -1, 1, {f("alpha", -0.3f)}},
        {"Erf", -2, 2, {}},    {"Identity", -1, 1, {}}, {"Dropout", -1, 1, {}},
    };
    uint64_t seed = 1;
    for (const auto& u : ops)
        for (const auto& shape : kShapes)
            checkOp(std::string(u.op) + " " + std::to_string(shape.size()) + "-D",
                    [&](GraphBuilder& b) { return b.op(u.op, {param(b, "x", shape, seed++, u.lo, u.hi)}, u.attrs); }, {"x"});
}

TEST(AutodiffOps, SoftmaxAndLogSoftmaxOverEachAxis) {
    for (const char* op : {"Softmax", "LogSoftmax"})
        for (int64_t axis : {-1, 0, 1})
            checkOp(std::string(op) + " axis " + std::to_string(axis),
                    [&](GraphBuilder& b) { return b.op(op, {param(b, "x", {2, 3, 4}, 7, -2, 2)}, {i("axis", axis)}); }, {"x"});
}

TEST(AutodiffOps, BinaryWithBroadcasting) {
    const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
        {{3, 4}, {3, 4}}, {{2, 3, 4}, {4}}, {{3, 1}, {1, 4}}, {{2, 3, 4}, {3, 1}}, {{2, 3}, {}}, {{4}, {2, 3, 4}}};
    uint64_t seed = 20;
    for (const char* op : {"Add", "Sub", "Mul", "Div"})
        for (const auto& shapePair : shapes)
            checkOp(std::string(op) + " case " + std::to_string(seed), [&](GraphBuilder& b) {
                const auto& [sa, sb] = shapePair;
                // Div's divisor stays away from 0.
                ValueId bv = std::string(op) == "Div" ? param(b, "b", sb, seed++, 0.5f, 2.f) : param(b, "b", sb, seed++);
                return b.op(op, {param(b, "a", sa, seed++), bv});
            }, {"a", "b"});
}

TEST(AutodiffOps, PowWithConstantAndDifferentiatedExponent) {
    checkOp("Pow x^3", [](GraphBuilder& b) { return b.op("Pow", {param(b, "x", {3, 4}, 30, -1.5f, 1.5f), b.scalar("e", 3.f)}); }, {"x"});
    checkOp("Pow x^0.5", [](GraphBuilder& b) { return b.op("Pow", {param(b, "x", {3, 4}, 31, 0.3f, 2.f), b.scalar("e", 0.5f)}); }, {"x"});
    checkOp("Pow x^e both", [](GraphBuilder& b) {
        return b.op("Pow", {param(b, "x", {2, 3}, 32, 0.3f, 2.f), param(b, "e", {3}, 33, -1.f, 2.f)});
    }, {"x", "e"});
}

TEST(AutodiffOps, SumAndWhereAndExpand) {
    checkOp("Sum of 3 broadcast", [](GraphBuilder& b) {
        return b.op("Sum", {param(b, "a", {2, 3}, 40), param(b, "b", {3}, 41), param(b, "c", {2, 1}, 42)});
    }, {"a", "b", "c"});
    checkOp("Where", [](GraphBuilder& b) {
        ValueId cond = b.op("Greater", {param(b, "s", {3, 4}, 43), b.scalar("zero", 0.f)});
        return b.op("Where", {cond, param(b, "x", {3, 4}, 44), param(b, "y", {4}, 45)});
    }, {"x", "y"});
    checkOp("Expand", [](GraphBuilder& b) { return b.op("Expand", {param(b, "x", {3, 1}, 46), b.ints("shape", {2, 3, 4})}); }, {"x"});
}

TEST(AutodiffOps, MatMulBatchedBroadcastAndVectors) {
    const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
        {{3, 4}, {4, 5}}, {{2, 3, 4}, {2, 4, 5}}, {{2, 3, 4}, {4, 5}}, {{4, 5}, {2, 5, 3}}, {{2, 1, 3, 4}, {3, 4, 2}},
        {{4}, {4, 5}},    {{3, 4}, {4}},          {{4}, {4}},          {{4}, {2, 4, 3}}};
    uint64_t seed = 50;
    for (const auto& shapePair : shapes)
        checkOp("MatMul case " + std::to_string(seed), [&](GraphBuilder& b) {
            const auto& [sa, sb] = shapePair;
            return b.op("MatMul", {param(b, "a", sa, seed++), param(b, "b", sb, seed++)});
        },
                {"a", "b"});
}

TEST(AutodiffOps, GemmEveryTransposeAlphaBetaAndBias) {
    const std::vector<std::vector<int64_t>> biasShapes = {{}, {5}, {3, 5}, {1, 5}, {3, 1}};
    uint64_t seed = 70;
    for (int64_t ta : {0, 1})
        for (int64_t tb : {0, 1})
            for (size_t k = 0; k < biasShapes.size(); ++k) {
                const bool hasBias = k > 0;
                checkOp("Gemm case " + std::to_string(seed), [&](GraphBuilder& b) {
                    ValueId a = param(b, "a", ta ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{3, 4}, seed++);
                    ValueId w = param(b, "w", tb ? std::vector<int64_t>{5, 4} : std::vector<int64_t>{4, 5}, seed++);
                    std::vector<ValueId> ins{a, w};
                    if (hasBias) ins.push_back(param(b, "c", biasShapes[k], seed++));
                    return b.op("Gemm", ins, {i("transA", ta), i("transB", tb), f("alpha", 0.5f), f("beta", k == 2 ? 2.f : 1.f)});
                }, hasBias ? std::vector<std::string>{"a", "w", "c"} : std::vector<std::string>{"a", "w"});
            }
}

TEST(AutodiffOps, ConvPadsStridesDilationsGroups) {
    struct C { std::vector<int64_t> x, w; std::vector<Attribute> attrs; };
    const std::vector<C> cases = {
        {{1, 2, 5, 5}, {3, 2, 3, 3}, {}},
        {{2, 2, 5, 6}, {3, 2, 3, 3}, {ints("pads", {1, 1, 1, 1})}},
        {{1, 2, 7, 7}, {2, 2, 3, 3}, {ints("strides", {2, 2}), ints("pads", {1, 0, 1, 1})}},
        {{1, 2, 8, 7}, {2, 2, 3, 2}, {ints("strides", {2, 3})}},  // stride leaves rows unread at the end
        {{1, 2, 7, 7}, {2, 2, 2, 2}, {ints("dilations", {2, 2}), ints("pads", {1, 1, 1, 1})}},
        {{1, 4, 5, 5}, {4, 2, 3, 3}, {i("group", 2), ints("pads", {1, 1, 1, 1})}},
        {{2, 4, 6, 6}, {4, 1, 3, 3}, {i("group", 4), ints("strides", {2, 2}), ints("pads", {1, 1, 0, 0})}},
        {{1, 2, 6, 6}, {4, 2, 3, 3}, {ints("strides", {2, 2}), ints("dilations", {2, 1}), ints("pads", {2, 1, 1, 0})}},
        {{1, 2, 5, 5}, {2, 2, 3, 3}, {Attribute::makeString("auto_pad", "SAME_UPPER"), ints("strides", {2, 2})}},
    };
    uint64_t seed = 100;
    for (const auto& c : cases)
        checkOp("Conv case " + std::to_string(seed), [&](GraphBuilder& b) {
            return b.op("Conv", {param(b, "x", c.x, seed++), param(b, "w", c.w, seed++), param(b, "bias", {c.w[0]}, seed++)}, c.attrs);
        }, {"x", "w", "bias"});
}

TEST(AutodiffOps, MaxPoolWindows) {
    const std::vector<std::vector<Attribute>> cases = {
        {ints("kernel_shape", {2, 2}), ints("strides", {2, 2})},
        {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})},  // overlapping, padded
        {ints("kernel_shape", {3, 2}), ints("strides", {1, 2})},
        {ints("kernel_shape", {2, 2}), ints("dilations", {2, 2}), ints("pads", {1, 0, 0, 1})},
    };
    uint64_t seed = 130;
    for (const auto& attrs : cases)
        checkOp("MaxPool case " + std::to_string(seed), [&](GraphBuilder& b) { return b.op("MaxPool", {param(b, "x", {2, 3, 6, 6}, seed++)}, attrs); }, {"x"});
}

TEST(AutodiffOps, AveragePoolWithAndWithoutPadCounting) {
    const std::vector<std::vector<Attribute>> cases = {
        {ints("kernel_shape", {2, 2}), ints("strides", {2, 2})},
        {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})},
        {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1}), i("count_include_pad", 1)},
        {ints("kernel_shape", {3, 2}), ints("pads", {0, 1, 1, 0})},
    };
    uint64_t seed = 140;
    for (const auto& attrs : cases)
        checkOp("AveragePool case " + std::to_string(seed), [&](GraphBuilder& b) { return b.op("AveragePool", {param(b, "x", {2, 3, 6, 5}, seed++)}, attrs); }, {"x"});
    checkOp("GlobalAveragePool", [](GraphBuilder& b) { return b.op("GlobalAveragePool", {param(b, "x", {2, 3, 4, 5}, 149)}); }, {"x"});
}

TEST(AutodiffOps, BatchNormalizationInferenceEveryInput) {
    for (const auto& shape : std::vector<std::vector<int64_t>>{{2, 3, 4, 4}, {4, 3}})
        checkOp("BatchNormalization", [&](GraphBuilder& b) {
            return b.op("BatchNormalization", {param(b, "x", shape, 150), param(b, "scale", {3}, 151, 0.5f, 1.5f), param(b, "bias", {3}, 152),
                                               param(b, "mean", {3}, 153), param(b, "var", {3}, 154, 0.5f, 2.f)},
                        {f("epsilon", 1e-3f)});
        }, {"x", "scale", "bias", "mean", "var"});
}

TEST(AutodiffOps, LayerNormalizationAxes) {
    checkOp("LayerNormalization last axis", [](GraphBuilder& b) {
        return b.op("LayerNormalization", {param(b, "x", {2, 3, 8}, 160, -2, 2), param(b, "scale", {8}, 161, 0.5f, 1.5f), param(b, "bias", {8}, 162)});
    }, {"x", "scale", "bias"});
    checkOp("LayerNormalization axis 1", [](GraphBuilder& b) {
        return b.op("LayerNormalization", {param(b, "x", {2, 3, 4}, 163, -2, 2), param(b, "scale", {3, 4}, 164, 0.5f, 1.5f)},
                    {i("axis", 1), f("epsilon", 1e-4f)});
    }, {"x", "scale"});
}

TEST(AutodiffOps, ReshapesAndTranspose) {
    checkOp("Reshape", [](GraphBuilder& b) { return b.op("Reshape", {param(b, "x", {2, 3, 4}, 170), b.ints("s", {4, -1})}); }, {"x"});
    checkOp("Flatten", [](GraphBuilder& b) { return b.op("Flatten", {param(b, "x", {2, 3, 2, 2}, 171)}, {i("axis", 2)}); }, {"x"});
    checkOp("Squeeze", [](GraphBuilder& b) { return b.op("Squeeze", {param(b, "x", {2, 1, 3, 1}, 172), b.ints("axes", {1, 3})}); }, {"x"});
    checkOp("Unsqueeze", [](GraphBuilder& b) { return b.op("Unsqueeze", {param(b, "x", {2, 3}, 173), b.ints("axes", {0, 3})}); }, {"x"});
    checkOp("Transpose", [](GraphBuilder& b) { return b.op("Transpose", {param(b, "x", {2, 3, 4}, 174)}, {ints("perm", {2, 0, 1})}); }, {"x"});
    checkOp("Transpose default", [](GraphBuilder& b) { return b.op("Transpose", {param(b, "x", {2, 3, 4}, 175)}); }, {"x"});
}

TEST(AutodiffOps, ConcatSplitSlice) {
    checkOp("Concat", [](GraphBuilder& b) {
        return b.op("Concat", {param(b, "a", {2, 1, 3}, 180), param(b, "b", {2, 4, 3}, 181), param(b, "c", {2, 2, 3}, 182)}, {i("axis", -2)});
    }, {"a", "b", "c"});
    checkOp("Split, both halves used", [](GraphBuilder& b) {
        auto parts = b.opMulti("Split", {param(b, "x", {2, 6}, 183), b.ints("split", {2, 4})}, 2, {i("axis", 1)});
        return b.op("Mul", {b.op("ReduceSum", {parts[0], b.ints("ax", {1})}), b.op("ReduceSum", {parts[1], b.ints("ax2", {1})})});
    }, {"x"});
    checkOp("Split, one half unused", [](GraphBuilder& b) {
        auto parts = b.opMulti("Split", {param(b, "x", {3, 4}, 184)}, 2, {i("axis", 1)});
        return b.op("Tanh", {parts[1]});
    }, {"x"});
    checkOp("Slice steps 1", [](GraphBuilder& b) {
        return b.op("Slice", {param(b, "x", {4, 5, 6}, 185), b.ints("st", {1, -4}), b.ints("en", {3, 100}), b.ints("ax", {0, 2})});
    }, {"x"});
    checkOp("Slice steps 2 and -1", [](GraphBuilder& b) {
        return b.op("Slice", {param(b, "x", {4, 5, 6}, 186), b.ints("st", {0, -1}), b.ints("en", {5, 1}), b.ints("ax", {1, 2}), b.ints("sp", {2, -2})});
    }, {"x"});
}

TEST(AutodiffOps, GatherRepeatedIndicesAnyAxis) {
    checkOp("Gather axis 0 (embedding)", [](GraphBuilder& b) {
        return b.op("Gather", {param(b, "table", {5, 3}, 190), b.constant("idx", int64Tensor({2, 3}, {0, 4, 0, 2, 2, -1}))});
    }, {"table"});
    checkOp("Gather axis 1", [](GraphBuilder& b) {
        return b.op("Gather", {param(b, "x", {2, 4, 3}, 191), b.constant("idx", int64Tensor({3}, {3, 1, 3}))}, {i("axis", 1)});
    }, {"x"});
    checkOp("Gather scalar index", [](GraphBuilder& b) {
        return b.op("Gather", {param(b, "x", {2, 4, 3}, 192), b.constant("idx", int64Tensor({}, {2}))}, {i("axis", 2)});
    }, {"x"});
}

TEST(AutodiffOps, ReduceSumAndMean) {
    for (const char* op : {"ReduceSum", "ReduceMean"})
        for (int64_t keep : {0, 1}) {
            checkOp(std::string(op) + " axes", [&](GraphBuilder& b) {
                ValueId x = param(b, "x", {2, 3, 4}, 200);
                if (std::string(op) == "ReduceSum") return b.op(op, {x, b.ints("axes", {0, -1})}, {i("keepdims", keep)});
                return b.op(op, {x}, {ints("axes", {0, -1}), i("keepdims", keep)});
            }, {"x"});
            checkOp(std::string(op) + " all", [&](GraphBuilder& b) { return b.op(op, {param(b, "x", {2, 3, 4}, 201)}, {i("keepdims", keep)}); }, {"x"});
        }
}

TEST(AutodiffOps, CastRoundTripKeepsTheGradient) {
    checkOp("Cast", [](GraphBuilder& b) {
        ValueId d = b.op("Cast", {param(b, "x", {3, 4}, 210)}, {i("to", int64_t(DataType::Double))});
        return b.op("Cast", {b.op("Mul", {d, d})}, {i("to", int64_t(DataType::Float))});
    }, {"x"});
}

TEST(AutodiffOps, EveryIssueOpHasARule) {
    const std::vector<std::string> issueOps = {
        "Add", "Sub", "Mul", "Div", "Neg", "Pow", "Sqrt", "Exp", "Log", "Sin", "Cos", "Tanh", "Sigmoid", "Relu", "LeakyRelu",
        "Erf", "Softmax", "LogSoftmax", "MatMul", "Gemm", "Conv", "MaxPool", "AveragePool", "GlobalAveragePool",
        "BatchNormalization", "LayerNormalization", "Reshape", "Flatten", "Transpose", "Concat", "Split", "Slice", "Gather",
        "Squeeze", "Unsqueeze", "ReduceSum", "ReduceMean", "Identity", "Dropout"};
    for (const auto& op : issueOps) EXPECT_TRUE(autodiff::hasGradientRule("", op)) << op;
    EXPECT_FALSE(autodiff::hasGradientRule("com.microsoft", "Gelu"));
}
