#pragma once
// The one overflow-checked product of shapes, used wherever sizes are multiplied out of dims that
// come from a file (memory analysis, workspace sizes, shape assist, folding limits, the
// interpreter's budget): a shape whose product overflows must be an error or an unknown size,
// never a wrapped-around number.
#include <cstdint>
#include <optional>
#include <vector>

namespace passlens::ir {

/// dims multiplied together (times `factor`, e.g. an element size), or nullopt when a dim or the
/// factor is negative or the product overflows int64.
std::optional<int64_t> checkedProduct(const std::vector<int64_t>& dims, int64_t factor = 1);

}  // namespace passlens::ir
