// Golden tests for the basic passes: one small builder-made graph per rule, positive and
// negative, with op counts, remark text, change log/provenance, and idempotence.
#include <gtest/gtest.h>

#include <algorithm>

#include "examples/Builder.h"
#include "ir/Error.h"
#include "passes/BasicPasses.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

size_t countOp(const Model& m, const std::string& op) {
    size_t n = 0;
    for (NodeId id : m.graph.nodeOrder()) n += m.graph.node(id).opType == op;
    return n;
}

PassResult runPass(const std::string& name, Model& m, PassOptions o = {}) {
    return PassRegistry::global().create(name)->run(m, o);
}

bool hasRemark(const PassResult& r, RemarkKind k, const std::string& rule, const std::string& text) {
    return std::any_of(r.remarks.begin(), r.remarks.end(), [&](const Remark& m) {
        return m.kind == k && m.rule == rule && m.message.find(text) != std::string::npos;
    });
}

}  // namespace

TEST(PassesRegistry, LevelsAndUnknownName) {
    const auto& reg = PassRegistry::global();
    auto basic = reg.pipeline(Level::Basic);
    // The lectures' basic level: constant folding, redundant node elimination and the limited fusions.
    EXPECT_EQ(basic, (std::vector<std::string>{"shape-chain-folding", "constant-folding", "algebraic", "cse", "dce",
                                               "fuse-conv-bn", "fuse-conv-mul-add", "fuse-reshape", "fuse-matmul-add"}));
    EXPECT_TRUE(reg.pipeline(Level::None).empty());
    EXPECT_GE(reg.pipeline(Level::All).size(), basic.size());
    try {
        reg.create("nope");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::BadInput);
        EXPECT_NE(std::string(e.what()).find("valid passes: shape-chain-folding, constant-folding"), std::string::npos);
    }
    EXPECT_THROW(parseLevel("max"), Error);
}

TEST(PassesDce, RemovesDeadChainAndUnusedInitializer) {
    GraphBuilder b("dce");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto w = b.constant("unused_w", randomFloats({3}, 1));
    (void)w;
    auto dead = b.op("Relu", {x}, {}, "dead_relu");
    b.op("Neg", {dead}, {}, "dead_neg");
    b.output(b.op("Sigmoid", {x}, {}, "live"));
    Model m = b.finish();
    auto r = runPass("dce", m);
    EXPECT_EQ(m.graph.nodeCount(), 1u);
    EXPECT_EQ(countOp(m, "Sigmoid"), 1u);
    EXPECT_TRUE(m.graph.initializerOrder().empty());
    ASSERT_GE(r.changes.size(), 3u);
    EXPECT_EQ(r.changes[0].kind, ChangeKind::Removed);
    EXPECT_EQ(r.changes[0].nodeNames, std::vector<std::string>{"dead_neg"});  // consumers first
    EXPECT_FALSE(runPass("dce", m).changed);                                   // idempotent
}

TEST(PassesCse, MergesCommutativeDuplicatesButNotRandomOps) {
    GraphBuilder b("cse");
    auto x = b.input("x", DataType::Float, {4});
    auto y = b.input("y", DataType::Float, {4});
    auto a1 = b.op("Add", {x, y}, {}, "add1");
    auto a2 = b.op("Add", {y, x}, {}, "add2");
    auto r1 = b.op("RandomUniformLike", {x}, {}, "rnd1");
    auto r2 = b.op("RandomUniformLike", {x}, {}, "rnd2");
    b.output(b.op("Mul", {a1, a2}, {}, "mul"));
    b.output(b.op("Sub", {r1, r2}, {}, "sub"));
    Model m = b.finish();
    auto r = runPass("cse", m);
    EXPECT_EQ(countOp(m, "Add"), 1u);
    EXPECT_EQ(countOp(m, "RandomUniformLike"), 2u);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Applied, "value-numbering", "add2 computes the same value as add1"));
    EXPECT_FALSE(runPass("cse", m).changed);
}

TEST(PassesCse, MergesIdenticalInitializers) {
    GraphBuilder b("cse_init");
    auto x = b.input("x", DataType::Float, {3});
    auto c1 = b.constant("c1", floatTensor({3}, {1, 2, 3}));
    auto c2 = b.constant("c2", floatTensor({3}, {1, 2, 3}));
    auto c3 = b.constant("c3", floatTensor({3}, {1, 2, 4}));
    b.output(b.op("Add", {x, c1}, {}, "a"));
    b.output(b.op("Sub", {x, c2}, {}, "s"));
    b.output(b.op("Mul", {x, c3}, {}, "m"));
    Model m = b.finish();
    runPass("cse", m);
    EXPECT_EQ(m.graph.initializerOrder().size(), 2u);
    EXPECT_FALSE(m.graph.findValue("c2").has_value());
    EXPECT_TRUE(m.graph.findValue("c3").has_value());
}

TEST(PassesConstantFolding, ConstantShapeAndInterpreterFold) {
    GraphBuilder b("fold");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto c = b.op("Constant", {}, {Attribute::makeTensor("value", floatTensor({3}, {1, 2, 3}))}, "const");
    auto two = b.constant("two", floatTensor({3}, {2, 2, 2}));
    auto prod = b.op("Mul", {c, two}, {}, "fold_me");
    auto shape = b.op("Shape", {x}, {}, "shape");
    auto y = b.op("Add", {x, prod}, {}, "add");
    b.output(b.op("Reshape", {y, shape}, {}, "reshape"));
    Model m = b.finish();
    auto r = runPass("constant-folding", m);
    EXPECT_EQ(countOp(m, "Constant"), 0u);
    EXPECT_EQ(countOp(m, "Mul"), 0u);
    EXPECT_EQ(countOp(m, "Shape"), 0u);
    EXPECT_EQ(m.graph.nodeCount(), 2u);
    const Value& folded = m.graph.value(*m.graph.findValue("fold_me_out"));
    ASSERT_TRUE(folded.initializer);
    EXPECT_EQ(folded.initializer->as<float>()[2], 6.f);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Applied, "fold-shape", "static shape of 'x'"));
    bool provenance = std::any_of(r.changes.begin(), r.changes.end(), [](const Change& ch) {
        return ch.kind == ChangeKind::Folded && ch.nodeNames == std::vector<std::string>{"fold_me"} && !ch.provenance.empty();
    });
    EXPECT_TRUE(provenance);
    EXPECT_FALSE(runPass("constant-folding", m).changed);
}

TEST(PassesConstantFolding, SizeLimitGivesMissedRemark) {
    GraphBuilder b("fold_limit");
    auto x = b.input("x", DataType::Float, {4});
    auto a = b.constant("a", randomFloats({64}, 1));
    auto bb = b.constant("b", randomFloats({64}, 2));
    auto s = b.op("Add", {a, bb}, {}, "big_add");
    b.output(b.op("Add", {x, b.op("ReduceSum", {s}, {Attribute::makeInt("keepdims", 0)}, "rs")}, {}, "out"));
    Model m = b.finish();
    PassOptions o;
    o.foldSizeLimitBytes = 100;  // 64 floats = 256 bytes
    auto r = runPass("constant-folding", m, o);
    EXPECT_EQ(countOp(m, "Add"), 2u);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Missed, "fold-node", "output would be 256 bytes, above the fold limit of 100 bytes"));
}

TEST(PassesConstantFolding, ShapeOfSymbolicInputIsMissed) {
    GraphBuilder b("fold_sym");
    auto x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("N"), Dim::of(3)});
    b.output(b.op("Shape", {x}, {}, "shape"));
    Model m = b.finish();
    auto r = runPass("constant-folding", m);
    EXPECT_EQ(countOp(m, "Shape"), 1u);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Missed, "fold-shape", "not static"));
}

TEST(PassesAlgebraic, NeutralElementsAndIdentityLikeNodes) {
    GraphBuilder b("alg");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto zero = b.constant("zero", floatTensor({3}, {0, 0, 0}));
    auto one = b.scalar("one", 1.f);
    auto a = b.op("Add", {x, zero}, {}, "add0");
    auto m1 = b.op("Mul", {one, a}, {}, "mul1");
    auto id = b.op("Identity", {m1}, {}, "ident");
    auto r1 = b.op("Relu", {id}, {}, "relu1");
    auto r2 = b.op("Relu", {r1}, {}, "relu2");
    b.output(b.op("Sigmoid", {r2}, {}, "out"));
    Model m = b.finish();
    auto r = runPass("algebraic", m);
    EXPECT_EQ(m.graph.nodeCount(), 2u);  // Relu, Sigmoid
    EXPECT_EQ(countOp(m, "Relu"), 1u);
    for (const char* rule : {"add-zero", "mul-one", "identity", "relu-relu"})
        EXPECT_TRUE(hasRemark(r, RemarkKind::Applied, rule, "")) << rule;
    EXPECT_FALSE(runPass("algebraic", m).changed);
}

TEST(PassesAlgebraic, BroadcastingAddZeroIsMissed) {
    GraphBuilder b("alg_neg");
    auto x = b.input("x", DataType::Float, {1});
    auto zero = b.constant("zero", floatTensor({4}, {0, 0, 0, 0}));
    b.output(b.op("Add", {x, zero}, {}, "add0"));
    Model m = b.finish();
    auto r = runPass("algebraic", m);
    EXPECT_EQ(countOp(m, "Add"), 1u);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Missed, "add-zero", "shape or type differs"));
}

TEST(PassesAlgebraic, GraphOutputNameKept) {
    GraphBuilder b("alg_out");
    auto x = b.input("x", DataType::Float, {2});
    auto r = b.op("Relu", {x}, {}, "relu");
    auto id = b.op("Identity", {r}, {}, "ident");
    b.output(id);
    Model m = b.finish();
    std::string outName = m.graph.value(m.graph.outputs()[0]).name;
    runPass("algebraic", m);
    EXPECT_EQ(countOp(m, "Identity"), 0u);
    EXPECT_EQ(m.graph.value(m.graph.outputs()[0]).name, outName);
}

TEST(PassesManager, SnapshotsSharePayloadsAndFixedPointStops) {
    GraphBuilder b("pm");
    auto x = b.input("x", DataType::Float, {2, 8});
    auto w = b.constant("w", randomFloats({8, 8}, 3));
    auto mm = b.op("MatMul", {x, w}, {}, "mm");
    auto i = b.op("Identity", {mm}, {}, "id");
    b.output(b.op("Relu", {i}, {}, "relu"));
    Model m = b.finish();
    PassManager pm;
    pm.addLevel(Level::Basic);
    PipelineOptions o;
    o.fixedPoint = true;
    auto res = pm.run(m, o);
    EXPECT_EQ(res.iterations, 2);  // second round changes nothing and stops
    ASSERT_FALSE(res.steps.empty());
    const Value& w0 = res.initial->graph.value(*res.initial->graph.findValue("w"));
    for (const auto& s : res.steps) {
        const Value& ws = s.snapshot->graph.value(*s.snapshot->graph.findValue("w"));
        EXPECT_TRUE(ws.initializer->data.sharesStorageWith(w0.initializer->data));
    }
    EXPECT_EQ(countOp(m, "Identity"), 0u);
}
