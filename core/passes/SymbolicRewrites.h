#pragma once
// Rules of shape-chain-folding that rewrite computations over symbolic sizes using what the shape
// engine knows of their elements and shapes. Each holds for every value of the symbols: it is
// decided on DimExpr equality (the same expression is the same number at every binding) and on
// constant bounds, never on a binding.
//
// gather-permuted-vector (SymbolicVectorGather.cpp): a small int64 vector computed by a chain
// that only rearranges elements (Concat with constants, Reshape, Slice, Transpose, Cast; F.pad's
// flipped pads) whose every element is an element of a vector earlier in the chain becomes one
// Gather of that vector with constant indices ([0, 0, 0, Mod(-w, 4), 0, Mod(-h, 4)] → pads
// [0, 0, 0, 0, 0, Mod(-h, 4), Mod(-w, 4), 0]), when two nodes or more go.
//
// ScatterND writes of one value over a box of a 2-D tensor (ScatterBoxFill.cpp), the way
// exporters spell `mask[r0:r1, c0:c1] = k` on symbolic sizes (torchvision's and Hugging Face's
// shifted-window attention masks): the indices are the grid of two Slices of Range(0, dim) built
// with Reshape, Expand, Unsqueeze and Concat, the updates one value (ConstantOfShape).
//  - scatter-fill-noop: writing the value the data already holds everywhere is the data.
//  - scatter-box-to-where: the box write becomes Where(rows_in_box & cols_in_box, k, data), each
//    side one or two comparisons of Range(0, dim) (or Range(0, dim) - dim, for negative bounds)
//    with the Slice's constant bounds, shared by every box over a Range of the same length. The
//    index grid, the updates and their Shape chains become dead code. The grid's shape is checked
//    to be [len(rows), len(cols)] by the shape engine.
//
// box-grid-labels (BoxGridLabels.cpp): a chain of Where(conjunction of comparisons, k, data)
// writes, each Where's data the one below (read by nothing else live), whose comparisons test two
// integer coordinates against constants (what scatter-box-to-where leaves): every box is an
// interval of each coordinate, the interval ends cut each coordinate's integers into segments, and
// the table of segment pairs holds each write (later ones win) or, where no box writes, the
// data's one known value. When every cell is row[i] + col[j] exactly in the data's type (checked
// cell by cell), the chain is Add(label(coord0), label(coord1)), each label a Where chain over one
// comparison per segment boundary (torchvision's labels 3i + j: 8 Where, 10 And and 8 comparisons
// over zeros become 9 nodes). Decided on constants only: the segments cover every integer the
// coordinate's type holds, so empty slices (pad_H < window) change nothing. Refused when the
// result would not have the coordinates' broadcast shape (the shape engine's DimExprs), when a
// label would not vary, and when the chain's exclusive nodes are not more than the labels add.
//
// outer-sum-windows (OuterSumWindows.cpp): Transpose(Reshape(row + col, [P/k1, k1, Q/k2, k2]),
// [0, 2, 1, 3]) with row [P, 1] and col [Q] (the labels box-grid-labels writes, cut into windows)
// is Reshape(row, [-1, 1, k1, 1]) + Reshape(col, [1, -1, 1, k2]) when the engine proves k1 | P
// and the target's first dim P/k1 (same for Q): the computed target and the Transpose go.
//
// window-type-table (WindowTypeTable.cpp): a value computed only from Range(0, N, 1) indices (N
// = n·k, k a constant window the engine proves divides N) through x = i - N, comparisons of x with
// constants that agree for every x <= -k - 1, elementwise steps with one-element constants, and
// reshapes / transposes that move whole window and in-window axes, is the same in every window
// but the last of each axis (there x = a - k at any n; elsewhere x <= -k - 1). Swin's shifted-
// window mask [1, n_h·n_w, 1, k², k²] is thus its value at n = 2, a 2 x 2 table of window types,
// repeated by Pad(table, pads = n - 2 at the start of each window axis, mode edge) and reshaped:
// ~23 nodes per shifted stage become 5 (the pads read the window counts from dims computed
// before; when a count may be 0, Pad by n - 1 and a Slice of the first, ONNX Runtime's edge Pad
// never makes an empty tensor). Each step's form is checked against the engine's dims, and the
// original is evaluated at 1 to 3 windows per axis and compared with the table; refused (with a
// remark) when a comparison separates windows before the last, the index or the offset is read
// other than so, or the index is never cut into windows.
//
// Shape vectors rebuilt from their expressions (ShapeVectorRebuild.cpp, with ShapeCodegen):
//  - reshape-target-from-symbols: a Reshape whose computed target is known gets a constant one
//    when it can: entries that copy the input's dim at the same position become 0 (allowzero = 0),
//    one symbolic entry -1 when every other output dim is provably >= 1 ([batch*seq, 64] →
//    [-1, 64]).
//  - rebuild-shape-vector: every int64 vector computed by shape arithmetic and read elsewhere (a
//    Reshape target, Pad's pads, a Slice end, a Range limit, ...) is rebuilt by ShapeCodegen from
//    its elements' expressions (Shape slices of existing values, one node per operation over
//    whole vectors), all at once when that removes more nodes than it adds (the arithmetic they
//    shared dies together), else one vector at a time where that pays.
// Float32 size arithmetic (FloatSizeRewrites.cpp), on what the engine proves of integer sizes:
//  - min-of-ordered-sizes: Min (or Max) of f(a) and f(b), one chain f of steps monotone on
//    [+0, +inf] (Cast to float, Mul/Div by a positive constant, k / x, Reciprocal, Floor) over
//    integer sizes with a <= b proven at every binding, is f(a) or f(b) (which one depends on
//    whether f inverts): torchvision's min(64 / min(h, w), 64 / max(h, w)) is 64 / max(h, w)
//    when min_size = max_size. Rounding is monotone, so ties and near-ties decide alike.
//  - cast-round-trip: Cast to float of an integer that is a whole float (the output of a
//    Floor/Ceil/Round, never -0.0) cast to an integer and proven within +-2^24 is that float
//    value: the resized size read back from the Resize's shape is the Floor that made it.
#include "passes/Rewriter.h"
#include "shape/ShapeEngine.h"

namespace passlens::passes {

/// `a` is an analysis of the graph from before earlier rewrites of the same sweep: values those
/// made are not in it and are treated as unknown; every other value still computes what it says.
void gatherPermutedVectors(Rewriter& rw, const shape::ShapeAnalysis& a, bool captures);
void rewriteScatterBoxFills(Rewriter& rw, const shape::ShapeAnalysis& a, bool captures);
/// Analyzes the graph itself, and only when some Where chain's values already qualify.
void rewriteBoxGridLabels(Rewriter& rw, bool captures);

/// The one value every element of `v` holds, when that is evident (a ConstantOfShape, or a
/// constant with equal elements, seen through Reshape/Expand/Unsqueeze/...): a one-element
/// tensor, else nullptr.
ir::TensorPtr uniformFill(const ir::Graph& g, ir::ValueId v);

/// The analysis' dims of `v` when each is known (ShapeVectorRebuild.cpp).
std::optional<std::vector<shape::DimExpr>> knownDims(const shape::ShapeAnalysis& a, ir::ValueId v);
/// The elements of a computed (not initializer) int64 scalar or 1-D value when the engine knows
/// every one, at most 64 (ShapeVectorRebuild.cpp).
std::optional<std::vector<shape::DimExpr>> knownElements(const ir::Graph& g, const shape::ShapeAnalysis& a, ir::ValueId v);

void rewriteFloatSizes(Rewriter& rw, const shape::ShapeAnalysis& a, bool captures);

void rebuildShapeVectors(Rewriter& rw, const shape::ShapeAnalysis& a, bool captures);
/// Analyzes the graph itself, and only when some Range(0, N, 1) of a computed N is read by steps.
void tabulateWindowTypes(Rewriter& rw, bool captures);
/// Analyzes the graph itself, and only when some Transpose of a Reshape of an Add qualifies.
void splitOuterSumWindows(Rewriter& rw);

}  // namespace passlens::passes
