#pragma once
// Generated nets for the scheduling tests and benchmarks: NAS-style cells of concatenated
// branches, and randomly wired DAGs (RandWire style), at any size.
#include <random>
#include <string>
#include <vector>

#include "examples/Builder.h"

namespace passlens::test {

/// Cells of four 1x1-conv branches (expand 8 -> 32 channels, shrink 32 -> 4) joined by Concat, the
/// nodes added breadth first (every expander, then every shrinker), as a NAS exporter may write them.
/// 10 nodes a cell.
inline ir::Model nasNet(int cells) {
    using namespace passlens::ir;
    GraphBuilder b("nas_cells");
    ValueId x = b.input("x", DataType::Float, {1, 8, 16, 16});
    uint64_t seed = 1;
    for (int c = 0; c < cells; ++c) {
        const std::string cell = "cell" + std::to_string(c);
        std::vector<ValueId> expanded, shrunk;
        for (int k = 0; k < 4; ++k)
            expanded.push_back(b.op("Conv", {x, b.constant(cell + ".e" + std::to_string(k), randomFloats({32, 8, 1, 1}, seed++))}, {},
                                    cell + ".expand" + std::to_string(k)));
        for (int k = 0; k < 4; ++k)
            shrunk.push_back(b.op("Conv", {expanded[static_cast<size_t>(k)], b.constant(cell + ".s" + std::to_string(k), randomFloats({4, 32, 1, 1}, seed++))},
                                  {}, cell + ".shrink" + std::to_string(k)));
        ValueId cat = b.op("Concat", shrunk, {Attribute::makeInt("axis", 1)}, cell + ".concat");
        x = b.op("Conv", {cat, b.constant(cell + ".m", randomFloats({8, 16, 1, 1}, seed++))}, {}, cell + ".mix");
    }
    b.output(x);
    return b.finish();
}

/// A randomly wired DAG of `nodes` elementwise nodes: each reads one or two of the previous
/// `window` results (Add of two, or Relu/Sigmoid of one), with tensors of four sizes; every result
/// nobody reads is a graph output.
inline ir::Model randWireNet(int nodes, uint32_t seed, int window = 12) {
    using namespace passlens::ir;
    GraphBuilder b("randwire");
    std::mt19937 rng(seed);
    std::vector<ValueId> vals;
    std::vector<int> uses;
    const int64_t widths[] = {16, 32, 64, 128};
    std::vector<int64_t> widthOf;
    for (int k = 0; k < 4; ++k) {
        vals.push_back(b.input("x" + std::to_string(k), DataType::Float, {1, widths[k]}));
        widthOf.push_back(widths[k]);
        uses.push_back(0);
    }
    for (int i = 0; i < nodes; ++i) {
        const int n = static_cast<int>(vals.size());
        const int lo = std::max(0, n - window);
        const int a = lo + static_cast<int>(rng() % static_cast<uint32_t>(n - lo));
        // A partner of the same width among the window, if any: Add; else a unary op.
        int partner = -1;
        for (int tries = 0; tries < 4 && partner < 0; ++tries) {
            const int c = lo + static_cast<int>(rng() % static_cast<uint32_t>(n - lo));
            if (c != a && widthOf[static_cast<size_t>(c)] == widthOf[static_cast<size_t>(a)]) partner = c;
        }
        const std::string name = "n" + std::to_string(i);
        ValueId out;
        if (partner >= 0) {
            out = b.op("Add", {vals[static_cast<size_t>(a)], vals[static_cast<size_t>(partner)]}, {}, name);
            ++uses[static_cast<size_t>(partner)];
        } else {
            out = b.op(rng() % 2 ? "Relu" : "Sigmoid", {vals[static_cast<size_t>(a)]}, {}, name);
        }
        ++uses[static_cast<size_t>(a)];
        vals.push_back(out);
        widthOf.push_back(widthOf[static_cast<size_t>(a)]);
        uses.push_back(0);
    }
    for (size_t k = 4; k < vals.size(); ++k)
        if (uses[k] == 0) b.output(vals[k]);
    return b.finish();
}

}  // namespace passlens::test
