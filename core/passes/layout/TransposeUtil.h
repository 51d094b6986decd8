#pragma once
// Small helpers shared by the layout and transpose passes: permutations and permuted tensors.
#include <optional>
#include <vector>

#include "ir/Graph.h"
#include "passes/match/Match.h"

namespace passlens::passes::layoututil {

using Perm = std::vector<int64_t>;

bool isIdentity(const Perm& p);
/// Each of 0..size-1 exactly once (a Transpose's perm from a file may be anything).
bool isPermutation(const Perm& p);
Perm invert(const Perm& p);
/// transpose(transpose(x, first), second) == transpose(x, result).
Perm compose(const Perm& first, const Perm& second);
/// The perm of a Transpose node (reversed dims when the attribute is absent and rank is known);
/// nullopt when it is not a permutation or does not fit the input's known rank.
std::optional<Perm> permOf(const ir::Graph& g, ir::NodeId n);
// Constants and ranks come from the shared toolbox (passes/match/Match.h).
using match::constantOf;
using match::rankOf;
/// out.dims[i] = in.dims[p[i]].
ir::TensorPtr transposeTensor(const ir::Tensor& t, const Perm& p);
/// The type of transpose(v, p) when v's shape is known, else an unknown type.
ir::TypeInfo permutedType(const ir::TypeInfo& t, const Perm& p);
/// The values of an int32/int64 tensor (axes, pads, starts), nullopt for other types.
std::optional<std::vector<int64_t>> intValues(const ir::Tensor& t);
/// A 1-D int32 or int64 tensor holding `values` (other dtypes fall back to int64).
ir::TensorPtr intTensor(ir::DataType dtype, const std::vector<int64_t>& values);

}  // namespace passlens::passes::layoututil
