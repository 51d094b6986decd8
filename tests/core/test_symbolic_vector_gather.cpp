// shape-chain-folding's gather-permuted-vector on F.pad's pads as torch exports them over symbolic
// sizes: [0, Mod(-w, 4), 0, Mod(-h, 4)] reshaped to pairs, flipped, transposed and flattened is one
// Gather of the first vector (which rebuild-shape-vector then writes from the dims). Op counts,
// the interpreter's outputs at several bindings, a chain whose middle is read elsewhere, and a
// second run that changes nothing.
#include <gtest/gtest.h>

#include <limits>

#include "PassTestSupport.h"
#include "examples/Builder.h"
#include "passes/match/Match.h"

using namespace passlens;
using namespace passlens::ir;

namespace {


struct PadModel {
    Model model;
    ValueId pads = kNone;
};

/// y = F.pad(x, (0, Mod(-w, 4), 0, Mod(-h, 4))) on x: [h, w]; `alsoReadPairs` makes the pairs
/// [[0, Mod(-w, 4)], [0, Mod(-h, 4)]] a second output, so the chain's middle must stay.
PadModel padToMultipleOf4(bool alsoReadPairs) {
    GraphBuilder b("pad_to_window");
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("h"), Dim::symbol("w")});
    ValueId shape = b.op("Shape", {x});
    ValueId four = b.constant("four", int64Tensor({}, {4}));
    auto padFor = [&](int64_t axis, const std::string& tag) {
        ValueId dim = b.op("Gather", {shape, b.constant("axis" + tag, int64Tensor({}, {axis}))});
        ValueId missing = b.op("Mod", {b.op("Sub", {four, b.op("Mod", {dim, four})}), four});
        return b.op("Unsqueeze", {missing, b.ints("ax" + tag, {0})});
    };
    ValueId zero = b.ints("zero", {0});
    ValueId torchOrder = b.op("Concat", {zero, padFor(1, "w"), zero, padFor(0, "h")}, {Attribute::makeInt("axis", 0)});
    ValueId pairs = b.op("Reshape", {torchOrder, b.ints("pairs", {-1, 2})});
    ValueId flipped = b.op("Slice", {pairs, b.ints("fs", {-1}), b.ints("fe", {std::numeric_limits<int64_t>::min() + 1}),
                                     b.ints("fa", {0}), b.ints("fst", {-1})});
    ValueId pads = b.op("Reshape", {b.op("Transpose", {flipped}, {Attribute::makeInts("perm", {1, 0})}), b.ints("flat", {-1})});
    b.output(b.op("Pad", {x, pads}));
    if (alsoReadPairs) b.output(pairs);
    return {b.finish(), pads};
}

passes::PipelineResult runAndCompare(Model& m) {
    return test::runCheckedAtBindings(m, {"shape-chain-folding", "dce"}, {{{"h", 5}, {"w", 7}}, {{"h", 8}, {"w", 4}}, {{"h", 1}, {"w", 13}}});
}

}  // namespace

TEST(SymbolicVectorGather, FlippedPadPairsBecomeOneGather) {
    PadModel p = padToMultipleOf4(false);
    auto before = test::opCounts(p.model.graph);
    EXPECT_EQ(before.at("Transpose"), 1);
    auto r = runAndCompare(p.model);
    auto counts = test::opCounts(p.model.graph);
    EXPECT_EQ(counts.count("Transpose"), 0u);
    EXPECT_EQ(counts.count("Slice"), 0u);
    EXPECT_EQ(counts.count("Reshape"), 0u) << "pairs, flip, transpose and flatten are one Gather";
    bool gathered = false, rebuilt = false;
    for (const auto& step : r.steps)
        for (const auto& rm : step.result.remarks) {
            // [0, mw, 0, mh] read as [0, 0, mh, mw]: ONNX's begins then ends, first axis first.
            gathered = gathered || (rm.rule == "gather-permuted-vector" && rm.message.find("[0, 0, 3, 1]") != std::string::npos);
            rebuilt = rebuilt || (rm.rule == "rebuild-shape-vector" && rm.message.find("[0, 0, Mod(-h, 4), Mod(-w, 4)]") != std::string::npos);
        }
    EXPECT_TRUE(gathered);
    // Then rebuild-shape-vector writes the pads from the dims: Mod(-Shape(x), 4) after two zeros.
    EXPECT_TRUE(rebuilt);
    EXPECT_EQ(counts, (std::map<std::string, int>{{"Shape", 1}, {"Neg", 1}, {"Mod", 1}, {"Concat", 1}, {"Pad", 1}}));
}

TEST(SymbolicVectorGather, ChainWhoseMiddleIsReadElsewhereIsRebuiltFromTheDims) {
    PadModel p = padToMultipleOf4(true);
    const size_t before = p.model.graph.nodeOrder().size();
    runAndCompare(p.model);
    auto counts = test::opCounts(p.model.graph);
    // The pairs (a graph output) and the pads are both rebuilt from Shape(x); flip and transpose go.
    EXPECT_EQ(counts.count("Transpose"), 0u);
    EXPECT_EQ(counts.count("Slice"), 0u);
    EXPECT_EQ(counts.at("Shape"), 1);
    EXPECT_LT(p.model.graph.nodeOrder().size() + 5, before);
}
