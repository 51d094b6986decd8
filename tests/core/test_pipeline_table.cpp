// The level table (core/pipeline/PassTable.def) pinned: each level runs exactly these passes in
// this order. The lists are those the registry produced before the table replaced the order
// integers (reg.add<P>(level, 202)); a row moved or a level changed fails here by name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "passes/PassRegistry.h"

using namespace passlens::passes;

namespace {

using Names = std::vector<std::string>;

const Names kBasic{"shape-chain-folding", "constant-folding", "algebraic", "cse", "dce",
                   "fuse-conv-bn", "fuse-conv-mul-add", "fuse-reshape", "fuse-matmul-add"};
const Names kExtended{"shape-chain-folding", "constant-folding", "algebraic", "cse", "dce", "fuse-conv-bn",
                      "fuse-hard-swish", "fuse-conv-mul-add", "fuse-layer-norm", "fuse-reshape", "fuse-matmul-add",
                      "fuse-prelu", "fuse-global-pool", "fuse-gelu", "fuse-silu", "fold-constant-chains",
                      "detect-attention"};
const Names kAll{"shape-chain-folding", "constant-folding", "algebraic", "cse", "dce", "fuse-conv-bn",
                 "fuse-hard-swish", "fuse-conv-mul-add", "fuse-layer-norm", "fuse-reshape", "fuse-matmul-add",
                 "fuse-prelu", "fuse-global-pool", "fuse-gelu", "fuse-silu", "fold-constant-chains", "group-gelu",
                 "group-silu", "group-attention", "detect-attention", "transpose"};

}  // namespace

TEST(PipelineTable, EachLevelRunsTheSamePassesInTheSameOrder) {
    const auto& reg = PassRegistry::global();
    EXPECT_EQ(reg.pipeline(Level::None), Names{});
    EXPECT_EQ(reg.pipeline(Level::Basic), kBasic);
    EXPECT_EQ(reg.pipeline(Level::Extended), kExtended);
    EXPECT_EQ(reg.pipeline(Level::All), kAll);
}

// The role column replaces the 200–299 range explain read as "a fusion": the same passes.
TEST(PipelineTable, FusionRoleIsThePassesExplainReadsRemarksFrom) {
    Names fusions;
    for (const auto& p : PassRegistry::global().passes())
        if (p.role == PassRole::Fusion) fusions.push_back(p.name);
    EXPECT_EQ(fusions, (Names{"fuse-conv-bn", "fuse-hard-swish", "fuse-conv-mul-add", "fuse-layer-norm", "fuse-reshape",
                              "fuse-matmul-add", "fuse-prelu", "fuse-global-pool", "fuse-gelu", "fuse-silu",
                              "fold-constant-chains", "group-gelu", "group-silu", "group-attention", "detect-attention",
                              "group-functions", "fuse-softplus"}));
}

// Named-only passes follow the pipeline ones (the order `passes` lists them in; before the table
// it sorted them by their order integers into this order).
TEST(PipelineTable, NamedOnlyPassesAfterThePipeline) {
    Names named;
    for (const auto& p : PassRegistry::global().passes())
        if (p.level == Level::None && p.role != PassRole::Profile) named.push_back(p.name);
    EXPECT_EQ(named, (Names{"version-convert", "autodiff", "recompute", "group-functions", "layout", "fuse-softplus"}));
    const auto names = PassRegistry::global().names();
    ASSERT_GE(names.size(), kAll.size());
    EXPECT_EQ(Names(names.begin(), names.begin() + long(kAll.size())), kAll);
}
