#pragma once
// `passlens-cli shapes` and the Python module's Model.shapes(): every value's element type and dims
// from the symbolic shape engine (core/shape), the elements of small integer tensors (what a shape
// chain computes), the symbols, and for each dim it could not express the node that left it and why.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "ir/Model.h"
#include "shape/ShapeEngine.h"

namespace passlens::report {

struct ShapesReport {
    shape::ShapeAnalysis analysis;
    shape::Bindings bindings;                  ///< --dim values the dims are evaluated at
    std::vector<std::string> inputSymbols;     ///< sorted
    std::vector<std::string> unknownBindings;  ///< bindings no graph input has a dim for
};

/// Analyzes `model` (imported without pinning, so dims stay expressions) at `bindings`.
ShapesReport analyzeModelShapes(const ir::Model& model, const shape::Bindings& bindings);
/// `passlens-cli shapes --json` (dump(1) of this object).
nlohmann::ordered_json shapesToJson(const ir::Model& model, const ShapesReport& r);
/// `passlens-cli shapes`'s text.
std::string shapesToText(const ir::Model& model, const ShapesReport& r);

}  // namespace passlens::report
