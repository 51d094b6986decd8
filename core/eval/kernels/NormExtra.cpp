// Normalizations beyond Batch/Layer/Instance: GroupNormalization (18: scale/bias per group; 21:
// per channel), RMSNormalization (23), LpNormalization, MeanVarianceNormalization. Statistics are
// accumulated in double, which satisfies every stash_type.
#include <cmath>

#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

/// Writes doubles into a new tensor of the float type `dt`.
TensorPtr floatsOut(DataType dt, const std::vector<int64_t>& dims, const std::vector<double>& v, const std::string& op) {
    OutTensor o(dt, dims);
    dispatchFloat(dt, op, [&](auto tag) {
        using T = decltype(tag);
        for (size_t i = 0; i < v.size(); ++i) o.data<T>()[i] = static_cast<T>(v[i]);
    });
    return o.finish();
}

bool checkStash(const Node& n, int64_t, std::string* why) {
    const int64_t st = n.attrInt("stash_type", 1);
    if (st == 1 || st == 11) return true;  // float or double: the double accumulation covers both
    if (why) *why = "stash_type=" + std::to_string(st) + " is not supported (1 or 11)";
    return false;
}

std::vector<TensorPtr> groupNorm(KernelContext& c) {
    const Tensor& x = c.t(0);
    if (x.dims.size() < 2) c.fail("X must have rank >= 2, got " + shapeText(x.dims));
    const int64_t N = x.dims[0], C = x.dims[1], sp = product(x.dims, 2);
    const int64_t G = c.node.attrInt("num_groups", 0);
    if (G <= 0 || C % G) c.fail("num_groups=" + std::to_string(G) + " does not divide the " + std::to_string(C) + " channels");
    const double eps = c.node.attrFloat("epsilon", 1e-5f);
    const auto scale = toDoubles(c.t(1)), bias = toDoubles(c.t(2));
    // Opset 18 gives one scale/bias per group, 21 one per channel.
    const int64_t perGroupUntil = 21;
    const int64_t want = c.opset < perGroupUntil ? G : C;
    if (int64_t(scale.size()) != want || int64_t(bias.size()) != want)
        c.fail("scale and bias must have " + std::to_string(want) + (c.opset < perGroupUntil ? " (num_groups)" : " (channels)") +
               " values at this opset, got " + std::to_string(scale.size()) + " and " + std::to_string(bias.size()));
    const auto xv = toDoubles(x);
    std::vector<double> y(xv.size());
    const int64_t cg = C / G, len = cg * sp;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t g = 0; g < G; ++g) {
            const int64_t base = (n * C + g * cg) * sp;
            double m = 0, v = 0;
            for (int64_t i = 0; i < len; ++i) m += xv[base + i];
            m /= double(len);
            for (int64_t i = 0; i < len; ++i) v += (xv[base + i] - m) * (xv[base + i] - m);
            v /= double(len);
            const double rs = 1.0 / std::sqrt(v + eps);
            for (int64_t i = 0; i < len; ++i) {
                const int64_t p = c.opset < perGroupUntil ? g : g * cg + i / sp;
                y[base + i] = (xv[base + i] - m) * rs * scale[p] + bias[p];
            }
        }
    return {floatsOut(x.dtype, x.dims, y, "GroupNormalization")};
}

std::vector<TensorPtr> rmsNorm(KernelContext& c) {
    const Tensor& x = c.t(0);
    const int64_t rank = int64_t(x.dims.size());
    if (rank == 0) c.fail("X must not be a scalar");
    const int64_t axis = normAxis(c.node.attrInt("axis", -1), rank, c.where());
    const double eps = c.node.attrFloat("epsilon", 1e-5f);
    const int64_t outer = product(x.dims, 0, axis), inner = product(x.dims, axis);
    const std::vector<int64_t> normDims(x.dims.begin() + axis, x.dims.end());
    const Tensor& s = c.t(1);
    // scale broadcasts (unidirectionally) to the normalized dims
    if (s.dims.size() > normDims.size() || broadcastShapes({normDims, s.dims}, c.where()) != normDims)
        c.fail("scale " + shapeText(s.dims) + " does not broadcast to the normalized shape " + shapeText(normDims));
    std::vector<double> scale(static_cast<size_t>(inner));
    const auto sv = toDoubles(s);
    BroadcastRows br(normDims, {s.dims});
    br.forEach([&](int64_t off, const int64_t* in, const int64_t* st, int64_t n) {
        for (int64_t j = 0; j < n; ++j) scale[off + j] = sv[in[0] + j * st[0]];
    });
    const auto xv = toDoubles(x);
    std::vector<double> y(xv.size());
    for (int64_t a = 0; a < outer; ++a) {
        const double* p = xv.data() + a * inner;
        double ms = 0;
        for (int64_t i = 0; i < inner; ++i) ms += p[i] * p[i];
        const double r = 1.0 / std::sqrt(ms / double(inner) + eps);
        for (int64_t i = 0; i < inner; ++i) y[a * inner + i] = p[i] * r * scale[i];
    }
    return {floatsOut(x.dtype, x.dims, y, "RMSNormalization")};
}

std::vector<TensorPtr> lpNorm(KernelContext& c) {
    const Tensor& x = c.t(0);
    const int64_t rank = int64_t(x.dims.size());
    const int64_t axis = normAxis(c.node.attrInt("axis", -1), rank, c.where());
    const int64_t p = c.node.attrInt("p", 2);
    const int64_t outer = product(x.dims, 0, axis), len = x.dims[axis], inner = product(x.dims, axis + 1);
    const auto xv = toDoubles(x);
    std::vector<double> y(xv.size());
    for (int64_t a = 0; a < outer; ++a)
        for (int64_t b = 0; b < inner; ++b) {
            double s = 0;
            for (int64_t i = 0; i < len; ++i) {
                const double v = xv[(a * len + i) * inner + b];
                s += p == 1 ? std::fabs(v) : v * v;
            }
            const double norm = p == 1 ? s : std::sqrt(s);
            // a zero vector stays zero (as the reference implementation and ONNX Runtime do)
            for (int64_t i = 0; i < len; ++i) {
                const int64_t e = (a * len + i) * inner + b;
                y[e] = norm == 0 ? 0.0 : xv[e] / norm;
            }
        }
    return {floatsOut(x.dtype, x.dims, y, "LpNormalization")};
}

std::vector<TensorPtr> meanVarianceNorm(KernelContext& c) {
    const Tensor& x = c.t(0);
    const int64_t rank = int64_t(x.dims.size());
    auto axes = c.node.attrInts("axes", {0, 2, 3});
    std::vector<bool> red(rank, false);
    for (int64_t a : axes) red[normAxis(a, rank, c.where())] = true;
    std::vector<int64_t> kept(rank);
    for (int64_t d = 0; d < rank; ++d) kept[d] = red[d] ? 1 : x.dims[d];
    auto ks = stridesOf(kept);
    for (int64_t d = 0; d < rank; ++d)
        if (red[d]) ks[d] = 0;
    const int64_t outCount = product(kept), n = x.elementCount();
    const double cnt = outCount ? double(n) / double(outCount) : 1;
    const auto xv = toDoubles(x);
    std::vector<double> sum(static_cast<size_t>(outCount), 0.0), sq(static_cast<size_t>(outCount), 0.0);
    auto outIndex = [&](const std::vector<int64_t>& pos) {
        int64_t oi = 0;
        for (int64_t d = 0; d < rank; ++d) oi += pos[d] * ks[d];
        return oi;
    };
    forEachIndex(x.dims, [&](int64_t e, const std::vector<int64_t>& pos) {
        const int64_t oi = outIndex(pos);
        sum[oi] += xv[e];
        sq[oi] += xv[e] * xv[e];
    });
    std::vector<double> y(xv.size());
    // The spec's function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9).
    forEachIndex(x.dims, [&](int64_t e, const std::vector<int64_t>& pos) {
        const int64_t oi = outIndex(pos);
        const double m = sum[oi] / cnt, var = sq[oi] / cnt - m * m;
        y[e] = (xv[e] - m) / (std::sqrt(std::max(var, 0.0)) + 1e-9);
    });
    return {floatsOut(x.dtype, x.dims, y, "MeanVarianceNormalization")};
}

}  // namespace

void registerNormExtra(KernelRegistry& r) {
    KernelInfo k;
    k.types = kFloatTypes;
    k.sinceMin = 18;
    k.check = checkStash;
    k.fn = groupNorm;
    r.add("", "GroupNormalization", k);
    k.sinceMin = 23;
    k.fn = rmsNorm;
    r.add("", "RMSNormalization", k);
    k.sinceMin = 1;
    k.check = [](const Node& n, int64_t, std::string* why) {
        const int64_t p = n.attrInt("p", 2);
        if (p == 1 || p == 2) return true;
        if (why) *why = "p=" + std::to_string(p) + " is not supported (1 or 2)";
        return false;
    };
    k.fn = lpNorm;
    r.add("", "LpNormalization", k);
    k.check = nullptr;
    k.sinceMin = 9;
    k.fn = meanVarianceNorm;
    r.add("", "MeanVarianceNormalization", k);
}

}  // namespace passlens::eval
