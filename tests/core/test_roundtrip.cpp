// Import → export → import must give an identical graph, for every ONNX test model and every real
// model, and the exported file passes the ONNX checker wherever the original does.
#include <gtest/gtest.h>

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <fstream>

#include "TestSupport.h"
#include "ir/Error.h"
#include "onnx/Checker.h"
#include "onnx/Export.h"
#include "onnx/Import.h"

using namespace passlens;

namespace {

struct RoundTripOutcome {
    bool imported = false;
    std::string failure;  // empty = fine
};

RoundTripOutcome roundTrip(const std::string& path, const std::string& tmp) {
    RoundTripOutcome r;
    ir::Model first;
    try {
        first = onnxio::importModelFile(path);
    } catch (const Error& e) {
        r.failure = "import failed: " + std::string(e.what());
        return r;
    }
    r.imported = true;
    std::string outPath = tmp + "/rt.onnx";
    onnxio::exportModelFile(first, outPath);
    ir::Model second = onnxio::importModelFile(outPath);
    if (test::canonicalText(first) != test::canonicalText(second)) {
        r.failure = "graph differs after round trip";
        if (getenv("PASSLENS_DUMP")) {
            std::ofstream(tmp + "/a.txt") << test::canonicalText(first);
            std::ofstream(tmp + "/b.txt") << test::canonicalText(second);
        }
        return r;
    }
    bool originalOk = !onnxio::checkModelFile(path).has_value();
    if (originalOk) {
        if (auto err = onnxio::checkModelFile(outPath)) r.failure = "checker fails on export: " + *err;
    }
    return r;
}

}  // namespace

TEST(RoundTrip, EveryTestdataModel) {
    auto models = test::testdataModels();
    ASSERT_GE(models.size(), 1000u) << "libonnx-testdata missing? run packaging/setup-debian.sh";
    std::string tmp = test::tempDir("roundtrip_testdata");
    size_t failures = 0;
    for (const auto& path : models) {
        auto r = roundTrip(path, tmp);
        if (!r.failure.empty()) {
            ++failures;
            ADD_FAILURE() << path << ": " << r.failure;
        }
    }
    std::cout << models.size() << " testdata models round-tripped, " << failures << " failures\n";
    EXPECT_EQ(failures, 0u);
}

TEST(RoundTrip, EveryRealModel) {
    std::string tmp = test::tempDir("roundtrip_real");
    for (const auto& name : test::realModelNames()) {
        auto r = roundTrip(test::realModel(name), tmp);
        EXPECT_TRUE(r.failure.empty()) << name << ": " << r.failure;
    }
}

TEST(RoundTrip, KeepsDocStringsMetadataAndCustomDomains) {
    onnx::ModelProto mp;
    mp.set_ir_version(8);
    mp.set_producer_name("hand");
    mp.set_doc_string("model doc");
    auto* meta = mp.add_metadata_props();
    meta->set_key("author");
    meta->set_value("passlens");
    auto* op = mp.add_opset_import();
    op->set_version(17);
    auto* custom = mp.add_opset_import();
    custom->set_domain("com.example");
    custom->set_version(1);
    auto* g = mp.mutable_graph();
    g->set_name("g");
    g->set_doc_string("graph doc");
    auto* in = g->add_input();
    in->set_name("x");
    in->mutable_type()->mutable_tensor_type()->set_elem_type(1);
    in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("N");
    auto* n1 = g->add_node();
    n1->set_op_type("Relu");
    n1->set_name("r");
    n1->set_doc_string("node doc");
    n1->add_input("x");
    n1->add_output("y");
    auto* n2 = g->add_node();
    n2->set_op_type("MyOp");
    n2->set_domain("com.example");
    n2->add_input("y");
    n2->add_output("z");
    auto* a = n2->add_attribute();
    a->set_name("alpha");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(0.5f);
    g->add_output()->set_name("z");
    mp.add_training_info()->mutable_initialization()->set_name("init");

    std::string bytes = mp.SerializeAsString();
    auto m = onnxio::importModelBytes(bytes, ".");
    onnx::ModelProto back;
    onnxio::exportToProto(m, back);
    EXPECT_EQ(back.doc_string(), "model doc");
    EXPECT_EQ(back.metadata_props(0).value(), "passlens");
    EXPECT_EQ(back.graph().doc_string(), "graph doc");
    EXPECT_EQ(back.graph().node(0).doc_string(), "node doc");
    EXPECT_EQ(back.graph().node(1).domain(), "com.example");
    EXPECT_EQ(back.graph().node(1).attribute(0).f(), 0.5f);
    EXPECT_EQ(back.opset_import_size(), 2);
    EXPECT_EQ(back.training_info_size(), 1);
    EXPECT_EQ(back.training_info(0).initialization().name(), "init");
    EXPECT_EQ(back.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "N");
}

TEST(RoundTrip, ExternalDataIsWrittenAndReadBack) {
    std::string tmp = test::tempDir("external");
    auto m = onnxio::importModelFile(test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx"));
    onnxio::ExportOptions eo;
    eo.externalDataFile = "weights.bin";
    eo.externalThreshold = 256;
    onnxio::exportModelFile(m, tmp + "/ext.onnx", eo);
    ASSERT_TRUE(std::filesystem::exists(tmp + "/weights.bin"));
    EXPECT_LT(std::filesystem::file_size(tmp + "/ext.onnx"), std::filesystem::file_size(tmp + "/weights.bin"));
    auto back = onnxio::importModelFile(tmp + "/ext.onnx");
    EXPECT_EQ(test::canonicalText(m), test::canonicalText(back));
    // Payloads of the reloaded model point into one shared mapping of weights.bin (no copy).
    const ir::Graph& g = back.graph;
    std::vector<const ir::Tensor*> tensors;
    for (auto v : g.initializerOrder()) tensors.push_back(g.value(v).initializer.get());
    for (auto n : g.nodeOrder())
        for (const auto& a : g.node(n).attributes)
            if (a.t) tensors.push_back(a.t.get());
    const ir::Tensor* firstBig = nullptr;
    size_t shared = 0;
    for (const ir::Tensor* tp : tensors) {
        const auto& t = *tp;
        if (!t.external.present()) continue;
        if (!firstBig) firstBig = &t;
        else if (t.data.sharesStorageWith(firstBig->data)) ++shared;
    }
    ASSERT_NE(firstBig, nullptr);
    EXPECT_GT(shared, 0u);
    EXPECT_FALSE(onnxio::checkModelFile(tmp + "/ext.onnx").has_value());
}
