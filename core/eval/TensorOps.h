#pragma once
// Internal helpers for kernels: writable output tensors, typed access, float16 conversion,
// NumPy broadcasting and dtype dispatch.
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/Error.h"
#include "ir/Tensor.h"

namespace passlens::eval {

/// A tensor under construction; finish() hands its bytes to an immutable ir::Tensor without a copy.
class OutTensor {
public:
    OutTensor(ir::DataType dt, std::vector<int64_t> dims);
    template <class T> T* data() { return reinterpret_cast<T*>(bytes_.data()); }
    int64_t count() const { return count_; }
    const std::vector<int64_t>& dims() const { return dims_; }
    ir::TensorPtr finish();

private:
    ir::DataType dt_;
    std::vector<int64_t> dims_;
    int64_t count_;
    std::string bytes_;
};

int64_t product(const std::vector<int64_t>& dims, size_t from = 0, size_t to = SIZE_MAX);
std::string shapeText(const std::vector<int64_t>& dims);

float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bfloatToFloat(uint16_t h);
uint16_t floatToBfloat(float f);

/// Converts any numeric tensor to float32 / float64 / int64 values.
std::vector<float> toFloats(const ir::Tensor& t);
std::vector<double> toDoubles(const ir::Tensor& t);
std::vector<int64_t> toInt64s(const ir::Tensor& t);
/// A new tensor of `to` with the values of `t` converted (ONNX Cast semantics for numerics).
ir::TensorPtr castTensor(const ir::Tensor& t, ir::DataType to);
/// Same payload, new dims (no copy).
ir::TensorPtr reshaped(const ir::TensorPtr& t, std::vector<int64_t> dims);
ir::TensorPtr scalarInt64(int64_t v);
/// out.dims[i] = t.dims[perm[i]] (a plain, unoptimized transpose for small tensors).
ir::TensorPtr permuted(const ir::Tensor& t, const std::vector<int64_t>& perm);
ir::TensorPtr int64Tensor(const std::vector<int64_t>& v, std::vector<int64_t> dims);

/// NumPy-style broadcast of shapes; throws BadInput naming `what` when incompatible.
std::vector<int64_t> broadcastShapes(const std::vector<std::vector<int64_t>>& shapes, const std::string& what);

/// Iterates an output of `outDims` as rows of its last dim, giving each input's element offset at
/// the row start and its stride along the row (0 where that input broadcasts).
struct BroadcastRows {
    BroadcastRows(const std::vector<int64_t>& outDims, const std::vector<std::vector<int64_t>>& inDims);
    template <class F> void forEach(F&& f) const {
        const size_t r = outDims.size();
        const size_t n = strides.size();
        const int64_t inner = r ? outDims[r - 1] : 1;
        const int64_t rows = inner ? total / inner : 0;
        std::vector<int64_t> idx(r ? r - 1 : 0, 0), off(n, 0), innerStride(n, 0);
        for (size_t k = 0; k < n; ++k) innerStride[k] = r ? strides[k][r - 1] : 0;
        for (int64_t row = 0; row < rows; ++row) {
            f(row * inner, off.data(), innerStride.data(), inner);
            // advance the outer index (all dims but the last)
            for (int64_t d = static_cast<int64_t>(r) - 2; d >= 0; --d) {
                ++idx[d];
                for (size_t k = 0; k < n; ++k) off[k] += strides[k][d];
                if (idx[d] < outDims[d]) break;
                for (size_t k = 0; k < n; ++k) off[k] -= strides[k][d] * outDims[d];
                idx[d] = 0;
            }
        }
    }
    std::vector<int64_t> outDims;
    std::vector<std::vector<int64_t>> strides;
    int64_t total = 1;
};

/// Row-major strides.
std::vector<int64_t> stridesOf(const std::vector<int64_t>& dims);
/// Calls f(offset, index vector) for every element of `dims` in row-major order.
template <class F> void forEachIndex(const std::vector<int64_t>& dims, F&& f) {
    const int64_t n = product(dims);
    std::vector<int64_t> idx(dims.size(), 0);
    for (int64_t e = 0; e < n; ++e) {
        f(e, idx);
        for (int64_t d = int64_t(dims.size()) - 1; d >= 0; --d) {
            if (++idx[d] < dims[d]) break;
            idx[d] = 0;
        }
    }
}
/// Offset (in elements, row-major `strides` of `dims`) of position `pos` with its coordinate on
/// `axis` replaced by `index` (negative counts from the end), as GatherElements/ScatterElements
/// address data; -1 when the index is out of range.
int64_t offsetWithAxisIndex(const std::vector<int64_t>& pos, int64_t axis, int64_t index,
                            const std::vector<int64_t>& dims, const std::vector<int64_t>& strides);
/// Normalizes a possibly negative axis into [0, rank) (or [0, rank] when `inclusive`).
int64_t normAxis(int64_t axis, int64_t rank, const std::string& what, bool inclusive = false);

[[noreturn]] void unsupportedType(const std::string& op, ir::DataType t);

using f16_tag = std::integral_constant<int, 16>;

/// Calls f(T{}) for the C++ type of `dt`. bool maps to `bool`. Float16 is not dispatched
/// (the interpreter computes float16 in float32 before calling kernels).
template <class F>
decltype(auto) dispatchAll(ir::DataType dt, const std::string& op, F&& f) {
    using ir::DataType;
    switch (dt) {
    case DataType::Float: return f(float{});
    case DataType::Double: return f(double{});
    case DataType::Int64: return f(int64_t{});
    case DataType::Int32: return f(int32_t{});
    case DataType::Int16: return f(int16_t{});
    case DataType::Int8: return f(int8_t{});
    case DataType::UInt8: return f(uint8_t{});
    case DataType::UInt16: return f(uint16_t{});
    case DataType::UInt32: return f(uint32_t{});
    case DataType::UInt64: return f(uint64_t{});
    case DataType::Bool: return f(bool{});
    default: unsupportedType(op, dt);
    }
}
/// Numeric types only (no bool).
template <class F>
decltype(auto) dispatchNumeric(ir::DataType dt, const std::string& op, F&& f) {
    if (dt == ir::DataType::Bool) unsupportedType(op, dt);
    return dispatchAll(dt, op, std::forward<F>(f));
}
template <class F>
decltype(auto) dispatchFloat(ir::DataType dt, const std::string& op, F&& f) {
    using ir::DataType;
    switch (dt) {
    case DataType::Float: return f(float{});
    case DataType::Double: return f(double{});
    default: unsupportedType(op, dt);
    }
}

template <class T> constexpr ir::DataType dataTypeOf() {
    using ir::DataType;
    if constexpr (std::is_same_v<T, float>) return DataType::Float;
    else if constexpr (std::is_same_v<T, double>) return DataType::Double;
    else if constexpr (std::is_same_v<T, int64_t>) return DataType::Int64;
    else if constexpr (std::is_same_v<T, int32_t>) return DataType::Int32;
    else if constexpr (std::is_same_v<T, int16_t>) return DataType::Int16;
    else if constexpr (std::is_same_v<T, int8_t>) return DataType::Int8;
    else if constexpr (std::is_same_v<T, uint8_t>) return DataType::UInt8;
    else if constexpr (std::is_same_v<T, uint16_t>) return DataType::UInt16;
    else if constexpr (std::is_same_v<T, uint32_t>) return DataType::UInt32;
    else if constexpr (std::is_same_v<T, uint64_t>) return DataType::UInt64;
    else if constexpr (std::is_same_v<T, bool>) return DataType::Bool;
    else return DataType::Undefined;
}

}  // namespace passlens::eval
