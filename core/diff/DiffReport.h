#pragma once
// The CLI's forms of a model diff: JSON (the contract in DESIGN.md) and a text summary (counts
// per status and per op type, what happened in short, then one line per differing node).
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "diff/ModelDiff.h"

namespace passlens::diff {

/// Counts per status for one op type (the A node's op; B's for B-only rows).
struct OpCounts {
    DiffSummary counts;
    /// Matched rows whose op changed: "com.microsoft.FusedConv" → how many.
    std::map<std::string, size_t> becameOp;
};
std::map<std::string, OpCounts> countsByOpType(const ModelComparison& d);

/// An unmatched Constant node whose value every reader's counterpart gets as an initializer of
/// the same content (ONNX Runtime saves constants that way): a change of form only.
bool constantMovedToInitializer(const GraphComparison& g, const NodeDiff& r);

nlohmann::ordered_json diffToJson(const ModelComparison& d);
std::string diffToText(const ModelComparison& d);
/// One line in words: "removed 49 BatchNormalization; Conv → FusedConv ×12; values changed in 3 Conv".
std::string diffInShort(const ModelComparison& d);

}  // namespace passlens::diff
