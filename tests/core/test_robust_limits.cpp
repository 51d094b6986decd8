// The limits behind "never a crash": overflow-checked shape products, the schema envelope pattern
// matchers rely on, custom-domain ops left alone by validation, constant folding sized before
// evaluating, the interpreter's memory budget and its function-call depth guard.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <fstream>

#include "gen/malformed/MalformedModels.h"
#include "PassTestSupport.h"
#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "eval/MemoryBudget.h"
#include "ir/CheckedMath.h"
#include "ir/Error.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "onnx/SchemaValidation.h"

using namespace passlens;

namespace {

const malformed::MalformedModel& corpusModel(const std::string& name) {
    static const auto models = malformed::malformedModels();
    for (const auto& m : models)
        if (m.name == name) return m;
    throw std::runtime_error("no malformed model " + name);
}

/// x: float[rows, 1024] → Relu "relu1" → y.
ir::Model reluModel(int64_t rows) {
    ir::Model m;
    m.opsetImports = {{"", 17}};
    auto& g = m.graph;
    ir::Shape s;
    s.dims = {ir::Dim::of(rows), ir::Dim::of(1024)};
    auto x = g.addInput("x", ir::TypeInfo::tensor(ir::DataType::Float, s));
    auto y = g.addValue("y");
    g.addNode("Relu", {x}, {y}, {}, "relu1");
    g.setOutputs({y});
    return m;
}

}  // namespace

TEST(CheckedProduct, OverflowNegativeAndFactor) {
    EXPECT_EQ(ir::checkedProduct({2, 3}, 4), 24);
    EXPECT_EQ(ir::checkedProduct({}), 1);
    EXPECT_EQ(ir::checkedProduct({0, INT64_MAX, INT64_MAX}), 0);
    EXPECT_FALSE(ir::checkedProduct({int64_t{1} << 32, int64_t{1} << 32}).has_value());
    EXPECT_FALSE(ir::checkedProduct({int64_t{1} << 31, int64_t{1} << 31}, 4).has_value());
    EXPECT_FALSE(ir::checkedProduct({4, -1}).has_value());
}

TEST(SchemaEnvelope, CountsAndRequiredInputs) {
    ir::Node erf;
    erf.opType = "Erf";
    erf.outputs = {1};
    EXPECT_FALSE(onnxio::fitsSchemaEnvelope(erf));  // no input
    erf.inputs = {0};
    EXPECT_TRUE(onnxio::fitsSchemaEnvelope(erf));
    erf.inputs = {ir::kNone};
    EXPECT_FALSE(onnxio::fitsSchemaEnvelope(erf));  // its one input omitted
    ir::Node clip;
    clip.opType = "Clip";
    clip.inputs = {0, ir::kNone, 2};  // min omitted: optional since opset 11
    clip.outputs = {3};
    EXPECT_TRUE(onnxio::fitsSchemaEnvelope(clip));
    erf.inputs = {};
    erf.domain = "com.custom";  // no schema: left to its own domain
    EXPECT_TRUE(onnxio::fitsSchemaEnvelope(erf));
}

TEST(SchemaValidation, CustomDomainOpsKeepImporting) {
    onnx::ModelProto mp;
    mp.set_ir_version(8);
    mp.add_opset_import()->set_version(17);
    auto* custom = mp.add_opset_import();
    custom->set_domain("com.custom");
    custom->set_version(1);
    auto* n = mp.mutable_graph()->add_node();
    n->set_op_type("Erf");  // a standard name, but in a domain without schemas: no input is fine
    n->set_domain("com.custom");
    n->set_name("custom_erf");
    n->add_output("y");
    mp.mutable_graph()->set_name("g");
    mp.mutable_graph()->add_output()->set_name("y");
    auto m = onnxio::importModelBytes(mp.SerializeAsString(), ".");
    EXPECT_EQ(m.graph.nodeCount(), 1u);
}

TEST(ConstantFoldingLimits, RefusesFromTheShapeBeforeEvaluating) {
    auto m = onnxio::importModelBytes(corpusModel("fold_gigabytes").bytes, ".");
    auto r = test::runPassOnce("constant-folding", m);
    // 65536 x 65536 floats, known from the inferred shape; evaluating first would have hit the
    // interpreter's budget ("could not evaluate it") instead.
    EXPECT_EQ(test::opCounts(m.graph)["ConstantOfShape"], 1);
    EXPECT_TRUE(test::hasRemark(r, passes::RemarkKind::Missed, "fold-node", "17179869184 bytes, above the fold limit"))
        << test::remarkText(r, passes::RemarkKind::Missed);
}

TEST(MemoryBudget, RunStopsNamingTheNodeAndRunsUnderABudgetThatFits) {
    const auto m = reluModel(1024);  // output 4 MiB
    const auto inputs = eval::randomInputs(m, 1);
    eval::RunOptions tight;
    tight.maxMemoryBytes = int64_t(1) << 20;
    try {
        eval::run(m, inputs, tight);
        FAIL() << "a 4 MiB output ran under a 1 MiB budget";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::BadInput);
        EXPECT_NE(std::string(e.what()).find("node 'relu1' (Relu): tensor [1024,1024] needs 4.0 MiB"), std::string::npos) << e.what();
    }
    eval::RunOptions roomy;
    roomy.maxMemoryBytes = int64_t(8) << 20;
    EXPECT_EQ(eval::run(m, inputs, roomy).size(), 1u);
    EXPECT_EQ(eval::currentMemoryBudget(), eval::defaultMemoryBudget());  // the scope is gone
}

TEST(MemoryBudget, CliMaxMemoryOption) {
    std::string path = test::tempDir("budget") + "/relu.onnx";
    std::ofstream(path, std::ios::binary) << onnxio::exportModelBytes(reluModel(1024));
    auto ok = test::runCli({"run", path, "--max-memory", "16M"});
    EXPECT_EQ(ok.exitCode, 0) << ok.err;
    auto tight = test::runCli({"run", path, "--max-memory", "2M"});  // the 4 MiB random input already exceeds it
    EXPECT_EQ(tight.exitCode, 2);
    EXPECT_NE(tight.err.find("more than the interpreter's memory budget of 2.0 MiB"), std::string::npos) << tight.err;
    auto bad = test::runCli({"run", path, "--max-memory", "lots"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("--max-memory takes a size in bytes"), std::string::npos) << bad.err;
}

TEST(InterpreterLimits, RecursiveFunctionBuiltInCodeIsAnErrorNotAStackOverflow) {
    // Import rejects recursive functions; a model built in code reaches the interpreter.
    ir::Model m;
    m.opsetImports = {{"", 17}, {"local", 1}};
    ir::Function f;
    f.name = "F";
    f.domain = "local";
    f.opsetImports = m.opsetImports;
    f.body = std::make_shared<ir::Graph>();
    auto bx = f.body->addInput("x", {});
    auto by = f.body->addValue("y");
    f.body->addNode("F", {bx}, {by}, {}, "self_call", "local");
    f.body->setOutputs({by});
    m.functions.push_back(f);
    ir::Shape s;
    s.dims = {ir::Dim::of(2)};
    auto x = m.graph.addInput("x", ir::TypeInfo::tensor(ir::DataType::Float, s));
    auto y = m.graph.addValue("y");
    m.graph.addNode("F", {x}, {y}, {}, "call_F", "local");
    m.graph.setOutputs({y});
    std::string why;
    EXPECT_FALSE(eval::isModelSupported(m, &why));
    EXPECT_NE(why.find("more than 64 levels deep"), std::string::npos) << why;
    try {
        eval::run(m, eval::randomInputs(m, 1));
        FAIL() << "a recursive function ran";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("function 'F' is called more than 64 levels deep"), std::string::npos) << e.what();
    }
}
