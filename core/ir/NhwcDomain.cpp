#include "ir/NhwcDomain.h"

#include <algorithm>

namespace passlens::ir {

const std::vector<std::string>& nhwcOps() {
    static const std::vector<std::string> ops = {
        "AveragePool", "BatchNormalization", "Conv",          "ConvTranspose", "DepthToSpace",
        "GlobalAveragePool", "GlobalMaxPool", "InstanceNormalization", "LRN", "LpPool",
        "MaxPool",     "Resize",             "SpaceToDepth", "Upsample"};
    return ops;
}

bool isNhwcOp(std::string_view opType) {
    const auto& ops = nhwcOps();
    return std::find(ops.begin(), ops.end(), opType) != ops.end();
}

}  // namespace passlens::ir
