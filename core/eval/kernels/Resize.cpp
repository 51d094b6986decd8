// Resize (nearest / linear / cubic, every coordinate transform but tf_crop_and_resize; opset 18
// axes, keep_aspect_ratio_policy and antialias; 19 half_pixel_symmetric) and Upsample.
#include <algorithm>
#include <cmath>

#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

bool checkResize(const Node& n, int64_t opset, std::string* why) {
    auto fail = [&](const std::string& w) { if (why) *why = w; return false; };
    const auto mode = n.attrString("mode", "nearest");
    if (mode != "nearest" && mode != "linear" && mode != "cubic") return fail("mode '" + mode + "' is not supported");
    const auto ct = n.attrString("coordinate_transformation_mode", "half_pixel");
    const bool symmetric = ct == "half_pixel_symmetric" && opset >= 19;
    if (ct != "half_pixel" && ct != "asymmetric" && ct != "align_corners" && ct != "pytorch_half_pixel" && ct != "tf_half_pixel_for_nn" &&
        !symmetric)
        return fail("coordinate_transformation_mode '" + ct + "' is not supported at opset " + std::to_string(opset));
    const auto nm = n.attrString("nearest_mode", "round_prefer_floor");
    if (nm != "round_prefer_floor" && nm != "round_prefer_ceil" && nm != "floor" && nm != "ceil")
        return fail("nearest_mode '" + nm + "' is not supported");
    if (n.attrInt("antialias", 0) && mode == "nearest") return fail("antialias=1 with mode 'nearest' is not supported");
    const auto policy = n.attrString("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
        return fail("keep_aspect_ratio_policy '" + policy + "' is not supported");
    return true;
}

/// Keys cubic kernel at distance x.
double keysCubic(double x, double A) {
    x = std::fabs(x);
    if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    return 0.0;
}

std::vector<TensorPtr> resize(KernelContext& c, bool upsample) {
    const Tensor& x = c.t(0);
    const int64_t rank = int64_t(x.dims.size());
    if (rank == 0) c.fail("input must not be a scalar");
    std::vector<double> scales;
    std::vector<int64_t> outDims(rank);
    const bool legacy = upsample || c.opset < 11;
    const size_t scalesIdx = legacy ? 1 : 2;
    if (upsample && c.opset < 9) {
        for (float f : c.node.attr("scales") ? c.node.attr("scales")->floats : std::vector<float>{}) scales.push_back(f);
    } else if (c.has(scalesIdx) && c.t(scalesIdx).elementCount() > 0) {
        auto s = toDoubles(c.t(scalesIdx));
        scales.assign(s.begin(), s.end());
    }
    // Opset 18: scales/sizes may list only the dims in `axes`; the others keep scale 1.
    std::vector<int64_t> axes;
    if (!legacy && c.node.attr("axes"))
        for (int64_t a : c.node.attrInts("axes")) axes.push_back(normAxis(a, rank, c.where()));
    if (axes.empty())
        for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    else {
        auto sorted = axes;
        std::sort(sorted.begin(), sorted.end());
        if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) c.fail("axes repeat");
    }
    const int64_t nAxes = int64_t(axes.size());
    const bool fromScales = !scales.empty();
    const std::string policy = c.node.attrString("keep_aspect_ratio_policy", "stretch");
    bool keepAspect = false;
    if (!scales.empty()) {
        if (int64_t(scales.size()) != nAxes) c.fail("scales must have one entry per " + std::string(nAxes == rank ? "dim" : "axis"));
        std::vector<double> full(rank, 1.0);
        for (int64_t i = 0; i < nAxes; ++i) full[axes[i]] = scales[i];
        scales = full;
        for (int64_t d = 0; d < rank; ++d) outDims[d] = static_cast<int64_t>(std::floor(double(x.dims[d]) * float(scales[d])));
    } else if (!legacy && c.has(3)) {
        auto sizes = toInt64s(c.t(3));
        if (int64_t(sizes.size()) != nAxes) c.fail("sizes must have one entry per " + std::string(nAxes == rank ? "dim" : "axis"));
        outDims = x.dims;
        for (int64_t i = 0; i < nAxes; ++i) outDims[axes[i]] = sizes[i];
        scales.assign(rank, 1.0);
        for (int64_t d = 0; d < rank; ++d) scales[d] = x.dims[d] ? double(outDims[d]) / double(x.dims[d]) : 1.0;
        if (policy != "stretch") {
            // one scale for every listed axis: the smallest (not_larger) or largest (not_smaller)
            keepAspect = true;
            double sc = scales[axes[0]];
            for (int64_t a : axes) sc = policy == "not_larger" ? std::min(sc, scales[a]) : std::max(sc, scales[a]);
            for (int64_t a : axes) {
                scales[a] = sc;
                outDims[a] = static_cast<int64_t>(sc * double(x.dims[a]) + 0.5);
            }
        }
    } else c.fail("neither scales nor sizes is given");
    for (int64_t d = 0; d < rank; ++d)
        if (outDims[d] < 0) c.fail("the output would have a negative dim");

    const std::string mode = c.node.attrString("mode", "nearest");
    const std::string ct = legacy ? "asymmetric" : c.node.attrString("coordinate_transformation_mode", "half_pixel");
    const std::string nm = legacy ? "floor" : c.node.attrString("nearest_mode", "round_prefer_floor");
    const bool linear = mode == "linear", cubic = mode == "cubic";
    const double A = c.node.attrFloat("cubic_coeff_a", -0.75f);
    const bool excludeOutside = c.node.attrInt("exclude_outside", 0) != 0;
    const bool antialias = !legacy && c.node.attrInt("antialias", 0) != 0;
    // Per dim and output position: the source taps (index, weight).
    using Taps = std::vector<std::pair<int64_t, double>>;
    std::vector<std::vector<Taps>> taps(rank);
    for (int64_t d = 0; d < rank; ++d) {
        const int64_t in = x.dims[d], out = outDims[d];
        const double sc = scales[d];
        for (int64_t o = 0; o < out; ++o) {
            double xo;
            if (ct == "half_pixel") xo = (o + 0.5) / sc - 0.5;
            else if (ct == "pytorch_half_pixel") xo = out > 1 ? (o + 0.5) / sc - 0.5 : 0.0;
            else if (ct == "align_corners") {
                // the resized length is in*scale (unfloored) when scales are given
                const double len = fromScales || keepAspect ? double(in) * sc : double(out);
                xo = len == 1 ? 0.0 : double(o) * double(in - 1) / (len - 1);
            } else if (ct == "half_pixel_symmetric") {
                // centres the output canvas on the input when out != in*scale
                const double adjustment = double(out) / (sc * double(in));
                xo = double(in) / 2 * (1 - adjustment) + (o + 0.5) / sc - 0.5;
            } else if (ct == "tf_half_pixel_for_nn") xo = (o + 0.5) / sc;
            else xo = o / sc;
            Taps t;
            if (antialias && (linear || cubic) && sc < 1) {
                // the filter stretched by 1/scale (the reference implementation's taps)
                double fl = std::floor(xo), ratio = xo - fl;
                if (ratio == 0) { ratio = 1; fl -= 1; }
                const int64_t start = linear ? int64_t(std::floor(-1 / sc)) + 1 : int64_t(std::floor(-2 / sc)) + 1;
                const int64_t count = 2 - 2 * start;
                double sum = 0;
                for (int64_t i = start; i < start + count; ++i) {
                    const double arg = (double(i) - ratio) * sc;
                    double w = linear ? std::clamp(1 - std::fabs(arg), 0.0, 1.0) : keysCubic(arg, A);
                    const int64_t idx = int64_t(fl) + i;
                    if (excludeOutside && (idx < 0 || idx >= in)) w = 0;
                    sum += w;
                    t.push_back({std::max<int64_t>(0, std::min(idx, in - 1)), w});
                }
                if (sum != 0)
                    for (auto& tp : t) tp.second /= sum;
            } else if (cubic) {
                const double fl = std::floor(xo), r = xo - fl;
                const double coeff[4] = {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
                                         ((A + 2) * r - (A + 3)) * r * r + 1,
                                         ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1,
                                         ((A * (2 - r) - 5 * A) * (2 - r) + 8 * A) * (2 - r) - 4 * A};
                double sum = 0;
                for (int k = 0; k < 4; ++k) {
                    const int64_t idx = int64_t(fl) - 1 + k;
                    const bool outside = idx < 0 || idx >= in;
                    if (outside && excludeOutside) continue;
                    t.push_back({std::max<int64_t>(0, std::min(idx, in - 1)), coeff[k]});
                    sum += coeff[k];
                }
                if (excludeOutside && sum != 0)
                    for (auto& tp : t) tp.second /= sum;
            } else if (!linear) {
                int64_t idx;
                if (nm == "floor") idx = int64_t(std::floor(xo));
                else if (nm == "ceil") idx = int64_t(std::ceil(xo));
                else {
                    const double fl = std::floor(xo), frac = xo - fl;
                    if (frac == 0.5) idx = int64_t(nm == "round_prefer_ceil" ? fl + 1 : fl);
                    else idx = int64_t(std::round(xo));
                }
                t.push_back({std::max<int64_t>(0, std::min(idx, in - 1)), 1.0});
            } else {
                xo = std::max(0.0, std::min(xo, double(in - 1)));
                const int64_t a = int64_t(std::floor(xo));
                const int64_t b = std::min(a + 1, in - 1);
                t.push_back({a, 1.0 - (xo - double(a))});
                if (xo - double(a) != 0) t.push_back({b, xo - double(a)});
            }
            taps[d].push_back(std::move(t));
        }
    }
    OutTensor o(x.dtype, outDims);
    auto xs = stridesOf(x.dims);
    dispatchNumeric(x.dtype, "Resize", [&](auto tag) {
        using T = decltype(tag);
        const T* p = x.as<T>();
        T* y = o.data<T>();
        std::vector<int64_t> pos(rank, 0);
        std::vector<size_t> k(rank, 0);
        if (!linear && !cubic) {  // nearest: a plain gather, rows of the last dim at a time
            const int64_t last = rank - 1, W = outDims[last];
            std::vector<int64_t> lastIdx(W);
            for (int64_t i = 0; i < W; ++i) lastIdx[i] = taps[last][i][0].first;
            for (int64_t e = 0; e < o.count(); e += W) {
                int64_t off = 0;
                for (int64_t d = 0; d < last; ++d) off += taps[d][pos[d]][0].first * xs[d];
                for (int64_t i = 0; i < W; ++i) y[e + i] = p[off + lastIdx[i]];
                for (int64_t d = last - 1; d >= 0; --d) {
                    if (++pos[d] < outDims[d]) break;
                    pos[d] = 0;
                }
            }
            return;
        }
        for (int64_t e = 0; e < o.count(); ++e) {
            // sum over every combination of taps
            double acc = 0;
            std::fill(k.begin(), k.end(), 0);
            while (true) {
                double w = 1;
                int64_t off = 0;
                for (int64_t d = 0; d < rank; ++d) {
                    const auto& tp = taps[d][pos[d]][k[d]];
                    w *= tp.second;
                    off += tp.first * xs[d];
                }
                acc += w * double(p[off]);
                int64_t d = rank - 1;
                for (; d >= 0; --d) {
                    if (++k[d] < taps[d][pos[d]].size()) break;
                    k[d] = 0;
                }
                if (d < 0) break;
            }
            if constexpr (std::is_integral_v<T>) y[e] = static_cast<T>(linear || cubic ? std::nearbyint(acc) : acc);
            else y[e] = static_cast<T>(acc);
            for (int64_t d = rank - 1; d >= 0; --d) {
                if (++pos[d] < outDims[d]) break;
                pos[d] = 0;
            }
        }
    });
    return {o.finish()};
}

}  // namespace

void registerResize(KernelRegistry& r) {
    KernelInfo k;
    k.types = {DataType::Float, DataType::Double, DataType::Float16, DataType::Int8, DataType::UInt8, DataType::Int32, DataType::Int64};
    k.sinceMin = 10;
    k.check = checkResize;
    k.fn = [](KernelContext& c) { return resize(c, false); };
    r.add("", "Resize", k);
    k.sinceMin = 7;
    k.sinceMax = 9;
    k.fn = [](KernelContext& c) { return resize(c, true); };
    r.add("", "Upsample", k);
}

}  // namespace passlens::eval
