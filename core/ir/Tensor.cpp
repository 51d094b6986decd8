#include "ir/Tensor.h"

#include <cstring>
#include <random>

#include "ir/CheckedMath.h"
#include "ir/Type.h"

namespace passlens::ir {

Buffer Buffer::fromString(std::string&& bytes) {
    auto owner = std::make_shared<std::string>(std::move(bytes));
    Buffer b;
    b.data_ = reinterpret_cast<const std::byte*>(owner->data());
    b.size_ = owner->size();
    b.owner_ = std::move(owner);
    return b;
}

Buffer Buffer::copyOf(const void* data, size_t size) {
    return fromString(std::string(static_cast<const char*>(data), size));
}

Buffer Buffer::view(const std::byte* data, size_t size, std::shared_ptr<const void> owner) {
    Buffer b;
    b.data_ = data;
    b.size_ = size;
    b.owner_ = std::move(owner);
    return b;
}

int64_t Tensor::elementCount() const {
    // Hot (kernels and tests call it per element): the error text is built only for a bad shape.
    if (auto n = checkedProduct(dims)) return *n;
    return checkedElementCount(dims, "tensor '" + name + "'");
}

bool Tensor::sameContents(const Tensor& o, bool ignoreName) const {
    if (!ignoreName && name != o.name) return false;
    if (dtype != o.dtype || dims != o.dims || strings != o.strings) return false;
    if (data.size() != o.data.size()) return false;
    return data.size() == 0 || std::memcmp(data.data(), o.data.data(), data.size()) == 0;
}

TensorPtr makeTensor(DataType t, std::vector<int64_t> dims, const void* bytes, size_t size, std::string name) {
    auto tensor = std::make_shared<Tensor>();
    tensor->name = std::move(name);
    tensor->dtype = t;
    tensor->dims = std::move(dims);
    tensor->data = Buffer::copyOf(bytes, size);
    return tensor;
}

TensorPtr randomFloats(std::vector<int64_t> dims, uint64_t seed, float lo, float hi, std::string name) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = dist(rng);
    return makeTensorOf(DataType::Float, std::move(dims), v, std::move(name));
}

TensorPtr floatTensor(std::vector<int64_t> dims, std::vector<float> values, std::string name) {
    return makeTensorOf(DataType::Float, std::move(dims), values, std::move(name));
}

TensorPtr int64Tensor(std::vector<int64_t> dims, std::vector<int64_t> values, std::string name) {
    return makeTensorOf(DataType::Int64, std::move(dims), values, std::move(name));
}

}  // namespace passlens::ir
