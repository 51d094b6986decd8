#pragma once
// Constant tensors (initializers, Constant values, tensor attributes). Payload bytes live in a
// shared, immutable Buffer: copying a Tensor, a Graph or a whole pass snapshot never copies
// weights. A Buffer may point into a memory-mapped external-data file.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ir/DataType.h"

namespace passlens::ir {

class Buffer {
public:
    Buffer() = default;
    /// Takes ownership of `bytes` without copying them.
    static Buffer fromString(std::string&& bytes);
    static Buffer copyOf(const void* data, size_t size);
    /// A view into memory kept alive by `owner` (e.g. a file mapping).
    static Buffer view(const std::byte* data, size_t size, std::shared_ptr<const void> owner);

    const std::byte* data() const { return data_; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    std::span<const std::byte> bytes() const { return {data_, size_}; }
    /// True when both refer to the same storage (used to test that snapshots share payloads).
    bool sharesStorageWith(const Buffer& o) const { return owner_ && owner_ == o.owner_; }

private:
    const std::byte* data_ = nullptr;
    size_t size_ = 0;
    std::shared_ptr<const void> owner_;
};

/// Where an external-data tensor came from (kept so export can say where it went).
struct ExternalDataRef {
    std::vector<std::pair<std::string, std::string>> entries;  ///< location, offset, length, checksum, ...
    bool present() const { return !entries.empty(); }
};

struct Tensor {
    std::string name;
    DataType dtype = DataType::Undefined;
    std::vector<int64_t> dims;
    Buffer data;                       ///< raw little-endian bytes for every non-string type
    std::vector<std::string> strings;  ///< payload of DataType::String
    std::string docString;
    /// Fields of a newer ONNX than libonnx 1.12 parses (IR 9–11), in wire format, written back verbatim.
    std::string unknownFields;
    ExternalDataRef external;          ///< the original external-data entries, if any

    int64_t elementCount() const;
    size_t byteSize() const { return data.size(); }
    template <class T> const T* as() const { return reinterpret_cast<const T*>(data.data()); }
    /// Bitwise payload and metadata equality (names excluded when `ignoreName`).
    bool sameContents(const Tensor& o, bool ignoreName = true) const;
};

using TensorPtr = std::shared_ptr<const Tensor>;

/// Builders for tests, examples and passes.
TensorPtr makeTensor(DataType t, std::vector<int64_t> dims, const void* bytes, size_t size, std::string name = {});
template <class T>
TensorPtr makeTensorOf(DataType t, std::vector<int64_t> dims, const std::vector<T>& values, std::string name = {}) {
    return makeTensor(t, std::move(dims), values.data(), values.size() * sizeof(T), std::move(name));
}

// Small tensors for code-built models (examples, tests, generated benchmarks, gradient seeds).
/// Deterministic pseudo-random float32 tensor in [lo, hi).
TensorPtr randomFloats(std::vector<int64_t> dims, uint64_t seed, float lo = -1.f, float hi = 1.f, std::string name = {});
TensorPtr floatTensor(std::vector<int64_t> dims, std::vector<float> values, std::string name = {});
TensorPtr int64Tensor(std::vector<int64_t> dims, std::vector<int64_t> values, std::string name = {});

}  // namespace passlens::ir
