// passlens-cli shapes: every value's element type and dims from the symbolic shape engine
// (core/shape), the elements of small integer tensors (what a shape chain computes), the symbols,
// and for each dim it could not express the node that left it and why. The table and its JSON are
// core/report/Shapes (shared with the Python module).
#include <ostream>

#include "cli/Command.h"
#include "onnx/Import.h"
#include "report/Shapes.h"

namespace passlens::cli {

REGISTER_COMMAND({
    "shapes", "shapes MODEL [--dim NAME=VALUE]... [--json]",
    "Every value's element type and dims (integers or expressions over the input symbols), the symbols, "
    "and for each unknown or data-dependent dim the node that made it and why.",
    {},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"--json"});
        shape::Bindings bindings;
        for (const auto& [name, value] : args.dims()) bindings[name] = value;
        // Imported without pinning, so dims stay expressions; --dim evaluates them.
        auto model = onnxio::importModelFile(args.positional(0, "MODEL"));
        const auto r = report::analyzeModelShapes(model, bindings);
        for (const auto& name : r.unknownBindings) err << "warning: --dim " << name << ": no graph input has a dim named so\n";
        if (args.flag("--json")) out << report::shapesToJson(model, r).dump(1) << "\n";
        else out << report::shapesToText(model, r);
        return 0;
    }});

}  // namespace passlens::cli
