#include <cstdio>
#include <ostream>

#include "cli/Command.h"
#include "cli/ModelInputs.h"
#include "eval/Interpreter.h"
#include "eval/MemoryBudget.h"
#include "eval/RunSupport.h"
#include "ir/Error.h"
#include "onnx/Import.h"

namespace passlens::cli {

namespace {

std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

}  // namespace

REGISTER_COMMAND({
    "run", "run MODEL [--input-dir D] [--seed N] [--out-dir D] [--dim NAME=V] [--max-memory BYTES] [--json]",
    "Runs the model on the CPU reference interpreter (seeded random inputs unless --input-dir) and prints each output.",
    {"--input-dir", "--seed", "--out-dir", "--max-memory"},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"--input-dir", "--seed", "--out-dir", "--max-memory", "--json"});
        eval::MemoryBudgetScope budget(maxMemoryOption(args));
        onnxio::ImportOptions options;
        options.pinnedDims = args.dims();
        auto model = onnxio::importModelFile(args.positional(0, "MODEL"), options);
        auto inputs = commandInputs(model, args, err);
        auto outputs = eval::run(model, inputs);
        if (auto dir = args.option("--out-dir")) {
            eval::writeTensorDir(inputs, *dir, "input");
            eval::writeTensorDir(outputs, *dir, "output");
        }
        const auto& outIds = model.graph.outputs();
        if (args.flag("--json")) {
            nlohmann::ordered_json j;
            j["model"] = args.positional(0, "MODEL");
            j["outputs"] = nlohmann::ordered_json::array();
            for (size_t i = 0; i < outputs.size(); ++i)
                j["outputs"].push_back(eval::summaryToJson(model.graph.value(outIds[i]).name, eval::summarize(*outputs[i])));
            out << j.dump(2) << "\n";
            return 0;
        }
        for (size_t i = 0; i < outputs.size(); ++i) {
            auto s = eval::summarize(*outputs[i]);
            out << model.graph.value(outIds[i]).name << ": " << s.dtype << s.shape << "  min " << fmt(s.min) << "  max " << fmt(s.max)
                << "  mean " << fmt(s.mean) << (s.allFinite ? "" : "  (non-finite values)") << "\n  first:";
            for (double v : s.first) out << " " << fmt(v);
            out << "\n";
        }
        return 0;
    }});

}  // namespace passlens::cli
