// QuantizeLinear / DequantizeLinear (per-tensor and per-axis; int8, uint8, int32).
#include <algorithm>
#include <cmath>

#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

/// Index of the scale/zero point for element e: per-tensor (size 1) or along `axis`.
struct PerAxis {
    int64_t inner = 1, len = 1;
    bool perTensor = true;
    int64_t at(int64_t e) const { return perTensor ? 0 : (e / inner) % len; }
};

PerAxis perAxis(const KernelContext& c, const Tensor& x, const Tensor& scale) {
    PerAxis p;
    if (scale.elementCount() == 1 && scale.dims.size() <= 1) return p;
    if (scale.dims.size() != 1) c.unsupported("blocked quantization (scale of rank > 1) is not supported");
    const int64_t axis = normAxis(c.node.attrInt("axis", 1), int64_t(x.dims.size()), c.where());
    if (x.dims[axis] != scale.elementCount()) c.fail("scale length does not match the axis");
    p.perTensor = false;
    p.inner = product(x.dims, axis + 1);
    p.len = x.dims[axis];
    return p;
}

bool checkQuant(const Node& n, int64_t, std::string* why) {
    if (n.attr("block_size") && n.attrInt("block_size", 0) != 0) {
        if (why) *why = "blocked quantization is not supported";
        return false;
    }
    if (n.attr("output_dtype") || n.attr("saturate")) {
        if (why) *why = "output_dtype/saturate (float8 era attributes) are not supported";
        return false;
    }
    return true;
}

}  // namespace

void registerQuant(KernelRegistry& r) {
    {   // DynamicQuantizeLinear: uint8 with a scale and zero point computed from the data range
        KernelInfo k;
        k.types = {DataType::Float};
        k.sinceMin = 11;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& x = c.t(0);
            const float* p = x.as<float>();
            float lo = 0, hi = 0;
            for (int64_t i = 0; i < x.elementCount(); ++i) {
                lo = std::min(lo, p[i]);
                hi = std::max(hi, p[i]);
            }
            const float scale = (hi - lo) / 255.0f;
            const float zpf = scale == 0 ? 0.0f : std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
            OutTensor y(DataType::UInt8, x.dims);
            for (int64_t i = 0; i < x.elementCount(); ++i)
                y.data<uint8_t>()[i] = uint8_t(scale == 0 ? zpf : std::clamp(std::nearbyint(p[i] / scale) + zpf, 0.0f, 255.0f));
            return {y.finish(), makeTensorOf<float>(DataType::Float, {}, {scale}),
                    makeTensorOf<uint8_t>(DataType::UInt8, {}, {uint8_t(zpf)})};
        };
        r.add("", "DynamicQuantizeLinear", std::move(k));
    }
    {
        KernelInfo k;
        k.types = {DataType::Float, DataType::Float16, DataType::Int32};
        k.sinceMin = 10;
        k.check = checkQuant;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& x = c.t(0);
            const Tensor& scale = c.t(1);
            const DataType qt = c.has(2) ? c.t(2).dtype : DataType::UInt8;
            auto pa = perAxis(c, x, scale);
            auto xs = toDoubles(x), ss = toDoubles(scale);
            std::vector<double> zs(ss.size(), 0.0);
            if (c.has(2)) zs = toDoubles(c.t(2));
            double lo, hi;
            if (qt == DataType::UInt8) lo = 0, hi = 255;
            else if (qt == DataType::Int8) lo = -128, hi = 127;
            else c.unsupported("quantized type " + std::string(dataTypeName(qt)));
            std::vector<double> q(xs.size());
            for (size_t e = 0; e < xs.size(); ++e) {
                const int64_t a = pa.at(int64_t(e));
                // divide in float32 like the reference implementation, so ties round the same way
                const double scaled = x.dtype == DataType::Int32 ? xs[e] / ss[a] : double(float(xs[e]) / float(ss[a]));
                q[e] = std::clamp(std::nearbyint(scaled) + zs[a], lo, hi);
            }
            return {castTensor(*makeTensorOf<double>(DataType::Double, x.dims, q), qt)};
        };
        r.add("", "QuantizeLinear", std::move(k));
    }
    {
        KernelInfo k;
        k.types = {DataType::Int8, DataType::UInt8, DataType::Int32};
        k.sinceMin = 10;
        k.check = checkQuant;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& x = c.t(0);
            const Tensor& scale = c.t(1);
            auto pa = perAxis(c, x, scale);
            auto xs = toDoubles(x), ss = toDoubles(scale);
            std::vector<double> zs(ss.size(), 0.0);
            if (c.has(2)) zs = toDoubles(c.t(2));
            std::vector<float> y(xs.size());
            for (size_t e = 0; e < xs.size(); ++e) {
                const int64_t a = pa.at(int64_t(e));
                y[e] = static_cast<float>((xs[e] - zs[a]) * ss[a]);
            }
            auto out = makeTensorOf<float>(DataType::Float, x.dims, y);
            if (scale.dtype == DataType::Float16) out = castTensor(*out, DataType::Float16);
            return {out};
        };
        r.add("", "DequantizeLinear", std::move(k));
    }
}

}  // namespace passlens::eval
