// The pass manager skips shape inference after passes that keep every value's type (algebraic,
// cse, dce and the pattern fusions, whose fused node writes the pattern's result value, unless
// they fold a new constant). Skipping must lose nothing: on each real model and generated
// transformer, every level gives the same graph and the same value types as inferring after
// every changed pass.
#include <gtest/gtest.h>

#include "TestSupport.h"
#include "onnx/Import.h"
#include "onnx/ShapeInference.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

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

class PassesShapeInference : public ::testing::TestWithParam<std::tuple<std::string, Level>> {};

TEST_P(PassesShapeInference, SkippingInferenceAfterTypePreservingPassesLosesNothing) {
    const auto& [file, level] = GetParam();
    const std::string path = file.rfind("gen/", 0) == 0 ? std::string(PASSLENS_GEN_MODELS_DIR) + file.substr(3) : test::realModel(file);
    const ir::Model original = onnxio::importModelFile(path);
    ir::Model fast = original;
    PassManager pm;
    pm.addLevel(level);
    pm.run(fast);

    ir::Model reference = original;
    PipelineOptions noInference;
    noInference.inferShapesAfterEachPass = false;
    for (const auto& name : PassRegistry::global().pipeline(level)) {
        PassManager one;
        one.addPass(name);
        if (one.run(reference, noInference).steps.back().result.changed) onnxio::inferShapes(reference);
    }
    EXPECT_LT(countNodesDeep(fast.graph), countNodesDeep(original.graph));
    EXPECT_EQ(test::canonicalText(fast), test::canonicalText(reference));
    EXPECT_EQ(allTypes(fast), allTypes(reference));
}

std::vector<std::string> modelsForInference() {
    std::vector<std::string> out = test::realModelNames();
    out.push_back("gen/bert_l2_scoped.onnx");
    out.push_back("gen/gpt_l2_scoped.onnx");
    return out;
}

INSTANTIATE_TEST_SUITE_P(Models, PassesShapeInference,
                         ::testing::Combine(::testing::ValuesIn(modelsForInference()),
                                            ::testing::Values(Level::Basic, Level::Extended, Level::All)),
                         [](const auto& info) {
                             std::string n = std::get<0>(info.param) + "_" + std::string(levelName(std::get<1>(info.param)));
                             for (char& c : n) if (!isalnum((unsigned char)c)) c = '_';
                             return n;
                         });
