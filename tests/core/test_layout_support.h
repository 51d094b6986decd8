#pragma once
// Helpers shared by the layout / transpose golden tests: op counts, running passes, comparing
// outputs with the reference interpreter, finding remarks.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "eval/Interpreter.h"
#include "examples/Builder.h"
#include "passes/Pass.h"
#include "passes/layout/LayoutPasses.h"

namespace passlens::test {

inline size_t countOp(const ir::Model& m, const std::string& op) {
    size_t n = 0;
    for (ir::NodeId id : m.graph.nodeOrder())
        if (m.graph.node(id).opType == op) ++n;
    return n;
}

inline ir::Attribute perm(std::vector<int64_t> p) { return ir::Attribute::makeInts("perm", std::move(p)); }

/// Runs `passes` on a copy and checks the outputs match the original on random inputs.
inline ir::Model optimizeAndCompare(const ir::Model& m, const std::vector<std::unique_ptr<passes::Pass>>& ps,
                                    const std::string& layout = "",
                                    const std::vector<std::pair<std::string, int64_t>>& dims = {},
                                    double rtol = 1e-4) {
    ir::Model out = m;
    passes::PassOptions o;
    o.targetLayout = layout;
    for (const auto& p : ps) p->run(out, o);
    auto inputs = eval::randomInputs(m, 7, dims);
    eval::RunOptions ro;
    ro.dims = dims;
    auto ref = eval::run(m, inputs, ro);
    auto got = eval::run(out, inputs, ro);
    EXPECT_FALSE(ref.empty());
    EXPECT_EQ(got.size(), ref.size());
    for (const auto& d : eval::compareOutputs(m, got, ref, rtol, 1e-5))
        EXPECT_TRUE(d.ok) << d.name << " maxAbs " << d.maxAbs << " maxRel " << d.maxRel;
    return out;
}

inline std::vector<std::unique_ptr<passes::Pass>> transposeOnly() {
    std::vector<std::unique_ptr<passes::Pass>> v;
    v.push_back(passes::makeTransposePass());
    return v;
}

/// The first remark of `kind` whose message contains `text`, or nullptr.
inline const passes::Remark* findRemark(const passes::PassResult& r, passes::RemarkKind kind, const std::string& text) {
    for (const auto& rm : r.remarks)
        if (rm.kind == kind && rm.message.find(text) != std::string::npos) return &rm;
    return nullptr;
}

/// True when some change of the result carries rule `rule`.
inline bool hasRule(const passes::PassResult& r, const std::string& rule) {
    for (const auto& c : r.changes)
        if (c.rule == rule) return true;
    return false;
}

/// True when the transpose pass, run once on a copy of `m`, logs a change under `rule`.
inline bool transposeRuleFires(const ir::Model& m, const std::string& rule) {
    ir::Model copy = m;
    return hasRule(passes::makeTransposePass()->run(copy, {}), rule);
}

}  // namespace passlens::test
