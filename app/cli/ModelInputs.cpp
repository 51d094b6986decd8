#include "cli/ModelInputs.h"

#include <cctype>
#include <ostream>
#include <string>

#include "eval/Interpreter.h"
#include "eval/RunSupport.h"

namespace passlens::cli {

std::vector<ir::TensorPtr> commandInputs(const ir::Model& model, const Args& args, std::ostream& err) {
    if (auto dir = args.option("--input-dir")) {
        args.refuse("--seed", "picks random inputs; it does not apply with --input-dir");
        return eval::readInputDir(model, *dir);
    }
    for (const auto& d : eval::unpinnedDims(model, args.dims()))
        err << "note: symbolic dim '" << d << "' is not pinned with --dim; using 1\n";
    return eval::randomInputs(model, args.unsignedOption("--seed", 0), args.dims());
}

int64_t maxMemoryOption(const Args& args) {
    auto text = args.option("--max-memory");
    if (!text) return 0;
    auto bad = [&] { return UsageError{"--max-memory takes a size in bytes, e.g. 512M or 4G; got '" + *text + "'"}; };
    size_t used = 0;
    double value = 0;
    try {
        value = std::stod(*text, &used);
    } catch (const std::exception&) {
        throw bad();
    }
    double scale = 1;
    if (used < text->size()) {
        const size_t unit = std::string("KMGT").find(static_cast<char>(std::toupper(static_cast<unsigned char>((*text)[used]))));
        if (unit == std::string::npos || used + 1 != text->size()) throw bad();
        for (size_t i = 0; i <= unit; ++i) scale *= 1024;
    }
    if (!(value >= 1) || value * scale > 9.0e18) throw bad();
    return static_cast<int64_t>(value * scale);
}

}  // namespace passlens::cli
