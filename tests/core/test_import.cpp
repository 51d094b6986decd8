// Import details: shape-inference failures are warnings naming the node; external weights are
// mapped in place, not read.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <fcntl.h>
#include <unistd.h>

#include <fstream>

#include "TestSupport.h"
#include "examples/Builder.h"
#include "ir/Error.h"
#include "ir/Verifier.h"
#include "onnx/Import.h"

using namespace passlens;

namespace {

onnx::ValueInfoProto* addTensorInput(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims) {
    auto* in = g->add_input();
    in->set_name(name);
    in->mutable_type()->mutable_tensor_type()->set_elem_type(1);
    for (auto d : dims) in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    return in;
}

}  // namespace

TEST(Import, ShapeInferenceFailureIsAWarningNamingTheNode) {
    onnx::ModelProto mp;
    mp.set_ir_version(8);
    mp.add_opset_import()->set_version(17);
    auto* g = mp.mutable_graph();
    g->set_name("g");
    addTensorInput(g, "a", {2, 3});
    addTensorInput(g, "b", {4, 5});
    auto* n = g->add_node();
    n->set_op_type("Add");
    n->set_name("bad_add");
    n->add_input("a");
    n->add_input("b");
    n->add_output("c");
    g->add_output()->set_name("c");
    auto m = onnxio::importModelBytes(mp.SerializeAsString(), ".");
    ASSERT_FALSE(m.warnings.empty());
    EXPECT_NE(m.warnings.front().find("bad_add"), std::string::npos) << m.warnings.front();
    EXPECT_EQ(m.graph.nodeCount(), 1u);
}

TEST(Import, HugeExternalWeightsAreMappedNotRead) {
    // A 3 GB sparse weights file: loading must not read (or copy) it, so this stays instant.
    std::string dir = test::tempDir("huge_external");
    const int64_t elements = int64_t(3) << 28;  // 3 GB of float32
    {
        int fd = ::open((dir + "/w.bin").c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
        ASSERT_GE(fd, 0);
        ASSERT_EQ(::ftruncate(fd, elements * 4), 0);
        ::close(fd);
    }
    onnx::ModelProto mp;
    mp.set_ir_version(8);
    mp.add_opset_import()->set_version(17);
    auto* g = mp.mutable_graph();
    g->set_name("g");
    auto* w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(1);
    w->add_dims(elements);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* loc = w->add_external_data();
    loc->set_key("location");
    loc->set_value("w.bin");
    auto* n = g->add_node();
    n->set_op_type("Identity");
    n->add_input("w");
    n->add_output("y");
    g->add_output()->set_name("y");
    std::ofstream(dir + "/model.onnx", std::ios::binary) << mp.SerializeAsString();

    auto m = onnxio::importModelFile(dir + "/model.onnx");
    auto v = m.graph.findValue("w");
    ASSERT_TRUE(v);
    const auto& t = *m.graph.value(*v).initializer;
    EXPECT_EQ(t.byteSize(), static_cast<size_t>(elements * 4));
    EXPECT_EQ(t.data.data()[elements * 4 - 1], std::byte{0});
    // A copy of the model shares the mapping.
    ir::Model copy = m;
    EXPECT_TRUE(copy.graph.value(*v).initializer->data.sharesStorageWith(t.data));
}

TEST(Import, SubgraphReadsOfOuterValuesAreCaptures) {
    auto m = onnxio::importModelFile(test::realModel("silero_vad_v5.onnx"));
    size_t captures = 0;
    m.graph.forEachGraph([&](const ir::Graph& g) {
        for (auto v : g.valueIds())
            if (g.value(v).isOuterScope) ++captures;
    });
    EXPECT_GT(captures, 0u);
    EXPECT_TRUE(ir::verifyModel(m).ok());
}

TEST(Import, VerifierRejectsSubgraphReadingUnknownOuterName) {
    ir::GraphBuilder b("outer");
    auto x = b.input("x", ir::DataType::Float, {2});
    auto cond = b.input("cond", ir::DataType::Bool, {});
    auto body = std::make_shared<ir::Graph>();
    body->name = "then";
    auto ghost = body->addOuterScopeValue("not_defined_anywhere");
    auto out = body->addValue("t_out");
    body->addNode("Identity", {ghost}, {out});
    body->markOutput(out);
    auto elseBody = std::make_shared<ir::Graph>();
    elseBody->name = "else";
    auto captured = elseBody->addOuterScopeValue("x");
    auto out2 = elseBody->addValue("e_out");
    elseBody->addNode("Identity", {captured}, {out2});
    elseBody->markOutput(out2);
    auto y = b.op("If", {cond}, {ir::Attribute::makeGraph("then_branch", body), ir::Attribute::makeGraph("else_branch", elseBody)});
    b.output(y);
    (void)x;
    auto r = ir::verifyModel(b.model());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.problems.front().find("'not_defined_anywhere', which no enclosing graph defines"), std::string::npos)
        << r.problems.front();
}
