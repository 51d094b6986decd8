// The gradient rules added for real PyTorch exports against central finite differences in float64
// (AutodiffTestSupport), one op at a time: HardSwish, HardSigmoid, Gelu (opset 20, both forms),
// Clip, Min, Max, Abs, Reciprocal, Pad, Tile, Resize, ReduceMax/Min/L2/SumSquare, CumSum,
// InstanceNormalization, BatchNormalization in training mode, Einsum, MaxPool with ceil_mode,
// ConvTranspose, and Dropout whose ratio is a
// constant 0 in training mode (the refusal of a real ratio too). Random inputs almost surely miss the kinks
// (HardSwish at ±3, Clip's bounds, Abs at 0, Min/Max ties) by more than the difference step.
#include <gtest/gtest.h>

#include <functional>

#include "AutodiffTestSupport.h"
#include "autodiff/Autodiff.h"
#include "ir/Error.h"

using namespace passlens;
using namespace passlens::ir;
using passlens::test::expectGradientsMatch;

namespace {

using Body = std::function<ValueId(GraphBuilder&)>;

/// Builds `body` at `opset`, reduces its result with L = Σ y·r, and checks the gradients of `wrt`.
void checkOp(const std::string& name, const Body& body, const std::vector<std::string>& wrt, int64_t opset = 17) {
    SCOPED_TRACE(name);
    GraphBuilder b(name, opset);
    ValueId y = body(b);
    test::addWeightedSumLoss(b, y);
    auto report = expectGradientsMatch(b.finish(), "none", wrt);
    EXPECT_GT(report.checked, 0u);
}

ValueId param(GraphBuilder& b, const std::string& name, std::vector<int64_t> dims, uint64_t seed, float lo = -1.f, float hi = 1.f) {
    return b.constant(name, randomFloats(std::move(dims), seed, lo, hi));
}

/// training_mode = true, a bool scalar initializer.
ValueId trainingTrue(GraphBuilder& b) { return b.constant("training", makeTensorOf<uint8_t>(DataType::Bool, {}, {1})); }

Attribute i(const char* n, int64_t v) { return Attribute::makeInt(n, v); }
Attribute f(const char* n, float v) { return Attribute::makeFloat(n, v); }
Attribute s(const char* n, const char* v) { return Attribute::makeString(n, v); }

}  // namespace

TEST(AutodiffOpsExports, PiecewiseActivations) {
    checkOp("HardSwish", [](GraphBuilder& b) { return b.op("HardSwish", {param(b, "x", {4, 6}, 300, -5, 5)}); }, {"x"});
    checkOp("HardSigmoid", [](GraphBuilder& b) {
        return b.op("HardSigmoid", {param(b, "x", {4, 6}, 301, -4, 4)}, {f("alpha", 0.2f), f("beta", 0.5f)});
    }, {"x"});
    checkOp("HardSigmoid torch (1/6, 1/2)", [](GraphBuilder& b) {
        return b.op("HardSigmoid", {param(b, "x", {4, 6}, 302, -5, 5)}, {f("alpha", 1.f / 6), f("beta", 0.5f)});
    }, {"x"});
    checkOp("Abs", [](GraphBuilder& b) { return b.op("Abs", {param(b, "x", {3, 5}, 303)}); }, {"x"});
    checkOp("Reciprocal", [](GraphBuilder& b) { return b.op("Reciprocal", {param(b, "x", {3, 5}, 304, 0.5f, 2.f)}); }, {"x"});
}

TEST(AutodiffOpsExports, GeluOpset20BothForms) {
    for (const char* approximate : {"none", "tanh"})
        checkOp(std::string("Gelu ") + approximate, [&](GraphBuilder& b) {
            return b.op("Gelu", {param(b, "x", {3, 5}, 310, -3, 3)}, {s("approximate", approximate)});
        }, {"x"}, 20);
}

TEST(AutodiffOpsExports, ClipMinMax) {
    checkOp("Clip both bounds", [](GraphBuilder& b) {
        return b.op("Clip", {param(b, "x", {4, 5}, 320, -2, 2), b.scalar("lo", -0.5f), b.scalar("hi", 0.7f)});
    }, {"x"});
    checkOp("Clip min only (ReLU6-style lower half)", [](GraphBuilder& b) {
        return b.op("Clip", {param(b, "x", {4, 5}, 321, -2, 2), b.scalar("lo", 0.f)});
    }, {"x"});
    for (const char* op : {"Min", "Max"})
        checkOp(std::string(op) + " broadcast", [&](GraphBuilder& b) {
            return b.op(op, {param(b, "a", {2, 3, 4}, 322), param(b, "b", {3, 1}, 323)});
        }, {"a", "b"});
}

TEST(AutodiffOpsExports, PadAndTile) {
    checkOp("Pad constant, positive pads", [](GraphBuilder& b) {
        return b.op("Pad", {param(b, "x", {2, 3, 4}, 330), b.ints("pads", {0, 1, 2, 1, 0, 3})});
    }, {"x"});
    checkOp("Pad constant, negative pads crop", [](GraphBuilder& b) {
        return b.op("Pad", {param(b, "x", {2, 3, 4}, 331), b.ints("pads", {0, -1, 1, 0, 1, -2})});
    }, {"x"});
    checkOp("Tile", [](GraphBuilder& b) { return b.op("Tile", {param(b, "x", {2, 1, 3}, 332), b.ints("repeats", {2, 3, 1})}); }, {"x"});
}

TEST(AutodiffOpsExports, ResizeNearestAndLinear) {
    checkOp("Resize nearest ×2 (scales)", [](GraphBuilder& b) {
        ValueId scales = b.constant("scales", floatTensor({4}, {1.f, 1.f, 2.f, 2.f}));
        return b.op("Resize", {param(b, "x", {1, 2, 3, 4}, 340), b.constant("roi", floatTensor({0}, {})), scales},
                    {s("mode", "nearest")});
    }, {"x"});
    checkOp("Resize linear to 5×7 (sizes, half_pixel)", [](GraphBuilder& b) {
        return b.op("Resize", {param(b, "x", {1, 2, 3, 4}, 341), b.constant("roi", floatTensor({0}, {})), b.constant("scales", floatTensor({0}, {})),
                               b.ints("sizes", {1, 2, 5, 7})},
                    {s("mode", "linear"), s("coordinate_transformation_mode", "half_pixel")});
    }, {"x"});
    checkOp("Resize linear down to 2×3 (align_corners)", [](GraphBuilder& b) {
        return b.op("Resize", {param(b, "x", {2, 1, 4, 5}, 342), b.constant("roi", floatTensor({0}, {})), b.constant("scales", floatTensor({0}, {})),
                               b.ints("sizes", {2, 1, 2, 3})},
                    {s("mode", "linear"), s("coordinate_transformation_mode", "align_corners")});
    }, {"x"});
}

TEST(AutodiffOpsExports, ReduceMaxMinL2SumSquare) {
    for (const char* op : {"ReduceMax", "ReduceMin", "ReduceL2", "ReduceSumSquare"}) {
        checkOp(std::string(op) + " axes attribute (opset 17), keepdims 0", [&](GraphBuilder& b) {
            return b.op(op, {param(b, "x", {2, 3, 4}, 360)}, {Attribute::makeInts("axes", {1}), i("keepdims", 0)});
        }, {"x"});
        checkOp(std::string(op) + " axes input (opset 18), keepdims 1", [&](GraphBuilder& b) {
            return b.op(op, {param(b, "x", {2, 3, 4}, 361), b.ints("axes", {0, -1})});
        }, {"x"}, 18);
        checkOp(std::string(op) + " every axis", [&](GraphBuilder& b) { return b.op(op, {param(b, "x", {3, 4}, 362)}, {i("keepdims", 0)}); },
                {"x"});
    }
    // Two equal maxima share g (torch's amax backward); a central difference gives them ½ each too.
    checkOp("ReduceMax with a tie", [](GraphBuilder& b) {
        return b.op("ReduceMax", {b.constant("x", floatTensor({2, 4}, {1, 3, 3, 0, 2, -1, 5, 4}))}, {Attribute::makeInts("axes", {1})});
    }, {"x"});
}

TEST(AutodiffOpsExports, CumSumEveryDirection) {
    for (int64_t exclusive : {0, 1})
        for (int64_t reverse : {0, 1})
            checkOp("CumSum exclusive " + std::to_string(exclusive) + " reverse " + std::to_string(reverse), [&](GraphBuilder& b) {
                return b.op("CumSum", {param(b, "x", {2, 5, 3}, 370), b.constant("axis", int64Tensor({}, {1}))},
                            {i("exclusive", exclusive), i("reverse", reverse)});
            }, {"x"});
}

TEST(AutodiffOpsExports, InstanceNormAndTrainingModeBatchNorm) {
    checkOp("InstanceNormalization 4-D", [](GraphBuilder& b) {
        return b.op("InstanceNormalization", {param(b, "x", {2, 3, 4, 5}, 380, -2, 2), param(b, "scale", {3}, 381, 0.5f, 1.5f),
                                              param(b, "bias", {3}, 382)},
                    {f("epsilon", 1e-3f)});
    }, {"x", "scale", "bias"});
    checkOp("InstanceNormalization 3-D", [](GraphBuilder& b) {
        return b.op("InstanceNormalization", {param(b, "x", {2, 4, 6}, 383, -2, 2), param(b, "scale", {4}, 384), param(b, "bias", {4}, 385)});
    }, {"x", "scale", "bias"});
    checkOp("BatchNormalization training_mode=1", [](GraphBuilder& b) {
        return b.op("BatchNormalization", {param(b, "x", {3, 2, 4, 4}, 386, -2, 2), param(b, "scale", {2}, 387, 0.5f, 1.5f),
                                           param(b, "bias", {2}, 388), param(b, "mean", {2}, 389), param(b, "var", {2}, 390, 0.5f, 1.5f)},
                    {i("training_mode", 1), f("epsilon", 1e-3f)});
    }, {"x", "scale", "bias", "mean", "var"}, 15);
}

TEST(AutodiffOpsExports, EinsumContractionsBatchesSumsAndImplicitOutput) {
    struct Case {
        const char* equation;
        std::vector<std::vector<int64_t>> shapes;
    };
    const std::vector<Case> cases = {
        {"ij,jk->ik", {{3, 4}, {4, 5}}},                   // matrix product
        {"bhqd,bhkd->bhqk", {{2, 2, 3, 4}, {2, 2, 5, 4}}},  // attention scores
        {"ij->ji", {{3, 4}}},                              // transpose
        {"ij,j->i", {{3, 4}, {4}}},                        // matrix-vector
        {"ijk->j", {{2, 3, 4}}},                           // sums over letters found nowhere else
        {"i,j->ij", {{3}, {4}}},                           // outer product
        {"ij,jk", {{3, 4}, {4, 2}}},                       // implicit output "ik"
        {"ab,bc,cd->ad", {{2, 3}, {3, 4}, {4, 2}}},        // three operands
    };
    uint64_t seed = 400;
    for (const auto& k : cases) {
        std::vector<std::string> wrt;
        for (size_t j = 0; j < k.shapes.size(); ++j) wrt.push_back("op" + std::to_string(j));
        checkOp(std::string("Einsum ") + k.equation, [&](GraphBuilder& b) {
            std::vector<ValueId> ins;
            for (size_t j = 0; j < k.shapes.size(); ++j) ins.push_back(param(b, wrt[j], k.shapes[j], seed++));
            return b.op("Einsum", ins, {s("equation", k.equation)});
        }, wrt);
    }
}

TEST(AutodiffOpsExports, EinsumWithADiagonalIsRefusedByName) {
    GraphBuilder b("einsum_trace");
    test::addWeightedSumLoss(b, b.op("Einsum", {param(b, "x", {3, 3}, 410)}, {s("equation", "ii->i")}, "diag"));
    try {
        autodiff::makeTrainingModel(b.finish(), {"none", "", {"x"}});
        FAIL() << "Einsum ii->i was differentiated";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
        EXPECT_NE(std::string(e.what()).find("Einsum 'diag'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("repeated in operand 'ii'"), std::string::npos) << e.what();
    }
}

TEST(AutodiffOpsExports, MaxPoolCeilModeWindowsPastTheEnd) {
    // 6 wide, kernel 3, stride 2: floor gives 2 windows, ceil 3 (the last covers columns 4, 5 and
    // one past the end). Second case: 7 rows with top pad 1 and kernel 3 get a 4th window past the
    // end; 6 columns with right pad 1 and kernel 2 would get one starting in the pad, which ceil
    // mode drops.
    const std::vector<std::vector<Attribute>> cases = {
        {Attribute::makeInts("kernel_shape", {3, 3}), Attribute::makeInts("strides", {2, 2}), i("ceil_mode", 1)},
        {Attribute::makeInts("kernel_shape", {3, 2}), Attribute::makeInts("strides", {2, 2}), Attribute::makeInts("pads", {1, 0, 0, 1}),
         i("ceil_mode", 1)},
    };
    uint64_t seed = 420;
    for (const auto& attrs : cases)
        checkOp("MaxPool ceil_mode case " + std::to_string(seed), [&](GraphBuilder& b) {
            return b.op("MaxPool", {param(b, "x", {1, 2, 7, 6}, seed++)}, attrs);
        }, {"x"});
}

TEST(AutodiffOpsExports, AveragePoolCeilModePastTheEndIsRefusedByName) {
    GraphBuilder b("avgpool_ceil");
    test::addWeightedSumLoss(b, b.op("AveragePool", {param(b, "x", {1, 1, 6, 6}, 430)},
                                     {Attribute::makeInts("kernel_shape", {3, 3}), Attribute::makeInts("strides", {2, 2}), i("ceil_mode", 1)},
                                     "pool"));
    try {
        autodiff::makeTrainingModel(b.finish(), {"none", "", {"x"}});
        FAIL() << "AveragePool with ceil_mode windows past the end was differentiated";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
        EXPECT_NE(std::string(e.what()).find("AveragePool 'pool'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("ceil_mode"), std::string::npos) << e.what();
    }
}

TEST(AutodiffOpsExports, ConvTransposeStridesPadsOutputPaddingGroups) {
    struct Case {
        std::vector<int64_t> x, w;
        std::vector<Attribute> attrs;
        int64_t group = 1;
    };
    const std::vector<Case> cases = {
        {{2, 3, 4, 4}, {3, 2, 3, 3}, {}},
        {{1, 2, 3, 4}, {2, 3, 3, 3}, {Attribute::makeInts("strides", {2, 2}), Attribute::makeInts("pads", {1, 1, 1, 1})}},  // U-Net style ×2
        {{1, 2, 3, 3}, {2, 2, 3, 3},
         {Attribute::makeInts("strides", {2, 3}), Attribute::makeInts("pads", {1, 0, 0, 1}), Attribute::makeInts("output_padding", {1, 2})}},
        {{1, 4, 3, 3}, {4, 1, 2, 2}, {Attribute::makeInts("strides", {2, 2}), i("group", 2)}, 2},
        {{1, 2, 4, 4}, {2, 2, 2, 2}, {Attribute::makeInts("dilations", {2, 2}), Attribute::makeInts("pads", {1, 1, 0, 0})}},
    };
    uint64_t seed = 440;
    for (const auto& k : cases)
        checkOp("ConvTranspose case " + std::to_string(seed), [&](GraphBuilder& b) {
            const int64_t m = k.w[1] * k.group;  // output channels
            return b.op("ConvTranspose", {param(b, "x", k.x, seed++), param(b, "w", k.w, seed++), param(b, "bias", {m}, seed++)}, k.attrs);
        }, {"x", "w", "bias"});
}

TEST(AutodiffOpsExports, DropoutRatioZeroInTrainingModePassesTheGradient) {
    checkOp("Dropout ratio 0, training", [](GraphBuilder& b) {
        return b.op("Dropout", {param(b, "x", {3, 4}, 350), b.scalar("ratio", 0.f), trainingTrue(b)});
    }, {"x"});
}

TEST(AutodiffOpsExports, DropoutWithARealRatioInTrainingModeIsRefusedByName) {
    GraphBuilder b("dropout_train");
    ValueId y = b.op("Dropout", {param(b, "x", {3, 4}, 351), b.scalar("ratio", 0.1f), trainingTrue(b)}, {},
                     "drop");
    test::addWeightedSumLoss(b, y);
    try {
        autodiff::makeTrainingModel(b.finish(), {"none", "", {"x"}});
        FAIL() << "a training-mode Dropout with ratio 0.1 was differentiated";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
        EXPECT_NE(std::string(e.what()).find("Dropout 'drop'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("ratio a constant 0"), std::string::npos) << e.what();
    }
}

namespace {

/// Regions over a 2-image, 7×9 feature map: one inside, one crossing the right/bottom edge (samples
/// past W read zero, others clamp to the last row), one smaller than a bin, one on the other image.
ValueId roiAlignCase(GraphBuilder& b, const std::vector<Attribute>& attrs) {
    const ValueId rois = b.constant("rois", floatTensor({4, 4}, {1.0f, 2.0f, 14.0f, 11.0f,   //
                                                                 9.0f, 6.5f, 21.0f, 17.0f,   //
                                                                 3.3f, 4.1f, 3.9f, 4.4f,     //
                                                                 0.0f, 0.0f, 16.0f, 12.0f}));
    const ValueId batch = b.constant("batch", int64Tensor({4}, {1, 0, 1, 0}));
    return b.op("RoiAlign", {param(b, "x", {2, 3, 7, 9}, 440), rois, batch}, attrs, "roi_align");
}

}  // namespace

TEST(AutodiffOpsExports, RoiAlignBothCoordinateModesAndBatches) {
    for (const char* mode : {"half_pixel", "output_half_pixel"})
        checkOp(std::string("RoiAlign ") + mode, [&](GraphBuilder& b) {
            return roiAlignCase(b, {i("output_height", 3), i("output_width", 2), i("sampling_ratio", 2), f("spatial_scale", 0.5f),
                                    s("coordinate_transformation_mode", mode)});
        }, {"x"});
    checkOp("RoiAlign-10 at opset 13 (no mode attribute: output_half_pixel; sampling 3)", [](GraphBuilder& b) {
        return roiAlignCase(b, {i("output_height", 2), i("output_width", 4), i("sampling_ratio", 3), f("spatial_scale", 0.5f)});
    }, {"x"}, 13);
}

TEST(AutodiffOpsExports, RoiAlignAdaptiveSamplingAndMaxModeAreRefusedByName) {
    const std::vector<std::pair<std::vector<Attribute>, std::string>> cases = {
        {{i("sampling_ratio", 0)}, "sampling_ratio 0"},
        {{i("sampling_ratio", 2), s("mode", "max")}, "mode max"},
    };
    for (const auto& [attrs, why] : cases) {
        GraphBuilder b("roi_align_refused");
        test::addWeightedSumLoss(b, roiAlignCase(b, attrs));
        try {
            autodiff::makeTrainingModel(b.finish(), {"none", "", {"x"}});
            ADD_FAILURE() << "RoiAlign with " << why << " was differentiated";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
            EXPECT_NE(std::string(e.what()).find("RoiAlign 'roi_align'"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
    }
}
