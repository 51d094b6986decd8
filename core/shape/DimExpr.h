#pragma once
// Symbolic tensor dimensions: integer polynomials over named symbols with opaque floor-division,
// Mod, Min and Max atoms. Expressions are hash-consed in canonical form (monomials sorted, like
// terms merged, integer coefficients), so two expressions built the same way, or simplified to
// the same form, are the same object and compare with ==. Symbols stand for integers >= 1 (a dim
// that is a name); every simplification holds for every such binding, never only "usually"
// (floor(8*h/8) = h, but floor(h/8)*8 stays as it is).
//
// The text form is ONNX Runtime's symbolic_shape_infer.py spelling (sympy's str): "2*seq",
// "floor(height/32)", "Max(a, b)", "Mod(w, 7)", "h*w + 1"; parseDimExpr reads it back, so dim_param
// strings written by PassLens or by ONNX Runtime round-trip.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace passlens::shape {

struct ExprNode;

/// Thrown when an operation has no integer result: coefficient overflow, division or Mod by zero,
/// or an expression grown past its size limit. Callers turn it into "unknown dim".
struct ExprError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

using Bindings = std::map<std::string, int64_t, std::less<>>;

class DimExpr {
public:
    DimExpr();  ///< the constant 0
    static DimExpr constant(int64_t v);
    /// A named dim whose values are >= `atLeast`: 1 for an input's dim_param (a tensor the model
    /// is fed has no empty dims), 0 for a size the data decides (NonZero may find nothing).
    /// `atMost`, when given, is an upper bound the model itself proves (a size computed by
    /// arithmetic whose range is known), never an assumption about tensor sizes.
    static DimExpr symbol(std::string_view name, int64_t atLeast = 1, std::optional<int64_t> atMost = std::nullopt);

    bool isConstant() const;
    std::optional<int64_t> constantValue() const;
    /// The name when this expression is exactly one symbol.
    std::optional<std::string> symbolName() const;

    /// Value at a binding of the symbols; nullopt when a symbol is unbound, a division is by zero
    /// or the arithmetic overflows.
    std::optional<int64_t> evaluate(const Bindings& b) const;
    /// A proven lower bound over all bindings with symbols >= 1, when one is found (interval
    /// arithmetic over the terms, narrowed by case analysis on Min/Max atoms).
    std::optional<int64_t> lowerBound() const;
    /// A proven upper bound over all bindings with symbols >= 1, when one is found.
    std::optional<int64_t> upperBound() const;
    void collectSymbols(std::set<std::string>& out) const;
    std::string toString() const;

    /// Hash-consing id: equal ids mean the same canonical expression.
    uint64_t id() const;
    bool operator==(const DimExpr& o) const { return node_ == o.node_; }
    bool operator!=(const DimExpr& o) const { return node_ != o.node_; }

    friend DimExpr operator+(const DimExpr& a, const DimExpr& b);
    friend DimExpr operator-(const DimExpr& a, const DimExpr& b);
    friend DimExpr operator*(const DimExpr& a, const DimExpr& b);
    friend DimExpr operator-(const DimExpr& a);

    const ExprNode* node() const { return node_; }
    explicit DimExpr(const ExprNode* n) : node_(n) {}

private:
    const ExprNode* node_;
};

/// floor(a / b); throws ExprError when b is the constant 0.
DimExpr floorDiv(const DimExpr& a, const DimExpr& b);
/// a - b*floor(a/b) (the sign of b, like Python's % and ONNX Mod with fmod=0).
DimExpr mod(const DimExpr& a, const DimExpr& b);
DimExpr min(const DimExpr& a, const DimExpr& b);
DimExpr max(const DimExpr& a, const DimExpr& b);

/// The parts of an expression, for code that rebuilds it from integer operations (ShapeCodegen).
enum class AtomKind { Symbol, FloorDiv, Mod, Min, Max };
struct AtomParts {
    AtomKind kind = AtomKind::Symbol;
    DimExpr a, b;  ///< operands of FloorDiv, Mod, Min, Max (0 for a symbol)
};
/// When `e` is exactly one atom (a symbol, floor(a/b), Mod(a, b), Min, Max; coefficient 1).
std::optional<AtomParts> atomOf(const DimExpr& e);
struct Monomial {
    int64_t coef = 0;
    std::vector<DimExpr> factors;  ///< atoms, one entry per power (x**2 = {x, x}); empty = constant term
};
/// `e` as a sum of monomials in canonical order (the constant term last when there is one).
std::vector<Monomial> monomialsOf(const DimExpr& e);

/// Names of symbols that are sizes of tensors the model is fed (>= 1); see dimFromParam.
using SizeSymbols = std::set<std::string, std::less<>>;

/// Parses the spelling toString() writes (and sympy's: "ceil(x/2)", "x//2", "x**2" too).
/// nullopt on a syntax error. Names are symbols >= 1, or with `sizeSymbols`, >= 1 only when listed
/// there and >= 0 otherwise.
std::optional<DimExpr> parseDimExpr(std::string_view text, const SizeSymbols* sizeSymbols = nullptr);
/// A dim_param as an expression: a plain name is a symbol; text that looks like an expression
/// (has a space, '(', '*' or '/') is parsed, and falls back to one symbol named by the whole text.
/// With `sizeSymbols` (the model's input dims), any other name is a symbol >= 0: libonnx's
/// "unk__7" or a data-dependent size written back by the engine may be 0 (no detections).
DimExpr dimFromParam(std::string_view param, const SizeSymbols* sizeSymbols = nullptr);

}  // namespace passlens::shape

template <>
struct std::hash<passlens::shape::DimExpr> {
    size_t operator()(const passlens::shape::DimExpr& e) const noexcept { return std::hash<uint64_t>()(e.id()); }
};
