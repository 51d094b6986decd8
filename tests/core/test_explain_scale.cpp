// explain at scale (issue #14): the streamed --json output is byte for byte the JSON tree's
// dump(2), for whole models, one node, and a model with no nodes.
#include <gtest/gtest.h>

#include <sstream>

#include "TestSupport.h"
#include "pipeline/Explain.h"
#include "examples/Builder.h"
#include "onnx/Import.h"

using namespace passlens;

namespace {
std::string streamed(const ir::Graph& g, const analysis::Explanation& e) {
    std::ostringstream os;
    analysis::writeExplanationJson(os, g, e);
    return os.str();
}
}  // namespace

TEST(ExplainScale, StreamedJsonEqualsTheTreeDumpOnRealModels) {
    for (const char* file : {"ch_ppocr_mobile_v2.0_cls_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx", "silero_vad_v5.onnx"}) {
        SCOPED_TRACE(file);
        auto m = onnxio::importModelFile(test::realModel(file));
        auto e = analysis::explainModel(m);
        ASSERT_GT(e.nodes.size(), 2u);  // silero_vad_v5 has 5 top-level nodes (the rest sits in If bodies)
        EXPECT_EQ(streamed(m.graph, e), analysis::explanationToJson(m.graph, e).dump(2));
        auto one = analysis::explainNode(m, m.graph.nodeOrder()[m.graph.nodeCount() / 2]);
        EXPECT_EQ(streamed(m.graph, one), analysis::explanationToJson(m.graph, one).dump(2));
    }
}

TEST(ExplainScale, StreamedJsonOfAnEmptyGraph) {
    ir::GraphBuilder b("empty");
    auto x = b.input("x", ir::DataType::Float, {2});
    b.output(x);
    ir::Model m = b.finish();
    auto e = analysis::explainModel(m);
    EXPECT_TRUE(e.nodes.empty());
    const std::string s = streamed(m.graph, e);
    EXPECT_EQ(s, analysis::explanationToJson(m.graph, e).dump(2));
    EXPECT_NE(s.find("\"nodes\": []"), std::string::npos) << s;
}
