// The pass manager skips shape inference after passes that keep every value's type (algebraic,
// cse, dce without new constants). Skipping must lose nothing: on each real model, the basic
// pipeline gives the same graph and the same value types as inferring after every changed pass.
#include <gtest/gtest.h>

#include "TestSupport.h"
#include "onnx/Import.h"
#include "onnx/ShapeInference.h"
#include "passes/PassManager.h"

using namespace passlens;
using namespace passlens::passes;

namespace {

/// "graph#k value-id: type" for every value of every graph, in a stable order.
std::vector<std::string> allTypes(const ir::Model& m) {
    std::vector<std::string> out;
    size_t k = 0;
    m.graph.forEachGraph([&](const ir::Graph& g) {
        for (ir::ValueId v : g.valueIds())
            out.push_back(std::to_string(k) + " " + g.value(v).name + ": " + g.value(v).type.toString());
        ++k;
    });
    return out;
}

}  // namespace

class PassesShapeInference : public ::testing::TestWithParam<std::string> {};

TEST_P(PassesShapeInference, SkippingInferenceAfterTypePreservingPassesLosesNothing) {
    const ir::Model original = onnxio::importModelFile(test::realModel(GetParam()));
    ir::Model fast = original;
    PassManager pm;
    pm.addLevel(Level::Basic);
    pm.run(fast);

    ir::Model reference = original;
    PipelineOptions noInference;
    noInference.inferShapesAfterEachPass = false;
    for (const auto& name : PassRegistry::global().pipeline(Level::Basic)) {
        PassManager one;
        one.addPass(name);
        if (one.run(reference, noInference).steps.back().result.changed) onnxio::inferShapes(reference);
    }
    EXPECT_LT(countNodesDeep(fast.graph), countNodesDeep(original.graph));
    EXPECT_EQ(test::canonicalText(fast), test::canonicalText(reference));
    EXPECT_EQ(allTypes(fast), allTypes(reference));
}

INSTANTIATE_TEST_SUITE_P(Five, PassesShapeInference, ::testing::ValuesIn(test::realModelNames()),
                         [](const auto& info) {
                             std::string n = info.param;
                             for (char& c : n) if (!isalnum((unsigned char)c)) c = '_';
                             return n;
                         });
