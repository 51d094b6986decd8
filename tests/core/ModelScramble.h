#pragma once
// The model-diff tests' renaming tool: a copy of a model with every node and every inner value
// renamed (the main graph's inputs and outputs keep their names, as any re-export would) and the
// nodes of every graph put in another random, valid topological order. Names carry nothing over,
// so a diff of the two must match by content and structure alone.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "ir/Model.h"

namespace passlens::test {

struct ScrambledModel {
    ir::Model model;
    /// Main graph: A's node id → the new name of the same node in the copy (ground truth).
    std::unordered_map<ir::NodeId, std::string> newNameOf;
};

/// Node ids are kept in the copy; tests export and re-import it to drop them too.
ScrambledModel scrambleModel(const ir::Model& m, uint64_t seed);

/// What removeOneReluAndChangeOneWeight did (ids are the same in the original it was copied from).
struct Mutation {
    size_t graphIndex = 0;  ///< of the Relu's graph, in forEachGraph order (0 = main graph)
    ir::NodeId removedRelu = ir::kNone;
    /// The one node a diff must call `changed`: the reader of the changed initializer, or the
    /// Constant node whose value changed (models such as PP-OCR keep their weights in Constants).
    ir::NodeId changedNode = ir::kNone;
    size_t changedGraphIndex = 0;  ///< its graph, as graphIndex
};
/// Removes the first Relu (any graph; its output not a graph output; readers rewired to its input)
/// and adds 0.25 to the first element of a float weight with one reader (main graph first, then
/// bodies): an initializer, else a Constant node's value. nullopt (model untouched) when there is none.
std::optional<Mutation> removeOneReluAndChangeOneWeight(ir::Model& m);

/// Puts the nodes of `g` (not its bodies) in a random topological order.
void shuffleTopologically(ir::Graph& g, uint64_t seed);

}  // namespace passlens::test
