#include <cstdint>
#include <iomanip>
#include <map>
#include <ostream>

#include <nlohmann/json.hpp>

#include "pipeline/Explain.h"
#include "cli/Command.h"
#include "cli/Profile.h"
#include "onnx/Import.h"

namespace passlens::cli {

namespace {

/// explain --profile onnxruntime: runs the profile on the model and lists every fusion ONNX Runtime
/// applied or refused, by rule and node, in pipeline order (the remarks of the ort-* passes and of
/// the standard fusions the profile runs).
int explainOnnxRuntime(const Args& args, ir::Model model, std::ostream& out) {
    const passes::Level level = onnxRuntimeLevel(args, "extended");
    passes::PassManager pm;
    addOnnxRuntimePasses(pm, level);
    passes::PipelineOptions options;
    options.keepSnapshots = false;
    const passes::PipelineResult run = pm.run(model, options);
    struct Row {
        const passes::PassResult* pass;
        const passes::Remark* remark;
    };
    std::vector<Row> rows;
    std::map<std::string, std::pair<int, int>> counts;  // rule → applied, missed
    for (const auto& step : run.steps) {
        const std::string& p = step.result.name;
        if (p.rfind("ort-", 0) != 0 && p.rfind("fuse-", 0) != 0) continue;
        for (const auto& r : step.result.remarks) {
            rows.push_back({&step.result, &r});
            auto& c = counts[r.rule.empty() ? p : r.rule];
            (r.kind == passes::RemarkKind::Applied ? c.first : c.second)++;
        }
    }
    const std::string levelText(passes::levelName(level));
    if (args.flag("--json")) {
        nlohmann::ordered_json j;
        j["profile"] = "onnxruntime";
        j["level"] = levelText;
        auto& list = j["fusions"] = nlohmann::ordered_json::array();
        for (const Row& row : rows) {
            nlohmann::ordered_json e;
            e["pass"] = row.pass->name;
            e["rule"] = row.remark->rule;
            e["applied"] = row.remark->kind == passes::RemarkKind::Applied;
            e["graph"] = row.remark->graphPath;
            e["nodes"] = row.remark->nodeNames;
            auto edges = nlohmann::ordered_json::array();
            for (ir::ValueId v : row.remark->values)
                if (model.graph.hasValue(v)) edges.push_back(model.graph.value(v).name);
            e["edges"] = edges;
            e["message"] = row.remark->message;
            list.push_back(std::move(e));
        }
        auto& summary = j["summary"] = nlohmann::ordered_json::object();
        for (const auto& [rule, c] : counts) summary[rule] = {{"applied", c.first}, {"missed", c.second}};
        out << j.dump(2) << "\n";
        return 0;
    }
    out << "ONNX Runtime 1.30 (CPU) " << levelText << ": " << run.steps.size() << " transformers, "
        << rows.size() << " fusions applied or refused\n";
    for (const Row& row : rows) {
        const bool applied = row.remark->kind == passes::RemarkKind::Applied;
        out << (applied ? "applied  " : "missed   ") << row.remark->message;
        if (!row.remark->graphPath.empty()) out << " [in " << row.remark->graphPath << "]";
        out << "\n";
    }
    out << "\n" << std::left << std::setw(28) << "rule" << std::right << std::setw(9) << "applied" << std::setw(8) << "missed" << "\n";
    for (const auto& [rule, c] : counts)
        out << std::left << std::setw(28) << rule << std::right << std::setw(9) << c.first << std::setw(8) << c.second << "\n";
    return 0;
}

}  // namespace

REGISTER_COMMAND({
    "explain", "explain MODEL [--node NAME] [--json] [--max-depth N] [--no-passes] [--profile standard|onnxruntime [--level basic|extended]]",
    "Fusion groups (TVM FuseOps) of the top-level graph and, per node, each fusion considered for it: the rule "
    "that refused it and the node/edge that blocked it (with the pattern-fusion passes' remarks unless --no-passes). "
    "--profile onnxruntime instead lists every fusion ONNX Runtime 1.30 (CPU) applies or refuses at --level "
    "(default extended), by rule and node, with the condition that refused it.",
    {"--node", "--max-depth", "--profile", "--level"},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"--node", "--json", "--max-depth", "--no-passes", "--profile", "--level"});
        const bool ort = onnxRuntimeProfile(args);
        if (!ort && args.option("--level")) throw UsageError{"--level goes with --profile onnxruntime"};
        if (ort && (args.option("--node") || args.option("--max-depth") || args.flag("--no-passes")))
            throw UsageError{"--profile onnxruntime lists the whole model's fusions: --node, --max-depth and --no-passes do not apply"};
        analysis::ExplainOptions options;
        options.runPatternPasses = !args.flag("--no-passes");
        if (args.option("--max-depth")) {
            uint64_t d = args.unsignedOption("--max-depth", 256);
            if (d < 1 || d > 1000000) throw UsageError{"--max-depth must be between 1 and 1000000"};
            options.fusion.maxDepth = static_cast<int>(d);
        }
        onnxio::ImportOptions io;
        io.pinnedDims = args.dims();
        auto model = onnxio::importModelFile(args.positional(0, "MODEL"), io);
        if (ort) return explainOnnxRuntime(args, std::move(model), out);
        analysis::Explanation e;
        if (auto name = args.option("--node")) {
            e = analysis::explainNode(model, analysis::findNodeForExplain(model.graph, *name), options);
        } else {
            e = analysis::explainModel(model, options);
        }
        if (args.flag("--json")) {
            analysis::writeExplanationJson(out, model.graph, e);
            out << "\n";
        } else {
            out << analysis::explanationToText(model.graph, e);
        }
        (void)err;
        return 0;
    }});

}  // namespace passlens::cli
