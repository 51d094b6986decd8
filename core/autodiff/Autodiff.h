#pragma once
// Reverse-mode automatic differentiation as a graph transformation: appends a loss and a backward
// graph in standard ONNX ops (default domain) to a forward model, so the training graph runs in
// any runtime. Every backward node records where it came from (the forward node it differentiates)
// and which forward tensors it reads ("saved for backward").
//
//   passes::Rewriter& rw = ...;                       // the autodiff pass hands one in
//   autodiff::AutodiffOptions o; o.loss = "mse"; o.wrt = {"all"};
//   autodiff::TrainingGraph t = autodiff::buildTrainingGraph(rw, o);
#include <optional>
#include <string>
#include <vector>

#include "ir/Model.h"
#include "passes/Rewriter.h"

namespace passlens::passes { class Rewriter; }

namespace passlens::autodiff {

struct AutodiffOptions {
    std::string loss = "mse";        ///< mse | cross-entropy | none
    std::string output;              ///< the model output the loss reads; empty = the first output
    std::vector<std::string> wrt = {"all"};  ///< "all" = every float initializer, else value names
};

/// Parses "all" or "a,b,c" for --wrt.
std::vector<std::string> parseWrtList(const std::string& s);

struct TrainingGraph {
    ir::ValueId loss = ir::kNone;
    std::vector<ir::ValueId> wrt;        ///< requested tensors, in output order
    std::vector<ir::ValueId> gradients;  ///< `<name>_grad` outputs, same order
    std::vector<ir::NodeId> lossNodes;
    std::vector<ir::NodeId> backwardNodes;
    std::vector<std::string> zeroGradients;  ///< requested tensors no path connects to the loss
};

/// Adds the loss and the backward graph to the rewriter's graph (a model's main graph with
/// static or symbolic shapes; types must be inferred). Graph outputs become: the original
/// outputs, `loss`, then one `<name>_grad` per requested tensor. Throws Error(Unsupported)
/// naming the first op on a path without a gradient rule, Error(BadInput) for bad options.
TrainingGraph buildTrainingGraph(passes::Rewriter& rw, const AutodiffOptions& options);

/// Builds the training model of `forward` outside a pass pipeline (CLI, tests): runs the
/// autodiff pass, then shape inference.
ir::Model makeTrainingModel(const ir::Model& forward, const AutodiffOptions& options);

// ---- provenance ------------------------------------------------------------------------------
/// Recompute: a copy of a forward node the `recompute` pass placed in the backward pass
/// (gradient checkpointing); its `forwardNode` is the node it copies.
enum class Role { Forward, Loss, Backward, Recompute };
std::string_view roleName(Role r);

/// What a loss or backward node says about itself. Kept in the node's metadata_props (keys
/// `passlens.autodiff.*`) and mirrored in its doc_string, so it survives export and import.
struct NodeProvenance {
    Role role = Role::Forward;
    std::string forwardNode;          ///< display name of the forward node it differentiates
    std::vector<std::string> saved;   ///< forward tensors it reads (saved for backward)
    std::string note;                 ///< why these tensors were saved, when a rule had a choice
};
NodeProvenance provenanceOf(const ir::Node& n);
/// Attaches `p` to node `n` through the rewriter (annotations only: nothing is recorded).
void setProvenance(passes::Rewriter& rw, ir::NodeId n, const NodeProvenance& p);

/// Forward ops with a gradient rule, sorted (docs, tests, the app's dialog).
std::vector<std::string> coveredOps();
bool hasGradientRule(const std::string& domain, const std::string& opType);

}  // namespace passlens::autodiff
