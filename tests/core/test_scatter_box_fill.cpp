// shape-chain-folding's ScatterND rules on a hand-built version of the shifted-window mask
// exporters write (`mask[r0:r1, c0:c1] = k` over symbolic sizes): a box write becomes a Where over
// Range comparisons, writing a fill into data that already holds it goes, and writes that are not
// a full box of Range slices stay. Op counts, remarks, the interpreter's outputs at bindings that
// make the boxes full, partial and empty, and a second run that changes nothing.
#include <gtest/gtest.h>

#include <limits>

#include "PassTestSupport.h"
#include "examples/Builder.h"

using namespace passlens;
using namespace passlens::ir;

namespace {


struct Slice1 {
    int64_t start, end, step = 1;
};

class MaskBuilder {
public:
    MaskBuilder() : b_("box_mask") {
        x_ = b_.inputSymbolic("x", DataType::Float, {Dim::symbol("h"), Dim::symbol("w")});
        shape_ = b_.op("Shape", {x_});
    }

    GraphBuilder& b() { return b_; }
    ValueId x() const { return x_; }
    /// A float [h, w] tensor of `fill`.
    ValueId filled(float fill) { return b_.op("ConstantOfShape", {shape_}, {Attribute::makeTensor("value", floatTensor({1}, {fill}))}); }

    /// Slice(Range(0, dim `axis` of x), start, end, step).
    ValueId positions(int64_t axis, Slice1 s) {
        ValueId dim = b_.op("Gather", {shape_, scalar(axis)});
        ValueId range = b_.op("Range", {scalar(0), dim, scalar(1)});
        return b_.op("Slice", {range, b_.ints(tag("start"), {s.start}), b_.ints(tag("end"), {s.end}), b_.ints(tag("axis"), {0}),
                               b_.ints(tag("step"), {s.step})});
    }

    /// ScatterND(data, grid(rows, cols), ConstantOfShape(value)) as torch exports a box
    /// assignment: the grid's shape is read from a slice of the data. `swapSides` puts the
    /// column indices first (a transposed box, which the rule must not take for this one).
    ValueId scatterBox(ValueId data, Slice1 rows, Slice1 cols, float value, bool swapSides = false) {
        ValueId region = b_.op("Slice", {data, b_.ints(tag("rs"), {rows.start}), b_.ints(tag("re"), {rows.end}),
                                         b_.ints(tag("ra"), {0}), b_.ints(tag("rst"), {rows.step})});
        region = b_.op("Slice", {region, b_.ints(tag("cs"), {cols.start}), b_.ints(tag("ce"), {cols.end}),
                                 b_.ints(tag("ca"), {1}), b_.ints(tag("cst"), {cols.step})});
        ValueId gridShape = b_.op("Shape", {region});
        ValueId r = b_.op("Reshape", {positions(0, rows), b_.ints(tag("col"), {-1, 1})});
        ValueId c = positions(1, cols);
        ValueId rowIdx = b_.op("Unsqueeze", {b_.op("Expand", {r, gridShape}), b_.ints(tag("last"), {-1})});
        ValueId colIdx = b_.op("Unsqueeze", {b_.op("Expand", {c, gridShape}), b_.ints(tag("last"), {-1})});
        std::vector<ValueId> sides = swapSides ? std::vector<ValueId>{colIdx, rowIdx} : std::vector<ValueId>{rowIdx, colIdx};
        ValueId indices = b_.op("Concat", sides, {Attribute::makeInt("axis", -1)});
        ValueId updates = b_.op("ConstantOfShape", {gridShape}, {Attribute::makeTensor("value", floatTensor({1}, {value}))});
        return b_.op("ScatterND", {data, indices, updates});
    }

    Model finish(ValueId mask) {
        b_.output(b_.op("Add", {x_, mask}));
        return b_.finish();
    }

private:
    ValueId scalar(int64_t v) { return b_.constant(tag("k"), int64Tensor({}, {v})); }
    std::string tag(const std::string& s) { return s + std::to_string(++counter_); }

    GraphBuilder b_;
    ValueId x_ = kNone, shape_ = kNone;
    int counter_ = 0;
};

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

/// Runs shape-chain-folding and dce, checks the outputs at bindings where the boxes are full,
/// partial and empty, and that a second run finds nothing to do.
passes::PipelineResult runAndCompare(Model& m) {
    return test::runCheckedAtBindings(m, {"shape-chain-folding", "dce"},
                                      {{{"h", 12}, {"w", 8}}, {{"h", 3}, {"w", 5}}, {{"h", 1}, {"w", 1}}, {{"h", 7}, {"w", 16}}});
}

bool hasApplied(const passes::PipelineResult& r, const std::string& rule) {
    for (const auto& step : r.steps)
        for (const auto& rm : step.result.remarks)
            if (rm.kind == passes::RemarkKind::Applied && rm.rule == rule) return true;
    return false;
}

}  // namespace

TEST(ScatterBoxFill, ShiftedWindowLabelsBecomeWheresOverRangeComparisons) {
    MaskBuilder mb;
    // The 3 x 3 regions of a shifted-window mask (window 4, shift 2), labels 0..8.
    const Slice1 bands[] = {{0, -4}, {-4, -2}, {-2, kEnd}};
    ValueId mask = mb.filled(0.f);
    float label = 0;
    for (const Slice1& r : bands)
        for (const Slice1& c : bands) mask = mb.scatterBox(mask, r, c, label++);
    Model m = mb.finish(mask);
    EXPECT_EQ(test::opCounts(m.graph).at("ScatterND"), 9);
    auto r = runAndCompare(m);
    auto counts = test::opCounts(m.graph);
    EXPECT_EQ(counts.count("ScatterND"), 0u);
    EXPECT_EQ(counts.count("Expand"), 0u) << "the index grids are dead code";
    // Label 0 over zeros is no write at all; the eight Wheres left are labels 3i + j, a row part
    // plus a column part (box-grid-labels, test_box_grid_labels.cpp): two comparisons and two
    // Wheres a side.
    EXPECT_EQ(counts.at("Where"), 4);
    EXPECT_EQ(counts.at("Less"), 4);
    EXPECT_EQ(counts.count("And"), 0u);
    EXPECT_TRUE(hasApplied(r, "scatter-box-to-where"));
    EXPECT_TRUE(hasApplied(r, "scatter-fill-noop"));
    EXPECT_TRUE(hasApplied(r, "box-grid-labels"));
}

TEST(ScatterBoxFill, NonNegativeBoundsAndBoxesPastTheEnd) {
    MaskBuilder mb;
    // [1:3, 2:] and [5:100, 0:1]: positive starts, an end past every size at the bindings.
    ValueId mask = mb.scatterBox(mb.filled(-1.f), {1, 3}, {2, kEnd}, 4.f);
    mask = mb.scatterBox(mask, {5, 100}, {0, 1}, 9.f);
    Model m = mb.finish(mask);
    runAndCompare(m);
    auto counts = test::opCounts(m.graph);
    EXPECT_EQ(counts.count("ScatterND"), 0u);
    EXPECT_EQ(counts.at("Where"), 2);
}

TEST(ScatterBoxFill, WritingTheFillTheDataHoldsIsRemoved) {
    MaskBuilder mb;
    Model m = mb.finish(mb.scatterBox(mb.filled(2.5f), {0, -1}, {1, kEnd}, 2.5f));
    auto r = runAndCompare(m);
    auto counts = test::opCounts(m.graph);
    EXPECT_EQ(counts.count("ScatterND"), 0u);
    EXPECT_EQ(counts.count("Where"), 0u);
    EXPECT_TRUE(hasApplied(r, "scatter-fill-noop"));
}

TEST(ScatterBoxFill, WritesThatAreNotABoxOfRangeSlicesStay) {
    // Every second row: a Slice with step 2 is not an interval.
    {
        MaskBuilder mb;
        Model m = mb.finish(mb.scatterBox(mb.filled(0.f), {0, kEnd, 2}, {0, -1}, 1.f));
        runAndCompare(m);
        EXPECT_EQ(test::opCounts(m.graph).at("ScatterND"), 1);
    }
    // Column indices first: the grid is (col, row) pairs, not this rule's box.
    {
        MaskBuilder mb;
        Model m = mb.finish(mb.scatterBox(mb.filled(0.f), {0, kEnd}, {0, kEnd}, 1.f, /*swapSides=*/true));
        EXPECT_EQ(test::opCounts(m.graph).at("ScatterND"), 1);
        passes::PassManager pm;
        pm.addPass("shape-chain-folding");
        pm.run(m);
        EXPECT_EQ(test::opCounts(m.graph).at("ScatterND"), 1);
    }
    // Updates that are not one value (a Range of floats) are data, not a fill.
    {
        MaskBuilder mb;
        GraphBuilder& b = mb.b();
        ValueId data = mb.filled(0.f);
        ValueId full = mb.scatterBox(data, {0, -1}, {0, -1}, 1.f);
        // Same indices, the updates replaced by the data's own values at those positions.
        const ValueId indices = b.graph().node(b.graph().value(full).producer).inputs[1];
        ValueId values = b.op("Slice", {mb.x(), b.ints("vs", {0, 0}), b.ints("ve", {-1, -1}), b.ints("va", {0, 1})});
        ValueId y = b.op("ScatterND", {data, indices, values});
        Model m = mb.finish(y);
        runAndCompare(m);
        EXPECT_EQ(test::opCounts(m.graph).at("ScatterND"), 1);
    }
}
