#pragma once
// Per-op shape and value rules of the shape engine, one file per op family (rules/*.cpp).
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "shape/ShapeEngine.h"

namespace passlens::shape {

class RuleContext {
public:
    /// `reserved`: symbol names already in the graph's types, which fresh symbols must not take;
    /// `reuse`: this node's own fresh names from an earlier analysis (in its outputs' types), taken
    /// first, in order, so the types stay as they were.
    RuleContext(const ir::Node& node, std::vector<const ValueShape*> inputs, std::vector<ValueShape>& outputs,
                std::vector<FreshSymbol>& fresh, const SizeSymbols* reserved = nullptr, std::vector<std::string> reuse = {})
        : node(node), inputs_(std::move(inputs)), outputs_(outputs), fresh_(fresh), reserved_(reserved), reuse_(std::move(reuse)) {}

    const ir::Node& node;
    size_t inputCount() const { return inputs_.size(); }
    size_t outputCount() const { return outputs_.size(); }
    /// nullptr for an omitted optional input.
    const ValueShape* in(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
    ValueShape& out(size_t i) { return outputs_.at(i); }
    /// A new symbol for a size only the data decides, recorded with the node and the reason.
    DimExpr fresh(const std::string& reason, std::optional<int64_t> atMost = std::nullopt);
    /// The input's elements when all are known constants.
    std::optional<std::vector<int64_t>> constInts(size_t i) const;

private:
    std::vector<const ValueShape*> inputs_;
    std::vector<ValueShape>& outputs_;
    std::vector<FreshSymbol>& fresh_;
    const SizeSymbols* reserved_;
    std::vector<std::string> reuse_;
    size_t reused_ = 0;
};

using Rule = std::function<void(RuleContext&)>;
using RuleTable = std::unordered_map<std::string, Rule>;

void addShapeOpRules(RuleTable& t);      // rules/ShapeOps.cpp
void addElementwiseRules(RuleTable& t);  // rules/Elementwise.cpp
void addNnRules(RuleTable& t);           // rules/NnOps.cpp
/// After an op's rule: exact values and proven bounds of float32 size arithmetic (Cast of a
/// size, products and quotients, Min/Max, Floor/Ceil, Cast back to an integer), and integer
/// elements for the results that are provably whole (rules/FloatSizes.cpp).
void refineFloatSizes(RuleContext& c);

// ---- helpers shared by the rule files (rules/Common.cpp) -------------------------------------
inline constexpr size_t kMaxValueElements = 64;

bool isIntegerType(ir::DataType t);
/// Product of dims (unknown when any is).
Dim product(const std::vector<Dim>& dims);
/// Number of elements when every dim is a constant.
std::optional<int64_t> staticCount(const std::vector<Dim>& dims);
/// A static 1-D shape vector of constants.
std::vector<Dim> constDims(const std::vector<int64_t>& dims);
/// Normalizes a possibly negative axis against `rank`; nullopt when out of range.
std::optional<size_t> normAxis(int64_t axis, size_t rank);
/// Broadcast of two dims (multidirectional): Max(a, b), simplified when one side is 1.
Dim broadcastDim(const Dim& a, const Dim& b);
std::optional<std::vector<Dim>> broadcastShapes(const std::vector<const ValueShape*>& ins);
/// The int value of attribute or input (opset-dependent ops move attributes to inputs).
std::optional<std::vector<int64_t>> intsFromAttrOrInput(const RuleContext& c, const char* attr, size_t input);
/// Dims, integer elements and float elements of a constant tensor.
ValueShape shapeOfTensor(const ir::Tensor& t);
/// Sets output i to a small integer tensor of the given dims and elements.
void setValues(ValueShape& out, ir::DataType t, std::vector<Dim> dims, std::vector<Dim> values);

}  // namespace passlens::shape
