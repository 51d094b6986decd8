#include <algorithm>
#include <fstream>
#include <iomanip>
#include <optional>
#include <ostream>
#include <sstream>

#include "cli/Command.h"
#include "eval/Interpreter.h"
#include "eval/Verify.h"
#include "ir/Error.h"
#include "onnx/Checker.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"
#include "passes/fusion/GroupFunctions.h"
#include "passes/Report.h"
#include "pipeline/PipelineBuilder.h"

namespace passlens::cli {

using namespace passlens::passes;

REGISTER_COMMAND({
    "optimize",
    "optimize IN -o OUT [--profile standard|onnxruntime] [--level none|basic|extended|all] [--passes p,q] [--pipeline TEXT] "
    "[--report REPORT.json] [--verify] [--fixed-point] [--target-opset N] [--target-layout NHWC|NCHW] [--group-functions] "
    "[--recompute none|sqrt|all|budget=BYTES]",
    "Runs a pass pipeline, writes the optimized model and a per-pass report of changes and remarks. "
    "--profile onnxruntime writes the model ONNX Runtime 1.30 (CPU) builds at --level basic|extended. "
    "--pipeline is the whole pipeline as text, levels and passes with options: "
    "'basic,layout{to=NHWC},transpose' (the options: passlens-cli passes). "
    "--verify runs the interpreter: the model after each pass on one input (naming the first pass that changes the "
    "outputs), then the file as written, read back, on 4 inputs (natural ranges at seeds 1234, 0, 1: images in [0,1), "
    "token ids over the embedding; and `verify`'s default, seed 0); exit 1 when they differ or when no output of the "
    "original varies (not verified).",
    {"-o", "--level", "--passes", "--pipeline", "--report", "--target-opset", "--target-layout", "--recompute", "--profile"},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"-o", "--level", "--passes", "--pipeline", "--report", "--verify", "--fixed-point", "--target-opset",
                         "--target-layout", "--group-functions", "--recompute", "--profile"});
        const std::string in = args.positional(0, "IN");
        auto outPath = args.option("-o");
        if (!outPath) throw UsageError{"missing -o OUT"};
        // The pipeline: core's builder, shared with the Python module (pipeline/PipelineBuilder.h).
        PipelineRequest request;
        request.pipeline = args.option("--pipeline");
        request.level = args.option("--level");
        request.passes = args.option("--passes");
        request.profile = args.option("--profile");
        if (auto o = args.option("--target-opset")) {
            try {
                request.targetOpset = std::stoll(*o);
            } catch (const std::exception&) {
                throw UsageError{"--target-opset needs a number"};
            }
        }
        request.targetLayout = args.option("--target-layout");
        request.recompute = args.option("--recompute");
        request.groupFunctions = args.flag("--group-functions");
        PassManager pm;
        PipelineOptions options;
        buildPipeline(request, pm, options.pass);
        options.fixedPoint = args.flag("--fixed-point");
        options.keepSnapshots = false;
        onnxio::ImportOptions io;
        io.pinnedDims = args.dims();
        ir::Model model = onnxio::importModelFile(in, io);
        // --verify: the original runs on several inputs; each pass's model on the first (naming the
        // first pass that breaks it); the file as written, read back, on all of them (the verdict).
        std::optional<eval::PipelineVerifier> verifier;
        if (args.flag("--verify")) {
            verifier.emplace(model, args.dims());
            options.keepSnapshots = true;  // to name the pass when only the written file shows a difference
            options.afterPass = [&](const PassResult& r, const ir::Model& m) {
                const std::string line = verifier->afterPass(r.name, m);
                if (!line.empty()) err << line << "\n";
            };
        }
        PipelineResult result = pm.run(model, options);
        const auto grouped = groupFunctionsResultOf(result);
        if (auto problem = onnxio::checkModel(model))
            err << "warning: the optimized model fails the ONNX checker: " << *problem << "\n";
        onnxio::exportModelFile(model, *outPath);
        if (auto report = args.option("--report")) {
            std::ofstream f(*report);
            if (!f) throwBadInput("cannot write report '" + *report + "'");
            f << optimizeReportToJson(result).dump(2) << "\n";
        }
        // The name column fits the longest pass name (ort-transpose-optimizer-cpu is 27 wide).
        int nameWidth = 20;
        for (const auto& s : result.steps) nameWidth = std::max(nameWidth, static_cast<int>(s.result.name.size()) + 2);
        out << std::left << std::setw(nameWidth) << "pass" << std::right << std::setw(8) << "before" << std::setw(8) << "after"
            << std::setw(9) << "changes" << std::setw(8) << "missed" << std::setw(10) << "ms" << "\n";
        for (const auto& s : result.steps) {
            size_t missed = 0;
            for (const auto& r : s.result.remarks) missed += r.kind == RemarkKind::Missed;
            out << std::left << std::setw(nameWidth) << s.result.name << std::right << std::setw(8) << s.result.nodesBefore
                << std::setw(8) << s.result.nodesAfter << std::setw(9) << s.result.changes.size() << std::setw(8)
                << missed << std::setw(10) << std::fixed << std::setprecision(2) << s.result.ms << "\n";
        }
        if (grouped)
            out << "group-functions: " << grouped->functions << " functions (" << grouped->subgraphFunctions
                << " in subgraphs) from " << grouped->fusedNodes << " nodes; " << grouped->nodesBefore << " -> "
                << grouped->nodesAfter << " top-level nodes, " << grouped->kernels() << " kernels; all graphs "
                << grouped->deepNodesBefore << " -> " << grouped->deepNodesAfter << " nodes\n";
        if (verifier) {
            eval::PipelineVerifier::Steps steps;
            for (const auto& s : result.steps) steps.emplace_back(s.result.name, s.snapshot);
            const auto verdict = verifier->checkWrittenFile(*outPath, steps);
            for (const auto& line : verdict.lines)
                (verdict.verdict == eval::PipelineVerifier::Verdict::Match ? out : err) << line << "\n";
            if (verdict.verdict != eval::PipelineVerifier::Verdict::Match) return 1;
        }
        return 0;
    }});

}  // namespace passlens::cli
