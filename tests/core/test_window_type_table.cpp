// window-type-table (shape-chain-folding): a mask computed from Range(0, N) offsets from the end,
// compared with constants, cut into k × k windows, is alike in every window but the last of each
// axis, so it becomes its table at 2 windows per axis repeated by an edge Pad (Swin's shifted-
// window mask). Op counts, exact outputs at several sizes (one window, padding), idempotence, and
// the refusals: a threshold that separates earlier windows, an index read other than as i - N,
// windows that need not divide the padded size.
#include <gtest/gtest.h>

#include "PassTestSupport.h"
#include "examples/Builder.h"
#include "ir/Tensor.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

ValueId int64Scalar(GraphBuilder& b, const std::string& name, int64_t v) { return b.constant(name, int64Tensor({}, {v})); }

struct MaskOptions {
    int64_t rowThreshold = -4;   ///< the row labels' first cut (torchvision: -window)
    bool rowReadsIndex = false;  ///< the row labels also add the raw index
    int64_t window = 4;          ///< the windows the labels are cut into (the map is padded to 4)
    int64_t extraPad = 0;        ///< padded by this much more on each axis (the window count then >= 1)
};

/// x: [h, w] padded to multiples of 4; labels row(r) + col(c) from the offsets r - P and c - Q
/// (torchvision's slices from the end), cut into windows, and the pairwise "same label" mask
/// [nW, k², k²] of 0 / -100 added to the sum of x.
Model shiftedWindowMask(const MaskOptions& o = {}) {
    GraphBuilder b("shifted_window_mask");
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("h"), Dim::symbol("w")});
    ValueId hw = b.op("Shape", {x});
    ValueId pads = b.op("Concat", {b.ints("before", {o.extraPad, o.extraPad}),
                                   b.op("Mod", {b.op("Neg", {hw}), b.ints("four", {4, 4})})},
                        {Attribute::makeInt("axis", 0)});
    ValueId padded = b.op("Pad", {x, pads});
    ValueId shape = b.op("Shape", {padded});
    ValueId P = b.op("Gather", {shape, int64Scalar(b, "i0", 0)});
    ValueId Q = b.op("Gather", {shape, int64Scalar(b, "i1", 1)});
    ValueId rows = b.op("Range", {int64Scalar(b, "zero", 0), P, int64Scalar(b, "one", 1)});
    ValueId t = b.op("Sub", {rows, P});
    ValueId row = b.op("Where", {b.op("Less", {t, int64Scalar(b, "r_cut0", o.rowThreshold)}), b.scalar("l0", 0.f),
                                 b.op("Where", {b.op("Less", {t, int64Scalar(b, "r_cut1", -2)}), b.scalar("l3", 3.f), b.scalar("l6", 6.f)})});
    if (o.rowReadsIndex) row = b.op("Add", {row, b.op("Cast", {rows}, {Attribute::makeInt("to", 1)})});
    ValueId u = b.op("Sub", {b.op("Range", {int64Scalar(b, "zero_c", 0), Q, int64Scalar(b, "one_c", 1)}), Q});
    // A comparison with the constant first: -2 > u is u < -2.
    ValueId col = b.op("Where", {b.op("Less", {u, int64Scalar(b, "c_cut0", -4)}), b.scalar("c0", 0.f),
                                 b.op("Where", {b.op("Greater", {int64Scalar(b, "c_cut1", -2), u}), b.scalar("c1", 1.f), b.scalar("c2", 2.f)})});
    const int64_t k = o.window;
    ValueId labels = b.op("Add", {b.op("Reshape", {row, b.ints("window_rows", {-1, 1, k, 1})}),
                                  b.op("Reshape", {col, b.ints("window_cols", {1, -1, 1, k})})});
    ValueId flat = b.op("Reshape", {labels, b.ints("flat", {-1, k * k})});
    ValueId diff = b.op("Sub", {b.op("Unsqueeze", {flat, b.ints("axis1", {1})}), b.op("Unsqueeze", {flat, b.ints("axis2", {2})})});
    ValueId mask = b.op("Where", {b.op("Equal", {diff, b.scalar("zero_f", 0.f)}), b.scalar("keep", 0.f), b.scalar("drop", -100.f)});
    ValueId total = b.op("ReduceSum", {padded}, {Attribute::makeInt("keepdims", 0)});
    b.output(b.op("Add", {mask, total}));
    return b.finish();
}

// h, w = 1..4 give one window per axis; 5, 13 and 21 pad; 8 and 16 do not.
const std::vector<test::DimBindings> kSizes{{{"h", 8}, {"w", 12}}, {{"h", 5}, {"w", 3}}, {{"h", 1}, {"w", 9}},
                                            {{"h", 16}, {"w", 4}}, {{"h", 13}, {"w", 21}}};

int count(const Model& m, const std::string& op) { return test::opCounts(m.graph)[op]; }

const std::vector<std::string> kPipeline{"shape-chain-folding", "dce"};

}  // namespace

TEST(WindowTypeTable, AMaskOverWindowsIsItsTableOfWindowTypesRepeatedByAnEdgePad) {
    Model m = shiftedWindowMask();
    const size_t before = m.graph.nodeOrder().size();
    auto r = test::runCheckedAtBindings(m, kPipeline, kSizes);
    EXPECT_TRUE(test::hasRemark(r.steps.front().result, passes::RemarkKind::Applied, "window-type-table", "windows of 4 x 4"));
    EXPECT_EQ(count(m, "Range"), 0);
    EXPECT_EQ(count(m, "Less") + count(m, "Greater") + count(m, "Equal"), 0);
    EXPECT_EQ(count(m, "Pad"), 2) << "the input's Pad and the table's";
    // The window count of a map padded from h >= 1 may be 0 only in the engine's eyes (h + Mod(-h, 4)
    // >= 4 is not proven): the table is padded by n - 1 and its first row and column sliced off.
    EXPECT_EQ(count(m, "Slice"), 1);
    EXPECT_LT(m.graph.nodeOrder().size() + 10, before);
}

TEST(WindowTypeTable, AWindowCountProvenPositivePadsByNMinusTwo) {
    MaskOptions o;
    o.extraPad = 4;  // P = h + 4 + Mod(-h, 4): at least one window
    Model m = shiftedWindowMask(o);
    test::runCheckedAtBindings(m, kPipeline, kSizes);
    EXPECT_EQ(count(m, "Range"), 0);
    EXPECT_EQ(count(m, "Slice"), 0);
}

TEST(WindowTypeTable, MasksThatDependOnMoreThanTheLastWindowStay) {
    for (int variant = 0; variant < 3; ++variant) {
        SCOPED_TRACE(variant);
        MaskOptions o;
        std::string why;
        if (variant == 0) {
            o.rowThreshold = -5;  // x < -5 differs between x = -5 (last window) and x = -6 (the one before)
            why = "separates windows other than the last";
        } else if (variant == 1) {
            o.rowReadsIndex = true;
            why = "reads the index of a Range itself";
        } else {
            o.window = 8;  // the map is padded to a multiple of 4, not 8
            why = "other than by whole windows";
        }
        Model m = shiftedWindowMask(o);
        const int ranges = count(m, "Range");
        auto r = test::runCheckedAtBindings(m, kPipeline, {{{"h", 8}, {"w", 16}}, {{"h", 16}, {"w", 8}}});
        const passes::PassResult& folding = r.steps.front().result;
        EXPECT_TRUE(test::hasRemark(folding, passes::RemarkKind::Missed, "window-type-table", why))
            << test::remarkText(folding, passes::RemarkKind::Missed);
        EXPECT_FALSE(test::hasRemark(folding, passes::RemarkKind::Applied, "window-type-table", ""));
        EXPECT_EQ(count(m, "Range"), ranges);
    }
}

TEST(WindowTypeTable, ARangeWithoutComparisonsIsNotRemarkedOn) {
    // Position ids: Range(0, n) read by a Gather is nothing this rule looks at.
    GraphBuilder b("positions");
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("n"), Dim::of(4)});
    ValueId n = b.op("Gather", {b.op("Shape", {x}), int64Scalar(b, "i0", 0)});
    ValueId ids = b.op("Unsqueeze", {b.op("Range", {int64Scalar(b, "zero", 0), n, int64Scalar(b, "one", 1)}), b.ints("axis1", {1})});
    b.output(b.op("Add", {x, b.op("Cast", {ids}, {Attribute::makeInt("to", 1)})}));
    Model m = b.finish();
    auto r = test::runCheckedAtBindings(m, kPipeline, {{{"n", 3}}, {{"n", 7}}});
    EXPECT_TRUE(test::silentAbout(r.steps.front().result, "window-type-table"));
    EXPECT_EQ(count(m, "Range"), 1);
}
