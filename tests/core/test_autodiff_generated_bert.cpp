// `grad` on the generated 24-layer BERT (tests/gen, PyTorch-export style: shape chains, computed
// Reshape targets, attention mask arithmetic, Erf GELU): the training graph builds with symbolic
// batch and seq, and sampled parameters of the first, a middle and the last layer and the embeddings
// agree with central finite differences (float64) of the mse loss.
#include <gtest/gtest.h>

#include <iostream>

#include "AutodiffTestSupport.h"
#include "ir/Tensor.h"
#include "onnx/Import.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

std::string genModel(const std::string& name) { return std::string(PASSLENS_GEN_MODELS_DIR) + "/" + name + ".onnx"; }

}  // namespace

TEST(AutodiffGeneratedBert, Layers24GradientsMatchFiniteDifferences) {
    const Model bert = onnxio::importModelFile(genModel("bert_l24_scoped"));
    const std::string output = bert.graph.value(bert.graph.outputs()[0]).name;  // last hidden state
    const int64_t batch = 2, seq = 5, hidden = 64;
    std::vector<int64_t> ids, mask;
    for (int64_t i = 0; i < batch * seq; ++i) {
        ids.push_back((333 * i) % 999);  // rows 0, 333, 666 again and again: the sampled embedding rows, repeated
        mask.push_back(i == batch * seq - 1 ? 0 : 1);  // one padded token: the mask arithmetic is on the path
    }
    test::GradCheck check;
    check.inputs = {{"input_ids", int64Tensor({batch, seq}, ids)},
                    {"attention_mask", int64Tensor({batch, seq}, mask)},
                    {output + "_target", randomFloats({batch, seq, hidden}, 17)}};
    check.maxElementsPerTensor = 3;
    const auto report = test::expectGradientsMatch(
        bert, "mse",
        {"embeddings.word_embeddings.weight", "embeddings.LayerNorm.weight", "encoder.layer.0.attention.self.query.weight",
         "encoder.layer.11.intermediate.dense.bias", "encoder.layer.23.attention.self.key.weight", "encoder.layer.23.output.LayerNorm.bias"},
        check, output);
    EXPECT_GE(report.checked, 12u);
    std::cout << "[ bert_l24 ] " << report.checked << " elements, worst " << report.worstRel << " (" << report.worst << ")\n";
}
