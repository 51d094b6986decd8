// outer-sum-windows (shape-chain-folding) and reshape-through-elementwise (algebraic) on the way
// Swin's shifted-window mask cuts its labels row[r] + col[c] into windows: Transpose(Reshape(row +
// col, Shape of a padded map), [0, 2, 1, 3]) becomes Reshape(row, [-1, 1, k, 1]) + Reshape(col,
// [1, -1, 1, k]), and the row Reshape then moves onto the Range its labels were computed from.
// Op counts, the refusals (a width that k does not divide, a row that varies along both axes, a
// shared chain), the interpreter's outputs at several sizes, and idempotence.
#include <gtest/gtest.h>

#include "PassTestSupport.h"
#include "examples/Builder.h"
#include "ir/Tensor.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

ValueId int64Scalar(GraphBuilder& b, const std::string& name, int64_t v) { return b.constant(name, int64Tensor({}, {v})); }

/// x: [n, h, w, 3] padded to multiples of 4 with labels row(r) + col(c), cut into 4 × 4 windows
/// and added to `scores` [h/4 · w/4 windows, 16] as torchvision's mask would be. `rowsBoth`
/// makes the row labels [P, Q] (not an outer sum), `divisor` the window the Shape is cut by.
Model windowLabels(bool rowsBoth = false, int64_t window = 4) {
    GraphBuilder b("window_labels");
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("h"), Dim::symbol("w")});
    // Pad to a multiple of 4: pads = Mod(-[h, w], 4).
    ValueId hw = b.op("Shape", {x});
    ValueId pads = b.op("Concat", {b.ints("zeros", {0, 0}), b.op("Mod", {b.op("Neg", {hw}), b.ints("four", {4, 4})})},
                        {Attribute::makeInt("axis", 0)});
    ValueId padded = b.op("Pad", {x, pads});
    ValueId shape = b.op("Shape", {padded});
    ValueId P = b.op("Gather", {shape, int64Scalar(b, "i0", 0)});
    ValueId Q = b.op("Gather", {shape, int64Scalar(b, "i1", 1)});
    ValueId t = b.op("Sub", {b.op("Unsqueeze", {b.op("Range", {int64Scalar(b, "zero", 0), P, int64Scalar(b, "one", 1)}),
                                                b.ints("axis1", {1})}),
                             P});
    ValueId row = b.op("Where", {b.op("Less", {t, int64Scalar(b, "m4", -4)}), b.scalar("l0", 0.f),
                                 b.op("Where", {b.op("Less", {t, int64Scalar(b, "m2", -2)}), b.scalar("l3", 3.f), b.scalar("l6", 6.f)})});
    ValueId u = b.op("Sub", {b.op("Range", {int64Scalar(b, "zero_c", 0), Q, int64Scalar(b, "one_c", 1)}), Q});
    ValueId col = b.op("Where", {b.op("Less", {u, int64Scalar(b, "m2c", -2)}), b.scalar("c1", 1.f), b.scalar("c2", 2.f)});
    if (rowsBoth) row = b.op("Add", {row, b.op("Cast", {b.op("Unsqueeze", {u, b.ints("axis0", {0})})}, {Attribute::makeInt("to", 1)})});
    ValueId labels = b.op("Add", {row, col});
    // [P/k, k, Q/k, k] from the padded map's shape.
    ValueId k = b.ints("k", {window});
    ValueId counts = b.op("Div", {shape, b.ints("kk", {window, window})});
    ValueId target = b.op("Concat", {b.op("Slice", {counts, b.ints("s0", {0}), b.ints("e0", {1})}), k,
                                     b.op("Slice", {counts, b.ints("s1", {1}), b.ints("e1", {2})}), k},
                          {Attribute::makeInt("axis", 0)});
    ValueId windows = b.op("Transpose", {b.op("Reshape", {labels, target})}, {Attribute::makeInts("perm", {0, 2, 1, 3})});
    b.output(b.op("Reshape", {windows, b.ints("flat", {-1, window * window})}));
    return b.finish();
}

const std::vector<test::DimBindings> kSizes{{{"h", 8}, {"w", 12}}, {{"h", 5}, {"w", 3}}, {{"h", 1}, {"w", 9}}, {{"h", 16}, {"w", 4}}};

int count(const Model& m, const std::string& op) { return test::opCounts(m.graph)[op]; }

}  // namespace

TEST(OuterSumWindows, WindowsOfAnOuterSumAreTheSumOfCutRowsAndColumns) {
    Model m = windowLabels();
    const int transposes = count(m, "Transpose");
    auto r = test::runCheckedAtBindings(m, {"shape-chain-folding", "constant-folding", "algebraic", "cse", "dce"}, kSizes);
    EXPECT_FALSE(test::silentAbout(r.steps.front().result, "outer-sum-windows"));
    EXPECT_EQ(count(m, "Transpose"), transposes - 1);
    EXPECT_EQ(count(m, "Unsqueeze"), 0) << "the row Reshape took the Range's Unsqueeze (reshape-through-elementwise)";
    EXPECT_FALSE(test::silentAbout(r.steps[2].result, "reshape-through-elementwise"));
}

TEST(OuterSumWindows, WindowsThatDoNotFitOrRowsThatAreNotAnOuterSumStay) {
    for (int variant = 0; variant < 2; ++variant) {
        SCOPED_TRACE(variant);
        // The map is padded to a multiple of 4 but cut by 8: 8 need not divide it. Or the row
        // labels vary along both axes.
        Model m = variant == 0 ? windowLabels(false, 8) : windowLabels(true);
        const int transposes = count(m, "Transpose");
        auto r = test::runCheckedAtBindings(m, {"shape-chain-folding", "dce"}, {{{"h", 8}, {"w", 16}}, {{"h", 16}, {"w", 8}}});
        EXPECT_TRUE(test::silentAbout(r.steps.front().result, "outer-sum-windows"));
        EXPECT_EQ(count(m, "Transpose"), transposes);
    }
}

TEST(ReshapeSink, AChainReadElsewhereOrWithTwoTensorInputsStays) {
    for (int variant = 0; variant < 3; ++variant) {
        SCOPED_TRACE(variant);
        GraphBuilder b("reshape_sink");
        ValueId x = b.input("x", DataType::Float, {8});
        ValueId y = b.input("y", DataType::Float, {8, 1});
        ValueId u = b.op("Unsqueeze", {x, b.ints("axis1", {1})});
        ValueId second = variant == 1 ? y : b.scalar("half", 0.5f);
        ValueId v = b.op("Mul", {b.op("Relu", {u}), second});
        b.output(b.op("Reshape", {v, b.ints("target", {-1, 1, 4, 1})}));
        if (variant == 2) b.output(u);  // the Unsqueeze is read elsewhere
        Model m = b.finish();
        auto run = test::runChecked(m);
        if (variant == 0) {
            EXPECT_EQ(run.after.count("Unsqueeze"), 0u);
            EXPECT_EQ(run.after.at("Reshape"), 1);
        } else {
            EXPECT_TRUE(test::silentAbout(run.result, "reshape-through-elementwise"));
            EXPECT_EQ(run.after.at("Unsqueeze"), 1);
        }
    }
}
