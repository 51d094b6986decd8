#pragma once
// The algebraic simplification catalog, split by theme. Each rule family is one function that
// looks at one node and either rewrites it (applied remark), stops partway (missed remark) or
// does nothing. A rule that creates a node pushes it on `revisit` so the driver simplifies the
// result again in the same run (the pass stays idempotent).
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "passes/Rewriter.h"

namespace passlens::passes::algebraic {

using Revisit = std::vector<ir::NodeId>;

// ---- helpers (Helpers.cpp) --------------------------------------------------------------------
/// Same element type and provably the same shape: dim by dim equal numbers or the same dim_param.
bool sameStaticType(const ir::Value& a, const ir::Value& b);
/// True when `v` is a constant whose every element equals `k` (float, double or integer types).
bool constantAll(const ir::Value& v, double k);
/// Static dims of a value (from its initializer or its type), if all are known.
/// The elements of an int64/int32 constant input, if `v` is one.
std::optional<std::vector<int64_t>> constantInts(const ir::Graph& g, ir::ValueId v);
/// The one element of an int64/int32 constant of rank `rank` behind `v` (a Gather's k or [k]).
std::optional<int64_t> oneIndexConstant(const ir::Graph& g, ir::ValueId v, size_t rank);
/// Integer list from attribute `attr` (older opsets) or from constant input `slot` (newer ones).
/// nullopt when neither is present or the input is not constant; `present` says which.
std::optional<std::vector<int64_t>> intsFromAttrOrInput(const ir::Graph& g, const ir::Node& n, const char* attr,
                                                        size_t slot, bool* present = nullptr);
/// Axes made non-negative against `rank` (-1: unknown), in their order; nullopt when one is
/// negative and the rank unknown, out of range, or repeated.
std::optional<std::vector<int64_t>> normalizedAxes(const std::vector<int64_t>& axes, int64_t rank);
/// normalizedAxes as a set (Unsqueeze/Squeeze positions, where the order does not matter).
std::optional<std::set<int64_t>> normalizedAxisSet(const std::vector<int64_t>& axes, int64_t rank);
/// Numpy broadcast of two static shapes; nullopt when incompatible.
std::optional<std::vector<int64_t>> broadcastDims(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
bool isIntegerType(ir::DataType t);
/// Readers of the node's output read its input `in`; the node is erased (applied remark).
void bypass(Rewriter& rw, ir::NodeId id, size_t in, const std::string& rule, const std::string& why);
/// `outer(inner(x))` = x: both nodes go (inner only if nothing else reads it). Emits a missed
/// remark instead when the result is graph-visible and x cannot take its place.
void cancelPair(Rewriter& rw, ir::NodeId outer, ir::NodeId inner, ir::ValueId x, const std::string& rule,
                const std::string& why);

/// One output computed element by element from inputs broadcast together (unary math, binary
/// arithmetic and comparisons, Where), every input present.
bool isElementwiseOp(const ir::Node& n);
/// True when a node outside `inside` whose result is used (reaches a graph output or a subgraph)
/// reads `v`, or `v` is itself an output: dead readers an earlier pass left for dce do not count.
bool readOutsideByLiveNodes(const Rewriter& rw, ir::ValueId v, const std::set<ir::NodeId>& inside);
/// When nothing reads `v` any more (no node, no graph output, no subgraph), erases the nodes that
/// computed only it, down the chain: a rule that drops an input leaves no dead branch whose reads
/// would keep another rule's "single reader" from holding in the same run.
void eraseDeadChain(Rewriter& rw, ir::ValueId v, const std::string& why);

// ---- rule families ------------------------------------------------------------------------------
/// Neutral elements, Identity, Dropout, Cast, Relu∘Relu, Neg∘Neg, Concat-of-one, Div→Mul,
/// Transpose rules (NeutralRules.cpp). True when the node was handled.
bool simplifyNeutral(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Reshape∘Reshape, Squeeze/Unsqueeze pairs, no-op Reshape/Slice/Pad/Expand (ShapeRules.cpp).
bool simplifyShapeOps(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Constant chains reassociated, Max(x, LeakyRelu(x)), integer x·0 (ArithmeticRules.cpp).
bool simplifyArithmetic(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Relu(Clip(x)) and Clip(Relu(x)) → one Clip with min max(lo, 0) (ClipRules.cpp).
bool mergeReluClip(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// LSTM/GRU/RNN initial states that are provably zeros of the state's shape are dropped: the
/// op's default for an absent input (RecurrentRules.cpp).
bool dropZeroInitialStates(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Where(c, a, Where(Not(c), b, x)) → Where(c, a, b), its mirror, and Where(c, a, Where(c, b, x))
/// → Where(c, a, x), when the dropped input does not widen the result (WhereRules.cpp).
bool mergeNestedWheres(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Unsqueeze(Unsqueeze(x, A1), A2) → one Unsqueeze when the middle value has no other reader
/// (UnsqueezeMerge.cpp).
bool mergeUnsqueezes(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Two views in a row, one a Reshape with a constant target (Reshape∘Unsqueeze/Squeeze/Flatten and
/// the reverse), become one Reshape (ViewMergeRules.cpp).
bool mergeViews(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Concat(Mul(Split(x)_i, r_i)) on the Split's axis, parts one slice thick, r_i one element →
/// Mul(x, Concat(r_i)); Concat(Split(x)) in order → x (ScaledSplitRules.cpp).
bool concatOfScaledSplit(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Concat of Unsqueezed scalars that parallel elementwise chains compute from elements of one
/// vector → the chain once over the vector (ScalarLanes.cpp).
bool vectorizeScalarLanes(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// vectorizeScalarLanes on the Concat that alone reads this lane Unsqueeze (or Reshape to [1]): the
/// lanes go whole before a rule rewrites one of them (ScalarLanes.cpp).
bool vectorizeLanesOfReader(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Gather(data, idx) of a 1-D data selected from a uniform fill c → ConstantOfShape(Shape(idx), c)
/// when more nodes die than the two it adds (FillRules.cpp).
bool gatherOfFill(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Reshape(Transpose(V(x)), t) with V a Reshape/Unsqueeze that only splits x's dims, groups kept
/// together by the Transpose → Reshape(Transpose(x, perm'), t) or Reshape(x, t) (TransposeViewRules.cpp).
bool viewTransposeReshape(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Unsqueeze(Gather(Shape(x), i), [0]) and Gather(Shape(x), [i]) → Shape(x, start=i, end=i+1) from opset 15
/// (ShapeSliceRules.cpp).
bool unsqueezedDimToShapeSlice(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Unsqueeze(f(Squeeze(x, A), s), A) → f(x, s) for an elementwise f and a one-element s
/// (SqueezedElementwiseRules.cpp).
bool elementwiseThroughSqueeze(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Unsqueeze(f(...), A) → f with each operand unsqueezed, for an elementwise chain whose leaves are
/// single-reader Unsqueezes or one-element constants (UnsqueezeSink.cpp).
bool sinkUnsqueezeThroughElementwise(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Unsqueeze(f(Gather(x, k, axis=a), ...), [a]) → f(Gather(x, [k], axis=a), ...) for a cone of
/// elementwise nodes read only inside it or by such Unsqueezes (UnsqueezeIntoGather.cpp).
bool unsqueezeIntoGather(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Reshape(f(Unsqueeze(x), scalars...), T) → f(Reshape(x, T), scalars...) for an elementwise
/// chain that nothing else reads, T constant without 0 entries (ReshapeSink.cpp).
bool sinkReshapeToUnsqueeze(Rewriter& rw, ir::NodeId id, Revisit& revisit);
/// Slice(Slice(x, ...), ...) on disjoint axes → one Slice, when the ends are both constants or
/// adjacent slices of one Shape (SliceMerge.cpp).
bool mergeSlices(Rewriter& rw, ir::NodeId id, Revisit& revisit);

}  // namespace passlens::passes::algebraic
