// fuse-reshape and shape-chain-folding on PyTorch-style shape chains (Shape → Gather → Unsqueeze →
// Concat → Reshape/Expand): constant targets with 0 / −1 / literals that hold for every batch and
// sequence length, and the traps (dims of another tensor not provably equal, allowzero, a second
// reader of the chain).
#include <gtest/gtest.h>

#include <map>

#include "PassTestSupport.h"
#include "eval/Interpreter.h"
#include "examples/Builder.h"
#include "passes/PassManager.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

using test::opCounts;
using test::remarkText;

struct ChainOptions {
    std::vector<Dim> otherDims;         ///< the chain reads Shape(other) with these dims instead of x's own
    int64_t allowZero = -1;             ///< set allowzero when >= 0
    bool secondReader = false;          ///< the batch Gather is read by a graph output too
    bool expand = false;                ///< Expand [batch, seq, 1] → [batch, seq, 8] instead of Reshape
};

/// x: [batch, seq, 8] → MatMul → Reshape(·, Concat(Unsqueeze(Gather(Shape(src), 0)),
/// Unsqueeze(Gather(Shape(src), 1)), [2, 4])): the head split of an exported attention.
Model headSplit(const ChainOptions& o = {}) {
    GraphBuilder b("head_split", 17);
    auto x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("batch"), Dim::symbol("seq"), Dim::of(o.expand ? 1 : 8)});
    ValueId data = o.expand ? b.op("Relu", {x}, {}, "act") : b.op("MatMul", {x, b.constant("w", randomFloats({8, 8}, 1))}, {}, "proj");
    ValueId src = x;
    if (!o.otherDims.empty()) src = b.inputSymbolic("y", DataType::Float, o.otherDims);
    auto shape = b.op("Shape", {src}, {}, "shape");
    auto g0 = b.op("Gather", {shape, b.constant("i0", int64Tensor({}, {0}))}, {Attribute::makeInt("axis", 0)}, "g0");
    auto g1 = b.op("Gather", {shape, b.constant("i1", int64Tensor({}, {1}))}, {Attribute::makeInt("axis", 0)}, "g1");
    auto u0 = b.op("Unsqueeze", {g0, b.ints("ax0", {0})}, {}, "u0");
    auto u1 = b.op("Unsqueeze", {g1, b.ints("ax1", {0})}, {}, "u1");
    auto tail = o.expand ? b.ints("tail", {8}) : b.ints("heads", {2, 4});
    auto target = b.op("Concat", {u0, u1, tail}, {Attribute::makeInt("axis", 0)}, "cat");
    std::vector<Attribute> attrs;
    if (o.allowZero >= 0) attrs.push_back(Attribute::makeInt("allowzero", o.allowZero));
    b.output(b.op(o.expand ? "Expand" : "Reshape", {data, target}, attrs, "reshape"));
    if (o.secondReader) b.output(b.op("Cast", {g0}, {Attribute::makeInt("to", (int64_t)DataType::Float)}, "batch_as_float"));
    return b.finish();
}

/// Runs `pass` once and checks outputs against the original for several batch and sequence
/// lengths (the model stays dynamic), plus idempotence; returns the first run's result.
PassResult runAtSeveralSizes(Model& m, const std::string& pass) {
    const Model original = m;
    PassResult r = test::runPassOnce(pass, m);
    for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 1}, {2, 3}, {3, 7}}) {
        eval::RunOptions ro;
        ro.dims = {{"batch", batch}, {"seq", seq}, {"other", batch}, {"s2", seq}};
        auto inputs = eval::randomInputs(original, 11, ro.dims);
        auto expected = eval::run(original, inputs, ro);
        auto actual = eval::run(m, inputs, ro);
        for (const auto& d : eval::compareOutputs(original, actual, expected, 1e-5, 1e-6))
            EXPECT_TRUE(d.ok) << pass << " batch " << batch << " seq " << seq << ": output " << d.name << " differs";
    }
    EXPECT_FALSE(test::runPassOnce(pass, m).changed) << pass << " is not idempotent";
    return r;
}

std::vector<int64_t> reshapeTarget(const Model& m) {
    for (NodeId n : m.graph.nodeOrder()) {
        const Node& node = m.graph.node(n);
        if (node.opType != "Reshape" && node.opType != "Expand") continue;
        const Value& t = m.graph.value(node.inputs[1]);
        if (!t.initializer) return {};
        return std::vector<int64_t>(t.initializer->as<int64_t>(), t.initializer->as<int64_t>() + t.initializer->elementCount());
    }
    return {};
}

}  // namespace

TEST(FuseReshape, OwnDimsBecomeCopyEntriesAndTheChainGoes) {
    Model m = headSplit();
    PassResult r = runAtSeveralSizes(m, "fuse-reshape");
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"MatMul", 1}, {"Reshape", 1}}));
    EXPECT_EQ(reshapeTarget(m), (std::vector<int64_t>{0, 0, 2, 4}));
    EXPECT_NE(remarkText(r, RemarkKind::Applied).find("reshape's target, computed by a 6-node shape chain, is the constant [0, 0, 2, 4]"),
              std::string::npos)
        << remarkText(r, RemarkKind::Applied);
    EXPECT_FALSE(m.graph.findValue("heads").has_value());  // the chain's constants go with it
}

TEST(FuseReshape, ProvablyEqualDimsOfAnotherTensorCount) {
    Model m = headSplit({.otherDims = {Dim::symbol("batch"), Dim::symbol("seq"), Dim::of(5)}});
    runAtSeveralSizes(m, "fuse-reshape");
    EXPECT_EQ(reshapeTarget(m), (std::vector<int64_t>{0, 0, 2, 4}));
    EXPECT_EQ(opCounts(m.graph)["Shape"], 0);
}

TEST(FuseReshape, OneDimNotProvablyEqualBecomesMinusOne) {
    Model m = headSplit({.otherDims = {Dim::symbol("other"), Dim::symbol("seq")}});
    runAtSeveralSizes(m, "fuse-reshape");
    EXPECT_EQ(reshapeTarget(m), (std::vector<int64_t>{-1, 0, 2, 4}));
}

TEST(FuseReshape, TwoDimsNotProvablyEqualAreRefusedAndNamed) {
    Model m = headSplit({.otherDims = {Dim::symbol("other"), Dim::symbol("s2")}});
    PassResult r = runAtSeveralSizes(m, "fuse-reshape");
    EXPECT_FALSE(r.changed);
    EXPECT_EQ(opCounts(m.graph)["Concat"], 1);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("reshape's target not made constant: it would need more than one −1: entry 0 "
                                                     "(dim 0 (other) of 'y'), entry 1 (dim 1 (s2) of 'y')"),
              std::string::npos)
        << remarkText(r, RemarkKind::Missed);
}

TEST(FuseReshape, AllowZeroIsRefused) {
    Model m = headSplit({.otherDims = {}, .allowZero = 1});
    PassResult r = runAtSeveralSizes(m, "fuse-reshape");
    EXPECT_FALSE(r.changed);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("allowzero=1, so 0 would mean a zero-size dim"), std::string::npos)
        << remarkText(r, RemarkKind::Missed);
    Model z = headSplit({.otherDims = {}, .allowZero = 0});
    runAtSeveralSizes(z, "fuse-reshape");
    EXPECT_EQ(reshapeTarget(z), (std::vector<int64_t>{0, 0, 2, 4}));
}

TEST(FuseReshape, SecondReaderKeepsItsPartOfTheChain) {
    Model m = headSplit({.otherDims = {}, .secondReader = true});
    PassResult r = runAtSeveralSizes(m, "fuse-reshape");
    EXPECT_EQ(reshapeTarget(m), (std::vector<int64_t>{0, 0, 2, 4}));
    // Shape and g0 still feed the Cast; g1, both Unsqueezes and the Concat are gone.
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Cast", 1}, {"Gather", 1}, {"MatMul", 1}, {"Reshape", 1}, {"Shape", 1}}));
    EXPECT_NE(remarkText(r, RemarkKind::Applied).find("kept for other readers: shape (read by g0); g0 (read by batch_as_float)"),
              std::string::npos)
        << remarkText(r, RemarkKind::Applied);
}

TEST(FuseReshape, ExpandTargetKeepsEqualDimsAsOne) {
    Model m = headSplit({.otherDims = {}, .expand = true});
    runAtSeveralSizes(m, "fuse-reshape");
    EXPECT_EQ(reshapeTarget(m), (std::vector<int64_t>{1, 1, 8}));
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Expand", 1}, {"Relu", 1}}));
}

TEST(FuseReshape, ExpandByDimsOfAnotherTensorIsRefused) {
    Model m = headSplit({.otherDims = {Dim::symbol("other"), Dim::symbol("seq")}, .expand = true});
    PassResult r = runAtSeveralSizes(m, "fuse-reshape");
    EXPECT_FALSE(r.changed);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("entry 0 (dim 0 (other) of 'y') is neither static nor provably equal to the aligned dim of 'act_out'"),
              std::string::npos)
        << remarkText(r, RemarkKind::Missed);
}

TEST(FuseReshape, TargetFromAnythingElseNamesTheNode) {
    GraphBuilder b("computed", 17);
    auto x = b.input("x", DataType::Float, {2, 6});
    auto t = b.op("Abs", {b.input("t", DataType::Int64, {2})}, {}, "abs");
    b.output(b.op("Reshape", {x, t}, {}, "reshape"));
    Model m = b.finish();
    PassResult r = test::runPassOnce("fuse-reshape", m);
    EXPECT_FALSE(r.changed);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("reshape's target not made constant: abs (Abs) is not part of a shape chain"),
              std::string::npos)
        << remarkText(r, RemarkKind::Missed);
}

TEST(ShapeChainFolding, StaticDimOfSymbolicShapeFolds) {
    // Gather(Shape(x), 2) of x: [batch, seq, 8] is 8 for every run; Gather(…, 0) is batch and stays.
    GraphBuilder b("static_dim", 17);
    auto x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("batch"), Dim::symbol("seq"), Dim::of(8)});
    auto shape = b.op("Shape", {x}, {}, "shape");
    auto hidden = b.op("Gather", {shape, b.constant("i2", int64Tensor({}, {2}))}, {}, "hidden");
    auto batch = b.op("Gather", {shape, b.constant("i0", int64Tensor({}, {0}))}, {}, "batch");
    auto u = b.op("Unsqueeze", {hidden, b.ints("ax", {0})}, {}, "u_hidden");
    auto ub = b.op("Unsqueeze", {batch, b.ints("axb", {0})}, {}, "u_batch");
    auto target = b.op("Concat", {ub, b.ints("minus1", {-1}), u}, {Attribute::makeInt("axis", 0)}, "cat");
    b.output(b.op("Reshape", {x, target}, {}, "reshape"));
    Model m = b.finish();
    PassResult r = runAtSeveralSizes(m, "shape-chain-folding");
    // Unsqueeze(Gather(shape, 0)) is Gather(shape, [0]) (gather-permuted-vector); the scalar
    // Gather it read is dead code, left to dce.
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Concat", 1}, {"Gather", 2}, {"Reshape", 1}, {"Shape", 1}}));
    ASSERT_TRUE(m.graph.findValue("u_hidden_out").has_value());
    EXPECT_TRUE(m.graph.value(*m.graph.findValue("u_hidden_out")).initializer);
    EXPECT_NE(remarkText(r, RemarkKind::Applied).find("hidden reads only static dims through Shape (dim 2 (8) of 'x')"), std::string::npos)
        << remarkText(r, RemarkKind::Applied);
}

TEST(ShapeChainFolding, ShapesOfEqualNamedShapesMerge) {
    GraphBuilder b("equal_shapes", 17);
    auto x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("batch"), Dim::of(4)});
    auto y = b.op("Relu", {x}, {}, "relu");                       // same shape [batch, 4]
    auto z = b.inputSymbolic("z", DataType::Float, {Dim(), Dim::of(4)});  // unnamed dim: nothing proven
    b.output(b.op("Reshape", {y, b.op("Shape", {x}, {}, "shape_x")}, {}, "r1"));
    b.output(b.op("Reshape", {x, b.op("Shape", {y}, {}, "shape_y")}, {}, "r2"));
    b.output(b.op("Reshape", {z, b.op("Shape", {z}, {}, "shape_z")}, {}, "r3"));
    Model m = b.finish();
    PassResult r = runAtSeveralSizes(m, "shape-chain-folding");
    EXPECT_EQ(opCounts(m.graph)["Shape"], 2);  // shape_y merged into shape_x; shape_z stays
    EXPECT_FALSE(m.graph.findNode("shape_y").has_value());
    EXPECT_TRUE(m.graph.findNode("shape_z").has_value());
    EXPECT_NE(remarkText(r, RemarkKind::Applied).find("shape_y merged into shape_x"), std::string::npos) << remarkText(r, RemarkKind::Applied);
}

TEST(ShapeChainFolding, ConstantOfShapeAndRangeOfStaticDimsFoldAtBasic) {
    // x: [batch, 8]: ConstantOfShape([8, 3]) and Range(0, 8, 1) built from Shape(x) are constants,
    // computed by constant folding once shape-chain-folding (which runs first) made their inputs
    // constant; the ConstantOfShape of [batch] has no constant form and stays.
    GraphBuilder b("shape_consumers", 17);
    auto x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("batch"), Dim::of(8)});
    auto shape = b.op("Shape", {x}, {}, "shape");
    auto hidden = b.op("Gather", {shape, b.constant("i1", int64Tensor({}, {1}))}, {}, "hidden");
    auto batch = b.op("Gather", {shape, b.constant("i0", int64Tensor({}, {0}))}, {}, "batch");
    auto dims = b.op("Concat", {b.op("Unsqueeze", {hidden, b.ints("ax", {0})}, {}, "u"), b.ints("three", {3})},
                     {Attribute::makeInt("axis", 0)}, "dims");
    auto fill = b.op("ConstantOfShape", {dims}, {Attribute::makeTensor("value", floatTensor({1}, {0.5f}))}, "fill");
    auto range = b.op("Range", {b.constant("zero", int64Tensor({}, {0})), hidden, b.constant("one", int64Tensor({}, {1}))}, {}, "range");
    auto perBatch = b.op("ConstantOfShape", {b.op("Unsqueeze", {batch, b.ints("axb", {0})}, {}, "ub")},
                         {Attribute::makeTensor("value", floatTensor({1}, {1.f}))}, "per_batch");
    b.output(b.op("MatMul", {x, fill}, {}, "mm"));
    b.output(b.op("Cast", {range}, {Attribute::makeInt("to", (int64_t)DataType::Float)}, "range_f"));
    b.output(b.op("Mul", {b.op("ReduceSum", {x, b.ints("axes", {1})}, {Attribute::makeInt("keepdims", 0)}, "sum"), perBatch}, {}, "scaled"));
    Model m = b.finish();
    const Model original = m;
    PassManager pm;
    pm.addLevel(Level::Basic);
    pm.run(m);
    auto ops = opCounts(m.graph);
    EXPECT_EQ(ops["Range"], 0);
    EXPECT_EQ(ops["ConstantOfShape"], 1);  // per_batch
    EXPECT_TRUE(m.graph.findNode("per_batch").has_value());
    for (int64_t batchSize : {1, 4}) {
        eval::RunOptions ro;
        ro.dims = {{"batch", batchSize}};
        auto inputs = eval::randomInputs(original, 3, ro.dims);
        for (const auto& d : eval::compareOutputs(original, eval::run(m, inputs, ro), eval::run(original, inputs, ro), 1e-5, 1e-6))
            EXPECT_TRUE(d.ok) << d.name;
    }
}

TEST(FuseReshape, ARankMadeKnownByAnEarlierTargetUnblocksTheNextChain) {
    // y = Reshape(x, chain): y's rank is unknown until that target is constant; the next Reshape
    // slices Shape(y), which needs the rank. The pass re-runs shape inference and sweeps again.
    Model m = headSplit();
    Graph& g = m.graph;
    const ValueId y = g.node(*g.findNode("reshape")).outputs[0];
    const ValueId starts = g.addInitializer("starts", int64Tensor({1}, {0}));
    const ValueId ends = g.addInitializer("ends", int64Tensor({1}, {2}));
    const ValueId minus1 = g.addInitializer("minus1", int64Tensor({1}, {-1}));
    const ValueId shapeY = g.addValue("shape_y_out"), lead = g.addValue("lead_out"), target = g.addValue("target2_out");
    const ValueId merged = g.addValue("merged_out");
    g.addNode("Shape", {y}, {shapeY}, {}, "shape_y");
    g.addNode("Slice", {shapeY, starts, ends}, {lead}, {}, "lead");
    g.addNode("Concat", {lead, minus1}, {target}, {Attribute::makeInt("axis", 0)}, "target2");
    g.addNode("Reshape", {y, target}, {merged}, {}, "merge");
    g.setOutputs({merged});
    for (ValueId v : {shapeY, lead, target, merged}) g.value(v).type = TypeInfo{};
    g.value(y).type = TypeInfo{};  // as an exporter's file leaves it: rank unknown
    PassResult r = runAtSeveralSizes(m, "fuse-reshape");
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"MatMul", 1}, {"Reshape", 2}}));
    EXPECT_NE(remarkText(r, RemarkKind::Applied).find("merge's target, computed by a 3-node shape chain, is the constant [0, 0, -1]"),
              std::string::npos)
        << remarkText(r, RemarkKind::Applied) << remarkText(r, RemarkKind::Missed);
    EXPECT_EQ(remarkText(r, RemarkKind::Missed), "");
}

TEST(FuseReshape, NoMinusOneNextToADimThatMayBeZero) {
    // rows: [n, 2, 4] gathered at NonZero(mask): n is data-dependent and may be 0. The target
    // [n, m] (m from another input) would become [0, -1]; with n = 0 the element count cannot infer
    // the -1 and the Reshape fails where the computed target [0, 8] worked.
    GraphBuilder b("maybe_empty", 17);
    auto mask = b.input("mask", DataType::Bool, {10});
    auto z = b.inputSymbolic("z", DataType::Float, {Dim::symbol("m")});
    auto idx = b.op("Squeeze", {b.op("NonZero", {mask}, {}, "nonzero"), b.ints("ax_sq", {0})}, {}, "squeeze");
    auto rows = b.op("Gather", {b.constant("table", randomFloats({10, 2, 4}, 3)), idx}, {Attribute::makeInt("axis", 0)}, "rows");
    auto n = b.op("Unsqueeze", {b.op("Gather", {b.op("Shape", {rows}), b.constant("i0", int64Tensor({}, {0}))}), b.ints("ax0", {0})});
    auto m = b.op("Unsqueeze", {b.op("Gather", {b.op("Shape", {z}), b.constant("j0", int64Tensor({}, {0}))}), b.ints("ax1", {0})});
    auto target = b.op("Concat", {n, m}, {Attribute::makeInt("axis", 0)}, "cat");
    b.output(b.op("Reshape", {rows, target}, {}, "reshape"));
    Model model = b.finish();
    PassResult r = test::runPassOnce("fuse-reshape", model);
    EXPECT_TRUE(reshapeTarget(model).empty()) << "target made constant";
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("would need −1, which is exact only when every other dim is >= 1, and dim 0 (a copy of "
                                                     "the data's dim) may be 0"),
              std::string::npos)
        << remarkText(r, RemarkKind::Missed);
    // No row selected: the model still runs, and gives a [0, 8] result.
    auto noRows = makeTensorOf<uint8_t>(DataType::Bool, {10}, std::vector<uint8_t>(10, 0));
    eval::RunOptions ro;
    ro.dims = {{"m", 8}};
    auto out = eval::run(model, {noRows, randomFloats({8}, 5)}, ro);
    EXPECT_EQ(out.at(0)->dims, (std::vector<int64_t>{0, 8}));
}
