// The figures the docs publish are asserted exactly: each test reads a table from docs/*.md, runs
// the command the page names on the model of each row and compares every figure PassLens computes
// (ONNX Runtime's columns are measured elsewhere and skipped). A pass that changes a count fails
// here until the page is updated, so the docs cannot drift from the product.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "onnx/Import.h"
#include "passes/Pass.h"

namespace passlens {
namespace {

using Row = std::vector<std::string>;

std::string docPath(const std::string& page) { return std::string(PASSLENS_DOCS_DIR) + "/" + page; }

std::string trim(std::string s) {
    const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string{} : s.substr(b, e - b + 1);
}

/// The body rows of the first Markdown table in `page` whose header row starts with `headerStart`.
std::vector<Row> readTable(const std::string& page, const std::string& headerStart) {
    std::ifstream in(docPath(page));
    std::string line;
    std::vector<Row> rows;
    bool inTable = false, pastSeparator = false;
    while (std::getline(in, line)) {
        if (!inTable) {
            inTable = line.rfind("| " + headerStart, 0) == 0;
            continue;
        }
        if (line.empty() || line[0] != '|') break;
        if (!pastSeparator) {
            pastSeparator = true;
            continue;
        }
        Row cells;
        std::stringstream ss(line.substr(1));
        for (std::string cell; std::getline(ss, cell, '|');) cells.push_back(trim(cell));
        if (!cells.empty() && cells.back().empty()) cells.pop_back();
        rows.push_back(cells);
    }
    return rows;
}

/// The first integer in a cell ("**95** (81 with …)" → 95, "672 → 838 → 673" → 672); none for "—".
std::optional<long> firstNumber(const std::string& cell) {
    std::smatch m;
    if (!std::regex_search(cell, m, std::regex("[0-9][0-9,]*"))) return std::nullopt;
    std::string digits;
    for (char c : m.str()) if (c != ',') digits += c;
    return std::stol(digits);
}

/// Every integer of a cell, in order ("672 → 838 → 673" → {672, 838, 673}).
std::vector<long> numbers(const std::string& cell) {
    std::vector<long> out;
    const std::regex number("[0-9]+");
    for (auto it = std::sregex_iterator(cell.begin(), cell.end(), number); it != std::sregex_iterator(); ++it)
        out.push_back(std::stol(it->str()));
    return out;
}

/// The integer inside the first "(…)" of a cell ("2 (250 with If bodies)" → 250).
std::optional<long> parenthesizedNumber(const std::string& cell) {
    const auto open = cell.find('(');
    return open == std::string::npos ? std::nullopt : firstNumber(cell.substr(open));
}

struct Optimized {
    size_t topLevel = 0, deep = 0, transposes = 0;
    long groupedFunctions = -1;  ///< functions made by --group-functions (the report's figure)
};

/// Runs `passlens-cli optimize model …args` and counts what the written model holds.
Optimized optimizeWithCli(const std::string& model, std::vector<std::string> args) {
    static int serial = 0;
    const std::string out = test::tempDir("docs_figures") + "/out_" + std::to_string(serial++) + ".onnx";
    std::vector<std::string> cli = {"optimize", model, "-o", out, "--report", out + ".json"};
    cli.insert(cli.end(), args.begin(), args.end());
    const auto r = test::runCli(cli);
    EXPECT_EQ(r.exitCode, 0) << model << ": " << r.err;
    Optimized o;
    if (r.exitCode != 0) return o;
    const ir::Model m = onnxio::importModelFile(out);
    o.topLevel = m.graph.nodeCount();
    o.deep = passes::countNodesDeep(m.graph);
    std::ifstream report(out + ".json");
    const auto j = nlohmann::json::parse(report);
    if (j.contains("group_functions")) o.groupedFunctions = j["group_functions"]["functions"].get<long>();
    for (auto n : m.graph.nodeOrder()) o.transposes += m.graph.node(n).opType == "Transpose";
    return o;
}

/// "ch_PP-OCRv4_det_infer (11)" → the real model's path; short names via `aliases`.
std::string realModelOfRow(const std::string& cell, const std::map<std::string, std::string>& aliases = {}) {
    for (const auto& [prefix, file] : aliases)
        if (cell.rfind(prefix, 0) == 0) return test::realModel(file);
    return test::realModel(cell.substr(0, cell.find(' ')) + ".onnx");
}

/// `--dim` options pinning the first graph input's symbolic dims to a cell's "(1×3×64×64)".
std::vector<std::string> pinsFromCell(const std::string& model, const std::string& cell) {
    std::smatch m;
    if (!std::regex_search(cell, m, std::regex("\\(([0-9]+(?:×[0-9]+)+)\\)"))) return {};
    const auto values = numbers(m[1].str());
    const ir::Model im = onnxio::importModelFile(model);
    const auto& dims = im.graph.value(eval::runtimeInputs(im.graph).at(0)).type.shape->dims;
    std::vector<std::string> args;
    for (size_t i = 0; i < dims.size() && i < values.size(); ++i)
        if (!dims[i].isStatic() && !dims[i].param.empty())
            args.insert(args.end(), {"--dim", dims[i].param + "=" + std::to_string(values[i])});
    return args;
}

TEST(DocsFigures, ReaderFindsTablesAndNumbers) {
    // The helpers themselves, so a table the reader cannot find fails loudly instead of passing.
    EXPECT_EQ(firstNumber("**95** (81 with `--target-opset 17`)"), 95);
    EXPECT_EQ(firstNumber("—"), std::nullopt);
    EXPECT_EQ(numbers("672 → 838 → 673"), (std::vector<long>{672, 838, 673}));
    EXPECT_EQ(parenthesizedNumber("2 (250 with If bodies)"), 250);
    EXPECT_TRUE(readTable("passes.md", "no such header").empty());
}

TEST(DocsFigures, PassesPageNodeCountsOnRealModels) {
    // docs/passes.md: main graph plus subgraphs, `optimize` without --dim.
    const auto rows = readTable("passes.md", "model (opset) | original | basic");
    ASSERT_EQ(rows.size(), test::realModelNames().size());
    for (const auto& row : rows) {
        ASSERT_GE(row.size(), 7u) << row[0];
        const std::string model = realModelOfRow(row[0]);
        EXPECT_EQ(long(passes::countNodesDeep(onnxio::importModelFile(model).graph)), firstNumber(row[1])) << row[0];
        EXPECT_EQ(long(optimizeWithCli(model, {"--level", "basic"}).deep), firstNumber(row[2])) << row[0] << " basic";
        EXPECT_EQ(long(optimizeWithCli(model, {"--level", "extended"}).deep), firstNumber(row[4])) << row[0] << " extended";
        EXPECT_EQ(long(optimizeWithCli(model, {"--level", "extended", "--target-opset", "17"}).deep), firstNumber(row[6]))
            << row[0] << " extended --target-opset 17";
    }
}

TEST(DocsFigures, TransformerExportsPageNodeCounts) {
    // docs/transformer-exports.md: top-level nodes, `optimize M --level L --target-opset 17`.
    const auto rows = readTable("transformer-exports.md", "model | original | basic");
    ASSERT_GE(rows.size(), 4u);
    for (const auto& row : rows) {
        ASSERT_GE(row.size(), 7u) << row[0];
        const std::string model = std::string(PASSLENS_GEN_MODELS_DIR) + "/" + row[0] + ".onnx";
        EXPECT_EQ(long(onnxio::importModelFile(model).graph.nodeCount()), firstNumber(row[1])) << row[0];
        const std::vector<std::pair<std::string, size_t>> levels = {{"basic", 2}, {"extended", 4}, {"all", 6}};
        for (const auto& [level, column] : levels)
            EXPECT_EQ(long(optimizeWithCli(model, {"--level", level, "--target-opset", "17"}).topLevel), firstNumber(row[column]))
                << row[0] << " " << level;
    }
}

TEST(DocsFigures, FusionPageKernelAndFunctionCounts) {
    // docs/fusion.md: `--level all`, then `--group-functions`, on the pinned input the row names.
    const std::map<std::string, std::string> aliases = {{"PP-OCRv4 det", "ch_PP-OCRv4_det_infer.onnx"},
                                                        {"PP-OCRv4 rec", "ch_PP-OCRv4_rec_infer.onnx"},
                                                        {"ppocr cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx"},
                                                        {"silero legacy", "silero_vad_legacy.onnx"},
                                                        {"silero v5", "silero_vad_v5.onnx"}};
    const auto rows = readTable("fusion.md", "model (pinned input) | original");
    ASSERT_EQ(rows.size(), aliases.size());
    for (const auto& row : rows) {
        ASSERT_GE(row.size(), 5u) << row[0];
        const std::string model = realModelOfRow(row[0], aliases);
        const auto pins = pinsFromCell(model, row[0]);
        const ir::Model original = onnxio::importModelFile(model);
        EXPECT_EQ(long(original.graph.nodeCount()), firstNumber(row[1])) << row[0];
        if (auto deep = parenthesizedNumber(row[1])) {
            EXPECT_EQ(long(passes::countNodesDeep(original.graph)), *deep) << row[0];
        }

        auto args = pins;
        args.insert(args.end(), {"--level", "all"});
        const Optimized all = optimizeWithCli(model, args);
        EXPECT_EQ(long(all.topLevel), firstNumber(row[2])) << row[0] << " --level all";
        if (auto deep = parenthesizedNumber(row[2])) {
            EXPECT_EQ(long(all.deep), *deep) << row[0] << " --level all, deep";
        }

        args.push_back("--group-functions");
        const Optimized grouped = optimizeWithCli(model, args);
        EXPECT_EQ(long(grouped.topLevel), firstNumber(row[3])) << row[0] << " --group-functions";
        if (row[3].find("If bodies") != std::string::npos) {
            EXPECT_EQ(long(grouped.deep), parenthesizedNumber(row[3])) << row[0] << " --group-functions, deep";
        }
        EXPECT_EQ(grouped.groupedFunctions, firstNumber(row[4])) << row[0] << " functions";
    }
}

TEST(DocsFigures, LayoutTransformPageTransposeCounts) {
    // docs/layout-transform.md: `--level none --passes layout[,transpose] --target-layout NHWC`.
    const std::map<std::string, std::string> aliases = {{"PP-OCRv4 det", "ch_PP-OCRv4_det_infer.onnx"},
                                                        {"ppocr cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx"}};
    const auto rows = readTable("layout-transform.md", "model (opset) | nodes | ops converted");
    ASSERT_EQ(rows.size(), aliases.size());
    for (const auto& row : rows) {
        ASSERT_GE(row.size(), 5u) << row[0];
        const std::string model = realModelOfRow(row[0], aliases);
        const auto nodes = numbers(row[1]);
        ASSERT_EQ(nodes.size(), 3u) << row[1];
        EXPECT_EQ(long(onnxio::importModelFile(model).graph.nodeCount()), nodes[0]) << row[0];
        const Optimized layout = optimizeWithCli(model, {"--level", "none", "--passes", "layout", "--target-layout", "NHWC"});
        EXPECT_EQ(long(layout.topLevel), nodes[1]) << row[0] << " after layout";
        EXPECT_EQ(long(layout.transposes), firstNumber(row[3])) << row[0] << " Transposes after layout";
        const Optimized pushed =
            optimizeWithCli(model, {"--level", "none", "--passes", "layout,transpose", "--target-layout", "NHWC"});
        EXPECT_EQ(long(pushed.topLevel), nodes[2]) << row[0] << " after transpose";
        EXPECT_EQ(long(pushed.transposes), firstNumber(row[4])) << row[0] << " Transposes after transpose";
    }
}

/// Checks `bytes` against a doc cell such as "870.64 MiB", "453.8 KiB" or "120 B" to the cell's
/// printed precision.
void expectBytesAsPrinted(int64_t bytes, const std::string& cell, const std::string& what) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(cell, m, std::regex("([0-9]+)(?:\\.([0-9]+))? (B|KiB|MiB|GiB)"))) << what << ": " << cell;
    const int decimals = m[2].matched ? int(m[2].length()) : 0;
    const double printed = std::stod(m[2].matched ? m[1].str() + "." + m[2].str() : m[1].str());
    const double unit = m[3] == "B" ? 1.0 : m[3] == "KiB" ? 1024.0 : m[3] == "MiB" ? 1048576.0 : 1073741824.0;
    EXPECT_NEAR(double(bytes) / unit, printed, 0.5 * std::pow(10.0, -decimals) + 1e-9) << what << ": " << bytes << " B vs " << cell;
}

/// `--dim` options from a memory-table row: "(1x3x640x640)" pins the first input's symbolic dims
/// by position, "(batch 1, sequence 512)" pins by name.
std::vector<std::string> pinsFromMemoryRow(const std::string& model, const std::string& cell) {
    std::smatch m;
    if (std::regex_search(cell, m, std::regex("\\(([0-9]+(?:x[0-9]+)+)\\)"))) {
        std::string shape;  // "1x3x640x640" → "1×3×640×640", the form pinsFromCell reads
        for (char c : m[1].str()) shape += c == 'x' ? std::string("×") : std::string(1, c);
        return pinsFromCell(model, "(" + shape + ")");
    }
    std::vector<std::string> args;
    const std::regex named("([A-Za-z_][A-Za-z0-9_.]*) ([0-9]+)");
    const auto open = cell.find('(');
    if (open == std::string::npos || cell.find('`') != std::string::npos) return args;
    const std::string inside = cell.substr(open);
    for (auto it = std::sregex_iterator(inside.begin(), inside.end(), named); it != std::sregex_iterator(); ++it)
        args.insert(args.end(), {"--dim", (*it)[1].str() + "=" + (*it)[2].str()});
    return args;
}

nlohmann::json memplanWithCli(const std::string& model, const std::vector<std::string>& pins, std::vector<std::string> args) {
    std::vector<std::string> cli = {"memplan", model, "--json"};
    cli.insert(cli.end(), pins.begin(), pins.end());
    cli.insert(cli.end(), args.begin(), args.end());
    const auto r = test::runCli(cli);
    EXPECT_EQ(r.exitCode, 0) << model << ": " << r.err;
    return r.exitCode == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

TEST(DocsFigures, MemoryPageArenaSizesOnRealModels) {
    // docs/memory.md: model-order schedule, each planner; `best --parallel-aware` for the cost
    // column; `--schedule memory` for the bound beside it.
    const auto rows = readTable("memory.md", "model (input) | naive | in-place");
    ASSERT_EQ(rows.size(), test::realModelNames().size());
    const std::vector<std::pair<size_t, std::string>> planners = {
        {1, "naive"}, {2, "inplace"}, {3, "share"}, {4, "greedy-size"}, {5, "greedy-breadth"}, {6, "best"}};
    for (const auto& row : rows) {
        ASSERT_GE(row.size(), 14u) << row[0];
        const std::string model = realModelOfRow(row[0]);
        const auto pins = pinsFromMemoryRow(model, row[0]);
        nlohmann::json best;
        for (const auto& [column, planner] : planners) {
            const auto j = memplanWithCli(model, pins, {"--planner", planner});
            if (j.empty()) continue;
            expectBytesAsPrinted(j["arena_bytes"].get<int64_t>(), row[column], row[0] + " " + planner);
            if (planner == "best") best = j;
        }
        ASSERT_FALSE(best.empty()) << row[0];
        expectBytesAsPrinted(best["lower_bound_bytes"].get<int64_t>(), row[7], row[0] + " lower bound");
        expectBytesAsPrinted(best["static_bytes"].get<int64_t>(), row[12], row[0] + " static");
        EXPECT_EQ(long(best["unknown_size_values"].size()), firstNumber(row[13])) << row[0] << " unknown size";
        const auto aware = memplanWithCli(model, pins, {"--planner", "best", "--parallel-aware"});
        if (!aware.empty()) {
            expectBytesAsPrinted(aware["parallel_aware_cost_bytes"].get<int64_t>(), row[10], row[0] + " parallel-aware cost");
        }
        const auto memorySchedule = memplanWithCli(model, pins, {"--planner", "best", "--schedule", "memory"});
        if (!memorySchedule.empty()) {
            expectBytesAsPrinted(memorySchedule["lower_bound_bytes"].get<int64_t>(), row[11], row[0] + " bound, memory-aware schedule");
        }
    }
}

TEST(DocsFigures, ShapesPageStaticAndDynamicNodeCounts) {
    // docs/shapes.md: nodes after `optimize --level basic` of the committed static and dynamic
    // exports (the ONNX Runtime column is measured by tests/models/check_optimized.js).
    const auto rows = readTable("shapes.md", "export (tests/models) | static after basic");
    ASSERT_GE(rows.size(), 5u);
    for (const auto& row : rows) {
        ASSERT_GE(row.size(), 5u) << row[0];
        const std::string stem = std::string(PASSLENS_FIXTURES_DIR) + "/" + row[0];
        EXPECT_EQ(long(optimizeWithCli(stem + "_static.onnx", {"--level", "basic"}).topLevel), firstNumber(row[1])) << row[0];
        EXPECT_EQ(long(optimizeWithCli(stem + "_dynamic.onnx", {"--level", "basic"}).topLevel), firstNumber(row[3])) << row[0];
    }
}

}  // namespace
}  // namespace passlens
