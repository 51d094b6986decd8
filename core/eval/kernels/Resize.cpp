// Resize (nearest / linear, the common coordinate transforms) and Upsample.
#include <cmath>

#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

bool checkResize(const Node& n, int64_t opset, std::string* why) {
    auto fail = [&](const std::string& w) { if (why) *why = w; return false; };
    const auto mode = n.attrString("mode", "nearest");
    if (mode != "nearest" && mode != "linear") return fail("mode '" + mode + "' is not supported");
    const auto ct = n.attrString("coordinate_transformation_mode", "half_pixel");
    if (ct != "half_pixel" && ct != "asymmetric" && ct != "align_corners" && ct != "pytorch_half_pixel" && ct != "tf_half_pixel_for_nn")
        return fail("coordinate_transformation_mode '" + ct + "' is not supported");
    const auto nm = n.attrString("nearest_mode", "round_prefer_floor");
    if (nm != "round_prefer_floor" && nm != "round_prefer_ceil" && nm != "floor" && nm != "ceil")
        return fail("nearest_mode '" + nm + "' is not supported");
    if (n.attrInt("antialias", 0)) return fail("antialias=1 is not supported");
    if (n.attr("axes")) return fail("the axes attribute is not supported");
    if (n.attrString("keep_aspect_ratio_policy", "stretch") != "stretch") return fail("keep_aspect_ratio_policy is not supported");
    (void)opset;
    return true;
}

std::vector<TensorPtr> resize(KernelContext& c, bool upsample) {
    const Tensor& x = c.t(0);
    const int64_t rank = int64_t(x.dims.size());
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
    if (!scales.empty()) {
        if (int64_t(scales.size()) != rank) c.fail("scales must have one entry per dim");
        for (int64_t d = 0; d < rank; ++d) outDims[d] = static_cast<int64_t>(std::floor(double(x.dims[d]) * float(scales[d])));
    } else if (!legacy && c.has(3)) {
        outDims = toInt64s(c.t(3));
        if (int64_t(outDims.size()) != rank) c.fail("sizes must have one entry per dim");
        for (int64_t d = 0; d < rank; ++d) scales.push_back(x.dims[d] ? double(outDims[d]) / double(x.dims[d]) : 1.0);
    } else c.fail("neither scales nor sizes is given");

    const std::string mode = c.node.attrString("mode", "nearest");
    const std::string ct = legacy ? "asymmetric" : c.node.attrString("coordinate_transformation_mode", "half_pixel");
    const std::string nm = legacy ? "floor" : c.node.attrString("nearest_mode", "round_prefer_floor");
    const bool linear = mode == "linear";
    // per dim: source index pairs and weight of the second
    std::vector<std::vector<int64_t>> i0(rank), i1(rank);
    std::vector<std::vector<float>> w1(rank);
    for (int64_t d = 0; d < rank; ++d) {
        const int64_t in = x.dims[d], out = outDims[d];
        const double sc = scales[d];
        for (int64_t o = 0; o < out; ++o) {
            double xo;
            if (ct == "half_pixel") xo = (o + 0.5) / sc - 0.5;
            else if (ct == "pytorch_half_pixel") xo = out > 1 ? (o + 0.5) / sc - 0.5 : 0.0;
            else if (ct == "align_corners") xo = out == 1 ? 0.0 : double(o) * double(in - 1) / double(out - 1);
            else if (ct == "tf_half_pixel_for_nn") xo = (o + 0.5) / sc;
            else xo = o / sc;
            if (!linear) {
                int64_t idx;
                if (nm == "floor") idx = int64_t(std::floor(xo));
                else if (nm == "ceil") idx = int64_t(std::ceil(xo));
                else {
                    const double fl = std::floor(xo), frac = xo - fl;
                    if (frac == 0.5) idx = int64_t(nm == "round_prefer_ceil" ? fl + 1 : fl);
                    else idx = int64_t(std::round(xo));
                }
                idx = std::max<int64_t>(0, std::min(idx, in - 1));
                i0[d].push_back(idx);
                i1[d].push_back(idx);
                w1[d].push_back(0.0f);
            } else {
                xo = std::max(0.0, std::min(xo, double(in - 1)));
                const int64_t a = int64_t(std::floor(xo));
                const int64_t b = std::min(a + 1, in - 1);
                i0[d].push_back(a);
                i1[d].push_back(b);
                w1[d].push_back(float(xo - a));
            }
        }
    }
    OutTensor o(x.dtype, outDims);
    auto xs = stridesOf(x.dims);
    dispatchNumeric(x.dtype, "Resize", [&](auto tag) {
        using T = decltype(tag);
        const T* p = x.as<T>();
        T* y = o.data<T>();
        std::vector<int64_t> pos(rank, 0);
        for (int64_t e = 0; e < o.count(); ++e) {
            if (!linear) {
                int64_t off = 0;
                for (int64_t d = 0; d < rank; ++d) off += i0[d][pos[d]] * xs[d];
                y[e] = p[off];
            } else {
                double acc = 0;
                for (int64_t corner = 0; corner < (int64_t(1) << rank); ++corner) {
                    double w = 1;
                    int64_t off = 0;
                    for (int64_t d = 0; d < rank && w != 0; ++d) {
                        const bool hi = (corner >> d) & 1;
                        const float wd = w1[d][pos[d]];
                        w *= hi ? wd : 1.0 - wd;
                        off += (hi ? i1[d][pos[d]] : i0[d][pos[d]]) * xs[d];
                    }
                    if (w != 0) acc += w * double(p[off]);
                }
                y[e] = static_cast<T>(acc);
            }
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
