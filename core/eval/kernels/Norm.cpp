// BatchNormalization (inference, and training mode from opset 14: batch statistics, running
// mean/var outputs), LayerNormalization, InstanceNormalization.
#include <cmath>

#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

void registerNorm(KernelRegistry& r) {
    {
        KernelInfo k;
        k.types = kFloatTypes;
        k.sinceMin = 6;
        k.check = [](const Node& n, int64_t opset, std::string* why) {
            if (opset < 9 && n.attrInt("spatial", 1) != 1) {
                if (why) *why = "spatial=0 is not supported";
                return false;
            }
            if (opset >= 14 && n.attrInt("training_mode", 0)) return true;
            if (opset < 14 && n.outputs.size() > 1) {
                if (why) *why = "training outputs (mean/var) are not supported";
                return false;
            }
            for (size_t i = 1; i < n.outputs.size(); ++i)
                if (n.outputs[i] != kNone) {
                    if (why) *why = "training outputs (mean/var) are not supported";
                    return false;
                }
            return true;
        };
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& x = c.t(0);
            if (x.dims.size() < 2) c.fail("input must have rank >= 2");
            const int64_t N = x.dims[0], C = x.dims[1], sp = product(x.dims, 2);
            const double eps = c.node.attrFloat("epsilon", 1e-5f);
            auto scale = toDoubles(c.t(1)), bias = toDoubles(c.t(2)), mean = toDoubles(c.t(3)), var = toDoubles(c.t(4));
            if (int64_t(scale.size()) != C || int64_t(bias.size()) != C || int64_t(mean.size()) != C || int64_t(var.size()) != C)
                c.fail("scale/B/mean/var must have C=" + std::to_string(C) + " values");
            const bool training = c.node.attrInt("training_mode", 0) != 0;
            std::vector<double> runningMean = mean, runningVar = var;
            if (training) {
                // Batch statistics per channel (population variance); the running statistics
                // move towards them by 1 − momentum.
                const double momentum = c.node.attrFloat("momentum", 0.9f), count = double(N * sp);
                for (int64_t ch = 0; ch < C; ++ch) {
                    double m = 0, v = 0;
                    dispatchFloat(x.dtype, "BatchNormalization", [&](auto tag) {
                        using T = decltype(tag);
                        for (int64_t n = 0; n < N; ++n)
                            for (int64_t i = 0; i < sp; ++i) m += double(x.as<T>()[(n * C + ch) * sp + i]);
                        m /= count;
                        for (int64_t n = 0; n < N; ++n)
                            for (int64_t i = 0; i < sp; ++i) {
                                const double d = double(x.as<T>()[(n * C + ch) * sp + i]) - m;
                                v += d * d;
                            }
                        v /= count;
                    });
                    runningMean[size_t(ch)] = mean[size_t(ch)] * momentum + m * (1 - momentum);
                    runningVar[size_t(ch)] = var[size_t(ch)] * momentum + v * (1 - momentum);
                    mean[size_t(ch)] = m;
                    var[size_t(ch)] = v;
                }
            }
            OutTensor o(x.dtype, x.dims);
            dispatchFloat(x.dtype, "BatchNormalization", [&](auto tag) {
                using T = decltype(tag);
                for (int64_t ch = 0; ch < C; ++ch) {
                    const double a = scale[ch] / std::sqrt(var[ch] + eps), b = bias[ch] - mean[ch] * a;
                    for (int64_t n = 0; n < N; ++n) {
                        const T* p = x.as<T>() + (n * C + ch) * sp;
                        T* y = o.data<T>() + (n * C + ch) * sp;
                        for (int64_t i = 0; i < sp; ++i) y[i] = static_cast<T>(p[i] * a + b);
                    }
                }
            });
            std::vector<TensorPtr> outs{o.finish()};
            for (const auto* stats : {&runningMean, &runningVar}) {
                if (outs.size() >= c.node.outputs.size()) break;
                OutTensor t(c.t(3).dtype, {C});
                dispatchFloat(c.t(3).dtype, "BatchNormalization", [&](auto tag) {
                    using T = decltype(tag);
                    for (int64_t ch = 0; ch < C; ++ch) t.data<T>()[ch] = static_cast<T>((*stats)[size_t(ch)]);
                });
                outs.push_back(t.finish());
            }
            return outs;
        };
        r.add("", "BatchNormalization", std::move(k));
    }
    {
        KernelInfo k;
        k.types = kFloatTypes;
        k.sinceMin = 17;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& x = c.t(0);
            const int64_t rank = int64_t(x.dims.size());
            const int64_t axis = normAxis(c.node.attrInt("axis", -1), rank, c.where());
            const double eps = c.node.attrFloat("epsilon", 1e-5f);
            const int64_t outer = product(x.dims, 0, axis), inner = product(x.dims, axis);
            std::vector<int64_t> normDims(x.dims.begin() + axis, x.dims.end());
            auto bcast = [&](size_t i) {
                std::vector<double> v(static_cast<size_t>(inner), i == 1 ? 1.0 : 0.0);
                if (!c.has(i)) return v;
                const Tensor& t = c.t(i);
                broadcastShapes({normDims, t.dims}, c.where());
                auto vals = toDoubles(t);
                BroadcastRows br(normDims, {t.dims});
                br.forEach([&](int64_t off, const int64_t* in, const int64_t* st, int64_t n) {
                    for (int64_t j = 0; j < n; ++j) v[off + j] = vals[in[0] + j * st[0]];
                });
                return v;
            };
            auto scale = bcast(1), bias = bcast(2);
            OutTensor o(x.dtype, x.dims);
            OutTensor meanT(DataType::Float, {outer}), rstdT(DataType::Float, {outer});
            dispatchFloat(x.dtype, "LayerNormalization", [&](auto tag) {
                using T = decltype(tag);
                for (int64_t a = 0; a < outer; ++a) {
                    const T* p = x.as<T>() + a * inner;
                    double m = 0, v = 0;
                    for (int64_t i = 0; i < inner; ++i) m += p[i];
                    m /= double(inner);
                    for (int64_t i = 0; i < inner; ++i) v += (p[i] - m) * (p[i] - m);
                    v /= double(inner);
                    const double rs = 1.0 / std::sqrt(v + eps);
                    T* y = o.data<T>() + a * inner;
                    for (int64_t i = 0; i < inner; ++i) y[i] = static_cast<T>((p[i] - m) * rs * scale[i] + bias[i]);
                    meanT.data<float>()[a] = float(m);
                    rstdT.data<float>()[a] = float(rs);
                }
            });
            std::vector<int64_t> statDims(x.dims.begin(), x.dims.begin() + axis);
            statDims.resize(rank, 1);
            return {o.finish(), reshaped(meanT.finish(), statDims), reshaped(rstdT.finish(), statDims)};
        };
        r.add("", "LayerNormalization", std::move(k));
    }
    {
        KernelInfo k;
        k.types = kFloatTypes;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& x = c.t(0);
            if (x.dims.size() < 3) c.fail("input must have rank >= 3");
            const int64_t N = x.dims[0], C = x.dims[1], sp = product(x.dims, 2);
            const double eps = c.node.attrFloat("epsilon", 1e-5f);
            auto scale = toDoubles(c.t(1)), bias = toDoubles(c.t(2));
            if (int64_t(scale.size()) != C || int64_t(bias.size()) != C) c.fail("scale/B must have C values");
            OutTensor o(x.dtype, x.dims);
            dispatchFloat(x.dtype, "InstanceNormalization", [&](auto tag) {
                using T = decltype(tag);
                for (int64_t n = 0; n < N; ++n)
                    for (int64_t ch = 0; ch < C; ++ch) {
                        const T* p = x.as<T>() + (n * C + ch) * sp;
                        T* y = o.data<T>() + (n * C + ch) * sp;
                        double m = 0, v = 0;
                        for (int64_t i = 0; i < sp; ++i) m += p[i];
                        m /= double(sp);
                        for (int64_t i = 0; i < sp; ++i) v += (p[i] - m) * (p[i] - m);
                        v /= double(sp);
                        const double rs = 1.0 / std::sqrt(v + eps);
                        for (int64_t i = 0; i < sp; ++i) y[i] = static_cast<T>((p[i] - m) * rs * scale[ch] + bias[ch]);
                    }
            });
            return {o.finish()};
        };
        r.add("", "InstanceNormalization", std::move(k));
    }
}

}  // namespace passlens::eval
