#pragma once
// Opset upgrade of the default (ai.onnx) domain with libonnx's version converter: the model goes
// out to protobuf, through onnx::version_conversion::ConvertVersion, and back into the IR. What
// the converter does not carry (functions, training info, the source path) is restored from the
// original, so the model is otherwise intact.
#include <cstdint>

#include "ir/Model.h"

namespace passlens::onnxio {

/// Highest default-domain opset the converter reaches (libonnx's own, 17 on Debian 12).
int64_t maxSupportedOpset();

/// Returns `m` with its default-domain opset raised to `target`. A model already at `target`
/// comes back unchanged. Throws Error(BadInput) for a target below the model's opset or above
/// maxSupportedOpset(), and Error(Unsupported) naming the failing op when the converter refuses.
/// Warnings the converter prints (custom domains it skips) go to the result's `warnings`.
ir::Model upgradeOpset(const ir::Model& m, int64_t target);

}  // namespace passlens::onnxio
