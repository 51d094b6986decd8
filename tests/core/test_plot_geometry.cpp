// Chart geometry of the memory view, GUI-less: scales (step ↔ x, offset ↔ y with inversion), nice
// ticks with byte units, band assignment, hit testing, and the charts built from a real plan.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "examples/Examples.h"
#include "examples/Builder.h"
#include "memory/MemoryPlan.h"
#include "plot/MemoryCharts.h"
#include "plot/Scale.h"

using namespace passlens;
using namespace passlens::plot;

namespace {

memory::BufferAssignment buffer(const char* name, int64_t offset, int64_t bytes, int first, int last) {
    memory::BufferAssignment b;
    b.name = name;
    b.value = static_cast<ir::ValueId>(offset + first);
    b.offset = offset;
    b.bytes = bytes;
    b.first = first;
    b.last = last;
    return b;
}

/// Four steps; a and c reuse offset 0, b sits above at 100; arena 300.
memory::MemoryPlan smallPlan() {
    memory::MemoryPlan p;
    p.planner = "share";
    p.scheduleNames = {"s0", "s1", "s2", "s3"};
    p.buffers = {buffer("a", 0, 100, 0, 1), buffer("b", 100, 200, 1, 3), buffer("c", 0, 50, 2, 3)};
    p.arenaBytes = 300;
    p.lowerBoundBytes = 250;
    p.liveBytesPerStep = {100, 300, 250, 250};
    for (const auto& b : p.buffers) {
        memory::TensorLifetime t;
        t.value = b.value;
        t.name = b.name;
        t.bytes = b.bytes;
        t.first = b.first;
        t.last = b.last;
        p.lifetimes.push_back(t);
    }
    return p;
}

/// x → Relu → Sigmoid → Tanh → Abs → Neg → y: every activation dies one step after its birth, so a
/// sharing planner needs two blocks for four activations.
ir::Model chainModel() {
    ir::GraphBuilder b("chain");
    ir::ValueId v = b.input("x", ir::DataType::Float, {1, 64, 32, 32});
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Abs", "Neg"}) v = b.op(op, {v});
    b.output(v);
    return b.finish();
}

const PlotArea kArea{50, 10, 400, 200};  // x 50..450, y 10..210

}  // namespace

TEST(PlotScale, MapsDomainToPixelsAndBack) {
    LinearScale x{0, 4, 50, 450};
    EXPECT_DOUBLE_EQ(x.toPixel(0), 50);
    EXPECT_DOUBLE_EQ(x.toPixel(1), 150);
    EXPECT_DOUBLE_EQ(x.toPixel(4), 450);
    EXPECT_DOUBLE_EQ(x.toDomain(250), 2);
}

TEST(PlotScale, YAxisInvertsSoLargerValuesAreHigher) {
    LinearScale y{0, 1000, 210, 10};  // bottom pixel first
    EXPECT_DOUBLE_EQ(y.toPixel(0), 210);
    EXPECT_DOUBLE_EQ(y.toPixel(1000), 10);
    EXPECT_DOUBLE_EQ(y.toPixel(250), 160);
    EXPECT_LT(y.toPixel(600), y.toPixel(500));
    EXPECT_DOUBLE_EQ(y.toDomain(110), 500);
}

TEST(PlotScale, EmptyDomainDoesNotDivideByZero) {
    LinearScale s{3, 3, 0, 100};
    EXPECT_DOUBLE_EQ(s.toPixel(3), 0);
    EXPECT_TRUE(niceTicks(5, 5, 6).empty());
}

TEST(PlotTicks, OneTwoFiveSpacing) {
    EXPECT_EQ(niceTicks(0, 10, 6), (std::vector<double>{0, 2, 4, 6, 8, 10}));
    EXPECT_EQ(niceTicks(0, 100, 3), (std::vector<double>{0, 50, 100}));
    EXPECT_EQ(niceTicks(0, 1000, 11), (std::vector<double>{0, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000}));
    EXPECT_DOUBLE_EQ(niceStep(0, 7, 8), 1);
    EXPECT_DOUBLE_EQ(niceStep(0, 30, 4), 10);
    EXPECT_DOUBLE_EQ(niceStep(0, 0.9, 4), 0.5);
    // Starts at the first multiple at or above lo.
    EXPECT_EQ(niceTicks(3, 21, 5), (std::vector<double>{5, 10, 15, 20}));
    for (double lo : {0.0, 13.0}) {
        auto t = niceTicks(lo, 765, 12);
        ASSERT_FALSE(t.empty());
        EXPECT_LE(t.size(), 12u);
        EXPECT_GE(t.front(), lo);
        EXPECT_LE(t.back(), 765);
    }
}

TEST(PlotTicks, ByteUnitsAndLabels) {
    EXPECT_EQ(formatBytes(0), "0 B");
    EXPECT_EQ(formatBytes(512), "512 B");
    EXPECT_EQ(formatBytes(1536), "1.5 KiB");
    EXPECT_EQ(formatBytes(12.0 * 1024 * 1024), "12 MiB");
    EXPECT_EQ(formatBytes(1.25 * 1024 * 1024 * 1024), "1.25 GiB");
    // 3 MiB range: ticks are whole or half MiB, not decimal thousands.
    auto t = byteTicks(0, 3.0 * 1024 * 1024, 7);
    EXPECT_EQ(t, (std::vector<double>{0, 0.5 * 1048576, 1048576, 1.5 * 1048576, 2 * 1048576, 2.5 * 1048576, 3 * 1048576}));
    LinearScale y{0, 4096, 100, 0};
    auto ticks = makeTicks(y, 5, true);
    ASSERT_EQ(ticks.size(), 5u);
    EXPECT_EQ(ticks[1].label, "1 KiB");
    EXPECT_DOUBLE_EQ(ticks[1].pixel, 75);
    EXPECT_EQ(ticks[4].label, "4 KiB");
}

TEST(PlotTicks, StepAxisHasOnlyIntegerTicks) {
    LinearScale x{0, 3, 0, 300};
    for (const auto& t : makeTicks(x, 12, false)) EXPECT_EQ(t.value, static_cast<int>(t.value)) << t.label;
}

TEST(PlotArena, RectanglesSpanStepsAndOffsets) {
    auto plan = smallPlan();
    auto g = layoutArenaChart(plan, kArea);
    ASSERT_EQ(g.rects.size(), 3u);
    // x: 4 steps over 400 px → 100 px per step; b lives [1,3] → x 150..450.
    EXPECT_DOUBLE_EQ(g.rects[1].rect.x, 150);
    EXPECT_DOUBLE_EQ(g.rects[1].rect.width, 300);
    // y: domain top is a nice tick ≥ 300; b spans offsets 100..300.
    EXPECT_GE(g.y.domainEnd, 300);
    EXPECT_DOUBLE_EQ(g.rects[1].rect.y, g.y.toPixel(300));
    EXPECT_DOUBLE_EQ(g.rects[1].rect.y + g.rects[1].rect.height, g.y.toPixel(100));
    // a at offset 0 touches the bottom of the plot.
    EXPECT_DOUBLE_EQ(g.rects[0].rect.y + g.rects[0].rect.height, kArea.bottom());
    EXPECT_LT(g.rects[1].rect.y, g.rects[0].rect.y);  // higher offset is drawn higher
    EXPECT_DOUBLE_EQ(g.arenaOutline.y, g.y.toPixel(300));
    ASSERT_FALSE(g.yTicks.empty());
    EXPECT_EQ(g.yTicks.front().label, "0 B");
}

TEST(PlotArena, BuffersSharingAnOffsetShareABand) {
    auto plan = smallPlan();
    std::vector<int> bandOf;
    auto bands = assignBands(plan.buffers, &bandOf);
    EXPECT_EQ(bands, (std::vector<int64_t>{0, 100}));
    EXPECT_EQ(bandOf, (std::vector<int>{0, 1, 0}));
    // Naive plan: every buffer its own offset, so its own band.
    std::vector<memory::BufferAssignment> naive = {buffer("x", 0, 10, 0, 0), buffer("y", 10, 10, 1, 1),
                                                   buffer("z", 20, 10, 2, 2)};
    EXPECT_EQ(assignBands(naive, &bandOf).size(), 3u);
    EXPECT_EQ(bandOf, (std::vector<int>{0, 1, 2}));
    EXPECT_TRUE(assignBands({}, &bandOf).empty());
}

TEST(PlotArena, HitTestFindsTheBufferUnderThePoint) {
    auto plan = smallPlan();
    auto g = layoutArenaChart(plan, kArea);
    for (const auto& r : g.rects) EXPECT_EQ(g.hitTest(r.rect.centerX(), r.rect.centerY()), r.buffer);
    // Step 0 above a (offset 100..300 is free at step 0) hits nothing; outside the plot neither.
    EXPECT_EQ(g.hitTest(g.x.toPixel(0.5), g.y.toPixel(200)), -1);
    EXPECT_EQ(g.hitTest(10, 10), -1);
    // c (offset 0..50, steps 2..3) vs a (offset 0..100, steps 0..1): step 2.5 at offset 75 is free.
    EXPECT_EQ(g.hitTest(g.x.toPixel(2.5), g.y.toPixel(75)), -1);
    EXPECT_EQ(g.hitTest(g.x.toPixel(2.5), g.y.toPixel(25)), 2);
}

TEST(PlotLifetime, RowsOrderedByFirstStep) {
    auto plan = smallPlan();
    std::swap(plan.lifetimes[0], plan.lifetimes[2]);  // c (first 2), b (first 1), a (first 0)
    auto g = layoutLifetimeChart(plan, kArea);
    ASSERT_EQ(g.bars.size(), 3u);
    EXPECT_EQ(g.bars[0].tensor, 2);  // a
    EXPECT_EQ(g.bars[1].tensor, 1);  // b
    EXPECT_EQ(g.bars[2].tensor, 0);  // c
    EXPECT_DOUBLE_EQ(g.bars[0].rect.y, kArea.top);
    EXPECT_DOUBLE_EQ(g.bars[2].rect.x, 250);      // c starts at step 2
    EXPECT_DOUBLE_EQ(g.bars[2].rect.width, 200);  // lives steps 2..3
    for (const auto& b : g.bars) EXPECT_EQ(g.hitTest(b.rect.centerX(), b.rect.centerY()), b.tensor);
    EXPECT_EQ(g.hitTest(60, g.bars[2].rect.centerY()), -1);  // row of c, step 0: c not alive
}

TEST(PlotLiveBytes, StepCurveAndLines) {
    auto plan = smallPlan();
    auto s = layoutLiveBytes(plan, kArea);
    ASSERT_EQ(s.curve.size(), 8u);
    EXPECT_EQ(s.maxLive, 300);
    EXPECT_EQ(s.peakStep, 1);
    EXPECT_DOUBLE_EQ(s.curve[2].x, 150);
    EXPECT_DOUBLE_EQ(s.curve[3].x, 250);
    EXPECT_DOUBLE_EQ(s.curve[2].y, s.y.toPixel(300));
    EXPECT_DOUBLE_EQ(s.lowerBoundY, s.y.toPixel(250));
    EXPECT_DOUBLE_EQ(s.arenaY, s.y.toPixel(300));
    EXPECT_LT(s.arenaY, s.lowerBoundY);  // larger value, higher line
    EXPECT_EQ(s.stepAt(175), 1);
    EXPECT_EQ(s.stepAt(40), -1);
    EXPECT_EQ(s.stepAt(460), -1);
}

TEST(PlotArena, RealPlanEveryBufferHasARectInsideTheArena) {
    ir::Model m = chainModel();
    for (const char* planner : {"naive", "share", "greedy-size", "inplace"}) {
        auto plan = memory::planMemory(m, m.graph, {planner});
        ASSERT_FALSE(plan.buffers.empty()) << planner;
        auto g = layoutArenaChart(plan, kArea);
        ASSERT_EQ(g.rects.size(), plan.buffers.size());
        for (const auto& r : g.rects) {
            EXPECT_GE(r.rect.y, g.arenaOutline.y - 1e-6) << planner;
            EXPECT_LE(r.rect.y + r.rect.height, kArea.bottom() + 1e-6);
            EXPECT_GE(r.rect.x, kArea.left);
            EXPECT_LE(r.rect.x + r.rect.width, kArea.right() + 1e-6);
        }
        std::vector<int> bandOf;
        size_t bands = assignBands(plan.buffers, &bandOf).size();
        if (std::string(planner) == "naive") EXPECT_EQ(bands, plan.buffers.size());
        else EXPECT_LT(bands, plan.buffers.size()) << planner << ": sharing should merge bands";
    }
    const auto* ex = examples::find("conv_bn_relu");
    ASSERT_NE(ex, nullptr);
    ir::Model conv = ex->build();
    auto plan = memory::planMemory(conv, conv.graph, {"best"});
    auto g = layoutArenaChart(plan, kArea);
    ASSERT_EQ(g.rects.size(), plan.buffers.size());
    for (const auto& r : g.rects) EXPECT_EQ(g.hitTest(r.rect.centerX(), r.rect.centerY()), r.buffer);
}

TEST(PlotArena, InplacePairSplitsTheHandOffStep) {
    memory::MemoryPlan p = smallPlan();
    // d overwrites b in place at step 3 (b's last step), same offset and size.
    p.buffers[1].last = 2;
    auto d = buffer("d", 100, 200, 2, 3);
    d.value = 77;
    d.inplaceOf = p.buffers[1].value;
    p.buffers.push_back(d);
    auto g = layoutArenaChart(p, kArea);
    EXPECT_DOUBLE_EQ(g.rects[1].rect.x + g.rects[1].rect.width, g.x.toPixel(2.5));
    EXPECT_DOUBLE_EQ(g.rects[3].rect.x, g.x.toPixel(2.5));
    EXPECT_DOUBLE_EQ(g.rects[3].rect.x + g.rects[3].rect.width, g.x.toPixel(4));
    EXPECT_EQ(g.hitTest(g.rects[1].rect.centerX(), g.rects[1].rect.centerY()), 1);
    EXPECT_EQ(g.hitTest(g.rects[3].rect.centerX(), g.rects[3].rect.centerY()), 3);
    EXPECT_EQ(g.hitTest(g.x.toPixel(2.25), g.y.toPixel(200)), 1);
    EXPECT_EQ(g.hitTest(g.x.toPixel(2.75), g.y.toPixel(200)), 3);
}

TEST(PlotLiveBytes, AxesStartAtTheFirstStepThatAllocates) {
    memory::MemoryPlan p = smallPlan();
    // Two leading steps that only make constants: every tensor moves two steps later.
    p.scheduleNames.insert(p.scheduleNames.begin(), {"const0", "const1"});
    p.liveBytesPerStep.insert(p.liveBytesPerStep.begin(), {0, 0});
    for (auto& b : p.buffers) { b.first += 2; b.last += 2; }
    for (auto& t : p.lifetimes) { t.first += 2; t.last += 2; }
    EXPECT_EQ(firstActiveStep(p), 2);
    EXPECT_EQ(stepCount(p), 6);
    auto s = layoutLiveBytes(p, kArea);
    EXPECT_DOUBLE_EQ(s.x.toPixel(2), kArea.left);
    EXPECT_EQ(s.curve.size(), 8u);  // the empty leading steps are not drawn
    EXPECT_EQ(s.stepAt(kArea.left + 1), 2);
    EXPECT_EQ(s.stepAt(kArea.left - 1), -1);
    auto a = layoutArenaChart(p, kArea);
    EXPECT_DOUBLE_EQ(a.rects[0].rect.x, kArea.left);
    auto l = layoutLifetimeChart(p, kArea);
    EXPECT_DOUBLE_EQ(l.bars[0].rect.x, kArea.left);
    EXPECT_EQ(firstActiveStep(memory::MemoryPlan{}), 0);
}

namespace {

/// `n` bars in row order over `height` px: bar i spans steps [i % 97, i % 97 + 1 + i % 5) of 100
/// steps over 1000 px, the way short-lived tensors of a long model scatter.
std::vector<passlens::plot::LifetimeBar> scatteredBars(int n, double height) {
    std::vector<passlens::plot::LifetimeBar> bars;
    const double rowH = height / n;
    for (int i = 0; i < n; ++i) {
        const double first = i % 97, len = 1 + i % 5;
        bars.push_back({i, i, {first * 10.0, i * rowH, len * 10.0, rowH}});
    }
    return bars;
}

}  // namespace

TEST(PlotLevelOfDetail, TwentyThousandBarsBecomeAFewPerPixelRowAndCoverTheSameSpans) {
    const auto bars = scatteredBars(20000, 300);
    const auto drawn = passlens::plot::mergeSubPixelBars(bars);
    EXPECT_LT(drawn.size(), bars.size() / 10);  // here: about two pieces per pixel row
    for (const auto& d : drawn) EXPECT_DOUBLE_EQ(d.rect.height, 1.0);
    // Every bar's span is covered by a piece in its pixel row.
    for (const auto& b : bars) {
        const double row = std::floor(b.rect.y);
        bool covered = false;
        for (const auto& d : drawn)
            if (d.rect.y == row && d.rect.x <= b.rect.x && d.rect.x + d.rect.width >= b.rect.x + b.rect.width) covered = true;
        ASSERT_TRUE(covered) << "bar " << b.tensor;
    }
}

TEST(PlotLevelOfDetail, GapsWiderThanAPixelStaySeparate) {
    using passlens::plot::LifetimeBar;
    // Two bars in one pixel row, 30 px apart: two pieces; a third touching the first joins it.
    std::vector<LifetimeBar> bars{{0, 0, {0, 0.0, 10, 0.2}}, {1, 1, {40, 0.2, 10, 0.2}}, {2, 2, {10.5, 0.4, 5, 0.2}}};
    const auto drawn = passlens::plot::mergeSubPixelBars(bars);
    ASSERT_EQ(drawn.size(), 2u);
    EXPECT_EQ(drawn[0].tensor, 0);
    EXPECT_DOUBLE_EQ(drawn[0].rect.width, 15.5);
    EXPECT_EQ(drawn[1].tensor, 1);
}

TEST(PlotLevelOfDetail, BarsOfAPixelOrMoreAreUnchanged) {
    const auto bars = scatteredBars(200, 300);  // 1.5 px rows
    const auto drawn = passlens::plot::mergeSubPixelBars(bars);
    ASSERT_EQ(drawn.size(), bars.size());
    for (size_t i = 0; i < bars.size(); ++i) EXPECT_DOUBLE_EQ(drawn[i].rect.y, bars[i].rect.y);
}

namespace {

/// `n` buffers of a 20k-tensor plan squeezed into a 400×300 px arena chart, in `bands` bands.
std::vector<passlens::plot::ArenaRect> scatteredRects(int n, int bands) {
    std::vector<passlens::plot::ArenaRect> rects;
    uint32_t seed = 7;
    auto next = [&] { return (seed = seed * 1664525u + 1013904223u) >> 8; };
    for (int i = 0; i < n; ++i) {
        // A band is one start offset: its buffers share the top edge and differ in size (height)
        // and in the steps they live (x, width).
        const int band = static_cast<int>(next() % static_cast<uint32_t>(bands));
        const double y = band * (300.0 / bands) + 0.3;
        const double x = (next() % 40000) / 100.0;
        rects.push_back({i, band, {x, y, (next() % 100) / 100.0 * 3, 0.05 + (next() % 90) / 100.0}});
    }
    return rects;
}

bool coveredWhenDrawn(const passlens::plot::ArenaRect& r, const std::vector<passlens::plot::ArenaRect>& drawn) {
    // Every pixel cell the rectangle touches (at least one) lies inside a drawn rectangle.
    const double x0 = std::floor(r.rect.x), y0 = std::floor(r.rect.y);
    const double x1 = std::max(x0 + 1, std::ceil(r.rect.x + r.rect.width)), y1 = std::max(y0 + 1, std::ceil(r.rect.y + r.rect.height));
    for (double y = y0; y < y1; ++y)
        for (double x = x0; x < x1; ++x) {
            bool in = false;
            for (const auto& d : drawn)
                if (d.rect.contains(x + 0.5, y + 0.5)) in = true;
            if (!in) return false;
        }
    return true;
}

}  // namespace

TEST(PlotLevelOfDetail, TwentyThousandArenaRectsBecomePixelRunsCoveringTheSamePixels) {
    const auto rects = scatteredRects(20000, 8);
    const auto drawn = passlens::plot::mergeSubPixelRects(rects);
    EXPECT_LT(drawn.size(), rects.size() / 4);
    for (size_t i = 0; i < rects.size(); i += 97) ASSERT_TRUE(coveredWhenDrawn(rects[i], drawn)) << "buffer " << i;
    // With a few buffers of a pixel or more among them: those stay as they are.
    auto mixed = rects;
    mixed[5].rect.width = mixed[5].rect.height = 6;
    const auto drawnMixed = passlens::plot::mergeSubPixelRects(mixed);
    ASSERT_FALSE(drawnMixed.empty());
    EXPECT_EQ(drawnMixed.front().buffer, 5);
    EXPECT_DOUBLE_EQ(drawnMixed.front().rect.height, 6);
}

TEST(PlotLevelOfDetail, ArenaRectsOfAPixelOrMoreAreUnchanged) {
    std::vector<passlens::plot::ArenaRect> rects{{0, 0, {0, 0, 10, 5}}, {1, 1, {20.5, 3.25, 4, 1}}};
    const auto drawn = passlens::plot::mergeSubPixelRects(rects);
    ASSERT_EQ(drawn.size(), 2u);
    EXPECT_DOUBLE_EQ(drawn[1].rect.x, 20.5);
    EXPECT_DOUBLE_EQ(drawn[1].rect.y, 3.25);
}

TEST(PlotLevelOfDetail, SubPixelArenaRectsInOnePixelRowJoinWithTheLeftmostColor) {
    // Two touching sub-pixel buffers of different bands in pixel row 0, one 10 px away.
    std::vector<passlens::plot::ArenaRect> rects{{0, 3, {0.2, 0.1, 0.5, 0.2}}, {1, 1, {0.9, 0.2, 0.5, 0.2}}, {2, 1, {12, 0.2, 0.5, 0.2}}};
    const auto drawn = passlens::plot::mergeSubPixelRects(rects);
    ASSERT_EQ(drawn.size(), 2u);
    EXPECT_EQ(drawn[0].band, 3);
    EXPECT_DOUBLE_EQ(drawn[0].rect.x, 0);
    EXPECT_DOUBLE_EQ(drawn[0].rect.width, 2);
    EXPECT_EQ(drawn[1].buffer, 2);
}

TEST(PlotLevelOfDetail, LiveBytesCurveKeepsEachColumnsPeakAndDipWithFewPoints) {
    using passlens::plot::Point;
    // 20k steps over 500 px: two points per step, y in pixels (small y = many live bytes).
    std::vector<Point> curve;
    uint32_t seed = 3;
    for (int s = 0; s < 20000; ++s) {
        seed = seed * 1664525u + 1013904223u;
        const double y = 50 + (seed >> 8) % 200;
        curve.push_back({s * 0.025, y});
        curve.push_back({(s + 1) * 0.025, y});
    }
    const auto drawn = passlens::plot::decimateStepCurve(curve);
    EXPECT_LE(drawn.size(), 4u * 501u);
    for (size_t i = 1; i < drawn.size(); ++i) ASSERT_LE(drawn[i - 1].x, drawn[i].x);
    // Per pixel column, the highest and lowest values are still drawn.
    std::map<int, std::pair<double, double>> want, got;
    auto note = [](std::map<int, std::pair<double, double>>& m, const Point& p) {
        auto [it, fresh] = m.try_emplace(static_cast<int>(std::floor(p.x)), p.y, p.y);
        if (!fresh) it->second = {std::min(it->second.first, p.y), std::max(it->second.second, p.y)};
    };
    for (const auto& p : curve) note(want, p);
    for (const auto& p : drawn) note(got, p);
    EXPECT_EQ(got, want);
}

TEST(PlotLevelOfDetail, LiveBytesCurveWithWideStepsIsUnchanged) {
    using passlens::plot::Point;
    std::vector<Point> curve{{0, 10}, {3, 10}, {3, 20}, {6, 20}};
    EXPECT_EQ(passlens::plot::decimateStepCurve(curve).size(), curve.size());
}
