// Golden tests for the transpose push-through rules added for Split, Slice, Pad, Gemm and MatMul
// (plus negative cases for Concat and Softmax): op counts before/after, numerical equivalence
// with the interpreter, the rule name in the change log, and the missed remark when refused.
#include <gtest/gtest.h>

#include "examples/Builder.h"
#include "passes/layout/LayoutPasses.h"
#include "test_layout_support.h"

using namespace passlens;
using namespace passlens::ir;
using passes::RemarkKind;
using test::countOp;
using test::findRemark;
using test::optimizeAndCompare;
using test::perm;
using test::transposeOnly;
using test::transposeRuleFires;

namespace {

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1}, kToNchw = {0, 3, 1, 2};

/// Runs the transpose pass once more and expects nothing to change (idempotence).
void expectFixedPoint(const Model& m) {
    Model again = m;
    EXPECT_FALSE(passes::makeTransposePass()->run(again, {}).changed);
}

const Node& onlyNode(const Model& m, const std::string& op) {
    for (NodeId id : m.graph.nodeOrder())
        if (m.graph.node(id).opType == op) return m.graph.node(id);
    throw std::runtime_error("no " + op);
}

}  // namespace

// ---- Split ----------------------------------------------------------------------------------------

TEST(LayoutPushSplit, AxisRewrittenAndEveryOutputTransposedBack) {
    GraphBuilder b("split", 11);
    auto x = b.input("x", DataType::Float, {1, 3, 4, 6});
    auto t = b.op("Transpose", {x}, {perm(kToNhwc)});  // 1x4x6x3
    auto parts = b.opMulti("Split", {t}, 2, {Attribute::makeInt("axis", 2), Attribute::makeInts("split", {2, 4})});
    b.output(b.op("Transpose", {b.op("Relu", {parts[0]})}, {perm(kToNchw)}));
    b.output(b.op("Transpose", {parts[1]}, {perm(kToNchw)}));
    Model m = b.finish();
    ASSERT_EQ(countOp(m, "Transpose"), 3u);
    Model out = optimizeAndCompare(m, transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
    EXPECT_EQ(onlyNode(out, "Split").attrInt("axis", -1), 3);  // axis 2 of NHWC is axis 3 of NCHW
    EXPECT_TRUE(transposeRuleFires(m, "transpose-push-Split"));
    expectFixedPoint(out);
}

TEST(LayoutPushSplit, NotPushedWhenOutputsAreGraphOutputs) {
    GraphBuilder b("split_out", 13);
    auto x = b.input("x", DataType::Float, {1, 3, 4, 6});
    auto t = b.op("Transpose", {x}, {perm(kToNhwc)});
    auto parts = b.opMulti("Split", {t, b.ints("sizes", {3, 3})}, 2, {Attribute::makeInt("axis", 2)});
    b.output(parts[0]);
    b.output(parts[1]);
    Model m = b.finish();
    Model out = optimizeAndCompare(m, transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 1u);  // two outputs would need two Transposes for one removed
    Model again = m;
    auto res = passes::makeTransposePass()->run(again, {});
    EXPECT_FALSE(res.changed);
    EXPECT_NE(findRemark(res, RemarkKind::Missed, "Split"), nullptr);
}

// ---- Slice ----------------------------------------------------------------------------------------

TEST(LayoutPushSlice, ConstantAxesInputRewritten) {
    GraphBuilder b("slice", 13);
    auto x = b.input("x", DataType::Float, {1, 3, 8, 8});
    auto t = b.op("Transpose", {x}, {perm(kToNhwc)});  // 1x8x8x3
    auto s = b.op("Slice", {t, b.ints("starts", {1, 2}), b.ints("ends", {5, 3}), b.ints("axes", {1, -1}),
                            b.ints("steps", {2, 1})});
    b.output(b.op("Transpose", {b.op("Sigmoid", {s})}, {perm(kToNchw)}));
    Model m = b.finish();
    Model out = optimizeAndCompare(m, transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
    EXPECT_TRUE(transposeRuleFires(m, "transpose-push-Slice"));
    expectFixedPoint(out);
}

TEST(LayoutPushSlice, DefaultAxesMadeExplicit) {
    GraphBuilder b("slice_noaxes", 13);
    auto x = b.input("x", DataType::Float, {2, 3, 4, 5});
    auto t = b.op("Transpose", {x}, {perm({1, 0, 3, 2})});  // 3x2x5x4
    auto s = b.op("Slice", {t, b.ints("starts", {1, 0, 1}), b.ints("ends", {3, 1, 4})});
    b.output(b.op("Transpose", {s}, {perm({1, 0, 3, 2})}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
    EXPECT_EQ(onlyNode(out, "Slice").inputs.size(), 4u);  // axes input added: [1, 0, 3]
}

TEST(LayoutPushSlice, AttributeAxesBeforeOpset10) {
    GraphBuilder b("slice9", 9);
    auto x = b.input("x", DataType::Float, {1, 3, 8, 8});
    auto t = b.op("Transpose", {x}, {perm(kToNhwc)});
    auto s = b.op("Slice", {t}, {Attribute::makeInts("starts", {0, 1}), Attribute::makeInts("ends", {4, 3}),
                                 Attribute::makeInts("axes", {2, 3})});
    b.output(b.op("Transpose", {s}, {perm(kToNchw)}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
    EXPECT_EQ(onlyNode(out, "Slice").attrInts("axes"), (std::vector<int64_t>{3, 1}));
}

TEST(LayoutPushSlice, NonConstantAxesNotPushed) {
    GraphBuilder b("slice_dyn", 13);
    auto x = b.input("x", DataType::Float, {1, 3, 8, 8});
    auto axes = b.input("axes", DataType::Int64, {1});
    auto t = b.op("Transpose", {x}, {perm(kToNhwc)});
    auto s = b.op("Slice", {t, b.ints("starts", {1}), b.ints("ends", {3}), axes}, {}, "slice");
    b.output(b.op("Transpose", {s}, {perm(kToNchw)}));
    Model m = b.finish();
    auto res = passes::makeTransposePass()->run(m, {});
    EXPECT_EQ(countOp(m, "Transpose"), 2u);
    EXPECT_NE(findRemark(res, RemarkKind::Missed, "slice (Slice): axes is not a constant"), nullptr);
}

// ---- Pad ------------------------------------------------------------------------------------------

TEST(LayoutPushPad, ConstantPadsPermuted) {
    GraphBuilder b("pad", 13);
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    auto t = b.op("Transpose", {x}, {perm(kToNhwc)});  // 1x4x5x3
    auto p = b.op("Pad", {t, b.ints("pads", {0, 1, 2, 0, 0, 3, 0, 1}), b.scalar("v", 0.5f)});
    b.output(b.op("Transpose", {p}, {perm(kToNchw)}));
    Model m = b.finish();
    Model out = optimizeAndCompare(m, transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
    EXPECT_TRUE(transposeRuleFires(m, "transpose-push-Pad"));
    expectFixedPoint(out);
}

TEST(LayoutPushPad, AttributePadsBeforeOpset11) {
    GraphBuilder b("pad9", 9);
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    auto t = b.op("Transpose", {x}, {perm(kToNhwc)});
    auto p = b.op("Pad", {t}, {Attribute::makeInts("pads", {0, 1, 2, 0, 0, 3, 0, 1}),
                               Attribute::makeString("mode", "edge")});
    b.output(b.op("Transpose", {p}, {perm(kToNchw)}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
    EXPECT_EQ(onlyNode(out, "Pad").attrInts("pads"), (std::vector<int64_t>{0, 0, 1, 2, 0, 1, 3, 0}));
}

// The missed remark names the op that stopped the Transpose and why.
TEST(LayoutPushPad, NonConstantPadsGiveMissedRemarkNamingPad) {
    GraphBuilder b("pad_dyn", 13);
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    auto pads = b.input("pads", DataType::Int64, {8});
    auto t = b.op("Transpose", {x}, {perm(kToNhwc)}, "to_nhwc");
    auto p = b.op("Pad", {t, pads}, {}, "pad");
    b.output(b.op("Transpose", {p}, {perm(kToNchw)}));
    Model m = b.finish();
    auto res = passes::makeTransposePass()->run(m, {});
    EXPECT_FALSE(res.changed);
    const passes::Remark* r = findRemark(res, RemarkKind::Missed, "to_nhwc not pushed");
    ASSERT_NE(r, nullptr);
    EXPECT_NE(r->message.find("stopped by pad (Pad): pads is not a constant"), std::string::npos) << r->message;
    EXPECT_EQ(r->rule, "transpose-push");
    ASSERT_EQ(r->nodeNames.size(), 2u);  // the Transpose and the op that stopped it
    EXPECT_EQ(r->nodeNames[1], "pad");
    // Every Transpose left over gets exactly one such remark.
    size_t notPushed = 0;
    for (const auto& rm : res.remarks) notPushed += rm.message.find(" not pushed: ") != std::string::npos;
    EXPECT_EQ(notPushed, countOp(m, "Transpose"));
}

// ---- Gemm / MatMul --------------------------------------------------------------------------------

TEST(LayoutPushGemm, TransposedOperandsBecomeFlags) {
    GraphBuilder b("gemm", 13);
    auto a = b.input("a", DataType::Float, {5, 4});
    auto w = b.input("w", DataType::Float, {5, 6});
    auto ta = b.op("Transpose", {a}, {perm({1, 0})});  // 4x5
    auto tw = b.op("Transpose", {w}, {perm({1, 0})});  // 6x5, read with transB=1 as 5x6
    b.output(b.op("Gemm", {ta, tw, b.constant("c", randomFloats({6}, 4))},
                  {Attribute::makeFloat("alpha", 0.5f), Attribute::makeInt("transB", 1)}, "gemm"));
    Model m = b.finish();
    Model out = optimizeAndCompare(m, transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
    const Node& g = onlyNode(out, "Gemm");
    EXPECT_EQ(g.attrInt("transA", 0), 1);
    EXPECT_EQ(g.attrInt("transB", 1), 0);
    EXPECT_TRUE(transposeRuleFires(m, "transpose-into-Gemm"));
    expectFixedPoint(out);
}

TEST(LayoutPushGemm, TransposedCStays) {
    GraphBuilder b("gemm_c", 13);
    auto a = b.input("a", DataType::Float, {4, 5});
    auto c = b.input("c", DataType::Float, {6, 4});
    auto tc = b.op("Transpose", {c}, {perm({1, 0})}, "tc");
    b.output(b.op("Gemm", {a, b.constant("w", randomFloats({5, 6}, 2)), tc}, {}, "gemm"));
    Model m = b.finish();
    Model out = optimizeAndCompare(m, transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 1u);
    auto res = passes::makeTransposePass()->run(out, {});
    EXPECT_NE(findRemark(res, RemarkKind::Missed, "gemm (Gemm): Gemm has no transpose flag for C"), nullptr);
}

TEST(LayoutPushMatMul, TwoDimensionalSwapBecomesGemm) {
    for (int64_t opset : {9, 13}) {
        GraphBuilder b("matmul2d", opset);
        auto x = b.input("x", DataType::Float, {3, 5});
        auto y = b.input("y", DataType::Float, {4, 5});
        b.output(b.op("MatMul", {x, b.op("Transpose", {y}, {perm({1, 0})})}));
        Model m = b.finish();
        Model out = optimizeAndCompare(m, transposeOnly());
        EXPECT_EQ(countOp(out, "Transpose"), 0u) << "opset " << opset;
        EXPECT_EQ(countOp(out, "MatMul"), 0u);
        ASSERT_EQ(countOp(out, "Gemm"), 1u);
        EXPECT_EQ(onlyNode(out, "Gemm").attrInt("transB", 0), 1);
        EXPECT_EQ(onlyNode(out, "Gemm").inputs.size(), opset < 11 ? 3u : 2u);  // zero C before opset 11
        EXPECT_TRUE(transposeRuleFires(m, "transpose-into-MatMul"));
    }
}

TEST(LayoutPushMatMul, BatchPermPushedWithConstantPreTransposed) {
    GraphBuilder b("matmul_batch", 13);
    auto x = b.input("x", DataType::Float, {2, 3, 4, 5});
    auto t = b.op("Transpose", {x}, {perm({1, 0, 2, 3})});  // 3x2x4x5: only the batch axes move
    auto w4 = b.constant("w4", randomFloats({3, 2, 5, 6}, 11));
    auto w2 = b.constant("w2", randomFloats({6, 2}, 12));
    auto y = b.op("MatMul", {b.op("MatMul", {t, w4}), w2});
    b.output(b.op("Transpose", {y}, {perm({1, 0, 2, 3})}));
    Model m = b.finish();
    Model out = optimizeAndCompare(m, transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
    EXPECT_EQ(countOp(out, "MatMul"), 2u);
    EXPECT_TRUE(transposeRuleFires(m, "transpose-push-MatMul"));
    expectFixedPoint(out);
}

TEST(LayoutPushMatMul, MatrixAxesSwapOfBatchedOperandStays) {
    GraphBuilder b("matmul_swap3d", 13);
    auto x = b.input("x", DataType::Float, {2, 5, 4});
    auto t = b.op("Transpose", {x}, {perm({0, 2, 1})}, "swap");
    b.output(b.op("MatMul", {t, b.constant("w", randomFloats({5, 6}, 3))}, {}, "mm"));
    Model m = b.finish();
    Model out = optimizeAndCompare(m, transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 1u);
    auto res = passes::makeTransposePass()->run(out, {});
    EXPECT_NE(findRemark(res, RemarkKind::Missed, "swap not pushed: stopped by mm (MatMul): the perm moves the matrix axes"), nullptr);
}

// ---- Concat / Softmax / Reduce negatives and edge cases ---------------------------------------------

TEST(LayoutPushConcat, UntransposedSecondOperandNotPushed) {
    GraphBuilder b("concat_neg", 13);
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    auto y = b.input("y", DataType::Float, {1, 4, 5, 2});
    auto c = b.op("Concat", {b.op("Transpose", {x}, {perm(kToNhwc)}), y}, {Attribute::makeInt("axis", 3)}, "cat");
    b.output(c);
    Model m = b.finish();
    Model out = optimizeAndCompare(m, transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 1u);
    auto res = passes::makeTransposePass()->run(out, {});
    EXPECT_NE(findRemark(res, RemarkKind::Missed, "cat (Concat): pushing would add 2 Transpose(s) and remove 1"), nullptr);
}

TEST(LayoutPushSoftmax, Opset11PushedWhenPermKeepsTheFlattenedBlock) {
    GraphBuilder b("softmax11", 11);
    auto x = b.input("x", DataType::Float, {2, 3, 4});
    auto t = b.op("Transpose", {x}, {perm({0, 2, 1})});  // axis 1 flattens [1,2]: the perm stays inside
    auto s = b.op("Softmax", {t}, {Attribute::makeInt("axis", 1)});
    b.output(b.op("Transpose", {s}, {perm({0, 2, 1})}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
}

TEST(LayoutPushSoftmax, Opset11CrossingTheBoundaryGivesMissedRemark) {
    GraphBuilder b("softmax11_neg", 11);
    auto x = b.input("x", DataType::Float, {2, 3, 4});
    auto t = b.op("Transpose", {x}, {perm({0, 2, 1})}, "t");
    auto s = b.op("Softmax", {t}, {Attribute::makeInt("axis", 2)}, "sm");
    b.output(b.op("Transpose", {s}, {perm({0, 2, 1})}));
    Model m = b.finish();
    Model out = optimizeAndCompare(m, transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 2u);
    auto res = passes::makeTransposePass()->run(out, {});
    EXPECT_NE(findRemark(res, RemarkKind::Missed, "t not pushed: stopped by sm (Softmax): Softmax (opset 11) flattens to 2-D at axis 2"),
              nullptr);
}

TEST(LayoutPushReduce, ConstantAxesInputRewritten) {
    GraphBuilder b("reducesum13", 13);
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    auto t = b.op("Transpose", {x}, {perm(kToNhwc)});
    auto r = b.op("ReduceSum", {t, b.ints("axes", {1, 2})}, {Attribute::makeInt("keepdims", 1)});
    b.output(b.op("Transpose", {r}, {perm(kToNchw)}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
}

TEST(LayoutPushReduce, NonConstantAxesInputNotPushed) {
    GraphBuilder b("reducesum_dyn", 13);
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    auto axes = b.input("axes", DataType::Int64, {1});
    auto t = b.op("Transpose", {x}, {perm(kToNhwc)});
    auto r = b.op("ReduceSum", {t, axes}, {Attribute::makeInt("keepdims", 1)}, "rs");
    b.output(b.op("Transpose", {r}, {perm(kToNchw)}));
    Model m = b.finish();
    auto res = passes::makeTransposePass()->run(m, {});
    EXPECT_EQ(countOp(m, "Transpose"), 2u);
    EXPECT_NE(findRemark(res, RemarkKind::Missed, "rs (ReduceSum): axes is not a constant"), nullptr);
}

// ---- Transpose -> Reshape -------------------------------------------------------------------------

TEST(LayoutTransposeToReshape, OnlyUnitAxesMovedBecomesReshape) {
    GraphBuilder b("t2r", 13);
    auto x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("N"), Dim::of(1), Dim::of(1), Dim::of(5)});
    auto t = b.op("Transpose", {x}, {perm(kToNchw)});  // [N,5,1,1]: same bytes in the same order
    b.output(b.op("Shape", {t}));
    b.output(b.op("Relu", {t}));
    Model m = b.finish();
    Model out = optimizeAndCompare(m, transposeOnly(), "", {{"N", 3}});
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
    EXPECT_EQ(countOp(out, "Reshape"), 1u);
    EXPECT_TRUE(transposeRuleFires(m, "transpose-to-reshape"));
    expectFixedPoint(out);
}

TEST(LayoutTransposeToReshape, MovingALongAxisStaysATranspose) {
    GraphBuilder b("t2r_neg", 13);
    auto x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("N"), Dim::symbol("H"), Dim::symbol("W"), Dim::of(1)});
    auto t = b.op("Transpose", {x}, {perm(kToNchw)});  // H and W both move: two unknown dims
    b.output(b.op("Shape", {t}));
    auto y = b.input("y", DataType::Float, {1, 3, 4, 5});
    b.output(b.op("Shape", {b.op("Transpose", {y}, {perm(kToNhwc)})}));  // 3 moves past 4 and 5
    Model m = b.finish();
    Model out = m;
    auto res = passes::makeTransposePass()->run(out, {});
    EXPECT_EQ(countOp(out, "Transpose"), 2u);
    EXPECT_EQ(countOp(out, "Reshape"), 0u);
    EXPECT_FALSE(res.changed);
}

// ---- the new rules together, as a TF exporter writes them ----------------------------------------

TEST(LayoutPushTfStyle, PadSplitSliceConcatChainLosesEveryTranspose) {
    GraphBuilder b("tf_mix", 13);
    auto x = b.input("x", DataType::Float, {1, 4, 6, 6});
    auto nhwc = [&](ValueId v) { return b.op("Transpose", {v}, {perm(kToNhwc)}); };
    auto nchw = [&](ValueId v) { return b.op("Transpose", {v}, {perm(kToNchw)}); };
    auto padded = nchw(b.op("Pad", {nhwc(x), b.ints("pads", {0, 1, 1, 0, 0, 1, 1, 0})}));     // 1x4x8x8
    auto parts = b.opMulti("Split", {nhwc(b.op("Relu", {padded})), b.ints("sizes", {2, 2})}, 2,
                           {Attribute::makeInt("axis", 3)});                                    // channels
    auto left = nchw(b.op("Slice", {parts[0], b.ints("s", {1}), b.ints("e", {7}), b.ints("a", {1})}));
    auto right = nchw(b.op("Slice", {parts[1], b.ints("s2", {1}), b.ints("e2", {7}), b.ints("a2", {1})}));
    b.output(b.op("Concat", {b.op("Sigmoid", {left}), right}, {Attribute::makeInt("axis", 1)}));
    Model m = b.finish();
    ASSERT_EQ(countOp(m, "Transpose"), 5u);
    Model out = optimizeAndCompare(m, transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
    expectFixedPoint(out);
}
