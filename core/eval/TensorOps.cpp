#include "eval/TensorOps.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/MemoryBudget.h"
#include "ir/DataType.h"
#include "ir/Type.h"

namespace passlens::eval {

using namespace passlens::ir;

OutTensor::OutTensor(DataType dt, std::vector<int64_t> dims) : dt_(dt), dims_(std::move(dims)) {
    for (int64_t d : dims_)
        if (d < 0) throwBadInput("negative dimension in output shape " + shapeText(dims_));
    count_ = checkedElementCount(dims_, "output " + shapeText(dims_));
    const size_t es = elementSize(dt);
    if (es == 0) unsupportedType("tensor", dt);
    bytes_.assign(static_cast<size_t>(checkedAllocation(dims_, es)), '\0');
}

TensorPtr OutTensor::finish() {
    auto t = std::make_shared<Tensor>();
    t->dtype = dt_;
    t->dims = std::move(dims_);
    t->data = Buffer::fromString(std::move(bytes_));
    return t;
}

int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t i = from; i < std::min(to, dims.size()); ++i) p *= dims[i];
    return p;
}

std::string shapeText(const std::vector<int64_t>& dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
    return s + "]";
}

float halfToFloat(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
    if (exp == 0) {
        if (mant == 0) bits = sign;
        else {  // subnormal
            exp = 1;
            while (!(mant & 0x400)) { mant <<= 1; --exp; }
            mant &= 0x3ff;
            bits = sign | ((exp + 112) << 23) | (mant << 13);
        }
    } else if (exp == 31) bits = sign | 0x7f800000 | (mant << 13);
    else bits = sign | ((exp + 112) << 23) | (mant << 13);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint16_t floatToHalf(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint16_t sign = uint16_t((x >> 16) & 0x8000);
    const uint32_t absx = x & 0x7fffffff;
    if (absx >= 0x7f800000) return sign | 0x7c00 | (absx > 0x7f800000 ? 0x200 : 0);
    if (absx >= 0x477ff000) return sign | 0x7c00;  // rounds to >= 65520: inf
    if (absx < 0x38800000) {                        // subnormal or zero in half
        float af;
        std::memcpy(&af, &absx, 4);
        return sign | uint16_t(std::nearbyint(af * 16777216.0f));  // 2^24, round-to-even
    }
    // normal: round mantissa to nearest even
    uint32_t mant = absx & 0x7fffff;
    uint32_t exp = (absx >> 23) - 112;
    uint32_t h = (exp << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
    return sign | uint16_t(h);
}

float bfloatToFloat(uint16_t h) {
    uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint16_t floatToBfloat(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);
    const uint32_t rounding = 0x7fff + ((x >> 16) & 1);
    return uint16_t((x + rounding) >> 16);
}

namespace {
template <class D>
std::vector<D> convertAll(const Tensor& t) {
    const int64_t n = t.elementCount();
    std::vector<D> out(static_cast<size_t>(n));
    if (t.dtype == DataType::Float16) {
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<D>(halfToFloat(t.as<uint16_t>()[i]));
        return out;
    }
    if (t.dtype == DataType::BFloat16) {
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<D>(bfloatToFloat(t.as<uint16_t>()[i]));
        return out;
    }
    dispatchAll(t.dtype, "convert", [&](auto tag) {
        using T = decltype(tag);
        const T* p = t.as<T>();
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<D>(p[i]);
    });
    return out;
}

template <class To, class From>
To castValue(From v) {
    if constexpr (std::is_same_v<To, bool>) return v != From(0);
    else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
        // Out-of-range float→int is undefined in C++; saturate like common runtimes do on x86.
        if (std::isnan(v)) return To(0);
        if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
        if (v <= static_cast<From>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
        return static_cast<To>(v);
    } else return static_cast<To>(v);
}
}  // namespace

std::vector<float> toFloats(const Tensor& t) { return convertAll<float>(t); }
std::vector<double> toDoubles(const Tensor& t) { return convertAll<double>(t); }
std::vector<int64_t> toInt64s(const Tensor& t) {
    if (isFloatingPoint(t.dtype)) {
        auto d = convertAll<double>(t);
        std::vector<int64_t> out(d.size());
        for (size_t i = 0; i < d.size(); ++i) out[i] = castValue<int64_t>(d[i]);
        return out;
    }
    return convertAll<int64_t>(t);
}

TensorPtr castTensor(const Tensor& t, DataType to) {
    const int64_t n = t.elementCount();
    OutTensor out(to, t.dims);
    if (t.dtype == to) {
        if (t.byteSize()) std::memcpy(out.data<char>(), t.data.data(), t.byteSize());
        return out.finish();
    }
    auto fromFloatish = t.dtype == DataType::Float16 || t.dtype == DataType::BFloat16;
    if (to == DataType::Float16 || to == DataType::BFloat16) {
        auto f = toFloats(t);
        auto* o = out.data<uint16_t>();
        for (int64_t i = 0; i < n; ++i) o[i] = to == DataType::Float16 ? floatToHalf(f[i]) : floatToBfloat(f[i]);
        return out.finish();
    }
    if (fromFloatish) {
        auto f = toFloats(t);
        dispatchAll(to, "Cast", [&](auto tag) {
            using To = decltype(tag);
            To* o = out.data<To>();
            for (int64_t i = 0; i < n; ++i) o[i] = castValue<To>(f[i]);
        });
        return out.finish();
    }
    dispatchAll(t.dtype, "Cast", [&](auto ftag) {
        using From = decltype(ftag);
        const From* p = t.as<From>();
        dispatchAll(to, "Cast", [&](auto ttag) {
            using To = decltype(ttag);
            To* o = out.data<To>();
            for (int64_t i = 0; i < n; ++i) o[i] = castValue<To>(p[i]);
        });
    });
    return out.finish();
}

TensorPtr reshaped(const TensorPtr& t, std::vector<int64_t> dims) {
    auto r = std::make_shared<Tensor>();
    r->dtype = t->dtype;
    r->dims = std::move(dims);
    r->data = t->data;
    r->strings = t->strings;
    return r;
}

TensorPtr permuted(const Tensor& t, const std::vector<int64_t>& perm) {
    std::vector<int64_t> dims;
    for (int64_t p : perm) dims.push_back(t.dims[p]);
    OutTensor o(t.dtype, dims);
    const size_t es = elementSize(t.dtype);
    auto st = stridesOf(t.dims);
    forEachIndex(dims, [&](int64_t e, const std::vector<int64_t>& pos) {
        int64_t off = 0;
        for (size_t d = 0; d < dims.size(); ++d) off += pos[d] * st[perm[d]];
        std::memcpy(o.data<char>() + e * es, t.as<char>() + off * es, es);
    });
    return o.finish();
}

TensorPtr scalarInt64(int64_t v) { return makeTensorOf<int64_t>(DataType::Int64, {}, {v}); }
TensorPtr int64Tensor(const std::vector<int64_t>& v, std::vector<int64_t> dims) {
    return makeTensorOf<int64_t>(DataType::Int64, std::move(dims), v);
}

std::vector<int64_t> broadcastShapes(const std::vector<std::vector<int64_t>>& shapes, const std::string& what) {
    size_t rank = 0;
    for (const auto& s : shapes) rank = std::max(rank, s.size());
    std::vector<int64_t> out(rank, 1);
    for (const auto& s : shapes) {
        const size_t off = rank - s.size();
        for (size_t i = 0; i < s.size(); ++i) {
            int64_t& o = out[off + i];
            if (s[i] == o || s[i] == 1) continue;
            if (o == 1) o = s[i];
            else {
                std::string msg = what + ": shapes cannot broadcast:";
                for (const auto& x : shapes) msg += " " + shapeText(x);
                throwBadInput(msg);
            }
        }
    }
    return out;
}

BroadcastRows::BroadcastRows(const std::vector<int64_t>& od, const std::vector<std::vector<int64_t>>& inDims) : outDims(od) {
    const size_t r = outDims.size();
    total = product(outDims);
    for (const auto& s : inDims) {
        std::vector<int64_t> st(r, 0);
        int64_t stride = 1;
        for (int64_t i = static_cast<int64_t>(s.size()) - 1; i >= 0; --i) {
            const size_t od_i = r - s.size() + static_cast<size_t>(i);
            st[od_i] = s[i] == 1 ? 0 : stride;
            stride *= s[i];
        }
        strides.push_back(std::move(st));
    }
}

int64_t offsetWithAxisIndex(const std::vector<int64_t>& pos, int64_t axis, int64_t index,
                            const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
    int64_t off = 0;
    for (size_t d = 0; d < pos.size(); ++d) {
        int64_t p = pos[d];
        if (int64_t(d) == axis) {
            p = index < 0 ? index + dims[d] : index;
            if (p < 0 || p >= dims[d]) return -1;
        }
        off += p * strides[d];
    }
    return off;
}

std::vector<int64_t> stridesOf(const std::vector<int64_t>& dims) {
    std::vector<int64_t> s(dims.size(), 1);
    for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
    return s;
}

int64_t normAxis(int64_t axis, int64_t rank, const std::string& what, bool inclusive) {
    const int64_t lim = inclusive ? rank + 1 : rank;
    if (axis < -lim || axis >= lim)
        throwBadInput(what + ": axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    return axis < 0 ? axis + lim : axis;
}

void unsupportedType(const std::string& op, DataType t) {
    throwUnsupported(op + ": element type " + std::string(dataTypeName(t)) + " is not supported by the interpreter");
}

}  // namespace passlens::eval
