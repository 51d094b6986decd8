// Pure planner tests on lifetime sets: oracles, in-place rules, validator negatives, and a
// property test over random sets.
#include <gtest/gtest.h>

#include <random>

#include "ir/Error.h"
#include "memory/MemoryPlan.h"

using namespace passlens;
using namespace passlens::memory;

namespace {
std::vector<TensorLifetime> lifetimes(const std::vector<std::tuple<int64_t, int, int>>& spec) {
    std::vector<TensorLifetime> ts;
    for (auto [bytes, first, last] : spec) {
        TensorLifetime t;
        t.value = static_cast<ir::ValueId>(ts.size());
        t.name = "t" + std::to_string(ts.size());
        t.bytes = bytes;
        t.first = first;
        t.last = last;
        ts.push_back(t);
    }
    return ts;
}
const std::vector<std::tuple<int64_t, int, int>> kOracle1 = {{16, 0, 1}, {8, 1, 2}, {64, 2, 3}, {32, 3, 4}, {8, 4, 5}};
const std::vector<std::tuple<int64_t, int, int>> kOracle2 = {{32, 0, 1}, {32, 1, 4}, {8, 2, 5}, {16, 3, 5}, {8, 4, 5},
                                                              {64, 5, 7}, {8, 6, 8},  {8, 7, 8}, {16, 8, 9}};
}  // namespace

TEST(MemoryPlanners, GreedySizeOracleFirst) {
    auto ts = lifetimes(kOracle1);
    auto plan = planLifetimes(ts, "greedy-size");
    EXPECT_EQ(plan.arenaBytes, 96);
    EXPECT_EQ(plan.lowerBoundBytes, 96);
    EXPECT_EQ(plan.naiveBytes, 128);
}

TEST(MemoryPlanners, GreedySizeOracleSecond) {
    auto ts = lifetimes(kOracle2);
    auto plan = planLifetimes(ts, "greedy-size");
    EXPECT_EQ(plan.arenaBytes, 96);
    EXPECT_EQ(plan.lowerBoundBytes, 96);
}

TEST(MemoryPlanners, NaiveIsSumAndBestNeverWorse) {
    auto ts = lifetimes(kOracle2);
    EXPECT_EQ(planLifetimes(ts, "naive").arenaBytes, 192);
    auto best = planLifetimes(ts, "best").arenaBytes;
    for (const auto& p : plannerNames()) EXPECT_LE(best, planLifetimes(ts, p).arenaBytes) << p;
}

TEST(MemoryPlanners, InplaceChainSharesOneBuffer) {
    // a -> relu -> b -> sigmoid -> c: each dies where the next is made; a chain of in-place.
    auto ts = lifetimes({{100, 0, 1}, {100, 1, 2}, {100, 2, 3}});
    ts[1].inplaceCandidates = {0};
    ts[2].inplaceCandidates = {1};
    auto plan = planLifetimes(ts, "inplace");
    EXPECT_EQ(plan.arenaBytes, 100);
    EXPECT_EQ(plan.lowerBoundBytes, 100);
    ASSERT_TRUE(plan.buffers[2].inplaceOf.has_value());
    EXPECT_EQ(*plan.buffers[2].inplaceOf, 1u);
    EXPECT_EQ(*plan.buffers[1].inplaceOf, 0u);
    // Without candidates nothing is in place and the hand-off steps need two buffers.
    auto noRule = lifetimes({{100, 0, 1}, {100, 1, 2}, {100, 2, 3}});
    EXPECT_EQ(planLifetimes(noRule, "inplace").arenaBytes, 300);
    EXPECT_EQ(planLifetimes(noRule, "best").arenaBytes, 200);
}

TEST(MemoryPlanners, InplaceRefusedWhenSizeDiffers) {
    auto ts = lifetimes({{100, 0, 1}, {50, 1, 2}});
    ts[1].inplaceCandidates = {0};
    auto plan = planLifetimes(ts, "inplace");
    EXPECT_FALSE(plan.buffers[1].inplaceOf.has_value());
    EXPECT_EQ(plan.arenaBytes, 150);
}

TEST(MemoryPlanners, ValidatorRejectsOverlapAndUnallowedInplace) {
    auto ts = lifetimes({{16, 0, 2}, {16, 1, 3}});
    auto plan = planLifetimes(ts, "greedy-size");
    ASSERT_FALSE(validatePlan(ts, plan.buffers, plan.arenaBytes));
    auto bad = plan.buffers;
    bad[1].offset = bad[0].offset + 8;  // overlaps while both live at steps 1..2
    EXPECT_TRUE(validatePlan(ts, bad, 64).has_value());
    // In place where the rule does not list the input.
    auto ts2 = lifetimes({{16, 0, 1}, {16, 1, 2}});
    auto plan2 = planLifetimes(ts2, "naive");
    auto bad2 = plan2.buffers;
    bad2[1].offset = 0;
    bad2[1].inplaceOfIndex = 0;
    EXPECT_TRUE(validatePlan(ts2, bad2, 32).has_value());
    // Outside the arena.
    EXPECT_TRUE(validatePlan(ts2, plan2.buffers, 16).has_value());
}

TEST(MemoryPlanners, ParallelAwareForbidsSharingBetweenUnorderedNodes) {
    // Steps 0 and 1 are independent branches (no path 0->1); step 2 joins them.
    // t0 produced at 0 read at 0 only (dead), t1 produced at 1: sharing would serialize 0 and 1.
    auto ts = lifetimes({{64, 0, 0}, {64, 1, 2}, {64, 2, 2}});
    ts[1].readers = {2};
    Reachability r;
    r.bits.assign(3, std::vector<uint64_t>(1, 0));
    r.bits[0][0] = 0b100;  // 0 -> 2
    r.bits[1][0] = 0b100;  // 1 -> 2
    PlanConstraints c;
    c.parallelAware = &r;
    auto freePlan = planLifetimes(ts, "greedy-size");
    auto awarePlan = planLifetimes(ts, "greedy-size", c);
    // Without the option t0 [0,0] and t1 [1,2] share one slot: 128 bytes.
    EXPECT_EQ(freePlan.arenaBytes, 128);
    EXPECT_EQ(freePlan.buffers[0].offset, freePlan.buffers[1].offset);
    EXPECT_TRUE(validatePlan(ts, freePlan.buffers, freePlan.arenaBytes, c).has_value());
    // With it, t0 may not sit under t1 (branches 0 and 1 are unordered) but may under t2 (0 -> 2).
    EXPECT_EQ(awarePlan.arenaBytes, 128);
    EXPECT_NE(awarePlan.buffers[0].offset, awarePlan.buffers[1].offset);
    EXPECT_EQ(awarePlan.buffers[0].offset, awarePlan.buffers[2].offset);
    EXPECT_FALSE(validatePlan(ts, awarePlan.buffers, awarePlan.arenaBytes, c));
}

TEST(MemoryPlanners, UnknownPlannerAndBadLifetimeAreBadInput) {
    auto ts = lifetimes(kOracle1);
    try {
        planLifetimes(ts, "magic");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    }
    auto bad = lifetimes({{8, 3, 1}});
    EXPECT_THROW(planLifetimes(bad, "naive"), Error);
}

TEST(MemoryPlanners, PropertyRandomSetsValidAboveBoundBestSmallest) {
    std::mt19937 rng(12345);
    for (int trial = 0; trial < 3000; ++trial) {
        int n = 1 + static_cast<int>(rng() % 24), steps = 1 + static_cast<int>(rng() % 16);
        std::vector<std::tuple<int64_t, int, int>> spec;
        for (int i = 0; i < n; ++i) {
            int a = static_cast<int>(rng() % static_cast<unsigned>(steps));
            int b = a + static_cast<int>(rng() % 5);
            spec.push_back({static_cast<int64_t>(8 * (1 + rng() % 16)), a, b});
        }
        auto ts = lifetimes(spec);
        // Random in-place candidates where the hand-off rule could hold.
        for (size_t i = 0; i < ts.size(); ++i)
            for (size_t j = 0; j < ts.size(); ++j)
                if (i != j && ts[j].last == ts[i].first && rng() % 3 == 0) ts[i].inplaceCandidates.push_back(static_cast<int>(j));
        int64_t bound = lowerBound(ts);
        int64_t best = planLifetimes(ts, "best").arenaBytes;
        for (const auto& p : plannerNames()) {
            auto plan = planLifetimes(ts, p);  // throws CheckFailed if invalid
            ASSERT_FALSE(validatePlan(ts, plan.buffers, plan.arenaBytes)) << p << " trial " << trial;
            ASSERT_GE(plan.arenaBytes, bound) << p << " trial " << trial;
            ASSERT_LE(best, plan.arenaBytes) << p << " trial " << trial;
        }
    }
}
