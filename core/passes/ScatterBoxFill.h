#pragma once
// Rules of shape-chain-folding for ScatterND writes of one value over a box of a 2-D tensor, the
// way exporters spell `mask[r0:r1, c0:c1] = k` on symbolic sizes (torchvision's and Hugging
// Face's shifted-window attention masks): the indices are the grid of two Slices of Range(0, dim)
// built with Reshape, Expand, Unsqueeze and Concat, the updates a ConstantOfShape.
//  - scatter-fill-noop: writing the value the data is already filled with (ConstantOfShape(k)
//    data, ConstantOfShape(k) updates) is the data.
//  - scatter-box-to-where: the box write becomes Where(rows_in_box & cols_in_box, k, data), each
//    side one or two comparisons of Range(0, dim) (or Range(0, dim) - dim, for negative bounds)
//    with the Slice's constant bounds, shared by every box over the same Range. The index grid,
//    the updates and their Shape chains become dead code.
// Both hold for every value of the symbols: the box is read from the Slices' constant bounds,
// and the grid's shape is checked to be [len(rows), len(cols)] by the shape engine.
#include "passes/Rewriter.h"

namespace passlens::passes {

/// Applies both rules to every ScatterND of the graph `rw` edits (the shape analysis runs only
/// when the graph has a ScatterND).
void rewriteScatterBoxFills(Rewriter& rw);

}  // namespace passlens::passes
