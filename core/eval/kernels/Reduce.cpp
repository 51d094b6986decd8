// Reductions (Reduce*, ArgMax/ArgMin) and Softmax/LogSoftmax/Hardmax.
#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

enum class Red { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

/// Axes of a reduction: attribute before `inputSince`, else optional input 1.
std::vector<int64_t> reduceAxes(const KernelContext& c, int64_t inputSince, bool* noop) {
    *noop = false;
    std::vector<int64_t> axes;
    if (c.opset < inputSince) axes = c.node.attrInts("axes");
    else if (c.has(1)) axes = toInt64s(c.t(1));
    if (axes.empty() && c.opset >= inputSince && c.node.attrInt("noop_with_empty_axes", 0)) *noop = true;
    return axes;
}

std::vector<TensorPtr> reduce(KernelContext& c, Red kind, int64_t inputSince) {
    if (c.t(0).dtype == DataType::Bool) {  // ReduceMax/ReduceMin-20: any / all, computed on 0/1 bytes
        c.in[0] = castTensor(c.t(0), DataType::UInt8);
        auto out = reduce(c, kind, inputSince);
        return {castTensor(*out[0], DataType::Bool)};
    }
    const Tensor& x = c.t(0);
    const int64_t rank = int64_t(x.dims.size());
    bool noop;
    auto axes = reduceAxes(c, inputSince, &noop);
    const bool keep = c.node.attrInt("keepdims", 1) != 0;
    if (noop) return {c.ptr(0)};
    std::vector<bool> red(rank, axes.empty());
    for (int64_t a : axes) red[normAxis(a, rank, c.where())] = true;
    std::vector<int64_t> outDims, keptDims(rank);
    for (int64_t d = 0; d < rank; ++d) {
        keptDims[d] = red[d] ? 1 : x.dims[d];
        if (!red[d]) outDims.push_back(x.dims[d]);
        else if (keep) outDims.push_back(1);
    }
    OutTensor o(x.dtype, outDims);
    const int64_t outCount = product(keptDims);
    // strides of the kept layout, zero on reduced axes, to map input index → output index
    auto ks = stridesOf(keptDims);
    for (int64_t d = 0; d < rank; ++d)
        if (red[d]) ks[d] = 0;
    dispatchNumeric(x.dtype, c.node.opType, [&](auto tag) {
        using T = decltype(tag);
        std::vector<double> acc(static_cast<size_t>(outCount));
        double init = 0;
        if (kind == Red::Max) init = -std::numeric_limits<double>::infinity();
        if (kind == Red::Min) init = std::numeric_limits<double>::infinity();
        if (kind == Red::Prod) init = 1;
        std::fill(acc.begin(), acc.end(), init);
        std::vector<double> mx;
        if (kind == Red::LogSumExp) {
            mx.assign(acc.size(), -std::numeric_limits<double>::infinity());
        }
        const T* p = x.as<T>();
        const int64_t n = x.elementCount();
        auto walk = [&](auto&& f) {
            std::vector<int64_t> idx(rank, 0);
            int64_t oi = 0;
            for (int64_t e = 0; e < n; ++e) {
                f(oi, static_cast<double>(p[e]));
                for (int64_t d = rank - 1; d >= 0; --d) {
                    ++idx[d];
                    oi += ks[d];
                    if (idx[d] < x.dims[d]) break;
                    oi -= ks[d] * x.dims[d];
                    idx[d] = 0;
                }
            }
        };
        if (kind == Red::LogSumExp) walk([&](int64_t oi, double v) { mx[oi] = std::max(mx[oi], v); });
        walk([&](int64_t oi, double v) {
            double& a = acc[oi];
            switch (kind) {
            case Red::Sum: case Red::Mean: case Red::LogSum: a += v; break;
            case Red::Max: if (v > a || std::isnan(v)) a = v; break;
            case Red::Min: if (v < a || std::isnan(v)) a = v; break;
            case Red::Prod: a *= v; break;
            case Red::L1: a += std::fabs(v); break;
            case Red::L2: case Red::SumSquare: a += v * v; break;
            case Red::LogSumExp: a += std::exp(v - mx[oi]); break;
            }
        });
        const double cnt = outCount ? double(n) / double(outCount) : 0;
        T* y = o.data<T>();
        for (int64_t i = 0; i < outCount; ++i) {
            double v = acc[i];
            if (kind == Red::Mean) v /= cnt;
            else if (kind == Red::L2) v = std::sqrt(v);
            else if (kind == Red::LogSum) v = std::log(v);
            else if (kind == Red::LogSumExp) v = std::log(v) + mx[i];
            if constexpr (std::is_integral_v<T>) {
                if ((kind == Red::Max || kind == Red::Min) && n == 0) v = 0;
                y[i] = static_cast<T>(v);
            } else y[i] = static_cast<T>(v);
        }
    });
    return {o.finish()};
}

std::vector<TensorPtr> softmax(KernelContext& c, int mode /*0 softmax, 1 log, 2 hard*/) {
    const Tensor& x = c.t(0);
    const int64_t rank = int64_t(x.dims.size());
    const int64_t axis = normAxis(c.node.attrInt("axis", c.opset >= 13 ? -1 : 1), rank, c.where());
    // Before opset 13 the input is coerced to 2-D at `axis`; from 13 on one axis is normalized.
    int64_t outer, len, inner;
    if (c.opset < 13) {
        outer = product(x.dims, 0, axis);
        len = product(x.dims, axis);
        inner = 1;
    } else {
        outer = product(x.dims, 0, axis);
        len = x.dims[axis];
        inner = product(x.dims, axis + 1);
    }
    OutTensor o(x.dtype, x.dims);
    dispatchFloat(x.dtype, c.node.opType, [&](auto tag) {
        using T = decltype(tag);
        const T* p = x.as<T>();
        T* y = o.data<T>();
        for (int64_t a = 0; a < outer; ++a)
            for (int64_t b = 0; b < inner; ++b) {
                const int64_t base = a * len * inner + b;
                T m = -std::numeric_limits<T>::infinity();
                int64_t arg = 0;
                for (int64_t i = 0; i < len; ++i)
                    if (p[base + i * inner] > m) { m = p[base + i * inner]; arg = i; }
                if (mode == 2) {
                    for (int64_t i = 0; i < len; ++i) y[base + i * inner] = T(i == arg ? 1 : 0);
                    continue;
                }
                T s = 0;
                for (int64_t i = 0; i < len; ++i) {
                    T e = std::exp(p[base + i * inner] - m);
                    if (mode == 0) y[base + i * inner] = e;
                    s += e;
                }
                if (mode == 0)
                    for (int64_t i = 0; i < len; ++i) y[base + i * inner] /= s;
                else {
                    const T ls = std::log(s);
                    for (int64_t i = 0; i < len; ++i) y[base + i * inner] = p[base + i * inner] - m - ls;
                }
            }
    });
    return {o.finish()};
}

std::vector<TensorPtr> argExtreme(KernelContext& c, bool isMax) {
    const Tensor& x = c.t(0);
    const int64_t rank = int64_t(x.dims.size());
    const int64_t axis = normAxis(c.node.attrInt("axis", 0), rank, c.where());
    const bool keep = c.node.attrInt("keepdims", 1) != 0, last = c.node.attrInt("select_last_index", 0) != 0;
    std::vector<int64_t> outDims = x.dims;
    if (keep) outDims[axis] = 1;
    else outDims.erase(outDims.begin() + axis);
    OutTensor o(DataType::Int64, outDims);
    const int64_t outer = product(x.dims, 0, axis), len = x.dims[axis], inner = product(x.dims, axis + 1);
    dispatchNumeric(x.dtype, c.node.opType, [&](auto tag) {
        using T = decltype(tag);
        const T* p = x.as<T>();
        for (int64_t a = 0; a < outer; ++a)
            for (int64_t b = 0; b < inner; ++b) {
                int64_t best = 0;
                for (int64_t i = 1; i < len; ++i) {
                    const T v = p[(a * len + i) * inner + b], bv = p[(a * len + best) * inner + b];
                    const bool better = isMax ? (v > bv || (last && v == bv)) : (v < bv || (last && v == bv));
                    if (better) best = i;
                }
                o.data<int64_t>()[a * inner + b] = best;
            }
    });
    return {o.finish()};
}

}  // namespace

void registerReduce(KernelRegistry& r) {
    struct R { const char* name; Red kind; int64_t inputSince; };
    const R reds[] = {{"ReduceSum", Red::Sum, 13}, {"ReduceMean", Red::Mean, 18}, {"ReduceMax", Red::Max, 18},
                      {"ReduceMin", Red::Min, 18}, {"ReduceProd", Red::Prod, 18}, {"ReduceL1", Red::L1, 18},
                      {"ReduceL2", Red::L2, 18}, {"ReduceLogSum", Red::LogSum, 18}, {"ReduceLogSumExp", Red::LogSumExp, 18},
                      {"ReduceSumSquare", Red::SumSquare, 18}};
    for (const auto& rd : reds) {
        KernelInfo k;
        k.types = kNumericTypes;
        if (rd.kind == Red::Max || rd.kind == Red::Min) k.types.push_back(DataType::Bool);  // opset 20
        const Red kind = rd.kind;
        const int64_t since = rd.inputSince;
        k.fn = [kind, since](KernelContext& c) { return reduce(c, kind, since); };
        r.add("", rd.name, std::move(k));
    }
    KernelInfo k;
    k.types = kFloatTypes;
    k.fn = [](KernelContext& c) { return softmax(c, 0); };
    r.add("", "Softmax", k);
    k.fn = [](KernelContext& c) { return softmax(c, 1); };
    r.add("", "LogSoftmax", k);
    k.fn = [](KernelContext& c) { return softmax(c, 2); };
    r.add("", "Hardmax", k);
    k.types = kNumericTypes;
    k.fn = [](KernelContext& c) { return argExtreme(c, true); };
    r.add("", "ArgMax", k);
    k.fn = [](KernelContext& c) { return argExtreme(c, false); };
    r.add("", "ArgMin", k);
}

}  // namespace passlens::eval
