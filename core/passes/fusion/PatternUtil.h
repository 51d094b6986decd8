#pragma once
// Small matching helpers shared by the pattern fusions: constants, scalars, producers, readers.
#include <optional>
#include <string>
#include <vector>

#include "ir/Model.h"
#include "passes/Rewriter.h"
#include "passes/match/Match.h"

namespace passlens::passes::pattern {

// Constants and readers come from the shared toolbox (passes/match/Match.h).
using match::constantOf;
using match::readerCount;
using match::readersOf;
using match::readOutside;
using match::subgraphReaders;
/// A float constant as doubles (float32/float64/float16 not handled: float32 and float64 only).
std::optional<std::vector<double>> floatValues(const ir::Graph& g, ir::ValueId v);
/// A constant with exactly one element (any rank), as a double.
std::optional<double> scalarOf(const ir::Graph& g, ir::ValueId v);
/// The producer of `v` when it is a default-domain `opType` node, else kNone.
ir::NodeId producerOf(const ir::Graph& g, ir::ValueId v, const std::string& opType);
/// A default-domain node of the given type.
bool isOp(const ir::Node& n, const std::string& opType);
/// Among the (two) inputs of a binary node, the one that is not `x` (kNone if neither is `x`).
ir::ValueId otherInput(const ir::Node& n, ir::ValueId x);
/// Removes those of `candidates` that are initializers nothing reads any more (the constants a
/// fusion's erased nodes read).
void removeUnreadConstants(Rewriter& rw, const std::vector<ir::ValueId>& candidates, const std::string& why);
/// A Conv's float32 weights and bias after a per-output-channel affine step on its result,
/// y' = (y + pre[c])·scale[c] + post[c]: w'[c] = w[c]·scale[c], b'[c] = (b[c] + pre[c])·scale[c] +
/// post[c] (in double, rounded once). `bias` null means zeros. The one rescaling both Conv folds use
/// (BatchNormalization: pre −mean, scale γ/σ, post β; Mul: scale s; Add: post s).
struct ConvWeights {
    std::vector<float> weights, bias;
};
ConvWeights foldChannelAffine(const ir::Tensor& w, const ir::Tensor* bias, const std::vector<double>& pre,
                              const std::vector<double>& scale, const std::vector<double>& post);
/// The default-domain opset of the model.
int64_t defaultOpset(const ir::Model& m);
/// True when |a - b| <= tol·max(1, |b|).
bool near(double a, double b, double tol = 1e-5);

}  // namespace passlens::passes::pattern
