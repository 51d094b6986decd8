// Every kind of bad input gets a one-line error naming the problem, exit code 2, no crash.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <fstream>
#include <random>

#include "TestSupport.h"
#include "onnx/Import.h"

using namespace passlens;

namespace {

onnx::ModelProto reluModel() {
    onnx::ModelProto mp;
    mp.set_ir_version(8);
    mp.add_opset_import()->set_version(17);
    auto* g = mp.mutable_graph();
    g->set_name("g");
    auto* in = g->add_input();
    in->set_name("x");
    in->mutable_type()->mutable_tensor_type()->set_elem_type(1);
    in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
    auto* n = g->add_node();
    n->set_op_type("Relu");
    n->set_name("relu1");
    n->add_input("x");
    n->add_output("y");
    g->add_output()->set_name("y");
    return mp;
}

std::string write(const std::string& name, const std::string& bytes) {
    std::string path = test::tempDir("bad_" + name) + "/model.onnx";
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

std::string write(const std::string& name, const onnx::ModelProto& mp) { return write(name, mp.SerializeAsString()); }

void expectBad(const std::string& path, const std::string& needle) {
    auto r = test::runCli({"info", path});
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr was: " << r.err;
    // One line: "error: ...\n".
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace

TEST(BadInput, RandomBytes) {
    std::mt19937 rng(42);
    std::string bytes(4096, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng());
    expectBad(write("random", bytes), "not a valid ONNX model");
}

TEST(BadInput, TruncatedFile) {
    std::ifstream in(test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    ASSERT_GT(bytes.size(), 1000u);
    bytes.resize(bytes.size() / 2);
    expectBad(write("truncated", bytes), "not a valid ONNX model");
}

TEST(BadInput, EmptyFileAndMissingFile) {
    expectBad(write("empty", std::string()), "is empty");
    expectBad("/nonexistent/model.onnx", "cannot open");
}

TEST(BadInput, Cycle) {
    auto mp = reluModel();
    auto* g = mp.mutable_graph();
    g->mutable_node(0)->set_input(0, "z");  // relu1 reads z
    auto* n = g->add_node();                // relu2 reads y, writes z
    n->set_op_type("Relu");
    n->set_name("relu2");
    n->add_input("y");
    n->add_output("z");
    expectBad(write("cycle", mp), "cycle through node 'relu");
}

TEST(BadInput, UndefinedValue) {
    auto mp = reluModel();
    mp.mutable_graph()->mutable_node(0)->set_input(0, "ghost");
    expectBad(write("undefined", mp), "node 'relu1' reads undefined value 'ghost'");
}

TEST(BadInput, DuplicateOutputNames) {
    auto mp = reluModel();
    auto* n = mp.mutable_graph()->add_node();
    n->set_op_type("Relu");
    n->set_name("relu2");
    n->add_input("x");
    n->add_output("y");
    expectBad(write("duplicate", mp), "output 'y' is already defined");
}

TEST(BadInput, UnknownOp) {
    auto mp = reluModel();
    mp.mutable_graph()->mutable_node(0)->set_op_type("Frobnicate");
    expectBad(write("unknown_op", mp), "unknown operator 'Frobnicate' in domain 'ai.onnx' at opset 17");
}

TEST(BadInput, UnknownDomain) {
    auto mp = reluModel();
    mp.mutable_graph()->mutable_node(0)->set_domain("com.nowhere");
    expectBad(write("unknown_domain", mp), "uses domain 'com.nowhere', which the model does not import");
}

TEST(BadInput, OpsetNewerThanLibonnx) {
    auto mp = reluModel();
    mp.mutable_opset_import(0)->set_version(99);
    expectBad(write("new_opset", mp), "opset 99 of domain 'ai.onnx', newer than");
}

TEST(BadInput, MissingExternalDataFile) {
    auto mp = reluModel();
    auto* init = mp.mutable_graph()->add_initializer();
    init->set_name("w");
    init->set_data_type(1);
    init->add_dims(4);
    init->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = init->add_external_data();
    e->set_key("location");
    e->set_value("weights.bin");
    expectBad(write("missing_external", mp), "external-data file 'weights.bin' not found");
}

TEST(BadInput, DimensionProductOverflows) {
    auto mp = reluModel();
    auto* shape = mp.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->mutable_dim(0)->set_dim_value(int64_t(1) << 40);
    shape->add_dim()->set_dim_value(int64_t(1) << 40);
    expectBad(write("overflow", mp), "value 'x': element count overflows int64");
}

TEST(BadInput, InitializerPayloadTooShort) {
    auto mp = reluModel();
    auto* init = mp.mutable_graph()->add_initializer();
    init->set_name("w");
    init->set_data_type(1);
    init->add_dims(1000);
    init->set_raw_data(std::string(16, '\0'));
    expectBad(write("short_payload", mp), "tensor 'w' holds 16 bytes, but its shape needs 4000");
}

// A C++ bool may hold only 0 or 1; a file may store any byte (ONNX Runtime reads non-zero as true).
TEST(BadInput, BoolBytesOtherThanZeroOrOneReadAsTrue) {
    auto mp = reluModel();
    auto* init = mp.mutable_graph()->add_initializer();
    init->set_name("mask");
    init->set_data_type(9);  // BOOL
    init->add_dims(4);
    init->set_raw_data(std::string("\x00\x02\xf8\x01", 4));
    const auto m = onnxio::importModelBytes(mp.SerializeAsString(), ".");
    const auto& t = *m.graph.value(m.graph.initializerOrder().at(0)).initializer;
    const auto bytes = t.data.bytes();
    ASSERT_EQ(bytes.size(), 4u);
    std::vector<int> got;
    for (std::byte b : bytes) got.push_back(std::to_integer<int>(b));
    EXPECT_EQ(got, (std::vector<int>{0, 1, 1, 1}));
}

TEST(BadInput, UsageErrorsExitTwo) {
    auto r = test::runCli({"info"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("missing MODEL"), std::string::npos);
    r = test::runCli({"no-such-command"});
    EXPECT_EQ(r.exitCode, 2);
    // The executable's main() maps to the same dispatch: its exit status and stderr agree.
    const auto p = test::runCliProcess({"no-such-command"});
    EXPECT_EQ(p.exitCode, 2);
    EXPECT_EQ(p.err, r.err);
    const auto v = test::runCliProcess({"--version"});
    EXPECT_EQ(v.exitCode, 0);
    EXPECT_EQ(v.out, test::runCli({"--version"}).out);
    r = test::runCli({"info", test::realModel("silero_vad_v5.onnx"), "--bogus"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("unknown flag --bogus"), std::string::npos);
}

TEST(BadInput, ValidModelStillLoads) {
    auto r = test::runCli({"info", write("valid", reluModel())});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("Relu: 1"), std::string::npos) << r.out;
}

// Numeric options are validated once (cli Args), for every command that takes them.
TEST(BadInput, NumericOptionsAreChecked) {
    const std::string model = test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx");
    struct Case { std::vector<std::string> args; std::string needle; };
    const Case cases[] = {
        {{"verify", model, model, "--seed", "1.5"}, "--seed expects a non-negative integer, got '1.5'"},
        {{"run", model, "--seed", "-3"}, "--seed expects a non-negative integer, got '-3'"},
        {{"verify", model, model, "--rtol", "abc"}, "--rtol expects a non-negative number, got 'abc'"},
        {{"verify", model, model, "--atol", "-1"}, "--atol expects a non-negative number, got '-1'"},
    };
    for (const auto& c : cases) {
        auto r = test::runCli(c.args);
        EXPECT_EQ(r.exitCode, 2) << c.needle << "\n" << r.err;
        EXPECT_NE(r.err.find(c.needle), std::string::npos) << "stderr was: " << r.err;
    }
}
