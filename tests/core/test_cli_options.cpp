// Every option of every passlens-cli command either changes what the command does or is refused
// with exit 2 (issue #34). The options are read from the commands' own usage lines (`--help`), so
// an option added without a row here fails OptionTable.CoversEveryDeclaredOption; each row runs
// the command without and with the option on small built models and compares what it produced.
// Also: `optimize --target-layout` adds the layout pass at any level (it used to change nothing).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "examples/Builder.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "passes/layout/LayoutPasses.h"

namespace passlens {
namespace {

using namespace passlens::ir;

/// x[N,3,8,8] → Conv → BatchNormalization → Relu → Identity → GlobalAveragePool → Flatten, with
/// name scopes (/enc, /head) so `render` has groups. `weightScale` perturbs the conv weights;
/// `batch` makes N static; `infer = false` leaves the value types unknown (no value_info written).
Model smallCnn(float weightScale = 1.f, std::optional<int64_t> batch = std::nullopt, bool infer = true) {
    GraphBuilder b("cnn", 13);
    auto x = b.inputSymbolic("x", DataType::Float, {batch ? Dim::of(*batch) : Dim::symbol("N"), Dim::of(3), Dim::of(8), Dim::of(8)});
    auto random = randomFloats({4, 3, 3, 3}, 1);
    std::vector<float> scaled(random->as<float>(), random->as<float>() + random->elementCount());
    for (float& v : scaled) v *= weightScale;
    auto w = floatTensor({4, 3, 3, 3}, scaled);
    auto c = b.op("Conv", {x, b.constant("w", w)}, {Attribute::makeInts("pads", {1, 1, 1, 1})}, "/enc/Conv");
    auto bn = b.op("BatchNormalization",
                   {c, b.constant("scale", randomFloats({4}, 2)), b.constant("bias", randomFloats({4}, 3)),
                    b.constant("mean", randomFloats({4}, 4)), b.constant("var", floatTensor({4}, {1.f, 2.f, 3.f, 4.f}))},
                   {}, "/enc/BatchNormalization");
    auto r = b.op("Identity", {b.op("Relu", {bn}, {}, "/enc/Relu")}, {}, "/enc/Identity");
    auto p = b.op("GlobalAveragePool", {r}, {}, "/head/GlobalAveragePool");
    b.output(b.op("Flatten", {p}, {}, "/head/Flatten"));
    return infer ? b.finish() : b.model();
}

/// The Relu and its output renamed: only structure can match it.
Model renamedRelu(Model m) {
    for (NodeId n : m.graph.nodeOrder())
        if (m.graph.node(n).opType == "Relu") {
            m.graph.node(n).name = "/enc/Activation";
            m.graph.value(m.graph.node(n).outputs[0]).name = "/enc/Activation_out";
        }
    return m;
}

/// x[N,4] → MatMul → Relu → MatMul; outputs y and the hidden activation h (for grad --output).
Model smallMlp() {
    GraphBuilder b("mlp", 17);
    auto x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("N"), Dim::of(4)});
    auto h = b.op("Relu", {b.op("MatMul", {x, b.constant("w1", randomFloats({4, 8}, 5))}, {}, "/l1/MatMul")}, {}, "/l1/Relu");
    b.output(b.op("MatMul", {h, b.constant("w2", randomFloats({8, 2}, 6))}, {}, "/l2/MatMul"));
    b.output(h);
    return b.finish();
}

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

/// Timings differ from run to run: "12 ms" and "\"ms\": 0.01" (memplan), the last column of
/// optimize's table ("... 0.37").
std::string withoutTimings(const std::string& s) {
    static const std::regex ms(R"([0-9.e+-]+ ms\b)"), jsonMs(R"("ms": [0-9.e+-]+)"), lastColumn(R"( [0-9]+\.[0-9]{2}$)");
    std::string out;
    std::istringstream lines(std::regex_replace(std::regex_replace(s, jsonMs, "\"ms\": #"), ms, "# ms"));
    for (std::string line; std::getline(lines, line);) out += std::regex_replace(line, lastColumn, " #") + "\n";
    return out;
}

/// Command name → the options its usage line declares (every command also takes --dim).
std::map<std::string, std::set<std::string>> declaredOptions() {
    auto help = test::runCli({"--help"});
    EXPECT_EQ(help.exitCode, 0);
    std::map<std::string, std::set<std::string>> out;
    static const std::regex usageLine(R"(^  ([a-z]+)( .*)?$)"), option(R"((^|[\[ |])(-o|--[a-z][a-z-]*))");
    std::istringstream lines(help.out);
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (!std::regex_match(line, m, usageLine)) continue;
        auto& opts = out[m[1]];
        opts.insert("--dim");
        const std::string rest = m[2];
        for (auto it = std::sregex_iterator(rest.begin(), rest.end(), option); it != std::sregex_iterator(); ++it)
            opts.insert((*it)[2]);
    }
    return out;
}

enum class Expect { Effect, Refused, NoEffectNoted };

struct Row {
    std::string command, option;
    std::vector<std::string> base, with;  ///< the command line without and with the option
    Expect expect = Expect::Effect;
    std::string file;                     ///< a file the command writes, compared too ("" = stdout only)
    int withExit = -1;                    ///< the exit code with the option (-1: 0 or 1)
};

struct Fixture {
    std::string dir, cnn, cnnPerturbed, cnnRenamed, cnnRenamedStatic, cnnUntyped, mlp, train, inputs;
};

const Fixture& fixture() {
    static const Fixture f = [] {
        Fixture f;
        f.dir = test::tempDir("cli_options");  // per test: CTest runs them in parallel processes
        f.cnn = f.dir + "/cnn.onnx";
        f.cnnPerturbed = f.dir + "/cnn_perturbed.onnx";
        f.cnnRenamed = f.dir + "/cnn_renamed.onnx";
        f.cnnRenamedStatic = f.dir + "/cnn_renamed_static.onnx";
        f.cnnUntyped = f.dir + "/cnn_untyped.onnx";
        f.mlp = f.dir + "/mlp.onnx";
        f.train = f.dir + "/train.onnx";
        f.inputs = f.dir + "/inputs";
        onnxio::exportModelFile(smallCnn(), f.cnn);
        onnxio::exportModelFile(smallCnn(1.01f), f.cnnPerturbed);
        onnxio::exportModelFile(renamedRelu(smallCnn()), f.cnnRenamed);
        onnxio::exportModelFile(renamedRelu(smallCnn(1.f, 1)), f.cnnRenamedStatic);
        onnxio::exportModelFile(smallCnn(1.f, std::nullopt, false), f.cnnUntyped);
        onnxio::exportModelFile(smallMlp(), f.mlp);
        EXPECT_EQ(test::runCli({"grad", f.mlp, "-o", f.train, "--dim", "N=2"}).exitCode, 0);
        EXPECT_EQ(test::runCli({"run", f.cnn, "--dim", "N=1", "--seed", "5", "--out-dir", f.inputs}).exitCode, 0);
        return f;
    }();
    return f;
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

std::vector<Row> rows() {
    const Fixture& f = fixture();
    const std::string out = f.dir + "/out", o2 = f.dir + "/out2";
    auto effect = [](std::string cmd, std::string opt, std::vector<std::string> base, std::vector<std::string> extra,
                     std::string file = {}, int withExit = -1) {
        return Row{cmd, opt, base, base + extra, Expect::Effect, file, withExit};
    };
    auto refused = [](std::string cmd, std::string opt, std::vector<std::string> line) {
        return Row{cmd, opt, {}, line, Expect::Refused, {}, 2};
    };
    // --dim, which every command takes (the CLI contract): accepted with a note where it changes nothing.
    auto noted = [](std::string cmd, std::vector<std::string> base, std::string file = {}) {
        return Row{cmd, "--dim", base, base + std::vector<std::string>{"--dim", "N=1"}, Expect::NoEffectNoted, file, 0};
    };
    std::vector<Row> r;
    // convert
    r.push_back(effect("convert", "--external-data", {"convert", f.cnn, out + ".onnx"}, {"--external-data", "w.bin"},
                       out + ".onnx"));
    r.push_back(effect("convert", "--no-shape-inference", {"convert", f.cnnUntyped, out + ".onnx"}, {"--no-shape-inference"},
                       out + ".onnx"));
    r.push_back(noted("convert", {"convert", f.cnn, out + ".onnx"}, out + ".onnx"));
    // diff
    r.push_back(effect("diff", "--json", {"diff", f.cnn, f.cnnRenamed}, {"--json"}));
    r.push_back(effect("diff", "--names-only", {"diff", f.cnn, f.cnnRenamed}, {"--names-only"}));
    r.push_back(noted("diff", {"diff", f.cnn, f.cnnRenamedStatic}));
    // domtree
    r.push_back(effect("domtree", "--post", {"domtree", f.cnn}, {"--post"}));
    r.push_back(effect("domtree", "--format", {"domtree", f.cnn}, {"--format", "dot"}));
    r.push_back(noted("domtree", {"domtree", f.cnn}));
    // explain
    r.push_back(effect("explain", "--node", {"explain", f.cnn}, {"--node", "/enc/Relu"}));
    r.push_back(effect("explain", "--json", {"explain", f.cnn}, {"--json"}));
    r.push_back(effect("explain", "--max-depth", {"explain", f.cnn}, {"--max-depth", "1"}));
    r.push_back(effect("explain", "--no-passes", {"explain", f.cnn}, {"--no-passes"}));
    r.push_back(effect("explain", "--dim", {"explain", f.cnn}, {"--dim", "N=1"}));
    r.push_back(effect("explain", "--profile", {"explain", f.cnn}, {"--profile", "onnxruntime"}));
    r.push_back(effect("explain", "--level", {"explain", f.cnn, "--profile", "onnxruntime"}, {"--level", "basic"}));
    // grad
    r.push_back(effect("grad", "-o", {"grad", f.mlp}, {"-o", out + ".onnx"}, out + ".onnx"));
    r.push_back(effect("grad", "--loss", {"grad", f.mlp, "-o", out + ".onnx"}, {"--loss", "cross-entropy"}, out + ".onnx"));
    r.push_back(effect("grad", "--output", {"grad", f.mlp, "-o", out + ".onnx"}, {"--output", "/l1/Relu_out"}, out + ".onnx"));
    r.push_back(effect("grad", "--wrt", {"grad", f.mlp, "-o", out + ".onnx"}, {"--wrt", "w2"}, out + ".onnx"));
    r.push_back(effect("grad", "--recompute", {"grad", f.mlp, "-o", out + ".onnx"}, {"--recompute", "all"}, out + ".onnx"));
    r.push_back(effect("grad", "--dim", {"grad", f.mlp, "-o", out + ".onnx"}, {"--dim", "N=3"}, out + ".onnx"));
    const std::vector<std::string> pareto = {"grad", f.mlp, "-o", out + ".onnx", "--recompute", "pareto"};
    r.push_back(effect("grad", "--json", pareto, {"--json"}));
    r.push_back(effect("grad", "--svg", pareto, {"--svg", o2 + ".svg"}, o2 + ".svg"));
    // info
    r.push_back(effect("info", "--json", {"info", f.cnn}, {"--json"}));
    r.push_back(effect("info", "--no-shape-inference", {"info", f.cnnUntyped}, {"--no-shape-inference"}));
    r.push_back(effect("info", "--dim", {"info", f.cnn}, {"--dim", "N=2"}));
    // memplan
    r.push_back(effect("memplan", "--planner", {"memplan", f.cnn}, {"--planner", "naive"}));
    r.push_back(effect("memplan", "--parallel-aware", {"memplan", f.cnn}, {"--parallel-aware"}));
    r.push_back(effect("memplan", "--schedule", {"memplan", f.cnn}, {"--schedule", "best"}));
    r.push_back(effect("memplan", "--json", {"memplan", f.cnn}, {"--json"}));
    r.push_back(effect("memplan", "--dim", {"memplan", f.cnn}, {"--dim", "N=4"}));
    r.push_back(effect("memplan", "--svg", {"memplan", f.cnn}, {"--svg", o2 + ".svg"}, o2 + ".svg"));
    // optimize: the written model is compared (the table's timings are masked)
    const std::vector<std::string> opt = {"optimize", f.cnn, "-o", out + ".onnx"};
    r.push_back(effect("optimize", "-o", {"optimize", f.cnn}, {"-o", out + ".onnx"}, out + ".onnx"));
    r.push_back(effect("optimize", "--level", opt, {"--level", "none"}, out + ".onnx"));
    r.push_back(effect("optimize", "--passes", opt, {"--passes", "fuse-conv-bn"}, out + ".onnx"));
    r.push_back(effect("optimize", "--report", opt, {"--report", o2 + ".json"}, o2 + ".json"));
    r.push_back(effect("optimize", "--verify", opt, {"--verify"}));
    r.push_back(effect("optimize", "--fixed-point", opt, {"--fixed-point"}));
    r.push_back(effect("optimize", "--target-opset", opt, {"--target-opset", "15"}, out + ".onnx"));
    r.push_back(effect("optimize", "--target-layout", opt, {"--target-layout", "NHWC"}, out + ".onnx"));
    r.push_back(effect("optimize", "--group-functions", opt, {"--group-functions"}, out + ".onnx"));
    r.push_back(effect("optimize", "--recompute", {"optimize", f.train, "-o", out + ".onnx"}, {"--recompute", "all"},
                       out + ".onnx"));
    r.push_back(effect("optimize", "--dim", opt, {"--dim", "N=1"}, out + ".onnx"));
    r.push_back(effect("optimize", "--profile", opt, {"--profile", "onnxruntime"}, out + ".onnx"));
    r.push_back(effect("optimize", "--pipeline", opt, {"--pipeline", "basic,layout{to=NHWC},transpose"}, out + ".onnx"));
    r.push_back(refused("optimize", "--pipeline", opt + std::vector<std::string>{"--pipeline", "basic", "--level", "all"}));
    r.push_back(refused("optimize", "--pipeline", opt + std::vector<std::string>{"--pipeline", "layout{to=NCWH}"}));
    // passes
    r.push_back(effect("passes", "--json", {"passes"}, {"--json"}));
    r.push_back(noted("passes", {"passes"}));
    // print
    r.push_back(effect("print", "--dim", {"print", f.cnn}, {"--dim", "N=2"}));
    // render (dot: no rasterizing)
    const std::vector<std::string> render = {"render", f.cnn, "-o", out + ".dot"};
    r.push_back(effect("render", "-o", {"render", f.cnn}, {"-o", out + ".dot"}, out + ".dot"));
    r.push_back(effect("render", "--no-fold", render, {"--no-fold"}, out + ".dot"));
    r.push_back(effect("render", "--after", render, {"--after", "fuse-conv-bn"}, out + ".dot"));
    r.push_back(effect("render", "--depth", render, {"--depth", "0"}, out + ".dot"));
    r.push_back(effect("render", "--expand", render + std::vector<std::string>{"--depth", "0"}, {"--expand", "enc"},
                       out + ".dot"));
    r.push_back(effect("render", "--expand-all", render, {"--expand-all"}, out + ".dot"));
    r.push_back(refused("render", "--expand-all", render + std::vector<std::string>{"--expand-all", "--depth", "1"}));
    r.push_back(effect("render", "--dim", render, {"--dim", "N=1"}, out + ".dot"));
    // run
    r.push_back(effect("run", "--input-dir", {"run", f.cnn, "--dim", "N=1"}, {"--input-dir", f.inputs}));
    r.push_back(effect("run", "--seed", {"run", f.cnn, "--dim", "N=1"}, {"--seed", "3"}));
    r.push_back(refused("run", "--seed", {"run", f.cnn, "--dim", "N=1", "--input-dir", f.inputs, "--seed", "3"}));
    r.push_back(effect("run", "--out-dir", {"run", f.cnn, "--dim", "N=1"}, {"--out-dir", o2}, o2 + "/output_0.pb"));
    r.push_back(effect("run", "--max-memory", {"run", f.cnn, "--dim", "N=1"}, {"--max-memory", "1"}, {}, 2));
    r.push_back(effect("run", "--json", {"run", f.cnn, "--dim", "N=1"}, {"--json"}));
    r.push_back(effect("run", "--dim", {"run", f.cnn}, {"--dim", "N=2"}));
    // shapes
    r.push_back(effect("shapes", "--json", {"shapes", f.cnn}, {"--json"}));
    r.push_back(effect("shapes", "--dim", {"shapes", f.cnn}, {"--dim", "N=2"}));
    // verify: B's weights are 1% off, so the default tolerance fails and a loose one passes
    const std::vector<std::string> verify = {"verify", f.cnn, f.cnnPerturbed, "--dim", "N=1"};
    r.push_back(effect("verify", "--seed", verify, {"--seed", "3"}));
    r.push_back(effect("verify", "--rtol", verify, {"--rtol", "0.5"}));
    r.push_back(effect("verify", "--atol", verify, {"--atol", "10"}));
    r.push_back(effect("verify", "--max-memory", verify, {"--max-memory", "1"}, {}, 2));
    r.push_back(effect("verify", "--json", verify, {"--json"}));
    r.push_back(effect("verify", "--dim", {"verify", f.cnn, f.cnnPerturbed}, {"--dim", "N=3"}));
    return r;
}

struct Outcome {
    int exit = -1;
    std::string out, err, file;
};

Outcome runRow(const std::vector<std::string>& line, const std::string& file) {
    if (!file.empty()) std::filesystem::remove_all(file);
    auto r = test::runCli(line);
    return {r.exitCode, withoutTimings(r.out), r.err, file.empty() ? std::string() : slurp(file)};
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& a : v) s += (s.empty() ? "" : " ") + a;
    return s;
}

TEST(OptionTable, CoversEveryDeclaredOption) {
    const auto declared = declaredOptions();
    ASSERT_GE(declared.size(), 10u) << "could not read the commands from --help";
    std::set<std::pair<std::string, std::string>> covered;
    for (const auto& row : rows()) {
        covered.insert({row.command, row.option});
        ASSERT_TRUE(declared.count(row.command)) << "row for unknown command " << row.command;
        EXPECT_TRUE(declared.at(row.command).count(row.option))
            << row.command << ": the table has a row for " << row.option << ", which its usage does not declare";
    }
    for (const auto& [command, options] : declared)
        for (const auto& option : options)
            EXPECT_TRUE(covered.count({command, option}))
                << command << " " << option << ": no row says what it does (add one to rows() in " << __FILE__ << ")";
}

TEST(OptionTable, EveryOptionHasAnEffectOrIsRefused) {
    for (const auto& row : rows()) {
        SCOPED_TRACE(row.command + " " + row.option + ": " + joined(row.with));
        const Outcome with = runRow(row.with, row.file);
        if (row.expect == Expect::Refused) {
            EXPECT_EQ(with.exit, 2) << with.out << with.err;
            EXPECT_NE(with.err.find(row.option), std::string::npos) << "the refusal should name the option: " << with.err;
            continue;
        }
        if (row.expect == Expect::NoEffectNoted) {
            const Outcome base = runRow(row.base, row.file);
            EXPECT_EQ(with.exit, base.exit) << with.err;
            EXPECT_EQ(with.out, base.out);
            EXPECT_EQ(with.file, base.file);
            EXPECT_NE(with.err.find("note: " + row.option + " has no effect here"), std::string::npos) << with.err;
            continue;
        }
        if (row.withExit >= 0) EXPECT_EQ(with.exit, row.withExit) << with.err;
        else EXPECT_TRUE(with.exit == 0 || with.exit == 1) << with.exit << ": " << with.err;
        const Outcome base = runRow(row.base, row.file);
        EXPECT_TRUE(base.exit != with.exit || base.out != with.out || base.file != with.file)
            << "the option changed nothing (exit " << with.exit << ")\n" << with.out << with.err;
    }
}

/// Node counts of a model file: op type (with domain) → count.
std::map<std::string, int> opCounts(const Model& m) {
    std::map<std::string, int> counts;
    for (NodeId n : m.graph.nodeOrder()) {
        const auto& node = m.graph.node(n);
        ++counts[(node.domain.empty() ? "" : node.domain + ":") + node.opType];
    }
    return counts;
}

TEST(OptimizeTargetLayout, ChannelsLastAtEveryLevel) {
    const Fixture& f = fixture();
    const std::string dir = test::tempDir("target_layout");
    onnxio::ImportOptions io;
    io.pinnedDims = {{"N", 2}};
    const Model original = onnxio::importModelFile(f.cnn, io);
    // The same as the level's output converted by the layout pass and the transpose optimizer,
    // named explicitly in a second run.
    for (const std::string level : {"none", "basic", "extended", "all"}) {
        SCOPED_TRACE("--level " + level);
        const std::string implicit = dir + "/" + level + ".onnx", levelOnly = dir + "/" + level + "_level.onnx",
                          named = dir + "/" + level + "_named.onnx";
        auto r = test::runCli({"optimize", f.cnn, "-o", implicit, "--level", level, "--target-layout", "NHWC"});
        ASSERT_EQ(r.exitCode, 0) << r.err;
        ASSERT_NE(r.out.find("layout"), std::string::npos) << r.out;
        auto l = test::runCli({"optimize", f.cnn, "-o", levelOnly, "--level", level});
        ASSERT_EQ(l.exitCode, 0) << l.err;
        auto n = test::runCli({"optimize", levelOnly, "-o", named, "--level", "none", "--passes", "layout,transpose",
                               "--target-layout", "NHWC"});
        ASSERT_EQ(n.exitCode, 0) << n.err;
        const Model m = onnxio::importModelFile(implicit, io);
        const auto counts = opCounts(m);
        EXPECT_EQ(passes::nonStandardDomains(m), std::vector<std::string>{passes::kNhwcDomain});
        EXPECT_EQ(counts.count("Conv"), 0u) << "a Conv stayed NCHW";
        EXPECT_EQ(counts.at(std::string(passes::kNhwcDomain) + ":Conv"), 1);
        EXPECT_EQ(counts.at(std::string(passes::kNhwcDomain) + ":GlobalAveragePool"), 1);
        // One Transpose into the channels-last region; the pool's [N,1,1,C] output goes back by
        // Transpose or, after the optimizer, a Reshape.
        EXPECT_LE(counts.count("Transpose") ? counts.at("Transpose") : 0, 2);
        EXPECT_EQ(counts, opCounts(onnxio::importModelFile(named, io)));
        auto inputs = eval::randomInputs(original, 11, io.pinnedDims);
        const auto ref = eval::run(original, inputs, {});
        const auto got = eval::run(m, inputs, {});
        for (const auto& d : eval::compareOutputs(original, got, ref, 1e-4, 1e-5))
            EXPECT_TRUE(d.ok) << d.name << " max abs " << d.maxAbs;
    }
    // Back to NCHW from the channels-last file: standard ONNX again.
    const std::string back = dir + "/back.onnx";
    auto b = test::runCli({"optimize", dir + "/basic.onnx", "-o", back, "--target-layout", "NCHW"});
    ASSERT_EQ(b.exitCode, 0) << b.err;
    EXPECT_TRUE(passes::nonStandardDomains(onnxio::importModelFile(back, io)).empty());
}

}  // namespace
}  // namespace passlens
