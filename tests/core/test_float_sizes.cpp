// Float32 size arithmetic in the shape engine (rules/FloatSizes.cpp) and the rewrites it enables
// on a size-dynamic detector export: torchvision's resize (size = floor(h * min(64 / min(h, w),
// 64 / max(h, w)))) gets a size proven in [0, 64], the pad to a multiple of 32 after it becomes
// exact integer arithmetic, and the anchor stride image_size / feature_size folds. Negative
// cases: a scale with no proven bound, and pad arithmetic on an unbounded input dim, stay unknown.
// Also: floor(k*P/P) = k for a polynomial P, the symbolic no-op Slice, and
// Unsqueeze(f(Squeeze(x), s)) = f(x, s).
#include <gtest/gtest.h>

#include "PassTestSupport.h"
#include "examples/Builder.h"
#include "shape/ShapeEngine.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

Attribute to(DataType t) { return Attribute::makeInt("to", int64_t(t)); }
Attribute noKeep() { return Attribute::makeInt("keepdims", 0); }

ValueId scalarInt(GraphBuilder& b, const std::string& name, int64_t v) { return b.constant(name, int64Tensor({}, {v})); }

ValueId gatherDim(GraphBuilder& b, ValueId shape, int64_t i, const std::string& tag) {
    return b.op("Gather", {shape, scalarInt(b, "i_" + tag, i)});
}

/// ceil(size / 32) * 32 - size in float32, as torchvision's batch_images writes it.
ValueId padToMultipleOf32(GraphBuilder& b, ValueId size, const std::string& tag) {
    ValueId f = b.op("Cast", {size}, {to(DataType::Float)});
    ValueId up = b.op("Mul", {b.op("Ceil", {b.op("Div", {f, b.scalar("d32_" + tag, 32.f)})}), b.scalar("m32_" + tag, 32.f)});
    return b.op("Sub", {b.op("Cast", {up}, {to(DataType::Int64)}), size});
}

struct Detector {
    Model model;
    ValueId sizes = kNone;   ///< int64 [2]: the resized height and width
    ValueId padded = kNone;  ///< [3, H, W] after the pad
    ValueId stride = kNone;  ///< padded height / pooled height (int64 Div)
};

/// image [3, h, w] → resize so that the longer side is 64 (or, with `boundedScale` false, the
/// shorter side: no upper bound on the other) → pad to a multiple of 32 → a stride-4 pooling; the
/// outputs are the pooled map and the stride as a float.
Detector detector(bool boundedScale) {
    GraphBuilder b("detector");
    ValueId image = b.inputSymbolic("image", DataType::Float, {Dim::of(3), Dim::symbol("h"), Dim::symbol("w")});
    ValueId shape = b.op("Shape", {image});
    ValueId hw = b.op("Slice", {shape, b.ints("s0", {1}), b.ints("s1", {3}), b.ints("s2", {0})});
    auto scaleOf = [&](const char* reduce, const std::string& tag) {
        ValueId v = b.op("Cast", {b.op(reduce, {hw}, {noKeep()})}, {to(DataType::Float)});
        return b.op("Mul", {b.op("Reciprocal", {v}), b.scalar("k64_" + tag, 64.f)});
    };
    ValueId scale = scaleOf("ReduceMin", "min");
    if (boundedScale) scale = b.op("Min", {scale, scaleOf("ReduceMax", "max")});
    auto resized = [&](int64_t i, const std::string& tag) {
        ValueId f = b.op("Cast", {gatherDim(b, shape, i, tag)}, {to(DataType::Float)});
        return b.op("Unsqueeze", {b.op("Floor", {b.op("Mul", {f, scale})}), b.ints("ax_" + tag, {0})});
    };
    ValueId sizes = b.op("Cast", {b.op("Concat", {resized(1, "h"), resized(2, "w")}, {Attribute::makeInt("axis", 0)})},
                         {to(DataType::Int64)});
    ValueId full = b.op("Concat", {b.ints("nc", {1, 3}), sizes}, {Attribute::makeInt("axis", 0)});
    ValueId batch = b.op("Unsqueeze", {image, b.ints("ax_b", {0})});
    ValueId big = b.op("Resize", {batch, kNone, kNone, full},
                       {Attribute::makeString("mode", "nearest"), Attribute::makeString("coordinate_transformation_mode", "asymmetric")});
    ValueId r = b.op("Gather", {big, scalarInt(b, "i_img", 0)});
    ValueId rs = b.op("Shape", {r});
    ValueId ph = padToMultipleOf32(b, gatherDim(b, rs, 1, "rh"), "h"), pw = padToMultipleOf32(b, gatherDim(b, rs, 2, "rw"), "w");
    ValueId pads = b.op("Concat", {b.ints("z4", {0, 0, 0, 0}), b.op("Unsqueeze", {ph, b.ints("ax_ph", {0})}),
                                   b.op("Unsqueeze", {pw, b.ints("ax_pw", {0})})},
                        {Attribute::makeInt("axis", 0)});
    ValueId padded = b.op("Pad", {r, pads});
    ValueId pooled = b.op("MaxPool", {b.op("Unsqueeze", {padded, b.ints("ax_p", {0})})},
                          {Attribute::makeInts("kernel_shape", {1, 1}), Attribute::makeInts("strides", {4, 4})});
    ValueId imageH = gatherDim(b, b.op("Shape", {padded}), 1, "ph");
    ValueId featH = gatherDim(b, b.op("Shape", {pooled}), 2, "fh");
    ValueId stride = b.op("Div", {imageH, featH});
    b.output(pooled);
    b.output(b.op("Cast", {stride}, {to(DataType::Float)}));
    Detector d;
    d.model = b.finish();
    d.sizes = sizes;
    d.padded = padded;
    d.stride = stride;
    return d;
}

const std::vector<test::DimBindings> kImages{{{"h", 64}, {"w", 64}}, {{"h", 96}, {"w", 80}}, {{"h", 50}, {"w", 120}},
                                              {{"h", 7}, {"w", 300}}};

}  // namespace

TEST(FloatSizes, ResizedSizeIsAFreshSizeBoundedByTheModelsOwnArithmetic) {
    Detector d = detector(true);
    shape::ShapeAnalysis a = shape::analyzeShapes(d.model.graph, &d.model);
    const auto& sizes = a.of(d.sizes);
    ASSERT_TRUE(sizes.values.has_value());
    ASSERT_EQ(sizes.values->size(), 2u);
    for (const auto& e : *sizes.values) {
        ASSERT_TRUE(e.has_value());
        EXPECT_TRUE(e->symbolName().has_value()) << e->toString();
        EXPECT_EQ(e->lowerBound(), 0);
        EXPECT_EQ(e->upperBound(), 64);  // h * 64 / max(h, w) <= 64, rounding included
    }
    // The pad makes each size the next multiple of 32, exactly: check the padded dims at sizes.
    const auto& padded = a.of(d.padded);
    ASSERT_TRUE(padded.fullyKnown());
    const std::string sh = *(*sizes.values)[0]->symbolName();
    for (int64_t s : {0, 1, 31, 32, 33, 50, 64}) {
        shape::Bindings at{{sh, s}};
        EXPECT_EQ((*padded.dims)[1]->evaluate(at), (s + 31) / 32 * 32) << "size " << s;
    }
}

TEST(FloatSizes, ScaleWithoutAProvenBoundGivesNoSizeAndNoPad) {
    Detector d = detector(false);  // h * 64 / min(h, w): as large as the image is long
    shape::ShapeAnalysis a = shape::analyzeShapes(d.model.graph, &d.model);
    const auto& sizes = a.of(d.sizes);
    EXPECT_FALSE(sizes.values.has_value() && (*sizes.values)[0].has_value());
    const auto& padded = a.of(d.padded);
    ASSERT_TRUE(padded.dims.has_value());
    for (size_t i = 1; i < 3; ++i) {  // unknown, or an opaque name from ONNX inference: no arithmetic
        const auto& dim = (*padded.dims)[i];
        EXPECT_TRUE(!dim || dim->symbolName()) << dim->toString();
    }
}

TEST(FloatSizes, PadArithmeticOnAnUnboundedInputDimStaysUnknown) {
    // Cast(h) to float32 rounds above 2^24, so ceil(h / 32) * 32 - h is not Mod(-h, 32) for every h.
    GraphBuilder b("pad");
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("h")});
    ValueId h = gatherDim(b, b.op("Shape", {x}), 0, "h");
    ValueId pad = padToMultipleOf32(b, h, "h");
    b.output(b.op("Pad", {x, b.op("Concat", {b.ints("z", {0}), b.op("Unsqueeze", {pad, b.ints("ax", {0})})},
                                       {Attribute::makeInt("axis", 0)})}));
    Model m = b.finish();
    shape::ShapeAnalysis a = shape::analyzeShapes(m.graph, &m);
    EXPECT_FALSE(a.of(pad).values.has_value() && (*a.of(pad).values)[0].has_value());
}

TEST(FloatSizes, AnchorStrideFoldsAndOutputsStayEqualAtEveryImageSize) {
    Detector d = detector(true);
    auto r = test::runCheckedAtBindings(d.model, {"shape-chain-folding", "constant-folding", "algebraic", "cse", "dce"}, kImages);
    const auto counts = test::opCounts(d.model.graph);
    EXPECT_EQ(counts.count("Div"), 0u) << "the stride 4 is a constant";
    EXPECT_EQ(counts.at("Pad"), 1);  // the pad itself is real work
}

TEST(FloatSizes, ConstantMultipleOfAPolynomialDividesExactly) {
    using shape::DimExpr;
    const DimExpr x = DimExpr::symbol("x"), y = DimExpr::symbol("y");
    const DimExpr p = x * y + x + y + DimExpr::constant(1);
    EXPECT_EQ(shape::floorDiv(DimExpr::constant(6) * p, p), DimExpr::constant(6));
    EXPECT_EQ(shape::mod(DimExpr::constant(6) * p, p), DimExpr::constant(0));
    EXPECT_FALSE(shape::floorDiv(DimExpr::constant(6) * p + DimExpr::constant(1), p).isConstant());
    EXPECT_FALSE(shape::floorDiv(DimExpr::constant(6) * p, p + x).isConstant());
}

TEST(FloatSizes, SymbolicNoOpSliceGoesAReversingOneStays) {
    GraphBuilder b("slice");
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::of(2), Dim::symbol("n")});
    ValueId n = b.op("Unsqueeze", {gatherDim(b, b.op("Shape", {x}), 1, "n"), b.ints("ax", {0})});
    ValueId whole = b.op("Slice", {x, b.ints("st", {0}), n, b.ints("axes", {1})});
    ValueId reversed = b.op("Slice", {x, b.ints("rst", {-1}), b.ints("ren", {INT64_MIN}), b.ints("raxes", {1}), b.ints("rsteps", {-1})});
    b.output(b.op("Add", {whole, reversed}));
    Model m = b.finish();
    auto r = test::runCheckedAtBindings(m, {"shape-chain-folding", "dce"}, {{{"n", 1}}, {{"n", 5}}});
    EXPECT_EQ(test::opCounts(m.graph).at("Slice"), 1);
    EXPECT_TRUE(test::hasRemark(r.steps[0].result, passes::RemarkKind::Applied, "slice-noop-symbolic", "Slice"));
}

TEST(FloatSizes, ElementwiseOpBetweenSqueezeAndUnsqueezeOnTheSameAxesKeepsTheAxis) {
    // torchvision's resize_boxes: unbind the columns, scale each, stack them back.
    GraphBuilder b("boxes");
    ValueId boxes = b.inputSymbolic("boxes", DataType::Float, {Dim::symbol("n"), Dim::of(4)});
    ValueId ratio = b.inputSymbolic("ratio", DataType::Float, {});
    ValueId wide = b.inputSymbolic("wide", DataType::Float, {Dim::of(1), Dim::of(1)});
    auto cols = b.opMulti("Split", {boxes, b.ints("split", {1, 1, 1, 1})}, 4, {Attribute::makeInt("axis", 1)});
    std::vector<ValueId> scaled;
    for (size_t i = 0; i < 4; ++i) {
        const std::string t = std::to_string(i);
        ValueId col = b.op("Squeeze", {cols[i], b.ints("sq" + t, {1})});
        // Column 3 multiplies by a [1, 1] operand: Mul(squeezed, s) is [1, n], not [n]: it stays.
        ValueId m = b.op("Mul", {col, i == 3 ? wide : ratio});
        scaled.push_back(b.op("Unsqueeze", {m, b.ints("un" + t, {1})}));
    }
    b.output(b.op("Concat", {scaled[0], scaled[1], scaled[2]}, {Attribute::makeInt("axis", 1)}));
    b.output(scaled[3]);
    Model m = b.finish();
    auto checked = test::runChecked(m, "algebraic");
    EXPECT_EQ(checked.after.at("Squeeze"), 1);
    EXPECT_EQ(checked.after.at("Unsqueeze"), 1);
    EXPECT_EQ(checked.after.at("Mul"), 4);
    EXPECT_TRUE(test::hasRemark(checked.result, passes::RemarkKind::Applied, "elementwise-through-squeeze", "Mul"));
}

TEST(FloatSizes, ReshapeThatOnlyInsertsOnesBecomesAnUnsqueezeASplitStaysAReshape) {
    // torchvision's RPN head: view(N, -1, C, H, W) of [N, A*C, H, W]; C = 1 inserts a 1.
    GraphBuilder b("rpn");
    auto headOf = [&](int64_t channels, int64_t c, const std::string& tag) {
        ValueId x = b.inputSymbolic("x" + tag, DataType::Float, {Dim::of(1), Dim::of(channels), Dim::symbol("h"), Dim::symbol("w")});
        ValueId s = b.op("Shape", {x});
        auto dim = [&](int64_t i) { return b.op("Unsqueeze", {gatherDim(b, s, i, tag + std::to_string(i)), b.ints("ax" + tag + std::to_string(i), {0})}); };
        ValueId target = b.op("Concat", {b.ints("one" + tag, {1}), b.ints("rest" + tag, {-1}), b.ints("c" + tag, {c}), dim(2), dim(3)},
                              {Attribute::makeInt("axis", 0)});
        return b.op("Reshape", {x, target});
    };
    b.output(headOf(6, 1, "cls"));
    b.output(headOf(24, 4, "box"));  // [1, 24, h, w] → [1, 6, 4, h, w]: not an Unsqueeze
    Model m = b.finish();
    auto r = test::runCheckedAtBindings(m, {"shape-chain-folding", "dce"}, {{{"h", 3}, {"w", 5}}, {{"h", 8}, {"w", 2}}});
    const auto counts = test::opCounts(m.graph);
    EXPECT_EQ(counts.at("Reshape"), 1);
    EXPECT_EQ(counts.at("Concat"), 1);
    EXPECT_TRUE(test::hasRemark(r.steps[0].result, passes::RemarkKind::Applied, "reshape-as-unsqueeze", "[1, 6, 1, h, w]"));
}
