// if-known-condition: an If whose condition is constant gives way to the branch it always runs
// (constant-folding and shape-chain-folding), with the outputs, names and refusals checked.
#include <gtest/gtest.h>

#include "examples/Builder.h"
#include "PassTestSupport.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;
using passlens::test::hasRemark;
using passlens::test::runChecked;

namespace {

TensorPtr boolScalar(bool v) { return makeTensorOf<uint8_t>(DataType::Bool, {}, {uint8_t(v ? 1 : 0)}); }

/// then: Relu(Add(x, c)) with a body initializer c = 2; else: Mul(x, x).
std::shared_ptr<Graph> thenBranch() {
    auto g = std::make_shared<Graph>();
    g->name = "then";
    ValueId x = g->addOuterScopeValue("x");
    ValueId c = g->addInitializer("c", floatTensor({}, {2.f}));
    ValueId s = g->addValue("s", TypeInfo::tensor(DataType::Float));
    ValueId out = g->addValue("then_out", TypeInfo::tensor(DataType::Float));
    g->addNode("Add", {x, c}, {s}, {}, "add");
    g->addNode("Relu", {s}, {out}, {}, "relu");
    g->markOutput(out);
    return g;
}

std::shared_ptr<Graph> elseBranch() {
    auto g = std::make_shared<Graph>();
    g->name = "else";
    ValueId x = g->addOuterScopeValue("x");
    ValueId out = g->addValue("else_out", TypeInfo::tensor(DataType::Float));
    g->addNode("Mul", {x, x}, {out}, {}, "square");
    g->markOutput(out);
    return g;
}

std::vector<Attribute> branches(std::shared_ptr<Graph> thenG, std::shared_ptr<Graph> elseG) {
    return {Attribute::makeGraph("then_branch", std::move(thenG)), Attribute::makeGraph("else_branch", std::move(elseG))};
}

/// y = If(cond) - x, with the condition given by `makeCond`.
Model ifThenSub(const std::function<ValueId(GraphBuilder&)>& makeCond) {
    GraphBuilder b("if_known");
    ValueId x = b.input("x", DataType::Float, {4});
    ValueId cond = makeCond(b);
    ValueId chosen = b.op("If", {cond}, branches(thenBranch(), elseBranch()), "if");
    b.output(b.op("Sub", {chosen, x}, {}, "sub"));
    return b.finish();
}

}  // namespace

TEST(IfInlining, AConstantTrueConditionLeavesTheThenBranchInPlace) {
    Model m = ifThenSub([](GraphBuilder& b) { return b.constant("cond", boolScalar(true)); });
    auto run = runChecked(m, "constant-folding");
    EXPECT_EQ(run.before.at("If"), 1);
    EXPECT_EQ(run.after.count("If"), 0u);
    EXPECT_EQ(run.after.at("Add"), 1);
    EXPECT_EQ(run.after.at("Relu"), 1);
    EXPECT_EQ(run.after.count("Mul"), 0u);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "if-known-condition",
                          "if's condition is always true: its then_branch (2 nodes) takes its place"));
    // The branch's initializer came along; the Sub reads the Relu.
    const Node& sub = m.graph.node(*m.graph.findNode("sub"));
    EXPECT_EQ(m.graph.node(m.graph.value(sub.inputs[0]).producer).opType, "Relu");
}

TEST(IfInlining, AConditionFoldedInThePassInlinesTheElseBranchAndFoldsItsConstants) {
    // cond = Not(true) is folded by the sweep; the else branch then adds a Constant node that
    // the next sweep turns into an initializer, so a second run has nothing left to do.
    auto elseG = std::make_shared<Graph>();
    elseG->name = "else";
    {
        ValueId x = elseG->addOuterScopeValue("x");
        ValueId k = elseG->addValue("k", TypeInfo::tensor(DataType::Float));
        ValueId out = elseG->addValue("else_out", TypeInfo::tensor(DataType::Float));
        elseG->addNode("Constant", {}, {k}, {Attribute::makeTensor("value", floatTensor({}, {3.f}))}, "three");
        elseG->addNode("Mul", {x, k}, {out}, {}, "scale");
        elseG->markOutput(out);
    }
    GraphBuilder b("if_folded_cond");
    ValueId x = b.input("x", DataType::Float, {4});
    ValueId cond = b.op("Not", {b.constant("t", boolScalar(true))}, {}, "not");
    ValueId chosen = b.op("If", {cond}, branches(thenBranch(), elseG), "if");
    b.output(b.op("Sub", {chosen, x}, {}, "sub"));
    Model m = b.finish();
    auto run = runChecked(m, "constant-folding");
    EXPECT_EQ(run.after.count("If"), 0u);
    EXPECT_EQ(run.after.count("Not"), 0u);
    EXPECT_EQ(run.after.count("Constant"), 0u);  // folded in the same run
    EXPECT_EQ(run.after.at("Mul"), 1);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "if-known-condition", "always false: its else_branch"));
}

TEST(IfInlining, AnUnknownConditionIsLeftAlone) {
    Model m = ifThenSub([](GraphBuilder& b) { return b.input("cond", DataType::Bool, {}); });
    auto run = runChecked(m, "constant-folding");
    EXPECT_EQ(run.after.at("If"), 1);
    EXPECT_TRUE(test::silentAbout(run.result, "if-known-condition"));
}

TEST(IfInlining, AModelOutputComputedByTheIfKeepsItsName) {
    for (bool returnsOuterValue : {false, true}) {
        SCOPED_TRACE(returnsOuterValue ? "branch returns x itself" : "branch computes it");
        auto thenG = std::make_shared<Graph>();
        thenG->name = "then";
        ValueId x = thenG->addOuterScopeValue("x");
        if (returnsOuterValue) {
            thenG->markOutput(x);
        } else {
            ValueId out = thenG->addValue("then_out", TypeInfo::tensor(DataType::Float));
            thenG->addNode("Neg", {x}, {out}, {}, "neg");
            thenG->markOutput(out);
        }
        GraphBuilder b("if_output");
        (void)b.input("x", DataType::Float, {4});
        ValueId y = b.op("If", {b.constant("cond", boolScalar(true))}, branches(thenG, elseBranch()), "if");
        b.graph().renameValue(y, "y");
        b.output(y);
        Model m = b.finish();
        auto run = runChecked(m, "constant-folding");
        EXPECT_EQ(run.after.count("If"), 0u);
        ASSERT_EQ(m.graph.outputs().size(), 1u);
        EXPECT_EQ(m.graph.value(m.graph.outputs()[0]).name, "y");
        EXPECT_EQ(run.after.count(returnsOuterValue ? "Identity" : "Neg"), 1u);
    }
}

/// then: s = Add(x, 1), then an inner If on the model input `flag` whose branches read s by name.
std::shared_ptr<Graph> branchWithInnerIf() {
    auto innerBranch = [](const std::string& op) {
        auto g = std::make_shared<Graph>();
        g->name = op;
        ValueId s = g->addOuterScopeValue("s");
        ValueId out = g->addValue(op + "_out", TypeInfo::tensor(DataType::Float));
        g->addNode(op, {s, s}, {out}, {}, op + "_s");
        g->markOutput(out);
        return g;
    };
    auto g = std::make_shared<Graph>();
    g->name = "then";
    ValueId x = g->addOuterScopeValue("x");
    ValueId flag = g->addOuterScopeValue("flag");
    ValueId one = g->addInitializer("one", floatTensor({}, {1.f}));
    ValueId s = g->addValue("s", TypeInfo::tensor(DataType::Float));
    ValueId out = g->addValue("inner_out", TypeInfo::tensor(DataType::Float));
    g->addNode("Add", {x, one}, {s}, {}, "shift");
    g->addNode("If", {flag}, {out}, branches(innerBranch("Add"), innerBranch("Mul")), "inner_if");
    g->markOutput(out);
    return g;
}

TEST(IfInlining, ABranchHoldingAnIfComesAlongWithTheNamesItsBranchesRead) {
    GraphBuilder b("if_nested_inlined");
    ValueId x = b.input("x", DataType::Float, {4});
    ValueId flag = b.input("flag", DataType::Bool, {});
    ValueId chosen = b.op("If", {b.constant("cond", boolScalar(true))}, branches(branchWithInnerIf(), elseBranch()), "outer_if");
    b.output(b.op("Sub", {chosen, x}, {}, "sub"));
    Model m = b.finish();
    const Model original = m;
    auto r = test::runPassOnce("constant-folding", m);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Applied, "if-known-condition", "outer_if's condition is always true"));
    EXPECT_EQ(test::opCounts(m.graph), (std::map<std::string, int>{{"Add", 1}, {"If", 1}, {"Sub", 1}}));
    EXPECT_TRUE(m.graph.findValue("s").has_value());  // the name the inner branches read
    const auto xt = randomFloats({4}, 3, -2.f, 2.f);
    for (bool f : {true, false}) {
        const std::vector<TensorPtr> in = {xt, boolScalar(f)};
        for (const auto& d : eval::compareOutputs(original, eval::run(m, in), eval::run(original, in), 1e-6, 1e-7))
            EXPECT_TRUE(d.ok) << d.name << " flag=" << f;
    }
    (void)flag;
}

TEST(IfInlining, ABranchWhoseSubgraphsReadANameTakenHereIsRefusedByName) {
    // The graph already has a value named s, so the branch's s would be renamed under the reads
    // of the inner If's branches. (ONNX's checker forbids such shadowing in a file; a pass can
    // still make the name, so the rule checks it.)
    GraphBuilder b("if_nested_refused");
    ValueId x = b.input("x", DataType::Float, {4});
    (void)b.input("flag", DataType::Bool, {});
    ValueId sOuter = b.op("Neg", {x}, {}, "neg");
    b.graph().renameValue(sOuter, "s");
    ValueId chosen = b.op("If", {b.constant("cond", boolScalar(true))}, branches(branchWithInnerIf(), elseBranch()), "outer_if");
    b.output(b.op("Sub", {chosen, sOuter}, {}, "sub"));
    Model m = b.finish();
    auto r = test::runPassOnce("constant-folding", m);
    EXPECT_EQ(test::opCounts(m.graph).at("If"), 1);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Missed, "if-known-condition",
                          "not inlined: outer_if's condition is always true, but the subgraphs of inner_if read 's', a name this graph already uses"));
}

TEST(IfInlining, AnIfInsideABranchCapturesWhatItReadsFromFurtherOut) {
    // outer If on a model input; its then branch holds an If on a constant whose then branch
    // reads the model input x, which the outer branch itself does not capture yet.
    auto outerThen = std::make_shared<Graph>();
    outerThen->name = "outer_then";
    {
        ValueId k = outerThen->addInitializer("yes", boolScalar(true));
        ValueId out = outerThen->addValue("outer_then_out", TypeInfo::tensor(DataType::Float));
        outerThen->addNode("If", {k}, {out}, branches(thenBranch(), elseBranch()), "inner_if");
        outerThen->markOutput(out);
    }
    GraphBuilder b("if_nested");
    ValueId x = b.input("x", DataType::Float, {4});
    ValueId flag = b.input("flag", DataType::Bool, {});
    ValueId chosen = b.op("If", {flag}, branches(outerThen, elseBranch()), "outer_if");
    b.output(b.op("Sub", {chosen, x}, {}, "sub"));
    Model m = b.finish();
    const Model original = m;
    const auto xt = randomFloats({4}, 3, -2.f, 2.f);
    auto r = test::runPassOnce("constant-folding", m);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Applied, "if-known-condition", "inner_if's condition is always true"));
    const Graph& body = *m.graph.node(*m.graph.findNode("outer_if")).attr("then_branch")->g;
    EXPECT_EQ(test::opCounts(body), (std::map<std::string, int>{{"Add", 1}, {"Relu", 1}}));
    auto captured = body.findValue("x");
    ASSERT_TRUE(captured.has_value());
    EXPECT_TRUE(body.value(*captured).isOuterScope);
    for (bool f : {true, false}) {
        const std::vector<TensorPtr> in = {xt, boolScalar(f)};
        for (const auto& d : eval::compareOutputs(original, eval::run(m, in), eval::run(original, in), 1e-6, 1e-7))
            EXPECT_TRUE(d.ok) << d.name << " flag=" << f;
    }
    EXPECT_FALSE(test::runPassOnce("constant-folding", m).changed);
}

TEST(IfInlining, ShapeChainFoldingInlinesAConditionThatIsAConstantNode) {
    Model m = ifThenSub([](GraphBuilder& b) {
        return b.op("Constant", {}, {Attribute::makeTensor("value", boolScalar(false))}, "cond");
    });
    auto run = runChecked(m, "shape-chain-folding");
    EXPECT_EQ(run.after.count("If"), 0u);
    EXPECT_EQ(run.after.at("Mul"), 1);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "if-known-condition", "always false"));
}
