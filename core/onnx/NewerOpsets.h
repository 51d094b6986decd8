#pragma once
// ai.onnx opsets past the ONNX library this build links (Debian 12's libonnx 1.12 knows opsets
// up to 17 and IR version 8). registerNewerOpsets() adds the op schemas of opsets 18–23 to
// libonnx's own registry, written from the ONNX specification (docs/Changelog.md), so the
// checker, shape inference and import validation keep working through one registry: libonnx's
// schemas where it knows the op, ours above them. It is idempotent and thread-safe; every entry
// point that consults the registry (import, shape inference, checker) calls it first.
#include <cstdint>
#include <string>
#include <vector>

namespace passlens::onnxio {

/// The newest ai.onnx opset PassLens reads, runs and writes.
constexpr int64_t kMaxOnnxOpset = 23;
/// The newest ai.onnx opset libonnx itself knows (its version converter stops here).
constexpr int64_t kLibonnxMaxOpset = 17;
/// The newest IR version PassLens reads and writes (fields it does not model are kept verbatim).
constexpr int64_t kMaxIrVersion = 11;
/// The newest IR version libonnx's checker accepts.
constexpr int64_t kLibonnxMaxIrVersion = 8;

/// Registers the schemas (once per process).
void registerNewerOpsets();

/// "Name-version" of every default-domain op version this build adds on top of libonnx, sorted by
/// version then name (for tests and `passlens-cli info --ops`).
std::vector<std::string> newerOpsetSchemaNames();

}  // namespace passlens::onnxio
