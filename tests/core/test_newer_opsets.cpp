// Opsets 18–23 and IR 9–11 (core/onnx/NewerOpsets): every op version of those opsets has a
// schema, import infers shapes through the changed signatures, and fields libonnx 1.12 does not
// know survive import → export byte for byte.
#include <gtest/gtest.h>

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "ir/Error.h"
#include "onnx/Checker.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "onnx/NewerOpsets.h"

using namespace passlens;

namespace {

// Every "Op-N" heading of onnx/onnx docs/Changelog.md for ai.onnx opsets 18 to 23.
const char* const kChangelog18To23[] = {
    "BitwiseAnd-18", "BitwiseNot-18", "BitwiseOr-18", "BitwiseXor-18", "CenterCropPad-18", "Col2Im-18",
    "GroupNormalization-18", "LpPool-18", "Mish-18", "OptionalGetElement-18", "OptionalHasElement-18", "Pad-18",
    "ReduceL1-18", "ReduceL2-18", "ReduceLogSum-18", "ReduceLogSumExp-18", "ReduceMax-18", "ReduceMean-18",
    "ReduceMin-18", "ReduceProd-18", "ReduceSumSquare-18", "Resize-18", "ScatterElements-18", "ScatterND-18",
    "Split-18",
    "AveragePool-19", "Cast-19", "CastLike-19", "Constant-19", "DeformConv-19", "DequantizeLinear-19", "Equal-19",
    "Identity-19", "If-19", "Loop-19", "Pad-19", "QuantizeLinear-19", "Reshape-19", "Resize-19", "Scan-19",
    "Shape-19", "Size-19",
    "AffineGrid-20", "ConstantOfShape-20", "DFT-20", "Gelu-20", "GridSample-20", "ImageDecoder-20", "IsInf-20",
    "IsNaN-20", "ReduceMax-20", "ReduceMin-20", "RegexFullMatch-20", "StringConcat-20", "StringSplit-20",
    "Cast-21", "CastLike-21", "Constant-21", "ConstantOfShape-21", "DequantizeLinear-21", "Flatten-21",
    "GroupNormalization-21", "Identity-21", "If-21", "Loop-21", "Pad-21", "QLinearMatMul-21", "QuantizeLinear-21",
    "Reshape-21", "Scan-21", "Shape-21", "Size-21", "Squeeze-21", "Transpose-21", "Unsqueeze-21",
    "Acos-22", "Acosh-22", "Asin-22", "Asinh-22", "Atan-22", "Atanh-22", "AveragePool-22", "Bernoulli-22", "Conv-22",
    "ConvTranspose-22", "Cos-22", "Cosh-22", "DeformConv-22", "Det-22", "Dropout-22", "Elu-22", "EyeLike-22", "GRU-22",
    "GlobalAveragePool-22", "GlobalLpPool-22", "GlobalMaxPool-22", "GridSample-22", "HardSigmoid-22", "HardSwish-22",
    "InstanceNormalization-22", "LSTM-22", "LpNormalization-22", "LpPool-22", "MaxPool-22", "MaxRoiPool-22",
    "MaxUnpool-22", "Mish-22", "Multinomial-22", "NegativeLogLikelihoodLoss-22", "RNN-22", "RandomNormal-22",
    "RandomNormalLike-22", "RandomUniform-22", "RandomUniformLike-22", "RoiAlign-22", "Round-22", "Selu-22", "Sin-22",
    "Sinh-22", "Softplus-22", "Softsign-22", "Tan-22", "ThresholdedRelu-22",
    "Attention-23", "Cast-23", "CastLike-23", "Constant-23", "ConstantOfShape-23", "DequantizeLinear-23", "Flatten-23",
    "Identity-23", "If-23", "Loop-23", "Pad-23", "QuantizeLinear-23", "RMSNormalization-23", "Reshape-23",
    "RotaryEmbedding-23", "Scan-23", "Shape-23", "Size-23", "Squeeze-23", "Transpose-23", "Unsqueeze-23",
};

onnx::ValueInfoProto* tensorInfo(onnx::ValueInfoProto* vi, const std::string& name, int elemType,
                                 const std::vector<int64_t>& dims) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elemType);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
    return vi;
}

void int64Initializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
}

/// A one-node model: input x (float, dims), the node with extra initializer inputs, outputs named.
onnx::ModelProto oneNode(int64_t opset, const std::string& op, const std::vector<int64_t>& dims,
                         const std::vector<std::pair<std::string, std::vector<int64_t>>>& intInputs,
                         const std::vector<std::string>& outputs, int64_t ir = 8) {
    onnx::ModelProto mp;
    mp.set_ir_version(ir);
    mp.add_opset_import()->set_version(opset);
    auto* g = mp.mutable_graph();
    g->set_name("g");
    tensorInfo(g->add_input(), "x", onnx::TensorProto::FLOAT, dims);
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(op + "_node");
    n->add_input("x");
    for (const auto& [name, values] : intInputs) {
        if (name.empty()) { n->add_input(""); continue; }
        int64Initializer(g, name, values);
        n->add_input(name);
    }
    for (const auto& o : outputs) {
        n->add_output(o);
        g->add_output()->set_name(o);
    }
    return mp;
}

std::vector<int64_t> dimsOf(const ir::Model& m, const std::string& value) {
    auto v = m.graph.findValue(value);
    if (!v) return {-99};
    const auto& type = m.graph.value(*v).type;
    std::vector<int64_t> out;
    if (!type.shape) return {-98};
    for (const auto& d : type.shape->dims) out.push_back(d.value.value_or(-1));
    return out;
}

ir::Model importProto(const onnx::ModelProto& mp) { return onnxio::importModelBytes(mp.SerializeAsString(), "."); }

onnx::AttributeProto* addIntAttr(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
    return a;
}

}  // namespace

TEST(NewerOpsets, EveryOpVersionOfTheChangelogHasASchema) {
    onnxio::registerNewerOpsets();
    for (const char* entry : kChangelog18To23) {
        std::string text = entry;
        const auto dash = text.rfind('-');
        const std::string op = text.substr(0, dash);
        const int version = std::stoi(text.substr(dash + 1));
        const auto* schema = onnx::OpSchemaRegistry::Schema(op, version, "");
        ASSERT_NE(schema, nullptr) << entry;
        EXPECT_EQ(schema->SinceVersion(), version) << entry << " resolves to version " << schema->SinceVersion();
    }
    // Nothing registered that the changelog does not list (a typo would shadow a real version).
    const auto names = onnxio::newerOpsetSchemaNames();
    for (const auto& name : names)
        EXPECT_NE(std::find(std::begin(kChangelog18To23), std::end(kChangelog18To23), name), std::end(kChangelog18To23))
            << name;
    EXPECT_EQ(names.size(), std::size(kChangelog18To23));
}

TEST(NewerOpsets, ReduceMeanTakesAxesAsAnInputAtOpset18) {
    auto mp = oneNode(18, "ReduceMean", {2, 3, 4}, {{"axes", {1}}}, {"y"});
    auto m = importProto(mp);
    EXPECT_EQ(dimsOf(m, "y"), (std::vector<int64_t>{2, 1, 4}));
    // The interpreter reads the axes input too: mean over axis 1 of 0..23.
    std::vector<float> x(24);
    for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i);
    auto in = std::make_shared<ir::Tensor>();
    in->dtype = ir::DataType::Float;
    in->dims = {2, 3, 4};
    in->data = ir::Buffer::copyOf(x.data(), x.size() * sizeof(float));
    auto out = eval::run(m, {in});
    ASSERT_EQ(out.size(), 1u);
    const float* y = out[0]->as<float>();
    EXPECT_FLOAT_EQ(y[0], 4.0f);    // (0 + 4 + 8) / 3
    EXPECT_FLOAT_EQ(y[4], 16.0f);   // (12 + 16 + 20) / 3
}

TEST(NewerOpsets, SplitWithNumOutputsGivesTheLastChunkTheRest) {
    auto mp = oneNode(18, "Split", {10, 2}, {}, {"a", "b", "c"});
    addIntAttr(mp.mutable_graph()->mutable_node(0), "num_outputs", 3);
    auto m = importProto(mp);
    EXPECT_EQ(dimsOf(m, "a"), (std::vector<int64_t>{4, 2}));
    EXPECT_EQ(dimsOf(m, "b"), (std::vector<int64_t>{4, 2}));
    EXPECT_EQ(dimsOf(m, "c"), (std::vector<int64_t>{2, 2}));
}

TEST(NewerOpsets, PadWithAxesPadsOnlyTheListedAxes) {
    // pads for axes [-1]: 1 before, 2 after; the optional constant_value is omitted.
    auto mp = oneNode(18, "Pad", {2, 3, 4}, {{"pads", {1, 2}}, {"", {}}, {"axes", {-1}}}, {"y"});
    auto m = importProto(mp);
    EXPECT_EQ(dimsOf(m, "y"), (std::vector<int64_t>{2, 3, 7}));
}

TEST(NewerOpsets, ResizeWithAxesSizesOnlyTheListedAxes) {
    // Resize-18 with axes [2, 3] and sizes for those two axes only.
    auto mp = oneNode(19, "Resize", {1, 3, 8, 8}, {{"", {}}, {"", {}}, {"sizes", {16, 12}}}, {"y"});
    auto* a = mp.mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name("axes");
    a->set_type(onnx::AttributeProto::INTS);
    a->add_ints(2);
    a->add_ints(3);
    auto m = importProto(mp);
    EXPECT_EQ(dimsOf(m, "y"), (std::vector<int64_t>{1, 3, 16, 12}));
}

TEST(NewerOpsets, GeluAtOpset20RunsAndKeepsItsShape) {
    auto mp = oneNode(20, "Gelu", {2, 3}, {}, {"y"}, 9);
    auto m = importProto(mp);
    EXPECT_EQ(dimsOf(m, "y"), (std::vector<int64_t>{2, 3}));
    EXPECT_FALSE(onnxio::checkModel(m).has_value()) << *onnxio::checkModel(m);
    auto in = std::make_shared<ir::Tensor>();
    in->dtype = ir::DataType::Float;
    in->dims = {2, 3};
    std::vector<float> x = {-2, -1, 0, 0.5f, 1, 3};
    in->data = ir::Buffer::copyOf(x.data(), x.size() * sizeof(float));
    auto out = eval::run(m, {in});
    const float* y = out[0]->as<float>();
    for (size_t i = 0; i < x.size(); ++i)
        EXPECT_NEAR(y[i], 0.5 * x[i] * (1 + std::erf(x[i] / std::sqrt(2.0))), 1e-6) << i;
}

TEST(NewerOpsets, AttentionAt23InfersTheOutputShape) {
    onnx::ModelProto mp;
    mp.set_ir_version(11);
    mp.add_opset_import()->set_version(23);
    auto* g = mp.mutable_graph();
    g->set_name("g");
    tensorInfo(g->add_input(), "q", onnx::TensorProto::FLOAT, {2, 4, 5, 8});
    tensorInfo(g->add_input(), "k", onnx::TensorProto::FLOAT, {2, 4, 7, 8});
    tensorInfo(g->add_input(), "v", onnx::TensorProto::FLOAT, {2, 4, 7, 6});
    auto* n = g->add_node();
    n->set_op_type("Attention");
    for (const char* i : {"q", "k", "v"}) n->add_input(i);
    n->add_output("y");
    g->add_output()->set_name("y");
    auto m = importProto(mp);
    EXPECT_EQ(dimsOf(m, "y"), (std::vector<int64_t>{2, 4, 5, 6}));
}

TEST(NewerOpsets, UnknownOpsetsAndIrVersionsAreStillRefusedByName) {
    auto tooNew = oneNode(24, "Relu", {2}, {}, {"y"});
    try {
        importProto(tooNew);
        FAIL() << "opset 24 imported";
    } catch (const passlens::Error& e) {
        EXPECT_NE(std::string(e.what()).find("opset 24 of domain 'ai.onnx', newer than the 23"), std::string::npos) << e.what();
    }
    auto futureIr = oneNode(18, "Relu", {2}, {}, {"y"}, 12);
    try {
        importProto(futureIr);
        FAIL() << "IR 12 imported";
    } catch (const passlens::Error& e) {
        EXPECT_NE(std::string(e.what()).find("IR version 12"), std::string::npos) << e.what();
    }
    // An op that does not exist at the model's opset (Gelu is new in 20) is named.
    auto early = oneNode(18, "Gelu", {2}, {}, {"y"});
    try {
        importProto(early);
        FAIL() << "Gelu at opset 18 imported";
    } catch (const passlens::Error& e) {
        EXPECT_NE(std::string(e.what()).find("unknown operator 'Gelu'"), std::string::npos) << e.what();
    }
}

TEST(NewerOpsets, Ir10FieldsAndNewTypesRoundTripByteForByte) {
    // What libonnx 1.12 does not know, written as a newer ONNX writes it: NodeProto.overload (8)
    // and metadata_props (9), GraphProto.metadata_props (16), FunctionProto.overload (13) and
    // metadata_props (14), TensorProto.metadata_props (16), ModelProto.configuration (26); and
    // initializers of the IR 10/11 types (float8, int4 packed with an odd element count).
    onnx::ModelProto mp;
    mp.set_ir_version(10);
    mp.add_opset_import()->set_version(21);
    auto* local = mp.add_opset_import();
    local->set_domain("local");
    local->set_version(1);
    auto* g = mp.mutable_graph();
    g->set_name("g");
    tensorInfo(g->add_input(), "x", onnx::TensorProto::FLOAT, {3});
    auto addInit = [&](const std::string& name, int type, int64_t count, const std::string& raw) {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(type);
        t->add_dims(count);
        t->set_raw_data(raw);
        return t;
    };
    addInit("w_f8e4m3", 17, 3, std::string("\x38\x40\xc8", 3));
    addInit("w_f8e5m2", 19, 2, std::string("\x3c\x40", 2));
    auto* w4 = addInit("w_int4", 22, 5, std::string("\x21\x43\x05", 3));  // 5 nibbles in 3 bytes
    addInit("w_uint4", 21, 2, std::string("\xf1", 1));
    onnx::StringStringEntryProto tensorMeta;
    tensorMeta.set_key("quant");
    tensorMeta.set_value("block32");
    w4->GetReflection()->MutableUnknownFields(w4)->AddLengthDelimited(16, tensorMeta.SerializeAsString());
    auto* n = g->add_node();
    n->set_op_type("Twice");
    n->set_domain("local");
    n->set_name("call");
    n->add_input("x");
    n->add_output("y");
    auto* nodeUnknown = n->GetReflection()->MutableUnknownFields(n);
    nodeUnknown->AddLengthDelimited(8, "v2");  // overload
    onnx::StringStringEntryProto nodeMeta;
    nodeMeta.set_key("pkg.torch.onnx.name_scopes");
    nodeMeta.set_value("['', 'block']");
    nodeUnknown->AddLengthDelimited(9, nodeMeta.SerializeAsString());
    tensorInfo(g->add_output(), "y", onnx::TensorProto::FLOAT, {3});
    onnx::StringStringEntryProto graphMeta;
    graphMeta.set_key("source");
    graphMeta.set_value("test");
    g->GetReflection()->MutableUnknownFields(g)->AddLengthDelimited(16, graphMeta.SerializeAsString());
    auto* f = mp.add_functions();
    f->set_name("Twice");
    f->set_domain("local");
    f->add_input("a");
    f->add_output("b");
    auto* body = f->add_node();
    body->set_op_type("Add");
    body->add_input("a");
    body->add_input("a");
    body->add_output("b");
    f->add_opset_import()->set_version(21);
    auto* fu = f->GetReflection()->MutableUnknownFields(f);
    fu->AddLengthDelimited(13, "v2");
    fu->AddLengthDelimited(14, graphMeta.SerializeAsString());
    mp.GetReflection()->MutableUnknownFields(&mp)->AddLengthDelimited(26, std::string("\x0a\x03""cpu", 5));

    const std::string original = mp.SerializeAsString();
    ir::Model m = onnxio::importModelBytes(original, ".");
    auto w = m.graph.findValue("w_int4");
    ASSERT_TRUE(w);
    EXPECT_EQ(m.graph.value(*w).initializer->dtype, ir::DataType::Int4);
    EXPECT_EQ(m.graph.value(*w).initializer->byteSize(), 3u);
    // Export writes value_info for inferred types; compare with that part removed.
    onnx::ModelProto back;
    ASSERT_TRUE(back.ParseFromString(onnxio::exportModelBytes(m)));
    back.mutable_graph()->clear_value_info();
    EXPECT_EQ(back.SerializeAsString(), original);
}

TEST(NewerOpsets, ConvertKeepsTheFloat8Int4FixtureByteForByte) {
    // tests/models/float8_int4_ir10.onnx (onnx 1.12's helper, IR 10, float8/uint4/int4
    // initializers, a Cast to float8): `convert` writes the same bytes back.
    const std::string in = std::string(PASSLENS_FIXTURES_DIR) + "/float8_int4_ir10.onnx";
    const std::string out = test::tempDir("convert") + "/out.onnx";
    auto r = test::runCli({"convert", in, out});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto bytes = [](const std::string& path) {
        std::ifstream f(path, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(f), {});
    };
    const std::string original = bytes(in);
    ASSERT_FALSE(original.empty());
    EXPECT_EQ(bytes(out), original);
}

TEST(NewerOpsets, A4BitPayloadOfTheWrongSizeIsRefused) {
    onnx::ModelProto mp = oneNode(21, "Relu", {2}, {}, {"y"}, 10);
    auto* t = mp.mutable_graph()->add_initializer();
    t->set_name("w");
    t->set_data_type(22);
    t->add_dims(5);
    t->set_raw_data(std::string("\x01\x02", 2));  // 5 nibbles need 3 bytes
    try {
        importProto(mp);
        FAIL() << "short int4 payload imported";
    } catch (const passlens::Error& e) {
        EXPECT_NE(std::string(e.what()).find("holds 2 bytes, but its shape needs 3"), std::string::npos) << e.what();
    }
}

TEST(NewerOpsets, CliInfoAndOptimizeWorkOnAnOpset21Model) {
    auto mp = oneNode(21, "ReduceMean", {2, 3, 4}, {{"axes", {-1}}}, {"y"}, 10);
    const std::string dir = test::tempDir("opset21");
    const std::string in = dir + "/m.onnx", out = dir + "/o.onnx";
    std::ofstream(in, std::ios::binary) << mp.SerializeAsString();
    auto info = test::runCli({"info", in});
    EXPECT_EQ(info.exitCode, 0) << info.err;
    EXPECT_NE(info.out.find("21"), std::string::npos) << info.out;
    auto opt = test::runCli({"optimize", in, "-o", out, "--level", "extended", "--verify"});
    EXPECT_EQ(opt.exitCode, 0) << opt.err;
    ir::Model optimized = onnxio::importModelFile(out);
    EXPECT_EQ(optimized.opsetFor(""), 21);  // never silently lowered
    EXPECT_EQ(optimized.irVersion, 10);
}
