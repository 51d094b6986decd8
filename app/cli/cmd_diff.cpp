#include <ostream>

#include "cli/Command.h"
#include "diff/DiffReport.h"

namespace passlens::cli {

REGISTER_COMMAND({
    "diff", "diff A B [--json] [--names-only]",
    "Structural diff of two models: nodes matched by name, weights, structure, neighbours and similarity; "
    "exit 0 when no node differs, 1 when some do.",
    {},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"--json", "--names-only"});
        // Matching reads ops, attributes, weights and the graph's edges; pinned shapes changed no result.
        args.noteNoEffect("--dim", "does not apply to diff: nodes are matched and compared without their value shapes", err);
        const ir::Model a = diff::importForDiff(args.positional(0, "A"));
        const ir::Model b = diff::importForDiff(args.positional(1, "B"));
        diff::DiffOptions diffOptions;
        diffOptions.namesOnly = args.flag("--names-only");
        const diff::ModelComparison d = diff::compareModels(a, b, diffOptions);
        if (args.flag("--json")) out << diff::diffToJson(d).dump(2) << "\n";
        else out << "A: " << args.positional(0, "A") << " (" << a.graph.nodeCount() << " nodes)\nB: " << args.positional(1, "B")
                 << " (" << b.graph.nodeCount() << " nodes)\n" << diff::diffToText(d);
        return d.identical() ? kOk : kCheckFailed;
    }});

}  // namespace passlens::cli
