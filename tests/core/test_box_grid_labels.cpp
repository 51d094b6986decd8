// shape-chain-folding's box-grid-labels on hand-built chains of Where box writes over a row and a
// column coordinate (what scatter-box-to-where leaves of a shifted-window mask): a grid whose every
// value is a row part plus a column part becomes Add of two short Where chains; a table that is
// not separable, a cell left to data that disagrees or is not one known value, intervals that
// leave part of a coordinate's integers to the data, and a result that would lose a broadcast dim
// all stay. Op counts, remarks, the interpreter's outputs at bindings where every band is full,
// partial or empty, and a second run that changes nothing.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "PassTestSupport.h"
#include "examples/Builder.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

constexpr int64_t kOpen = std::numeric_limits<int64_t>::min();  ///< no bound on that side

/// start <= coordinate < end; kOpen leaves a side unbounded.
struct Band {
    int64_t start, end;
};

// A shifted window of 4 with shift 2, counted from the end: [0:-4], [-4:-2], [-2:].
const Band kWindowBands[] = {{kOpen, -4}, {-4, -2}, {-2, kOpen}};

class GridBuilder {
public:
    /// Coordinates of an [h, w] tensor: rows [h, 1] and columns [w], each Range(0, dim) - dim
    /// (`fromEnd`) or Range(0, dim) itself.
    explicit GridBuilder(bool fromEnd = true) : b_("box_grid") {
        x_ = b_.inputSymbolic("x", DataType::Float, {Dim::symbol("h"), Dim::symbol("w")});
        shape_ = b_.op("Shape", {x_});
        ValueId h = b_.op("Gather", {shape_, int64Scalar(0)});
        ValueId w = b_.op("Gather", {shape_, int64Scalar(1)});
        rows_ = b_.op("Unsqueeze", {b_.op("Range", {int64Scalar(0), h, int64Scalar(1)}), b_.ints("axis1", {1})});
        cols_ = b_.op("Range", {int64Scalar(0), w, int64Scalar(1)});
        if (fromEnd) {
            rows_ = b_.op("Sub", {rows_, h});
            cols_ = b_.op("Sub", {cols_, w});
        }
    }

    ValueId x() const { return x_; }
    GraphBuilder& b() { return b_; }
    /// A float [h, w] tensor of `fill`.
    ValueId filled(float fill) { return b_.op("ConstantOfShape", {shape_}, {Attribute::makeTensor("value", floatTensor({1}, {fill}))}); }

    /// Where(rows in r and cols in c, value, data), with `value` of the given dims.
    ValueId box(ValueId data, Band r, Band c, float value, std::vector<int64_t> valueDims = {}) {
        ValueId rowSide = band(rows_, r), colSide = band(cols_, c);
        ValueId cond = rowSide == kNone ? colSide : colSide == kNone ? rowSide : b_.op("And", {rowSide, colSide});
        return b_.op("Where", {cond, b_.constant(tag("value"), floatTensor(valueDims, {value})), data});
    }

    /// The 3 x 3 window grid written with `label(i, j)`, over `data`; `skip` leaves one cell
    /// unwritten (the write scatter-fill-noop removes when it puts the data's own value).
    template <class Label>
    ValueId windowGrid(ValueId data, Label label, std::optional<std::pair<int, int>> skip = std::nullopt) {
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                if (!skip || *skip != std::make_pair(i, j)) data = box(data, kWindowBands[i], kWindowBands[j], label(i, j));
        return data;
    }

    Model finish(ValueId mask) {
        b_.output(b_.op("Add", {x_, mask}));
        return b_.finish();
    }

private:
    /// Each band's comparisons made once and shared by every box that tests it, as
    /// scatter-box-to-where makes them for all the masks over one Range length.
    ValueId band(ValueId coord, Band s) {
        auto key = std::make_tuple(coord, s.start, s.end);
        if (auto it = bands_.find(key); it != bands_.end()) return it->second;
        ValueId lower = s.start == kOpen ? kNone : b_.op("GreaterOrEqual", {coord, int64Scalar(s.start)});
        ValueId upper = s.end == kOpen ? kNone : b_.op("Less", {coord, int64Scalar(s.end)});
        return bands_[key] = lower == kNone ? upper : upper == kNone ? lower : b_.op("And", {lower, upper});
    }
    ValueId int64Scalar(int64_t v) { return b_.constant(tag("k"), int64Tensor({}, {v})); }
    std::string tag(const std::string& s) { return s + std::to_string(++counter_); }

    GraphBuilder b_;
    ValueId x_ = kNone, shape_ = kNone, rows_ = kNone, cols_ = kNone;
    std::map<std::tuple<ValueId, int64_t, int64_t>, ValueId> bands_;
    int counter_ = 0;
};

/// shape-chain-folding then dce, checked at bindings where every band is full, partial or empty
/// (h, w < 4 empties [0:-4]; 1 also [-4:-2]), and for idempotence.
passes::PipelineResult runAndCompare(Model& m) {
    return test::runCheckedAtBindings(m, {"shape-chain-folding", "dce"},
                                      {{{"h", 12}, {"w", 8}}, {{"h", 3}, {"w", 5}}, {{"h", 1}, {"w", 1}}, {{"h", 7}, {"w", 16}},
                                       {{"h", 4}, {"w", 2}}});
}

bool applied(const passes::PipelineResult& r, const std::string& rule) {
    for (const auto& step : r.steps)
        if (!test::silentAbout(step.result, rule)) return true;
    return false;
}

float windowLabel(int i, int j) { return float(3 * i + j); }

/// A refusal: after the run the chain still has its `wheres` Where writes and the rule did not fire.
void expectChainKept(Model& m, int wheres) {
    auto r = runAndCompare(m);
    EXPECT_EQ(test::opCounts(m.graph).at("Where"), wheres);
    EXPECT_FALSE(applied(r, "box-grid-labels"));
}

}  // namespace

TEST(BoxGridLabels, ShiftedWindowLabelsBecomeARowPartPlusAColumnPart) {
    GridBuilder gb;
    // torchvision's labels 3i + j over zeros; label 0 is the data already (no write).
    Model m = gb.finish(gb.windowGrid(gb.filled(0.f), windowLabel, std::make_pair(0, 0)));
    EXPECT_EQ(test::opCounts(m.graph).at("Where"), 8);
    auto r = runAndCompare(m);
    auto counts = test::opCounts(m.graph);
    // Three bands a side: two comparisons and two Wheres each, one Add; the boxes' And and
    // GreaterOrEqual tests and the zeros are dead code.
    EXPECT_EQ(counts.at("Where"), 4);
    EXPECT_EQ(counts.at("Less"), 4);
    EXPECT_EQ(counts.count("And"), 0u);
    EXPECT_EQ(counts.count("GreaterOrEqual"), 0u);
    EXPECT_EQ(counts.count("ConstantOfShape"), 0u);
    EXPECT_EQ(counts.at("Add"), 2) << "the labels' Add and the model's";
    EXPECT_TRUE(applied(r, "box-grid-labels"));
}

TEST(BoxGridLabels, MasksSharingTheirComparisonsGoTogetherAndShareTheirLabels) {
    // Two blocks of a stage write the same grid over the same band tests (one feeds the output,
    // the other a second output): neither chain frees the shared comparisons alone, both do.
    GridBuilder gb;
    ValueId first = gb.windowGrid(gb.filled(0.f), windowLabel, std::make_pair(0, 0));
    ValueId second = gb.windowGrid(gb.filled(0.f), windowLabel, std::make_pair(0, 0));
    gb.b().output(gb.b().op("Mul", {gb.x(), second}));
    Model m = gb.finish(first);
    EXPECT_EQ(test::opCounts(m.graph).at("Where"), 16);
    auto r = runAndCompare(m);
    auto counts = test::opCounts(m.graph);
    EXPECT_EQ(counts.at("Where"), 4) << "one row label and one column label for both";
    EXPECT_EQ(counts.at("Less"), 4);
    EXPECT_EQ(counts.count("And"), 0u);
    EXPECT_TRUE(applied(r, "box-grid-labels"));
}

TEST(BoxGridLabels, EveryCellWrittenDropsTheDataWhateverItHolds) {
    GridBuilder gb;
    // Over the input itself: the nine boxes cover every integer pair, so the data is never read.
    Model m = gb.finish(gb.windowGrid(gb.x(), [](int i, int j) { return float(10 * i) - float(j); }));
    auto r = runAndCompare(m);
    EXPECT_EQ(test::opCounts(m.graph).at("Where"), 4);
    EXPECT_TRUE(applied(r, "box-grid-labels"));
}

TEST(BoxGridLabels, RepeatedBandsAndOneSidedBoxesOverPositions) {
    // Over Range positions: [:2] and [2:] for rows, a column strip [3:] written first over every
    // row, then two row strips that override it; labels 5*row + 2*[col >= 3].
    GridBuilder gb(/*fromEnd=*/false);
    ValueId data = gb.filled(0.f);
    data = gb.box(data, {kOpen, kOpen}, {3, kOpen}, 2.f);   // every row, cols >= 3
    data = gb.box(data, {2, kOpen}, {kOpen, 3}, 5.f);        // rows >= 2, cols < 3
    data = gb.box(data, {2, kOpen}, {3, kOpen}, 7.f);        // rows >= 2, cols >= 3
    Model m = gb.finish(data);
    auto r = runAndCompare(m);
    EXPECT_TRUE(applied(r, "box-grid-labels"));
    EXPECT_EQ(test::opCounts(m.graph).at("Where"), 2) << "two pieces a side: one comparison and one Where each";
}

TEST(BoxGridLabels, ANonSeparableGridStays) {
    GridBuilder gb;
    // 3i + j except the centre: no row part plus column part gives it.
    Model m = gb.finish(gb.windowGrid(gb.filled(0.f), [](int i, int j) { return i == 1 && j == 1 ? 9.f : windowLabel(i, j); },
                                      std::make_pair(0, 0)));
    expectChainKept(m, 8);
}

TEST(BoxGridLabels, ACellLeftToTheDataMustHoldTheFormulasValue) {
    // The unwritten cell keeps the data: zeros would have to be 3*0 + 0 = 0, so 5 is wrong.
    {
        GridBuilder gb;
        Model m = gb.finish(gb.windowGrid(gb.filled(5.f), windowLabel, std::make_pair(0, 0)));
        expectChainKept(m, 8);
    }
    // A cell left to data that is not one known value.
    {
        GridBuilder gb;
        Model m = gb.finish(gb.windowGrid(gb.x(), windowLabel, std::make_pair(1, 2)));
        expectChainKept(m, 8);
    }
}

TEST(BoxGridLabels, IntervalsThatLeaveIntegersToTheDataStay) {
    // Rows [0:2] and [2:4], columns [0:3] and [3:6] over positions: rows past 4, columns past 6
    // (and the negative integers, which positions never take but nothing proves) keep the data.
    GridBuilder gb(/*fromEnd=*/false);
    ValueId data = gb.filled(0.f);
    const Band rows[] = {{0, 2}, {2, 4}}, cols[] = {{0, 3}, {3, 6}};
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) data = gb.box(data, rows[i], cols[j], float(1 + 2 * i + j));
    Model m = gb.finish(data);
    expectChainKept(m, 4);
}

TEST(BoxGridLabels, AValueThatWidensTheResultStays) {
    // One label is a [1, 1, 1] tensor: the chain's result is [1, h, w], which an Add of a [h, 1]
    // and a [w] label would not be.
    GridBuilder gb;
    ValueId data = gb.filled(0.f);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            if (i || j)
                data = gb.box(data, kWindowBands[i], kWindowBands[j], windowLabel(i, j),
                              i == 2 && j == 2 ? std::vector<int64_t>{1, 1, 1} : std::vector<int64_t>{});
    Model m = gb.finish(data);
    expectChainKept(m, 8);
}
