#pragma once
// The "passlens.nhwc" operator domain written by the layout pass: declared once here, in the IR (a
// domain is part of the model format, below every module that reads or writes it), and read by
// the layout pass (which ops to convert), the interpreter (which kernels to register) and the
// importer (which ops a file may use in this domain).
//
// Representation: a layout-sensitive op converted to channels-last keeps its op type and every
// attribute and non-data input, moves to this domain (opset 1) and reads/writes its data tensor
// (input 0 / output 0) in NHWC order. Weights, scales, sizes and pads stay exactly as in the NCHW op.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace passlens::ir {

inline constexpr const char* kNhwcDomain = "passlens.nhwc";
inline constexpr int64_t kNhwcDomainVersion = 1;

/// The ops of the domain, in a fixed order: the layout-sensitive ONNX ops the layout pass converts.
const std::vector<std::string>& nhwcOps();
bool isNhwcOp(std::string_view opType);

}  // namespace passlens::ir
