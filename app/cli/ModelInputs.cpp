#include "cli/ModelInputs.h"

#include <ostream>

#include "eval/Interpreter.h"
#include "eval/RunSupport.h"

namespace passlens::cli {

std::vector<ir::TensorPtr> commandInputs(const ir::Model& model, const Args& args, std::ostream& err) {
    if (auto dir = args.option("--input-dir")) return eval::readInputDir(model, *dir);
    for (const auto& d : eval::unpinnedDims(model, args.dims()))
        err << "note: symbolic dim '" << d << "' is not pinned with --dim; using 1\n";
    return eval::randomInputs(model, args.unsignedOption("--seed", 0), args.dims());
}

}  // namespace passlens::cli
