#pragma once
// Inputs for commands that run a model (run, verify): one place decides between an input folder
// and seeded random inputs, and warns about symbolic dims nobody pinned.
#include <cstdint>
#include <iosfwd>
#include <vector>

#include "cli/Command.h"
#include "ir/Model.h"

namespace passlens::cli {

/// --input-dir D when given (ONNX test-data layout), else seeded random inputs (--seed, default 0)
/// with a note on `err` for every symbolic dim not pinned by --dim (it is taken as 1).
std::vector<ir::TensorPtr> commandInputs(const ir::Model& model, const Args& args, std::ostream& err);

/// --max-memory BYTES (suffixes K, M, G, T: powers of 1024) as bytes; 0 when absent (the
/// interpreter's default, half the physical memory). A usage error when malformed.
int64_t maxMemoryOption(const Args& args);

}  // namespace passlens::cli
