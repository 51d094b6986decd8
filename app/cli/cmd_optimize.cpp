#include <filesystem>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <fstream>
#include <ostream>
#include <sstream>

#include "cli/Command.h"
#include "eval/Interpreter.h"
#include "ir/Error.h"
#include "onnx/Checker.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

namespace passlens::cli {

namespace {

std::vector<std::string> splitList(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

nlohmann::ordered_json reportJson(const passes::PipelineResult& r) {
    auto passesJson = nlohmann::ordered_json::array();
    for (const auto& p : r.passes) {
        nlohmann::ordered_json j;
        j["name"] = p.name;
        j["nodes_before"] = p.nodesBefore;
        j["nodes_after"] = p.nodesAfter;
        j["ms"] = p.ms;
        auto changes = nlohmann::ordered_json::array();
        for (const auto& c : p.changes)
            changes.push_back({{"kind", std::string(passes::changeKindName(c.kind))}, {"rule", c.rule}, {"graph", c.graphPath},
                               {"nodes", c.nodeNames}, {"node_ids", c.nodes}, {"provenance", c.provenance}, {"reason", c.reason}});
        j["changes"] = changes;
        auto remarks = nlohmann::ordered_json::array();
        for (const auto& m : p.remarks)
            remarks.push_back({{"kind", std::string(passes::remarkKindName(m.kind))}, {"rule", m.rule}, {"graph", m.graphPath},
                               {"nodes", m.nodeNames}, {"message", m.message}});
        j["remarks"] = remarks;
        passesJson.push_back(std::move(j));
    }
    nlohmann::ordered_json root;
    root["passes"] = passesJson;
    if (r.firstMismatch) root["first_mismatch"] = r.passes[*r.firstMismatch].name;
    return root;
}

}  // namespace

REGISTER_COMMAND({
    "optimize",
    "optimize IN -o OUT [--level none|basic|extended|all] [--passes p,q] [--report R.json] [--verify] [--fixed-point] "
    "[--target-opset N] [--target-layout NHWC|NCHW] [--seed N] [--rtol R] [--atol A]",
    "Runs a pass pipeline, writes the optimized model, and reports what each pass changed and why.",
    {"-o", "--level", "--passes", "--report", "--target-opset", "--target-layout", "--seed", "--rtol", "--atol"},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"-o", "--level", "--passes", "--report", "--verify", "--fixed-point", "--target-opset", "--target-layout",
                         "--seed", "--rtol", "--atol", "--list"});
        const auto& registry = passes::PassRegistry::instance();
        if (args.flag("--list")) {
            for (const auto& p : registry.passes()) out << std::left << std::setw(22) << p.name << p.description << "\n";
            return 0;
        }
        const std::string& in = args.positional(0, "IN");
        auto outPath = args.option("-o");
        if (!outPath) throw UsageError{"missing -o OUT"};
        std::vector<std::string> names = registry.pipeline(passes::parseLevel(args.option("--level").value_or(args.option("--passes") ? "none" : "basic")));
        if (auto list = args.option("--passes"))
            for (const auto& n : splitList(*list)) names.push_back(n);
        for (const auto& n : names) (void)registry.create(n);  // unknown names fail before any work

        onnxio::ImportOptions io;
        io.pinnedDims = args.dims();
        ir::Model model = onnxio::importModelFile(in, io);
        for (const auto& w : model.warnings) err << "warning: " << w << "\n";

        passes::PipelineOptions po;
        po.fixedPoint = args.flag("--fixed-point");
        if (auto v = args.option("--target-opset")) po.pass.targetOpset = std::stoll(*v);
        if (auto v = args.option("--target-layout")) po.pass.targetLayout = *v;
        po.keepSnapshots = false;
        const double rtol = std::stod(args.option("--rtol").value_or("1e-4"));
        const double atol = std::stod(args.option("--atol").value_or("1e-5"));
        std::vector<ir::TensorPtr> inputs, reference;
        std::shared_ptr<const ir::Model> original;
        if (args.flag("--verify")) {
            original = std::make_shared<const ir::Model>(model);
            uint64_t seed = std::stoull(args.option("--seed").value_or("0"));
            eval::RunOptions ro;
            ro.dims = args.dims();
            inputs = eval::randomInputs(model, seed, ro.dims);
            reference = eval::run(model, inputs, ro);
            po.verifyAfterEach = [&](const ir::Model& after) -> std::optional<std::string> {
                eval::RunOptions r2;
                r2.dims = args.dims();
                auto got = eval::run(after, inputs, r2);
                for (const auto& d : eval::compareOutputs(*original, got, reference, rtol, atol))
                    if (!d.ok)
                        return "output '" + d.name + "' differs (max abs " + std::to_string(d.maxAbs) + ", max rel " + std::to_string(d.maxRel) + ")";
                return std::nullopt;
            };
        }
        passes::PipelineResult result = passes::runPipeline(model, names, po);

        out << std::left << std::setw(24) << "pass" << std::right << std::setw(8) << "before" << std::setw(8) << "after"
            << std::setw(10) << "ms" << std::setw(9) << "changes" << std::setw(8) << "missed" << "\n";
        for (const auto& p : result.passes) {
            size_t missed = 0;
            for (const auto& m : p.remarks) missed += m.kind == passes::RemarkKind::Missed;
            out << std::left << std::setw(24) << p.name << std::right << std::setw(8) << p.nodesBefore << std::setw(8) << p.nodesAfter
                << std::setw(10) << std::fixed << std::setprecision(2) << p.ms << std::setw(9) << p.changes.size() << std::setw(8)
                << missed << "\n";
        }
        if (auto report = args.option("--report")) {
            std::ofstream f(*report);
            if (!f) throw Error(ErrorKind::BadInput, "cannot write report '" + *report + "'");
            f << reportJson(result).dump(2) << "\n";
        }
        onnxio::exportModelFile(model, *outPath);
        out << "wrote " << *outPath << " (" << model.graph.nodeCount() << " nodes)\n";
        if (result.firstMismatch) {
            err << "error: outputs differ after pass '" << result.passes[*result.firstMismatch].name << "': " << result.mismatchMessage << "\n";
            return 1;
        }
        if (args.flag("--verify")) out << std::defaultfloat << "verify: outputs match after every pass (rtol " << rtol << ", atol " << atol << ")\n";
        return 0;
    }});

}  // namespace passlens::cli
