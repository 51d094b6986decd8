// zero-initial-state (algebraic, level basic): an LSTM initial_h / initial_c that is provably all
// zeros of exactly [num_directions, batch, hidden] is dropped (the op's default for an absent
// input), so a batch-dynamic export's Shape → Gather → Concat → ConstantOfShape chain goes dead.
// Refused for a non-zero fill and for zeros whose batch is not provably X's. Op counts, remarks,
// interpreter outputs at two bindings, idempotence.
#include <gtest/gtest.h>

#include "PassTestSupport.h"
#include "examples/Builder.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

using Counts = std::map<std::string, int>;
using Bindings = test::DimBindings;

constexpr int64_t kHidden = 8, kInput = 4;

struct LstmOptions {
    float fill = 0.0f;           ///< the ConstantOfShape value of the initial states
    bool stateBatchFromX = true; ///< false: the states' batch is read from a second input
    bool bidirectional = false;
};

/// x: [seq, batch, 4] → LSTM(hidden 8) with initial_h = initial_c = ConstantOfShape([D, batch, 8])
/// built from Shape(x) (or from Shape(other)), as torch.onnx writes nn.LSTM without (h0, c0).
Model dynamicLstm(const LstmOptions& o) {
    GraphBuilder b("lstm_states");
    const int64_t D = o.bidirectional ? 2 : 1;
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("seq"), Dim::symbol("batch"), Dim::of(kInput)});
    ValueId batchSource = x;
    int64_t batchIndex = 1;
    if (!o.stateBatchFromX) {
        batchSource = b.inputSymbolic("other", DataType::Float, {Dim::symbol("n")});
        batchIndex = 0;
    }
    ValueId batch = b.op("Unsqueeze", {b.op("Gather", {b.op("Shape", {batchSource}), b.constant("i", int64Tensor({}, {batchIndex}))}),
                                       b.ints("axes", {0})});
    ValueId stateShape = b.op("Concat", {b.ints("dirs", {D}), batch, b.ints("hidden", {kHidden})}, {Attribute::makeInt("axis", 0)});
    ValueId zeros = b.op("ConstantOfShape", {stateShape}, {Attribute::makeTensor("value", floatTensor({1}, {o.fill}))}, "zeros");
    std::vector<Attribute> attrs{Attribute::makeInt("hidden_size", kHidden)};
    if (o.bidirectional) attrs.push_back(Attribute::makeString("direction", "bidirectional"));
    auto outs = b.opMulti("LSTM",
                          {x, b.constant("W", randomFloats({D, 4 * kHidden, kInput}, 1)),
                           b.constant("R", randomFloats({D, 4 * kHidden, kHidden}, 2)),
                           b.constant("B", randomFloats({D, 8 * kHidden}, 3)), kNone, zeros, zeros},
                          3, attrs, "lstm");
    for (ValueId v : outs) b.output(v);
    return b.finish();
}

/// Runs algebraic then dce, compares outputs with the original at two bindings, checks that a
/// second run changes nothing; returns the algebraic step's result.
PassResult runAndCompare(Model& m, const std::vector<Bindings>& bindings) {
    return test::runCheckedAtBindings(m, {"algebraic", "dce"}, bindings, {.rtol = 1e-6, .atol = 1e-7, .seed = 11}).steps.front().result;
}

const Node& lstmNode(const Model& m) { return m.graph.node(*m.graph.findNode("lstm")); }

const std::vector<Bindings> kTwoBindings{{{"seq", 3}, {"batch", 2}}, {{"seq", 5}, {"batch", 4}}};

}  // namespace

TEST(ZeroInitialState, BatchDynamicZerosAreDroppedAndTheirChainGoes) {
    for (bool bidirectional : {false, true}) {
        Model m = dynamicLstm({.bidirectional = bidirectional});
        EXPECT_EQ(test::opCounts(m.graph), (Counts{{"Concat", 1}, {"ConstantOfShape", 1}, {"Gather", 1}, {"LSTM", 1},
                                                  {"Shape", 1}, {"Unsqueeze", 1}}));
        const PassResult r = runAndCompare(m, kTwoBindings);
        EXPECT_EQ(test::opCounts(m.graph), (Counts{{"LSTM", 1}})) << "bidirectional " << bidirectional;
        const Node& lstm = lstmNode(m);
        EXPECT_EQ(lstm.inputs[5], kNone);
        EXPECT_EQ(lstm.inputs[6], kNone);
        EXPECT_TRUE(test::hasRemark(r, RemarkKind::Applied, "zero-initial-state", "lstm's initial_h 'zeros_out' is all zeros"));
        EXPECT_TRUE(test::hasRemark(r, RemarkKind::Applied, "zero-initial-state", "initial_c"));
    }
}

TEST(ZeroInitialState, NonZeroFillStays) {
    Model m = dynamicLstm({.fill = 0.25f});
    const PassResult r = runAndCompare(m, kTwoBindings);
    EXPECT_EQ(test::opCounts(m.graph)["ConstantOfShape"], 1);
    EXPECT_NE(lstmNode(m).inputs[5], kNone);
    EXPECT_TRUE(test::silentAbout(r, "zero-initial-state"));
}

TEST(ZeroInitialState, ZerosWhoseBatchIsNotProvablyXsStay) {
    // The states' batch comes from another input: equal to X's batch only when the caller makes
    // it so, which nothing in the graph proves.
    Model m = dynamicLstm({.stateBatchFromX = false});
    const PassResult r = runAndCompare(m, {{{"seq", 3}, {"batch", 2}, {"n", 2}}, {{"seq", 2}, {"batch", 5}, {"n", 5}}});
    EXPECT_EQ(test::opCounts(m.graph)["ConstantOfShape"], 1);
    EXPECT_NE(lstmNode(m).inputs[5], kNone);
    EXPECT_TRUE(test::hasRemark(r, RemarkKind::Missed, "zero-initial-state", "its batch dim is not provably X's"));
}

TEST(ZeroInitialState, StaticZeroInitializerDroppedNonZeroOneKept) {
    GraphBuilder b("lstm_static");
    ValueId x = b.input("x", DataType::Float, {3, 2, kInput});
    auto outs = b.opMulti("LSTM",
                          {x, b.constant("W", randomFloats({1, 4 * kHidden, kInput}, 1)),
                           b.constant("R", randomFloats({1, 4 * kHidden, kHidden}, 2)), kNone, kNone,
                           b.constant("h0", floatTensor({1, 2, kHidden}, std::vector<float>(2 * kHidden, 0.0f))),
                           b.constant("c0", randomFloats({1, 2, kHidden}, 4))},
                          3, {Attribute::makeInt("hidden_size", kHidden)}, "lstm");
    for (ValueId v : outs) b.output(v);
    Model m = b.finish();
    const PassResult r = runAndCompare(m, {{}});
    EXPECT_EQ(lstmNode(m).inputs[5], kNone);
    EXPECT_NE(lstmNode(m).inputs[6], kNone) << "a random initial_c is data";
    EXPECT_TRUE(test::hasRemark(r, RemarkKind::Applied, "zero-initial-state", "initial_h 'h0'"));
}
