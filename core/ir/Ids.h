#pragma once
// Node and value ids of the graph IR (stable for the life of a graph and its copies).
#include <cstdint>

namespace passlens::ir {

using NodeId = uint32_t;
using ValueId = uint32_t;
inline constexpr uint32_t kNone = UINT32_MAX;  ///< no node / an omitted optional input

}  // namespace passlens::ir
