#pragma once
// "[1, 2, 3]": integer lists (dims, axes, pads) as remarks and error messages quote them.
#include <cstdint>
#include <string>
#include <vector>

namespace passlens::ir {

inline std::string intsText(const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

}  // namespace passlens::ir
