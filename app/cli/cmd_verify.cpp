#include <cmath>
#include <cstdio>
#include <ostream>

#include <nlohmann/json.hpp>

#include "cli/Command.h"
#include "cli/ModelInputs.h"
#include "eval/Interpreter.h"
#include "eval/MemoryBudget.h"
#include "ir/Error.h"
#include "onnx/Import.h"

namespace passlens::cli {

namespace {

std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

}  // namespace

REGISTER_COMMAND({
    "verify", "verify A B [--seed N] [--rtol R] [--atol A] [--dim NAME=V] [--max-memory BYTES] [--json]",
    "Runs two models on the same seeded random inputs and compares outputs (|a-b| <= atol + rtol*|b|); exit 1 on mismatch.",
    {"--seed", "--rtol", "--atol", "--max-memory"},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"--seed", "--rtol", "--atol", "--max-memory", "--json"});
        eval::MemoryBudgetScope budget(maxMemoryOption(args));
        const double rtol = args.nonNegativeOption("--rtol", 1e-4), atol = args.nonNegativeOption("--atol", 1e-5);
        const uint64_t seed = args.unsignedOption("--seed", 0);
        onnxio::ImportOptions options;
        options.pinnedDims = args.dims();
        const std::string pathA = args.positional(0, "A"), pathB = args.positional(1, "B");
        auto a = onnxio::importModelFile(pathA, options);
        auto b = onnxio::importModelFile(pathB, options);
        auto insA = eval::runtimeInputs(a.graph), insB = eval::runtimeInputs(b.graph);
        if (insA.size() != insB.size())
            throwBadInput("the models take different numbers of inputs (" + std::to_string(insA.size()) + " vs " + std::to_string(insB.size()) + ")");
        for (size_t i = 0; i < insA.size(); ++i) {
            const auto& ta = a.graph.value(insA[i]).type;
            const auto& tb = b.graph.value(insB[i]).type;
            if (ta.elemType != tb.elemType)
                throwBadInput("input " + std::to_string(i) + " has type " + ta.toString() + " in A but " + tb.toString() + " in B");
        }
        if (a.graph.outputs().size() != b.graph.outputs().size())
            throwBadInput("the models have different numbers of outputs");
        auto inputs = commandInputs(a, args, err);
        auto outA = eval::run(a, inputs);
        auto outB = eval::run(b, inputs);
        auto diffs = eval::compareOutputs(a, outB, outA, rtol, atol);  // A is the reference
        bool ok = true;
        for (const auto& d : diffs) ok = ok && d.ok;
        if (args.flag("--json")) {
            nlohmann::ordered_json j;
            j["a"] = pathA;
            j["b"] = pathB;
            j["seed"] = seed;
            j["rtol"] = rtol;
            j["atol"] = atol;
            j["ok"] = ok;
            j["outputs"] = nlohmann::ordered_json::array();
            for (const auto& d : diffs) {
                nlohmann::ordered_json o;
                o["name"] = d.name;
                o["max_abs"] = std::isfinite(d.maxAbs) ? nlohmann::ordered_json(d.maxAbs) : nlohmann::ordered_json("inf");
                o["max_rel"] = std::isfinite(d.maxRel) ? nlohmann::ordered_json(d.maxRel) : nlohmann::ordered_json("inf");
                o["shape_mismatch"] = d.shapeMismatch;
                o["ok"] = d.ok;
                j["outputs"].push_back(o);
            }
            out << j.dump(2) << "\n";
        } else {
            for (const auto& d : diffs) {
                out << (d.ok ? "ok   " : "FAIL ") << d.name;
                if (d.shapeMismatch) out << "  shape/type mismatch\n";
                else out << "  max abs diff " << fmt(d.maxAbs) << "  max rel diff " << fmt(d.maxRel) << "\n";
            }
            out << (ok ? "outputs match" : "outputs differ") << " (rtol " << fmt(rtol) << ", atol " << fmt(atol) << ")\n";
        }
        return ok ? 0 : 1;
    }});

}  // namespace passlens::cli
