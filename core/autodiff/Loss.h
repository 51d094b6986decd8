#pragma once
// The losses a training graph ends in, built from standard ops so that the backward pass
// differentiates them like any other node:
//   mse            mean((y − y_target)²)                  new input `<y>_target`, y's type
//   cross-entropy  −mean_n log softmax(y, axis 1)[n, label] new input `<y>_labels`, int64 [N]
//   none           y itself (one element), reshaped to a scalar
#include <string>
#include <vector>

#include "ir/Graph.h"

namespace passlens::passes { class Rewriter; }

namespace passlens::autodiff {

struct LossNodes {
    ir::ValueId loss = ir::kNone;   ///< float scalar named "loss"
    ir::ValueId extraInput = ir::kNone;  ///< the target/labels graph input (kNone for none)
    std::vector<ir::NodeId> nodes;
};

/// Appends the loss over graph output `output`. Throws BadInput for an unknown kind or an output
/// that does not fit the loss (e.g. cross-entropy on a rank-3 output, none on 10 elements).
LossNodes addLoss(passes::Rewriter& rw, const std::string& kind, ir::ValueId output, int64_t opset);

}  // namespace passlens::autodiff
