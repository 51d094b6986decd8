#pragma once
// Operator pattern kinds as in TVM's relay.op.OpPattern: what fusion may do with an op.
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

}  // namespace passlens::analysis
