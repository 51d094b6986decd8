// group-functions as a registered pass: its edits (the call, the function, the opset import, the
// IR version) are change-log entries, the model-level diff shows them, and the figures match the
// free groupIntoFunctions() on the same model.
#include <gtest/gtest.h>

#include <algorithm>

#include "examples/Builder.h"
#include "passes/Diff.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"
#include "passes/fusion/GroupFunctions.h"

using namespace passlens;

namespace {

ir::Model convAddRelu(int64_t irVersion) {
    ir::GraphBuilder b("chain", 13);
    auto x = b.input("x", ir::DataType::Float, {1, 3, 8, 8});
    auto c = b.op("Conv", {x, b.constant("w", ir::randomFloats({4, 3, 3, 3}, 9, -0.5f, 0.5f))},
                  {ir::Attribute::makeInts("pads", {1, 1, 1, 1})}, "conv");
    auto r = b.op("Relu", {b.op("Add", {c, b.constant("bias", ir::randomFloats({4, 1, 1}, 10))}, {}, "add")}, {}, "relu");
    b.output(b.op("Softmax", {r}, {ir::Attribute::makeInt("axis", 1)}, "softmax"));
    ir::Model m = b.finish();
    m.irVersion = irVersion;
    return m;
}

bool logged(const passes::PassResult& r, passes::ChangeKind kind, const std::string& name) {
    return std::any_of(r.changes.begin(), r.changes.end(), [&](const passes::Change& c) {
        return c.kind == kind && std::find(c.nodeNames.begin(), c.nodeNames.end(), name) != c.nodeNames.end();
    });
}

}  // namespace

TEST(GroupFunctionsPass, IsRegisteredByNameOnly) {
    const auto& reg = passes::PassRegistry::global();
    ASSERT_TRUE(reg.contains("group-functions"));
    for (auto level : {passes::Level::Basic, passes::Level::Extended, passes::Level::All}) {
        const auto p = reg.pipeline(level);
        EXPECT_EQ(std::count(p.begin(), p.end(), "group-functions"), 0);
    }
}

TEST(GroupFunctionsPass, EveryModelEditIsInTheChangeLogAndTheDiff) {
    ir::Model m = convAddRelu(7);
    const ir::Model before = m;
    passes::PassManager pm;
    pm.addPass("group-functions");
    passes::PipelineOptions opt;
    const auto result = pm.run(m, opt);
    ASSERT_EQ(result.steps.size(), 1u);
    const passes::PassResult& step = result.steps[0].result;
    EXPECT_TRUE(step.changed);
    EXPECT_EQ(step.nodesBefore, 4u);
    EXPECT_EQ(step.nodesAfter, 2u);  // the call and Softmax
    ASSERT_EQ(m.functions.size(), 1u);
    const std::string fn = m.functions[0].domain + "::" + m.functions[0].name;
    EXPECT_TRUE(logged(step, passes::ChangeKind::Added, "function " + fn));
    EXPECT_TRUE(logged(step, passes::ChangeKind::Added, std::string("opset import ") + passes::kFusedFunctionDomain + " 1"));
    EXPECT_TRUE(logged(step, passes::ChangeKind::Modified, "ir_version 8"));
    EXPECT_EQ(std::count_if(step.changes.begin(), step.changes.end(),
                            [](const passes::Change& c) { return c.kind == passes::ChangeKind::Removed; }),
              3);  // Conv, Add, Relu
    EXPECT_EQ(passes::groupFunctionsResultOf(step).functions, 1u);
    EXPECT_EQ(passes::groupFunctionsResultOf(step).kernels(), 2u);

    const passes::ModelLevelDiff d = passes::diffModelLevel(before, m);
    EXPECT_EQ(d.addedFunctions, std::vector<std::string>{fn});
    EXPECT_TRUE(d.removedFunctions.empty());
    ASSERT_EQ(d.opsetChanges.size(), 1u);
    EXPECT_EQ(d.opsetChanges[0].domain, passes::kFusedFunctionDomain);
    EXPECT_EQ(d.opsetChanges[0].before, 0);
    EXPECT_EQ(d.opsetChanges[0].after, 1);
    EXPECT_EQ(d.irVersionBefore, 7);
    EXPECT_EQ(d.irVersionAfter, 8);
    EXPECT_TRUE(passes::diffModelLevel(m, m).empty());
}

TEST(GroupFunctionsPass, SecondRunChangesNothingAndFiguresMatchTheFreeFunction) {
    ir::Model viaPass = convAddRelu(8);
    ir::Model viaFunction = viaPass;
    passes::PassManager pm;
    pm.addPass("group-functions");
    pm.addPass("group-functions");
    const auto result = pm.run(viaPass, {});
    ASSERT_EQ(result.steps.size(), 2u);
    EXPECT_FALSE(result.steps[1].result.changed);  // calls of an earlier run are opaque
    EXPECT_TRUE(result.steps[1].result.changes.empty());
    const auto direct = passes::groupIntoFunctions(viaFunction);
    const auto fromPass = passes::groupFunctionsResultOf(result.steps[0].result);
    EXPECT_EQ(fromPass.functions, direct.functions);
    EXPECT_EQ(fromPass.fusedNodes, direct.fusedNodes);
    EXPECT_EQ(fromPass.nodesAfter, direct.nodesAfter);
    EXPECT_EQ(viaPass.graph.nodeCount(), viaFunction.graph.nodeCount());
    EXPECT_TRUE(passes::diffModelLevel(viaFunction, viaPass).empty());
}

TEST(ModelLevelDiff, ChangedFunctionBodyAndOpsetUpgradeAreReported) {
    ir::Model a = convAddRelu(8);
    passes::groupIntoFunctions(a);
    ir::Model b = a;
    // A deep copy of the body with one attribute changed: same name, different computation.
    auto body = std::make_shared<ir::Graph>(*b.functions[0].body);
    for (ir::NodeId n : body->nodeOrder())
        if (body->node(n).opType == "Conv") body->node(n).attributes.push_back(ir::Attribute::makeInt("group", 1));
    b.functions[0].body = body;
    b.setOpset("", 17);
    const auto d = passes::diffModelLevel(a, b);
    EXPECT_EQ(d.changedFunctions.size(), 1u);
    ASSERT_EQ(d.opsetChanges.size(), 1u);
    EXPECT_EQ(d.opsetChanges[0].before, 13);
    EXPECT_EQ(d.opsetChanges[0].after, 17);
    EXPECT_EQ(d.lines().size(), 2u);
}
