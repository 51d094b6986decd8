// Indexing and selection kernels: TopK, CumSum, Trilu, OneHot, ScatterElements, ScatterND,
// GatherND, NonZero, EyeLike.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

KernelInfo info(KernelFn fn, std::vector<DataType> types, int64_t since = 1, bool f16 = true) {
    KernelInfo k;
    k.fn = std::move(fn);
    k.types = std::move(types);
    k.sinceMin = since;
    k.float16ViaFloat = f16;
    return k;
}

std::vector<DataType> allPlainTypes() {
    auto t = kAllTypes;
    return t;
}

/// Writes `n` elements of `src` into `dst` under a Scatter reduction ('none' replaces).
void scatterInto(char* dst, const char* src, int64_t n, DataType dt, const std::string& reduction) {
    if (reduction == "none") {
        std::memcpy(dst, src, size_t(n) * elementSize(dt));
        return;
    }
    if (dt == DataType::Float16) {  // reduce in float, store back as half
        uint16_t* d = reinterpret_cast<uint16_t*>(dst);
        const uint16_t* s = reinterpret_cast<const uint16_t*>(src);
        for (int64_t i = 0; i < n; ++i) {
            float a = halfToFloat(d[i]);
            const float b = halfToFloat(s[i]);
            if (reduction == "add") a += b;
            else if (reduction == "mul") a *= b;
            else if (reduction == "max") a = std::max(a, b);
            else a = std::min(a, b);
            d[i] = floatToHalf(a);
        }
        return;
    }
    dispatchAll(dt, "Scatter", [&](auto tag) {
        using T = decltype(tag);
        T* d = reinterpret_cast<T*>(dst);
        const T* s = reinterpret_cast<const T*>(src);
        for (int64_t i = 0; i < n; ++i) {
            if constexpr (std::is_same_v<T, bool>) {
                if (reduction == "add" || reduction == "max") d[i] = d[i] || s[i];
                else d[i] = d[i] && s[i];  // mul, min
            } else {
                if (reduction == "add") d[i] = static_cast<T>(d[i] + s[i]);
                else if (reduction == "mul") d[i] = static_cast<T>(d[i] * s[i]);
                else if (reduction == "max") d[i] = std::max(d[i], s[i]);
                else d[i] = std::min(d[i], s[i]);
            }
        }
    });
}

/// reduction: add/mul since opset 16, max/min since 18.
bool checkScatterReduction(const Node& n, int64_t opset, std::string* why) {
    const auto red = n.attrString("reduction", "none");
    if (red == "none" || ((red == "add" || red == "mul") && opset >= 16) || ((red == "max" || red == "min") && opset >= 18))
        return true;
    if (why) *why = "reduction '" + red + "' is not supported at opset " + std::to_string(opset);
    return false;
}

}  // namespace

void registerIndexing(KernelRegistry& r) {
    r.add("", "TopK", info([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        const int64_t rank = int64_t(x.dims.size());
        const int64_t axis = normAxis(c.node.attrInt("axis", -1), rank, c.where());
        const int64_t k = c.opset < 10 ? c.node.attrInt("k", 1) : toInt64s(c.t(1))[0];
        const bool largest = c.node.attrInt("largest", 1) != 0, sorted = c.node.attrInt("sorted", 1) != 0;
        (void)sorted;  // results are always sorted, which the spec allows
        const int64_t len = x.dims[axis];
        if (k < 0 || k > len) c.fail("k=" + std::to_string(k) + " is out of range for axis length " + std::to_string(len));
        auto dims = x.dims;
        dims[axis] = k;
        OutTensor vals(x.dtype, dims), idxs(DataType::Int64, dims);
        const int64_t outer = product(x.dims, 0, axis), inner = product(x.dims, axis + 1);
        dispatchNumeric(x.dtype, "TopK", [&](auto tag) {
            using T = decltype(tag);
            const T* p = x.as<T>();
            std::vector<int64_t> order(len);
            for (int64_t a = 0; a < outer; ++a)
                for (int64_t b = 0; b < inner; ++b) {
                    std::iota(order.begin(), order.end(), 0);
                    auto at = [&](int64_t i) { return p[(a * len + i) * inner + b]; };
                    // ties: the lower index first
                    std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
                        return largest ? at(i) > at(j) : at(i) < at(j);
                    });
                    for (int64_t i = 0; i < k; ++i) {
                        vals.data<T>()[(a * k + i) * inner + b] = at(order[i]);
                        idxs.data<int64_t>()[(a * k + i) * inner + b] = order[i];
                    }
                }
        });
        return {vals.finish(), idxs.finish()};
    }, kNumericTypes));

    r.add("", "CumSum", info([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        const int64_t rank = int64_t(x.dims.size());
        const int64_t axis = normAxis(toInt64s(c.t(1))[0], rank, c.where());
        const bool exclusive = c.node.attrInt("exclusive", 0) != 0, reverse = c.node.attrInt("reverse", 0) != 0;
        const int64_t outer = product(x.dims, 0, axis), len = x.dims[axis], inner = product(x.dims, axis + 1);
        OutTensor o(x.dtype, x.dims);
        dispatchNumeric(x.dtype, "CumSum", [&](auto tag) {
            using T = decltype(tag);
            const T* p = x.as<T>();
            T* y = o.data<T>();
            for (int64_t a = 0; a < outer; ++a)
                for (int64_t b = 0; b < inner; ++b) {
                    T acc = 0;
                    for (int64_t s = 0; s < len; ++s) {
                        const int64_t i = reverse ? len - 1 - s : s;
                        const int64_t off = (a * len + i) * inner + b;
                        if (exclusive) { y[off] = acc; acc = static_cast<T>(acc + p[off]); }
                        else { acc = static_cast<T>(acc + p[off]); y[off] = acc; }
                    }
                }
        });
        return {o.finish()};
    }, {DataType::Float, DataType::Double, DataType::Float16, DataType::Int32, DataType::Int64, DataType::UInt32, DataType::UInt64}, 11));

    r.add("", "Trilu", info([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        if (x.dims.size() < 2) c.fail("input must have rank >= 2");
        const int64_t k = c.has(1) ? toInt64s(c.t(1))[0] : 0;
        const bool upper = c.node.attrInt("upper", 1) != 0;
        const int64_t R = x.dims[x.dims.size() - 2], C = x.dims.back();
        const size_t es = elementSize(x.dtype);
        OutTensor o(x.dtype, x.dims);
        std::memset(o.data<char>(), 0, o.count() * es);
        for (int64_t m = 0; m < product(x.dims, 0, x.dims.size() - 2); ++m)
            for (int64_t i = 0; i < R; ++i)
                for (int64_t j = 0; j < C; ++j) {
                    const bool keep = upper ? j - i >= k : j - i <= k;
                    if (keep) std::memcpy(o.data<char>() + ((m * R + i) * C + j) * es, x.as<char>() + ((m * R + i) * C + j) * es, es);
                }
        return {o.finish()};
    }, allPlainTypes(), 14, false));

    r.add("", "OneHot", info([](KernelContext& c) -> std::vector<TensorPtr> {
        auto idx = toInt64s(c.t(0));
        const int64_t depth = toInt64s(c.t(1))[0];
        const Tensor& values = c.t(2);
        if (values.elementCount() != 2) c.fail("values must hold [off, on]");
        const int64_t rank = int64_t(c.t(0).dims.size());
        const int64_t axis = normAxis(c.node.attrInt("axis", -1), rank + 1, c.where());
        std::vector<int64_t> dims = c.t(0).dims;
        dims.insert(dims.begin() + axis, depth);
        OutTensor o(values.dtype, dims);
        const size_t es = elementSize(values.dtype);
        const int64_t outer = product(c.t(0).dims, 0, axis), inner = product(c.t(0).dims, axis);
        for (int64_t a = 0; a < outer; ++a)
            for (int64_t d = 0; d < depth; ++d)
                for (int64_t b = 0; b < inner; ++b) {
                    int64_t v = idx[a * inner + b];
                    if (v < 0) v += depth;
                    std::memcpy(o.data<char>() + ((a * depth + d) * inner + b) * es, values.as<char>() + (v == d ? es : 0), es);
                }
        return {o.finish()};
    }, kNumericTypes, 9, false));

    {
        KernelInfo k = info([](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& x = c.t(0);
            const Tensor& idxT = c.t(1);
            const Tensor& upd = c.t(2);
            const int64_t rank = int64_t(x.dims.size());
            const int64_t axis = normAxis(c.node.attrInt("axis", 0), rank, c.where());
            if (upd.dtype != x.dtype || upd.dims != idxT.dims) c.fail("updates must match indices in shape and data in type");
            if (int64_t(idxT.dims.size()) != rank) c.fail("indices rank differs from data rank");
            auto idx = toInt64s(idxT);
            const size_t es = elementSize(x.dtype);
            const std::string red = c.node.attrString("reduction", "none");
            OutTensor o(x.dtype, x.dims);
            std::memcpy(o.data<char>(), x.data.data(), x.byteSize());
            auto xs = stridesOf(x.dims);
            forEachIndex(idxT.dims, [&](int64_t e, const std::vector<int64_t>& pos) {
                const int64_t off = offsetWithAxisIndex(pos, axis, idx[e], x.dims, xs);
                if (off < 0) c.fail("index out of range");
                scatterInto(o.data<char>() + off * es, upd.as<char>() + e * es, 1, x.dtype, red);
            });
            return {o.finish()};
        }, allPlainTypes(), 11, false);
        k.check = checkScatterReduction;
        r.add("", "ScatterElements", k);

        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& x = c.t(0);
            const Tensor& idxT = c.t(1);
            const Tensor& upd = c.t(2);
            auto idx = toInt64s(idxT);
            if (idxT.dims.empty()) c.fail("indices must have rank >= 1");
            const int64_t q = idxT.dims.back();
            if (q > int64_t(x.dims.size())) c.fail("index depth exceeds data rank");
            const size_t es = elementSize(x.dtype);
            const int64_t slice = product(x.dims, q);
            if (upd.dtype != x.dtype || upd.elementCount() != product(idxT.dims, 0, idxT.dims.size() - 1) * slice)
                c.fail("updates do not match indices and data");
            const std::string red = c.node.attrString("reduction", "none");
            OutTensor o(x.dtype, x.dims);
            std::memcpy(o.data<char>(), x.data.data(), x.byteSize());
            auto xs = stridesOf(x.dims);
            const int64_t n = product(idxT.dims, 0, idxT.dims.size() - 1);
            for (int64_t i = 0; i < n; ++i) {
                int64_t off = 0;
                for (int64_t d = 0; d < q; ++d) {
                    int64_t p = idx[i * q + d];
                    if (p < 0) p += x.dims[d];
                    if (p < 0 || p >= x.dims[d]) c.fail("index out of range");
                    off += p * xs[d];
                }
                scatterInto(o.data<char>() + off * es, upd.as<char>() + i * slice * es, slice, x.dtype, red);
            }
            return {o.finish()};
        };
        r.add("", "ScatterND", k);
    }

    r.add("", "GatherND", info([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        const Tensor& idxT = c.t(1);
        const int64_t b = c.node.attrInt("batch_dims", 0);
        auto idx = toInt64s(idxT);
        if (idxT.dims.empty() || b < 0 || b >= int64_t(idxT.dims.size())) c.fail("indices rank and batch_dims do not fit");
        const int64_t q = idxT.dims.back();
        if (b + q > int64_t(x.dims.size())) c.fail("index depth exceeds data rank");
        std::vector<int64_t> dims(idxT.dims.begin(), idxT.dims.end() - 1);
        dims.insert(dims.end(), x.dims.begin() + b + q, x.dims.end());
        const size_t es = elementSize(x.dtype);
        const int64_t slice = product(x.dims, b + q), batch = product(x.dims, 0, b);
        const int64_t perBatch = product(idxT.dims, b, idxT.dims.size() - 1), batchStride = product(x.dims, b);
        auto xs = stridesOf(x.dims);
        OutTensor o(x.dtype, dims);
        char* out = o.data<char>();
        for (int64_t bi = 0; bi < batch; ++bi)
            for (int64_t i = 0; i < perBatch; ++i) {
                int64_t off = bi * batchStride;
                for (int64_t d = 0; d < q; ++d) {
                    int64_t p = idx[(bi * perBatch + i) * q + d];
                    if (p < 0) p += x.dims[b + d];
                    if (p < 0 || p >= x.dims[b + d]) c.fail("index out of range");
                    off += p * xs[b + d];
                }
                std::memcpy(out, x.as<char>() + off * es, slice * es);
                out += slice * es;
            }
        return {o.finish()};
    }, allPlainTypes(), 12, false));

    r.add("", "Compress", info([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        auto cond = toInt64s(c.t(1));
        const size_t es = elementSize(x.dtype);
        const Node& n = c.node;
        if (!n.attr("axis")) {
            std::vector<char> out;
            const int64_t total = x.elementCount();
            for (int64_t i = 0; i < std::min<int64_t>(total, int64_t(cond.size())); ++i)
                if (cond[i]) out.insert(out.end(), x.as<char>() + i * es, x.as<char>() + (i + 1) * es);
            const int64_t cnt = int64_t(out.size() / es);
            return {makeTensor(x.dtype, {cnt}, out.data(), out.size())};
        }
        const int64_t rank = int64_t(x.dims.size());
        const int64_t axis = normAxis(n.attrInt("axis", 0), rank, c.where());
        const int64_t outer = product(x.dims, 0, axis), len = x.dims[axis], inner = product(x.dims, axis + 1);
        std::vector<int64_t> keep;
        for (int64_t i = 0; i < std::min<int64_t>(len, int64_t(cond.size())); ++i)
            if (cond[i]) keep.push_back(i);
        auto dims = x.dims;
        dims[axis] = int64_t(keep.size());
        OutTensor o(x.dtype, dims);
        char* out = o.data<char>();
        for (int64_t a = 0; a < outer; ++a)
            for (int64_t i : keep) {
                std::memcpy(out, x.as<char>() + (a * len + i) * inner * es, inner * es);
                out += inner * es;
            }
        return {o.finish()};
    }, allPlainTypes(), 9, false));

    r.add("", "NonZero", info([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        auto v = toDoubles(x);
        const int64_t rank = int64_t(x.dims.size());
        std::vector<std::vector<int64_t>> coords(rank);
        int64_t count = 0;
        forEachIndex(x.dims, [&](int64_t e, const std::vector<int64_t>& pos) {
            if (v[e] == 0) return;
            ++count;
            for (int64_t d = 0; d < rank; ++d) coords[d].push_back(pos[d]);
        });
        std::vector<int64_t> flat;
        for (auto& c2 : coords) flat.insert(flat.end(), c2.begin(), c2.end());
        return {int64Tensor(flat, {rank, count})};
    }, kAllTypes, 9));

    r.add("", "EyeLike", info([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        if (x.dims.size() != 2) c.fail("input must be 2-D");
        const DataType dt = c.node.attr("dtype") ? static_cast<DataType>(c.node.attrInt("dtype", 1)) : x.dtype;
        const int64_t k = c.node.attrInt("k", 0);
        std::vector<double> v(product(x.dims), 0.0);
        for (int64_t i = 0; i < x.dims[0]; ++i)
            if (i + k >= 0 && i + k < x.dims[1]) v[i * x.dims[1] + i + k] = 1.0;
        return {castTensor(*makeTensorOf<double>(DataType::Double, x.dims, v), dt)};
    }, kAllTypes, 9, false));
}

}  // namespace passlens::eval
