#pragma once
// Plain-language text for "Why Not Fused?": what a fusion-group rule code means, why an op is
// Opaque (from the op-pattern table), whether a refusal rests on a shape that is not known, and
// node paths shortened for reading. Plain functions over core data, tested without a GUI.
#include <string>

#include "ir/Graph.h"
#include "pipeline/Explain.h"

namespace passlens::ui {

/// "…/self_attention/MatMul_1" for a long path-like name (its last two segments); short names as they are.
std::string shortNodeName(const std::string& name);
/// `text` with every occurrence of the consideration's node and edge names shortened.
std::string shortenNames(std::string text, const analysis::FusionConsideration& c);

/// One sentence for a fusion-group rule code, the reason before any node path ("fusion never
/// crosses an Opaque op"). Empty for codes it does not know (the message then stands alone).
std::string ruleHeadline(const std::string& rule);

/// Why the op-pattern table calls `opType` Opaque, in one sentence (Shape reads only metadata,
/// Softmax needs a full row, a custom domain has no rule, ...).
std::string opaqueReason(const std::string& opType, const std::string& domain);

/// The value, if any, whose unknown shape the refusal rests on: a group stopped at an edge into a
/// broadcast op (Add, Mul, ...) that would read it ElemWise-ly if the shapes were proven equal.
/// kNone when the refusal holds whatever the shapes are.
ir::ValueId unknownShapeBehind(const ir::Graph& g, const analysis::FusionConsideration& c, ir::NodeId node);

/// "Pattern rewrites" for pass remarks, "onnxruntime transformers" for the ort-* passes,
/// "Fusion groups (TVM FuseOps)" for fusion-groups.
std::string sectionOf(const analysis::FusionConsideration& c);

}  // namespace passlens::ui
