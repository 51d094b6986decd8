#pragma once
// Helpers shared by the pass and fusion golden tests: op counts, remark lookup, and a checked run
// (interpreter equivalence, ONNX checker, idempotence).
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "eval/Interpreter.h"
#include "examples/Builder.h"
#include "onnx/Checker.h"
#include "passes/PassManager.h"

namespace passlens::test {

/// x[dims] → a(x, k1) → b(·, k2): two elementwise ops by float32 scalar constants, named "first"
/// and "second" (the constant-chain rules' cases).
inline ir::Model scalarChain(const std::string& a, float k1, const std::string& b, float k2, std::vector<int64_t> dims) {
    ir::GraphBuilder g("chain", 13);
    auto x = g.input("x", ir::DataType::Float, std::move(dims));
    auto y = g.op(a, {x, g.scalar("k1", k1)}, {}, "first");
    g.output(g.op(b, {y, g.scalar("k2", k2)}, {}, "second"));
    return g.finish();
}

/// Op type → count in a graph (not its subgraphs).
inline std::map<std::string, int> opCounts(const ir::Graph& g) {
    std::map<std::string, int> c;
    for (ir::NodeId n : g.nodeOrder()) ++c[g.node(n).opType];
    return c;
}

inline passes::PassResult runPassOnce(const std::string& pass, ir::Model& m) {
    passes::PassManager pm;
    pm.addPass(pass);
    return pm.run(m).steps.back().result;
}

struct CheckedRun {
    std::map<std::string, int> before, after;  ///< op counts of the main graph
    passes::PassResult result;                 ///< the first run
};

struct CheckOptions {
    double rtol = 1e-5, atol = 1e-6;
    uint64_t seed = 7;
    /// Reshapes the seeded random inputs (e.g. spread them over a wider range).
    std::function<std::vector<ir::TensorPtr>(std::vector<ir::TensorPtr>)> adjustInputs;
};

/// Runs `pass` once and checks: outputs equal the original's under the interpreter (seeded random
/// inputs), the ONNX checker accepts the result, and a second run changes nothing.
inline CheckedRun runChecked(ir::Model& m, const std::string& pass = "algebraic", const CheckOptions& options = {}) {
    CheckedRun out;
    out.before = opCounts(m.graph);
    const ir::Model original = m;
    auto inputs = eval::randomInputs(m, options.seed);
    if (options.adjustInputs) inputs = options.adjustInputs(std::move(inputs));
    const auto expected = eval::run(m, inputs);
    out.result = runPassOnce(pass, m);
    out.after = opCounts(m.graph);
    const auto actual = eval::run(m, inputs);
    for (const auto& d : eval::compareOutputs(original, actual, expected, options.rtol, options.atol))
        EXPECT_TRUE(d.ok) << pass << ": output " << d.name << " differs (max abs " << d.maxAbs << ")";
    const auto checker = onnxio::checkModel(m);
    EXPECT_FALSE(checker.has_value()) << checker.value_or("");
    const passes::PassResult again = runPassOnce(pass, m);
    EXPECT_FALSE(again.changed) << pass << " is not idempotent";
    EXPECT_EQ(opCounts(m.graph), out.after);
    return out;
}

/// Values for a model's symbolic input dims ("batch" = 2, ...).
using DimBindings = std::vector<std::pair<std::string, int64_t>>;

struct BindingsCheck {
    double rtol = 0, atol = 0;  ///< exact by default: shape rewrites must not move a single value
    uint64_t seed = 3;
};

/// Runs `pipeline` on `m`, which stays symbolic, and checks that its outputs equal the original's
/// under the interpreter at each binding of the input dims, that the ONNX checker accepts it, and
/// that a second run of the first pass changes nothing. Returns the pipeline's result (steps in `pipeline` order).
inline passes::PipelineResult runCheckedAtBindings(ir::Model& m, const std::vector<std::string>& pipeline,
                                                   const std::vector<DimBindings>& bindings, const BindingsCheck& o = {}) {
    const ir::Model original = m;
    passes::PassManager pm;
    for (const auto& pass : pipeline) pm.addPass(pass);
    passes::PipelineResult result = pm.run(m);
    for (const DimBindings& b : bindings) {
        auto inputs = eval::randomInputs(original, o.seed, b);
        const auto want = eval::run(original, inputs);
        const auto got = eval::run(m, inputs);
        std::string at;
        for (const auto& [name, value] : b) at += " " + name + "=" + std::to_string(value);
        for (const auto& d : eval::compareOutputs(original, got, want, o.rtol, o.atol)) EXPECT_TRUE(d.ok) << d.name << " at" << at;
    }
    const auto checker = onnxio::checkModel(m);
    EXPECT_FALSE(checker.has_value()) << checker.value_or("");
    EXPECT_FALSE(runPassOnce(pipeline.front(), m).changed) << pipeline.front() << ": a second run changes something";
    return result;
}

/// Fusions compute in a different order than the original chain: compare within 1e-4 / 1e-5.
inline CheckOptions fusionCheckOptions(uint64_t seed) {
    CheckOptions options;
    options.rtol = 1e-4;
    options.atol = 1e-5;
    options.seed = seed;
    return options;
}

/// The messages of all remarks of one kind, one per line.
inline std::string remarkText(const passes::PassResult& r, passes::RemarkKind kind) {
    std::string s;
    for (const auto& m : r.remarks)
        if (m.kind == kind) s += m.message + "\n";
    return s;
}

inline bool hasRemark(const passes::PassResult& r, passes::RemarkKind kind, const std::string& rule,
                      const std::string& text) {
    for (const auto& m : r.remarks)
        if (m.kind == kind && m.rule == rule && m.message.find(text) != std::string::npos) return true;
    return false;
}

/// True when some pass of the pipeline run applied `rule`.
inline bool appliedInPipeline(const passes::PipelineResult& r, const std::string& rule) {
    for (const auto& step : r.steps)
        for (const auto& k : step.result.remarks)
            if (k.kind == passes::RemarkKind::Applied && k.rule == rule) return true;
    return false;
}

/// True when no remark of any kind carries `rule`.
inline bool silentAbout(const passes::PassResult& r, const std::string& rule) {
    for (const auto& m : r.remarks)
        if (m.rule == rule) return false;
    return true;
}

/// True when some change by `rule` lists `origin` in its provenance or names it as removed.
inline bool changeMentions(const passes::PassResult& r, const std::string& rule, ir::NodeId node) {
    for (const auto& c : r.changes) {
        if (c.rule != rule) continue;
        for (ir::NodeId n : c.nodes) if (n == node) return true;
        for (ir::NodeId n : c.provenance) if (n == node) return true;
    }
    return false;
}

}  // namespace passlens::test
