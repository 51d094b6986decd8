// Algebraic rules on view pairs (reshape-absorbs-view, view-into-reshape: a Reshape with a
// constant target and a neighbouring Unsqueeze/Squeeze/Flatten become one Reshape) and on
// per-column scaling (concat-of-scaled-split: Concat(Mul(Split(x)_i, r_i)) → Mul(x, R),
// Concat(Split(x)) → x). Each case: the merged target or the op counts, the refusals, outputs equal
// under the interpreter at several bindings of a symbolic dim (exact), the ONNX checker and a
// second run that changes nothing (runCheckedAtBindings).
#include <gtest/gtest.h>

#include "PassTestSupport.h"
#include "examples/Builder.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

const std::vector<test::DimBindings> kSizes = {{{"n", 1}}, {{"n", 3}}, {{"n", 7}}};

passes::PipelineResult runAlgebraic(Model& m) { return test::runCheckedAtBindings(m, {"algebraic", "dce"}, kSizes); }

bool applied(const passes::PipelineResult& r, const std::string& rule) { return test::appliedInPipeline(r, rule); }

/// The constant target of the one Reshape left in the graph.
std::vector<int64_t> onlyReshapeTarget(const Model& m) {
    std::vector<int64_t> out;
    int found = 0;
    for (NodeId id : m.graph.nodeOrder()) {
        const Node& n = m.graph.node(id);
        if (n.opType != "Reshape") continue;
        ++found;
        const TensorPtr& t = m.graph.value(n.inputs[1]).initializer;
        if (t) out.assign(t->as<int64_t>(), t->as<int64_t>() + t->elementCount());
    }
    EXPECT_EQ(found, 1);
    return out;
}

ValueId symbolicInput(GraphBuilder& b, std::vector<Dim> dims) { return b.inputSymbolic("x", DataType::Float, std::move(dims)); }

}  // namespace

TEST(ViewMerge, ReshapeThenUnsqueezeIsOneReshape) {
    // x [n, 2, 3] → view(-1) → unsqueeze(0): Reshape(x, [1, -1]).
    GraphBuilder b("reshape_unsqueeze");
    ValueId x = symbolicInput(b, {Dim::symbol("n"), Dim::of(2), Dim::of(3)});
    ValueId flat = b.op("Reshape", {x, b.ints("minus1", {-1})});
    b.output(b.op("Relu", {b.op("Unsqueeze", {flat, b.ints("axes", {0})})}));
    Model m = b.finish();
    auto r = runAlgebraic(m);
    EXPECT_TRUE(applied(r, "view-into-reshape"));
    EXPECT_EQ(test::opCounts(m.graph).count("Unsqueeze"), 0u);
    EXPECT_EQ(onlyReshapeTarget(m), (std::vector<int64_t>{1, -1}));
}

TEST(ViewMerge, UnsqueezeThenReshapeIsOneReshape) {
    GraphBuilder b("unsqueeze_reshape");
    ValueId x = symbolicInput(b, {Dim::symbol("n"), Dim::of(4)});
    ValueId u = b.op("Unsqueeze", {x, b.ints("axes", {1})});
    b.output(b.op("Relu", {b.op("Reshape", {u, b.ints("target", {-1, 2, 2})})}));
    Model m = b.finish();
    auto r = runAlgebraic(m);
    EXPECT_TRUE(applied(r, "reshape-absorbs-view"));
    EXPECT_EQ(onlyReshapeTarget(m), (std::vector<int64_t>{-1, 2, 2}));
}

TEST(ViewMerge, FlattenAfterReshapeMultipliesEachSide) {
    // Reshape(x, [2, -1, 3]) then Flatten(axis=1): [2, -1]; Flatten(axis=2): [-1, 3].
    for (int64_t axis : {1, 2, -1}) {
        GraphBuilder b("reshape_flatten");
        ValueId x = symbolicInput(b, {Dim::symbol("n"), Dim::of(6)});
        ValueId mid = b.op("Reshape", {x, b.ints("target", {2, -1, 3})});
        b.output(b.op("Relu", {b.op("Flatten", {mid}, {Attribute::makeInt("axis", axis)})}));
        Model m = b.finish();
        auto r = runAlgebraic(m);
        EXPECT_TRUE(applied(r, "view-into-reshape")) << axis;
        EXPECT_EQ(onlyReshapeTarget(m), axis == 1 ? (std::vector<int64_t>{2, -1}) : (std::vector<int64_t>{-1, 3})) << axis;
    }
}

TEST(ViewMerge, SqueezeAfterReshapeDropsTheOne) {
    GraphBuilder b("reshape_squeeze");
    ValueId x = symbolicInput(b, {Dim::symbol("n"), Dim::of(6)});
    ValueId mid = b.op("Reshape", {x, b.ints("target", {1, -1, 3})});
    b.output(b.op("Relu", {b.op("Squeeze", {mid, b.ints("axes", {0})})}));
    Model m = b.finish();
    runAlgebraic(m);
    EXPECT_EQ(onlyReshapeTarget(m), (std::vector<int64_t>{-1, 3}));
}

TEST(ViewMerge, ZeroEntriesAreSpelledOutFromStaticDims) {
    // Reshape(Unsqueeze(x, 0), [0, 0, 2, -1]): the 0s copy the middle value's dims 1 and 4.
    GraphBuilder b("zero_entries");
    ValueId x = b.input("x", DataType::Float, {4, 6});
    ValueId u = b.op("Unsqueeze", {x, b.ints("axes", {0})});
    b.output(b.op("Relu", {b.op("Reshape", {u, b.ints("target", {0, 0, 2, -1})})}));
    Model m = b.finish();
    test::runChecked(m);
    EXPECT_EQ(onlyReshapeTarget(m), (std::vector<int64_t>{1, 4, 2, -1}));
}

TEST(ViewMerge, EveryReaderMergesOrNoneDoes) {
    // Two Unsqueezes read the Reshape: both become Reshapes of x and the first Reshape goes.
    {
        GraphBuilder b("two_views");
        ValueId x = symbolicInput(b, {Dim::symbol("n"), Dim::of(2)});
        ValueId flat = b.op("Reshape", {x, b.ints("minus1", {-1})});
        b.output(b.op("Relu", {b.op("Unsqueeze", {flat, b.ints("a0", {0})})}));
        b.output(b.op("Relu", {b.op("Unsqueeze", {flat, b.ints("a1", {1})})}));
        Model m = b.finish();
        runAlgebraic(m);
        auto c = test::opCounts(m.graph);
        EXPECT_EQ(c["Reshape"], 2);
        EXPECT_EQ(c.count("Unsqueeze"), 0u);
    }
    // A Relu also reads it: merging would keep the first Reshape alive, so nothing changes.
    {
        GraphBuilder b("view_and_relu");
        ValueId x = symbolicInput(b, {Dim::symbol("n"), Dim::of(2)});
        ValueId flat = b.op("Reshape", {x, b.ints("minus1", {-1})});
        b.output(b.op("Unsqueeze", {flat, b.ints("a0", {0})}));
        b.output(b.op("Relu", {flat}));
        Model m = b.finish();
        auto r = runAlgebraic(m);
        EXPECT_FALSE(applied(r, "view-into-reshape"));
        EXPECT_EQ(test::opCounts(m.graph)["Unsqueeze"], 1);
    }
}

TEST(ViewMerge, RefusedWhenAZeroCopiesAnUnknownDim) {
    // The 0 copies the symbolic n: the merged target could not say it.
    GraphBuilder b("zero_symbolic");
    ValueId x = symbolicInput(b, {Dim::symbol("n"), Dim::of(3)});
    ValueId u = b.op("Unsqueeze", {x, b.ints("axes", {2})});
    b.output(b.op("Relu", {b.op("Reshape", {u, b.ints("target", {0, -1})})}));
    Model m = b.finish();
    auto r = runAlgebraic(m);
    EXPECT_FALSE(applied(r, "reshape-absorbs-view"));
    EXPECT_EQ(test::opCounts(m.graph)["Unsqueeze"], 1);
}

namespace {

/// boxes [n, sum(sizes)] split into columns, column i times factors[i] (or as is when factors is empty),
/// concatenated back on axis 1.
Model scaledColumns(const std::vector<int>& factorOf, const std::vector<int64_t>& sizes, int64_t concatAxis = 1,
                    std::vector<int64_t> factorDims = {}) {
    GraphBuilder b("scaled_columns");
    int64_t columns = 0;
    for (int64_t s : sizes) columns += s;
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("n"), Dim::of(columns)});
    std::vector<ValueId> r = {b.input("r0", DataType::Float, factorDims), b.input("r1", DataType::Float, factorDims)};
    auto parts = b.opMulti("Split", {x, b.ints("sizes", sizes)}, sizes.size(), {Attribute::makeInt("axis", 1)});
    std::vector<ValueId> cols;
    for (size_t i = 0; i < parts.size(); ++i)
        cols.push_back(factorOf.empty() ? parts[i] : b.op("Mul", {parts[i], r[(size_t)factorOf[i % factorOf.size()]]}));
    b.output(b.op("Relu", {b.op("Concat", cols, {Attribute::makeInt("axis", concatAxis)})}));
    return b.finish();
}

}  // namespace

TEST(ScaledSplit, PerColumnFactorsBecomeOneMul) {
    // resize_boxes: x*rw, y*rh, x*rw, y*rh → Mul(boxes, [rw, rh, rw, rh]).
    Model m = scaledColumns({0, 1, 0, 1}, {1, 1, 1, 1});
    auto r = runAlgebraic(m);
    EXPECT_TRUE(applied(r, "concat-of-scaled-split"));
    auto c = test::opCounts(m.graph);
    EXPECT_EQ(c.count("Split"), 0u);
    EXPECT_EQ(c["Mul"], 1);
    EXPECT_EQ(c["Concat"], 1);
    EXPECT_EQ(c["Reshape"], 2) << "one per distinct factor";
}

TEST(ScaledSplit, FactorsAlreadyOfTheRightRankNeedNoReshape) {
    Model m = scaledColumns({0, 1, 0, 1}, {1, 1, 1, 1}, 1, {1});
    runAlgebraic(m);
    auto c = test::opCounts(m.graph);
    EXPECT_EQ(c.count("Reshape"), 0u);
    EXPECT_EQ(c["Mul"], 1);
}

TEST(ScaledSplit, ConcatOfTheSplitPartsIsTheInput) {
    Model m = scaledColumns({}, {1, 3});
    auto r = runAlgebraic(m);
    EXPECT_TRUE(applied(r, "concat-of-scaled-split"));
    auto c = test::opCounts(m.graph);
    EXPECT_EQ(c.count("Split"), 0u);
    EXPECT_EQ(c.count("Concat"), 0u);
    EXPECT_EQ(c.count("Identity"), 0u);
}

TEST(ScaledSplit, RefusedCases) {
    // Parts two columns thick: R would need each factor twice.
    {
        Model m = scaledColumns({0, 1}, {2, 2});
        EXPECT_FALSE(applied(runAlgebraic(m), "concat-of-scaled-split"));
        EXPECT_EQ(test::opCounts(m.graph)["Split"], 1);
    }
    // Concatenated on another axis than the split's.
    {
        Model m = scaledColumns({0, 1, 0, 1}, {1, 1, 1, 1}, 0);
        EXPECT_FALSE(applied(runAlgebraic(m), "concat-of-scaled-split"));
    }
    // A factor of two elements would widen (or mis-scale) the columns.
    {
        Model m = scaledColumns({0, 1, 0, 1}, {1, 1, 1, 1}, 1, {2});
        EXPECT_FALSE(applied(runAlgebraic(m), "concat-of-scaled-split"));
    }
    // Two columns only, each its own factor: 4 nodes would replace 4.
    {
        Model m = scaledColumns({0, 1}, {1, 1}, 1, {});
        EXPECT_FALSE(applied(runAlgebraic(m), "concat-of-scaled-split"));
    }
}

TEST(ScaledSplit, PartsOutOfOrderStay) {
    GraphBuilder b("swapped");
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("n"), Dim::of(2)});
    auto parts = b.opMulti("Split", {x, b.ints("sizes", {1, 1})}, 2, {Attribute::makeInt("axis", 1)});
    b.output(b.op("Relu", {b.op("Concat", {parts[1], parts[0]}, {Attribute::makeInt("axis", 1)})}));
    Model m = b.finish();
    EXPECT_FALSE(applied(runAlgebraic(m), "concat-of-scaled-split"));
}

namespace {

/// The levels of torchvision's RPN: zeros of [n] (ConstantOfShape of a Shape slice of x [m, n]),
/// gathered by the argmax of each row ([m], in [0, n)) and then by the argmax of each column
/// ([n], in [0, m)); the result, as float, is added to the column (or row) maxima. With `alsoRead` the
/// zeros are read by a second output too; with `ranged` they are Range(0, n) instead.
Model gatheredLevels(bool second, bool alsoRead = false, bool ranged = false) {
    GraphBuilder b("levels");
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("m"), Dim::symbol("n")});
    ValueId n = b.op("Shape", {x}, {Attribute::makeInt("start", 1)});
    ValueId levels = kNone;
    if (ranged) {
        ValueId count = b.op("Squeeze", {n, b.ints("axis0", {0})});
        levels = b.op("Range", {b.constant("start", makeTensorOf<int64_t>(DataType::Int64, {}, {0})), count,
                                b.constant("step", makeTensorOf<int64_t>(DataType::Int64, {}, {1}))});
    } else {
        levels = b.op("ConstantOfShape", {n}, {Attribute::makeTensor("value", makeTensorOf<int64_t>(DataType::Int64, {1}, {0}))});
    }
    ValueId rows = b.op("ArgMax", {x}, {Attribute::makeInt("axis", 1), Attribute::makeInt("keepdims", 0)});
    ValueId picked = b.op("Gather", {levels, rows});
    if (second) {
        ValueId cols = b.op("ArgMax", {b.op("Transpose", {x}, {Attribute::makeInts("perm", {1, 0})})},
                            {Attribute::makeInt("axis", 1), Attribute::makeInt("keepdims", 0)});
        picked = b.op("Gather", {picked, cols});
    }
    ValueId asFloat = b.op("Cast", {picked}, {Attribute::makeInt("to", (int64_t)DataType::Float)});
    b.output(b.op("Add", {asFloat, b.op("ReduceMax", {x}, {Attribute::makeInts("axes", {second ? 0 : 1}), Attribute::makeInt("keepdims", 0)})}));
    if (alsoRead) b.output(b.op("Cast", {levels}, {Attribute::makeInt("to", (int64_t)DataType::Float)}));
    return b.finish();
}

const std::vector<test::DimBindings> kGrid = {{{"m", 1}, {"n", 1}}, {{"m", 3}, {"n", 5}}, {{"m", 6}, {"n", 2}}};

}  // namespace

TEST(GatherOfFill, GatheredZerosAreZerosOfTheIndicesShape) {
    Model m = gatheredLevels(true);
    auto r = test::runCheckedAtBindings(m, {"algebraic", "dce"}, kGrid);
    EXPECT_TRUE(applied(r, "gather-of-fill"));
    auto c = test::opCounts(m.graph);
    EXPECT_EQ(c.count("Gather"), 0u);
    EXPECT_EQ(c["ConstantOfShape"], 1);
    EXPECT_EQ(c["Shape"], 1) << "the indices' shape; x's slice went with the first fill";
}

TEST(GatherOfFill, RefusedWhenNothingIsSaved) {
    // One Gather of zeros that a second output also reads: the zeros stay, so the Gather would
    // become two nodes for one.
    {
        Model m = gatheredLevels(false, true);
        auto r = test::runCheckedAtBindings(m, {"algebraic", "dce"}, kGrid);
        EXPECT_FALSE(applied(r, "gather-of-fill"));
        EXPECT_EQ(test::opCounts(m.graph)["Gather"], 1);
    }
    // Range(0, n) is no fill.
    {
        Model m = gatheredLevels(true, false, true);
        auto r = test::runCheckedAtBindings(m, {"algebraic", "dce"}, kGrid);
        EXPECT_FALSE(applied(r, "gather-of-fill"));
        EXPECT_EQ(test::opCounts(m.graph)["Gather"], 2);
    }
}

namespace {

/// x → Reshape(x, split) → Transpose(perm) → Reshape(target), every shape static.
Model splitPermuteMerge(std::vector<int64_t> xDims, std::vector<int64_t> split, std::vector<int64_t> perm, std::vector<int64_t> target) {
    GraphBuilder b("split_permute_merge");
    ValueId x = b.input("x", DataType::Float, std::move(xDims));
    ValueId v = b.op("Reshape", {x, b.ints("split", std::move(split))});
    ValueId t = b.op("Transpose", {v}, {Attribute::makeInts("perm", std::move(perm))});
    b.output(b.op("Relu", {b.op("Reshape", {t, b.ints("target", std::move(target))})}));
    return b.finish();
}

std::vector<int64_t> onlyTransposePerm(const Model& m) {
    for (NodeId id : m.graph.nodeOrder())
        if (m.graph.node(id).opType == "Transpose") return m.graph.node(id).attrInts("perm");
    return {};
}

}  // namespace

TEST(ViewTransposeReshape, AnchorDeltasOfAHeadTransposeTheInputInstead) {
    // view(1, 6, 1, H, W) (an Unsqueeze) → permute(0, 3, 4, 1, 2) → reshape(1, -1) on symbolic
    // H, W: Transpose(x, [0, 2, 3, 1]) → Reshape.
    GraphBuilder b("objectness");
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::of(1), Dim::of(6), Dim::symbol("h"), Dim::symbol("w")});
    ValueId v = b.op("Unsqueeze", {x, b.ints("axes", {2})});
    ValueId t = b.op("Transpose", {v}, {Attribute::makeInts("perm", {0, 3, 4, 1, 2})});
    b.output(b.op("Relu", {b.op("Reshape", {t, b.ints("target", {1, -1})})}));
    Model m = b.finish();
    auto r = test::runCheckedAtBindings(m, {"algebraic", "dce"}, {{{"h", 1}, {"w", 1}}, {{"h", 3}, {"w", 5}}});
    EXPECT_TRUE(applied(r, "view-transpose-reshape"));
    auto c = test::opCounts(m.graph);
    EXPECT_EQ(c.count("Unsqueeze"), 0u);
    EXPECT_EQ(c["Transpose"], 1);
    EXPECT_EQ(onlyTransposePerm(m), (std::vector<int64_t>{0, 2, 3, 1}));
}

TEST(ViewTransposeReshape, SplitGroupsMoveTogether) {
    // [2, 24, 3] → [2, 6, 4, 3] → perm [0, 3, 1, 2] → [-1, 4]: Transpose(x, [0, 2, 1]).
    Model m = splitPermuteMerge({2, 24, 3}, {2, 6, 4, 3}, {0, 3, 1, 2}, {-1, 4});
    auto run = test::runChecked(m);
    EXPECT_TRUE(test::hasRemark(run.result, passes::RemarkKind::Applied, "view-transpose-reshape", "Transpose moves"));
    EXPECT_EQ(run.after["Reshape"], 1);
    EXPECT_EQ(onlyTransposePerm(m), (std::vector<int64_t>{0, 2, 1}));
}

TEST(ViewTransposeReshape, APermutationThatOnlyMovesOnesNeedsNoTranspose) {
    // [1, 12, 5] → [1, 3, 4, 5] → perm [1, 0, 2, 3] = [3, 1, 4, 5]: same element order.
    Model m = splitPermuteMerge({1, 12, 5}, {1, 3, 4, 5}, {1, 0, 2, 3}, {-1, 20});
    auto run = test::runChecked(m);
    EXPECT_EQ(run.after.count("Transpose"), 0u);
    EXPECT_EQ(onlyReshapeTarget(m), (std::vector<int64_t>{-1, 20}));
}

TEST(ViewTransposeReshape, RefusedWhenAGroupIsReorderedOrCut) {
    for (const auto& perm : {std::vector<int64_t>{0, 2, 1}, std::vector<int64_t>{1, 0, 2}}) {
        Model m = splitPermuteMerge({2, 12}, {2, 3, 4}, perm, {-1});
        auto run = test::runChecked(m);
        EXPECT_TRUE(test::silentAbout(run.result, "view-transpose-reshape")) << perm[0];
        EXPECT_EQ(run.after["Transpose"], 1);
    }
    // A 0 in the last target copies a dim of the transposed value, which would change.
    Model m = splitPermuteMerge({2, 24, 3}, {2, 6, 4, 3}, {0, 3, 1, 2}, {0, -1, 4});
    auto run = test::runChecked(m);
    EXPECT_TRUE(test::silentAbout(run.result, "view-transpose-reshape"));
}
