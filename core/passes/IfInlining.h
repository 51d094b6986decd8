#pragma once
// if-known-condition: an If whose condition is a constant runs one branch whatever the inputs, so
// that branch's nodes take the If's place in the enclosing graph (the other branch is dropped).
// Used by shape-chain-folding (conditions that are constant on arrival) and constant-folding
// (conditions folded there), as ONNX Runtime's constant folding does with If.
#include "passes/Rewriter.h"

namespace passlens::passes {

/// Inlines every If of the rewriter's graph whose condition is a constant (an initializer or a
/// Constant node) holding one bool. Subgraphs read outer values by name, so a branch whose values
/// would shadow or be renamed under a subgraph's reads is refused, with a missed remark naming
/// the value, as is a top-level output whose name cannot be kept. Returns how many Ifs were inlined.
size_t inlineIfsWithKnownCondition(Rewriter& rw);

}  // namespace passlens::passes
