#pragma once
// The op registry: per op, its pattern kind as in TVM's relay.op.OpPattern (what fusion may do
// with it), whether it may run in place, and a FLOP/byte cost estimate from static shapes.
#include <string>
#include <string_view>

#include "ir/Graph.h"

namespace passlens::analysis {

enum class OpPattern { ElemWise = 0, Broadcast = 1, Injective = 2, CommReduce = 3, OutEWiseFusable = 4, Opaque = 8 };

std::string_view patternName(OpPattern p);
/// The kind of an op type alone (Add counts as Broadcast; see patternOf for the per-node kind).
OpPattern patternOfOpType(std::string_view opType, std::string_view domain = {});
/// Per node: a broadcast op whose inputs all have the result's shape counts as ElemWise.
OpPattern patternOf(const ir::Graph& g, ir::NodeId n);
/// The pattern of the edge `input` -> `consumer` (TVM's edge pattern): the consumer's kind, except
/// that a Broadcast consumer reads an input of the result's (static) shape ElemWise-ly.
OpPattern edgePattern(const ir::Graph& g, ir::NodeId consumer, ir::ValueId input);

/// True when `opType` is elementwise in the in-place sense: output element i depends only on
/// input element i, so the output may overwrite an input of its own size and element type
/// (binary arithmetic: only the same-size input qualifies; the memory planner checks that).
bool isInplaceElementwise(std::string_view opType, std::string_view domain = {});

/// True when the op's result does not depend on the order of its inputs (Add, Mul, Max, ...), so
/// CSE may sort them before comparing.
bool isCommutative(std::string_view opType, std::string_view domain = {});

/// True when running the node twice may give different results (random ops, Dropout fed a
/// training_mode input): such a node may not be recomputed, merged (CSE) or folded.
bool isNondeterministic(const ir::Graph& g, ir::NodeId n);

/// Estimated work of one node: floating-point (or integer) operations and bytes moved (inputs
/// read plus outputs written, initializers included). `known` is false when a shape or element
/// type needed for the estimate is not static, or the op has no cost rule (control flow, custom
/// domains, LSTM, ...): then flops/bytes hold what could be counted and `note` says what is missing.
struct OpCost {
    double flops = 0;
    double bytes = 0;
    bool known = true;
    std::string note;
};
OpCost costOf(const ir::Graph& g, ir::NodeId n);

}  // namespace passlens::analysis
