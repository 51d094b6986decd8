#pragma once
// Symbolic shape inference with value propagation over an IR graph (issue #27).
//
// Every value gets an element type, a rank and one DimExpr per dim (or "unknown"); small integer
// tensors (<= 64 elements: what Shape, Gather, Concat, ... compute) also get their elements as
// DimExprs, so a Shape -> Gather -> Unsqueeze -> Concat -> Reshape chain gives the Reshape a
// symbolic target. Dims libonnx already knows (the value types in the IR) are kept; a static
// number on which the two disagree is reported, not guessed. Data-dependent dims (NonZero, TopK
// with a computed k, ...) get fresh named symbols, never a number.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/Model.h"
#include "shape/DimExpr.h"

namespace passlens::shape {

using Dim = std::optional<DimExpr>;  ///< nullopt = unknown

/// coef * num / den, with num >= 0 and den >= 1 at every binding.
struct RealRatio {
    double coef = 0;
    DimExpr num, den;
};

/// What is proven about one element of a small float32 tensor computed from sizes (an image
/// resize factor, a padded size): its exact value num / 2^shift when every step is exact, and
/// bounds that hold at every binding, rounding included (rules/FloatSizes.cpp).
struct FloatFacts {
    std::optional<DimExpr> exactNum;
    int exactShift = 0;
    std::vector<RealRatio> upper, lower;  ///< value <= each upper, value >= each lower
    bool nonNegative = false;
    /// log2 of the smallest and largest non-zero magnitude: the bounds hold only while every step
    /// stays in float32's normal range, where each rounding is within a factor (1 +- 2^-24).
    double log2Lo = 0, log2Hi = 0;
};

struct ValueShape {
    ir::DataType dtype = ir::DataType::Undefined;
    std::optional<std::vector<Dim>> dims;    ///< nullopt = rank unknown
    std::optional<std::vector<Dim>> values;  ///< elements of a small integer tensor, row-major
    std::optional<std::vector<double>> reals; ///< elements of a small constant float tensor (Resize scales)
    std::optional<std::vector<FloatFacts>> floats; ///< per element of a small float32 tensor, when derived
    std::string why;                         ///< for a value with unknown dims: which node, and why

    bool fullyKnown() const;
    /// Dims as integers when every one is a constant.
    std::optional<std::vector<int64_t>> staticDims() const;
};

/// A symbol the engine made up: a data-dependent size, or an input dim with neither value nor name.
struct FreshSymbol {
    std::string name;
    std::string node;    ///< display name of the node that made it ("" for a graph input)
    std::string reason;
};

struct ShapeAnalysis {
    std::vector<ValueShape> values;            ///< by ValueId (top-level graph)
    std::vector<FreshSymbol> fresh;
    std::vector<std::string> conflicts;        ///< static dims on which libonnx and the engine disagree
    std::vector<std::string> inputSymbols;     ///< symbols named by the graph inputs' dim_params
    SizeSymbols reservedNames;                 ///< dim_params already in the graph's types: fresh names avoid them

    const ValueShape& of(ir::ValueId v) const { return values.at(v); }
};

/// `model`, when given, lets calls of its model-local functions (the fused functions passes
/// create, exporters' functions) be analyzed through their bodies.
ShapeAnalysis analyzeShapes(const ir::Graph& g, const ir::Model* model = nullptr);

/// Writes what the analysis knows into the value types of values computed by nodes: static dims
/// as dim values, symbolic ones as dim_params in sympy spelling. Never replaces a known dim with
/// a less known one. Returns how many values changed.
size_t refineValueTypes(ir::Graph& g, const ShapeAnalysis& a);

/// analyzeShapes + refineValueTypes on the main graph; a failure inside leaves the types as they
/// were and returns a warning.
std::vector<std::string> refineShapesSymbolically(ir::Model& m);

struct ShapeCoverage {
    size_t known = 0;  ///< values (graph inputs and node outputs) with a rank and every dim known
    size_t total = 0;
};
/// Counted on the value types of the main graph (initializers are left out: always known).
ShapeCoverage shapeCoverage(const ir::Graph& g);

}  // namespace passlens::shape
