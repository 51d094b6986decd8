// Rank preconditions checked before libonnx's shape inference (core/onnx/InferenceGuards).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <initializer_list>

#include "onnx/InferenceGuards.h"

using passlens::onnxio::findRankHazard;

namespace {

void declare(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
             std::initializer_list<int64_t> dims) {
    auto* vi = list->Add();
    vi->set_name(name);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    auto* shape = t->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

onnx::NodeProto* node(onnx::GraphProto& g, const std::string& op, const std::string& name,
                      std::initializer_list<std::string> ins) {
    auto* n = g.add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : ins) n->add_input(i);
    n->add_output(name + "_out");
    return n;
}

onnx::GraphProto gemmGraph(std::initializer_list<int64_t> bDims) {
    onnx::GraphProto g;
    declare(g.mutable_input(), "a", {2, 3});
    declare(g.mutable_input(), "b", bDims);
    node(g, "Gemm", "gemm1", {"a", "b"});
    return g;
}

}  // namespace

TEST(InferenceGuards, NamesTheNodeTheInputAndTheRank) {
    auto hazard = findRankHazard(gemmGraph({4}));
    ASSERT_TRUE(hazard);
    EXPECT_NE(hazard->find("'gemm1' (Gemm)"), std::string::npos) << *hazard;
    EXPECT_NE(hazard->find("input 'b' has rank 1"), std::string::npos) << *hazard;
}

TEST(InferenceGuards, WellFormedAndUndeclaredRanksPass) {
    EXPECT_FALSE(findRankHazard(gemmGraph({3, 4})));
    onnx::GraphProto g;
    node(g, "Gemm", "gemm1", {"a", "b"});  // no declared shapes: nothing to hold against the spec
    EXPECT_FALSE(findRankHazard(g));
}

TEST(InferenceGuards, InitializerAndConstantRanksCount) {
    onnx::GraphProto g;
    declare(g.mutable_input(), "x", {1, 2, 8, 8});
    auto* w = g.add_initializer();
    w->set_name("w");
    w->add_dims(2);
    node(g, "ConvTranspose", "deconv1", {"x", "w"});
    ASSERT_TRUE(findRankHazard(g));

    onnx::GraphProto c;
    declare(c.mutable_input(), "a", {2, 3});
    auto* k = node(c, "Constant", "k", {});
    auto* value = k->add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    value->mutable_t()->add_dims(5);
    node(c, "Gemm", "gemm1", {"a", "k_out"});
    auto hazard = findRankHazard(c);
    ASSERT_TRUE(hazard);
    EXPECT_NE(hazard->find("'k_out' has rank 1"), std::string::npos) << *hazard;
}

TEST(InferenceGuards, SubgraphsSeeOuterRanks) {
    onnx::GraphProto outer;
    declare(outer.mutable_input(), "a", {2, 3});
    declare(outer.mutable_input(), "b", {7});
    auto* iff = node(outer, "If", "if1", {"cond"});
    auto* branch = iff->add_attribute();
    branch->set_name("then_branch");
    branch->set_type(onnx::AttributeProto::GRAPH);
    node(*branch->mutable_g(), "Gemm", "inner_gemm", {"a", "b"});
    auto hazard = findRankHazard(outer);
    ASSERT_TRUE(hazard);
    EXPECT_NE(hazard->find("inner_gemm"), std::string::npos) << *hazard;
}

TEST(InferenceGuards, CustomDomainsAreLeftAlone) {
    onnx::GraphProto g = gemmGraph({4});
    g.mutable_node(0)->set_domain("com.example");
    EXPECT_FALSE(findRankHazard(g));
}
