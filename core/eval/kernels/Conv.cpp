// Conv / ConvTranspose (im2col + OpenBLAS sgemm, direct loop for depthwise) and pooling.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

struct Geometry {
    int64_t nsp = 0;                       ///< spatial rank
    std::vector<int64_t> in, k, out, strides, dil, padB, padE;
};

/// Output spatial sizes with auto_pad / explicit pads. `ceil` for pooling's ceil_mode.
Geometry geometry(const KernelContext& c, const std::vector<int64_t>& inSp, const std::vector<int64_t>& kSp, bool ceilMode,
                  bool transpose = false, const std::vector<int64_t>& outPadding = {}) {
    Geometry g;
    g.nsp = int64_t(inSp.size());
    g.in = inSp;
    g.k = kSp;
    g.strides = c.node.attrInts("strides", std::vector<int64_t>(g.nsp, 1));
    g.dil = c.node.attrInts("dilations", std::vector<int64_t>(g.nsp, 1));
    auto pads = c.node.attrInts("pads", std::vector<int64_t>(2 * g.nsp, 0));
    if (int64_t(g.strides.size()) != g.nsp || int64_t(g.dil.size()) != g.nsp || int64_t(pads.size()) != 2 * g.nsp)
        c.fail("strides/dilations/pads do not match the spatial rank");
    for (int64_t i = 0; i < g.nsp; ++i) {
        if (g.strides[i] < 1 || g.dil[i] < 1 || g.k[i] < 1) c.fail("strides, dilations and kernel dims must be >= 1");
        if (pads[i] < 0 || pads[i + g.nsp] < 0) c.fail("pads must be >= 0");
    }
    const std::string autoPad = c.node.attrString("auto_pad", "NOTSET");
    g.padB.assign(pads.begin(), pads.begin() + g.nsp);
    g.padE.assign(pads.begin() + g.nsp, pads.end());
    g.out.resize(g.nsp);
    for (int64_t i = 0; i < g.nsp; ++i) {
        const int64_t ek = (g.k[i] - 1) * g.dil[i] + 1;
        if (transpose) {
            const int64_t op = outPadding.empty() ? 0 : outPadding[i];
            if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
                g.out[i] = g.in[i] * g.strides[i];
                const int64_t total = std::max<int64_t>(0, g.strides[i] * (g.in[i] - 1) + op + ek - g.out[i]);
                g.padB[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
                g.padE[i] = total - g.padB[i];
            } else {
                if (autoPad == "VALID") g.padB[i] = g.padE[i] = 0;
                g.out[i] = g.strides[i] * (g.in[i] - 1) + op + ek - g.padB[i] - g.padE[i];
            }
            continue;
        }
        if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            g.out[i] = (g.in[i] + g.strides[i] - 1) / g.strides[i];
            const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * g.strides[i] + ek - g.in[i]);
            g.padB[i] = autoPad == "SAME_LOWER" ? total - total / 2 : total / 2;
            g.padE[i] = total - g.padB[i];
        } else {
            if (autoPad == "VALID") g.padB[i] = g.padE[i] = 0;
            const int64_t span = g.in[i] + g.padB[i] + g.padE[i] - ek;
            if (span < 0) c.fail("kernel is larger than the padded input");
            g.out[i] = ceilMode ? (span + g.strides[i] - 1) / g.strides[i] + 1 : span / g.strides[i] + 1;
            // ceil mode: the last window must start inside the input or left padding
            if (ceilMode && (g.out[i] - 1) * g.strides[i] >= g.in[i] + g.padB[i]) --g.out[i];
        }
    }
    return g;
}

bool checkAutoPad(const Node& n, int64_t, std::string* why) {
    auto ap = n.attrString("auto_pad", "NOTSET");
    if (ap == "NOTSET" || ap == "VALID" || ap == "SAME_UPPER" || ap == "SAME_LOWER") return true;
    if (why) *why = "auto_pad '" + ap + "' is not supported";
    return false;
}

/// Column buffer for one group of one image: rows = Cg * prod(k), cols = prod(out).
void im2col(const float* x, int64_t Cg, const Geometry& g, float* col) {
    const int64_t kSize = product(g.k), oSize = product(g.out);
    std::vector<int64_t> kIdx(g.nsp), oIdx(g.nsp);
    const int64_t inSize = product(g.in);
    for (int64_t ch = 0; ch < Cg; ++ch) {
        const float* xc = x + ch * inSize;
        for (int64_t kk = 0; kk < kSize; ++kk) {
            // decompose kk
            int64_t rem = kk;
            for (int64_t d = g.nsp - 1; d >= 0; --d) { kIdx[d] = rem % g.k[d]; rem /= g.k[d]; }
            float* row = col + (ch * kSize + kk) * oSize;
            if (g.nsp == 2) {
                const int64_t H = g.in[0], W = g.in[1], OH = g.out[0], OW = g.out[1];
                for (int64_t oh = 0; oh < OH; ++oh) {
                    const int64_t ih = oh * g.strides[0] - g.padB[0] + kIdx[0] * g.dil[0];
                    float* r = row + oh * OW;
                    if (ih < 0 || ih >= H) { std::fill_n(r, OW, 0.0f); continue; }
                    const float* xr = xc + ih * W;
                    const int64_t off = -g.padB[1] + kIdx[1] * g.dil[1];
                    if (g.strides[1] == 1) {
                        for (int64_t ow = 0; ow < OW; ++ow) {
                            const int64_t iw = ow + off;
                            r[ow] = (iw >= 0 && iw < W) ? xr[iw] : 0.0f;
                        }
                    } else {
                        for (int64_t ow = 0; ow < OW; ++ow) {
                            const int64_t iw = ow * g.strides[1] + off;
                            r[ow] = (iw >= 0 && iw < W) ? xr[iw] : 0.0f;
                        }
                    }
                }
                continue;
            }
            std::fill(oIdx.begin(), oIdx.end(), 0);
            for (int64_t o = 0; o < oSize; ++o) {
                int64_t off = 0;
                bool inside = true;
                for (int64_t d = 0; d < g.nsp; ++d) {
                    const int64_t i = oIdx[d] * g.strides[d] - g.padB[d] + kIdx[d] * g.dil[d];
                    if (i < 0 || i >= g.in[d]) { inside = false; break; }
                    off = off * g.in[d] + i;
                }
                row[o] = inside ? xc[off] : 0.0f;
                for (int64_t d = g.nsp - 1; d >= 0; --d) {
                    if (++oIdx[d] < g.out[d]) break;
                    oIdx[d] = 0;
                }
            }
        }
    }
}

/// Adds columns back into an image (ConvTranspose).
void col2im(const float* col, int64_t Cg, const Geometry& g, float* y) {
    // Here g.in are the image (output) spatial dims and g.out the column (input) spatial dims.
    const int64_t kSize = product(g.k), oSize = product(g.out), imSize = product(g.in);
    std::vector<int64_t> kIdx(g.nsp), oIdx(g.nsp);
    for (int64_t ch = 0; ch < Cg; ++ch)
        for (int64_t kk = 0; kk < kSize; ++kk) {
            int64_t rem = kk;
            for (int64_t d = g.nsp - 1; d >= 0; --d) { kIdx[d] = rem % g.k[d]; rem /= g.k[d]; }
            const float* row = col + (ch * kSize + kk) * oSize;
            std::fill(oIdx.begin(), oIdx.end(), 0);
            for (int64_t o = 0; o < oSize; ++o) {
                int64_t off = 0;
                bool inside = true;
                for (int64_t d = 0; d < g.nsp; ++d) {
                    const int64_t i = oIdx[d] * g.strides[d] - g.padB[d] + kIdx[d] * g.dil[d];
                    if (i < 0 || i >= g.in[d]) { inside = false; break; }
                    off = off * g.in[d] + i;
                }
                if (inside) y[ch * imSize + off] += row[o];
                for (int64_t d = g.nsp - 1; d >= 0; --d) {
                    if (++oIdx[d] < g.out[d]) break;
                    oIdx[d] = 0;
                }
            }
        }
}

void sameFloatTypes(const KernelContext& c) {
    for (size_t i = 0; i < c.in.size(); ++i)
        if (c.has(i) && c.in[i]->dtype != DataType::Float) c.fail("input " + std::to_string(i) + " must be float like X");
}

std::vector<TensorPtr> conv(KernelContext& c) {
    sameFloatTypes(c);
    const Tensor& x = c.t(0);
    const Tensor& w = c.t(1);
    if (x.dims.size() < 3 || w.dims.size() != x.dims.size()) c.fail("X and W must have the same rank >= 3");
    const int64_t N = x.dims[0], C = x.dims[1], M = w.dims[0], group = c.node.attrInt("group", 1);
    if (group <= 0 || C % group || M % group || w.dims[1] != C / group)
        c.fail("channels " + std::to_string(C) + " / weights " + shapeText(w.dims) + " do not match group " + std::to_string(group));
    std::vector<int64_t> inSp(x.dims.begin() + 2, x.dims.end()), kSp(w.dims.begin() + 2, w.dims.end());
    if (auto ks = c.node.attrInts("kernel_shape"); !ks.empty() && ks != kSp) c.fail("kernel_shape differs from W");
    Geometry g = geometry(c, inSp, kSp, false);
    std::vector<int64_t> outDims{N, M};
    outDims.insert(outDims.end(), g.out.begin(), g.out.end());
    OutTensor o(DataType::Float, outDims);
    float* y = o.data<float>();
    const int64_t Cg = C / group, Mg = M / group, kSize = product(kSp), oSize = product(g.out), inSize = product(inSp);
    const float* px = x.as<float>();
    const float* pw = w.as<float>();
    const bool pointwise = kSize == 1 && std::all_of(g.strides.begin(), g.strides.end(), [](int64_t s) { return s == 1; }) &&
                           std::all_of(g.padB.begin(), g.padB.end(), [](int64_t p) { return p == 0; }) &&
                           std::all_of(g.padE.begin(), g.padE.end(), [](int64_t p) { return p == 0; });
    const bool depthwise = Cg == 1 && Mg == 1 && g.nsp == 2;
    std::vector<float> col;
    if (!pointwise && !depthwise) col.resize(static_cast<size_t>(Cg * kSize * oSize));
    for (int64_t n = 0; n < N; ++n)
        for (int64_t gr = 0; gr < group; ++gr) {
            const float* xg = px + (n * C + gr * Cg) * inSize;
            float* yg = y + (n * M + gr * Mg) * oSize;
            const float* wg = pw + gr * Mg * Cg * kSize;
            if (depthwise) {
                // Direct loop; the valid output range per kernel tap is computed up front so the
                // inner loop has no bounds checks.
                const int64_t H = g.in[0], W = g.in[1], OH = g.out[0], OW = g.out[1], KH = g.k[0], KW = g.k[1];
                const int64_t sh = g.strides[0], sw = g.strides[1];
                std::fill_n(yg, OH * OW, 0.0f);
                for (int64_t oh = 0; oh < OH; ++oh) {
                    float* yr = yg + oh * OW;
                    for (int64_t kh = 0; kh < KH; ++kh) {
                        const int64_t ih = oh * sh - g.padB[0] + kh * g.dil[0];
                        if (ih < 0 || ih >= H) continue;
                        const float* xr = xg + ih * W;
                        for (int64_t kw = 0; kw < KW; ++kw) {
                            const int64_t shift = kw * g.dil[1] - g.padB[1];  // iw = ow*sw + shift
                            int64_t lo = shift >= 0 ? 0 : (-shift + sw - 1) / sw;
                            int64_t hi = W - 1 - shift < 0 ? 0 : (W - 1 - shift) / sw + 1;
                            hi = std::min(hi, OW);
                            const float wv = wg[kh * KW + kw];
                            if (sw == 1)
                                for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += xr[ow + shift] * wv;
                            else
                                for (int64_t ow = lo; ow < hi; ++ow) yr[ow] += xr[ow * sw + shift] * wv;
                        }
                    }
                }
                continue;
            }
            const float* B = xg;
            if (!pointwise) {
                im2col(xg, Cg, g, col.data());
                B = col.data();
            }
            if (Mg * oSize * Cg * kSize > 0)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(Mg), int(oSize), int(Cg * kSize), 1.0f, wg, int(Cg * kSize), B,
                            int(oSize), 0.0f, yg, int(oSize));
        }
    if (c.has(2)) {
        const Tensor& b = c.t(2);
        if (b.elementCount() != M) c.fail("bias has " + std::to_string(b.elementCount()) + " values for " + std::to_string(M) + " channels");
        for (int64_t n = 0; n < N; ++n)
            for (int64_t m = 0; m < M; ++m) {
                float* p = y + (n * M + m) * oSize;
                const float bv = b.as<float>()[m];
                for (int64_t i = 0; i < oSize; ++i) p[i] += bv;
            }
    }
    return {o.finish()};
}

std::vector<TensorPtr> convTranspose(KernelContext& c) {
    sameFloatTypes(c);
    const Tensor& x = c.t(0);
    const Tensor& w = c.t(1);
    if (x.dims.size() < 3 || w.dims.size() != x.dims.size()) c.fail("X and W must have the same rank >= 3");
    const int64_t N = x.dims[0], C = x.dims[1], group = c.node.attrInt("group", 1);
    if (group <= 0 || C % group || w.dims[0] != C) c.fail("weights " + shapeText(w.dims) + " do not match input channels");
    const int64_t Cg = C / group, Mg = w.dims[1], M = Mg * group;
    std::vector<int64_t> inSp(x.dims.begin() + 2, x.dims.end()), kSp(w.dims.begin() + 2, w.dims.end());
    const int64_t nsp = int64_t(inSp.size());
    auto outPad = c.node.attrInts("output_padding", std::vector<int64_t>(nsp, 0));
    Geometry g = geometry(c, inSp, kSp, false, true, outPad);
    if (auto os = c.node.attrInts("output_shape"); !os.empty()) {
        if (int64_t(os.size()) != nsp) c.fail("output_shape must list the spatial dims");
        const std::string autoPad = c.node.attrString("auto_pad", "NOTSET");
        for (int64_t i = 0; i < nsp; ++i) {
            const int64_t ek = (kSp[i] - 1) * g.dil[i] + 1;
            const int64_t total = g.strides[i] * (inSp[i] - 1) + outPad[i] + ek - os[i];
            // floor division, as in ONNX's reference (total may be negative)
            const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
            g.padB[i] = autoPad == "SAME_UPPER" ? half : total - half;
            g.padE[i] = total - g.padB[i];
            g.out[i] = os[i];
        }
    }
    std::vector<int64_t> outDims{N, M};
    outDims.insert(outDims.end(), g.out.begin(), g.out.end());
    OutTensor o(DataType::Float, outDims);
    float* y = o.data<float>();
    const int64_t kSize = product(kSp), inSize = product(inSp), outSize = product(g.out);
    std::vector<float> col(static_cast<size_t>(Mg * kSize * inSize));
    // geometry for col2im: image = output, columns = input positions
    Geometry cg = g;
    cg.in = g.out;
    cg.out = inSp;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t gr = 0; gr < group; ++gr) {
            const float* xg = x.as<float>() + (n * C + gr * Cg) * inSize;
            const float* wg = w.as<float>() + gr * Cg * Mg * kSize;
            // col[Mg*k, in] = W^T[Mg*k, Cg] * X[Cg, in]
            if (Cg > 0 && inSize > 0)
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(Mg * kSize), int(inSize), int(Cg), 1.0f, wg, int(Mg * kSize), xg,
                            int(inSize), 0.0f, col.data(), int(inSize));
            col2im(col.data(), Mg, cg, y + (n * M + gr * Mg) * outSize);
        }
    if (c.has(2)) {
        const Tensor& b = c.t(2);
        if (b.elementCount() != M) c.fail("bias size does not match output channels");
        for (int64_t n = 0; n < N; ++n)
            for (int64_t m = 0; m < M; ++m)
                for (int64_t i = 0; i < outSize; ++i) y[(n * M + m) * outSize + i] += b.as<float>()[m];
    }
    return {o.finish()};
}

/// Max, average or (lpP > 0) Lp pooling: (sum of |x|^p over the window's inside elements)^(1/p).
std::vector<TensorPtr> pool(KernelContext& c, bool isMax, int64_t lpP = 0) {
    const Tensor& x = c.t(0);
    if (x.dims.size() < 3) c.fail("input must have rank >= 3");
    const int64_t N = x.dims[0], C = x.dims[1];
    std::vector<int64_t> inSp(x.dims.begin() + 2, x.dims.end());
    auto kSp = c.node.attrInts("kernel_shape");
    if (kSp.size() != inSp.size()) c.fail("kernel_shape does not match the spatial rank");
    Geometry g = geometry(c, inSp, kSp, c.node.attrInt("ceil_mode", 0) != 0);
    const bool countPad = c.node.attrInt("count_include_pad", 0) != 0;
    std::vector<int64_t> outDims{N, C};
    outDims.insert(outDims.end(), g.out.begin(), g.out.end());
    OutTensor o(DataType::Float, outDims);
    const int64_t inSize = product(inSp), oSize = product(g.out), kSize = product(kSp);
    std::vector<int64_t> oIdx(g.nsp), kIdx(g.nsp);
    for (int64_t nc = 0; nc < N * C; ++nc) {
        const float* xc = x.as<float>() + nc * inSize;
        float* yc = o.data<float>() + nc * oSize;
        std::fill(oIdx.begin(), oIdx.end(), 0);
        for (int64_t oi = 0; oi < oSize; ++oi) {
            float best = -std::numeric_limits<float>::infinity();
            double sum = 0;
            int64_t count = 0, padCount = 0;
            for (int64_t kk = 0; kk < kSize; ++kk) {
                int64_t rem = kk, off = 0;
                bool inside = true, inPadded = true;
                for (int64_t d = g.nsp - 1; d >= 0; --d) { kIdx[d] = rem % kSp[d]; rem /= kSp[d]; }
                for (int64_t d = 0; d < g.nsp; ++d) {
                    const int64_t i = oIdx[d] * g.strides[d] - g.padB[d] + kIdx[d] * g.dil[d];
                    if (i < 0 || i >= g.in[d]) inside = false;
                    if (i < -g.padB[d] || i >= g.in[d] + g.padE[d]) inPadded = false;
                    off = off * g.in[d] + i;
                }
                if (inPadded) ++padCount;
                if (!inside) continue;
                const float v = xc[off];
                if (v > best || std::isnan(v)) best = v;
                sum += lpP == 0 ? double(v) : lpP == 1 ? std::fabs(double(v)) : lpP == 2 ? double(v) * v : std::pow(std::fabs(double(v)), double(lpP));
                ++count;
            }
            if (isMax) yc[oi] = best;
            else if (lpP > 0) yc[oi] = static_cast<float>(lpP == 1 ? sum : lpP == 2 ? std::sqrt(sum) : std::pow(sum, 1.0 / double(lpP)));
            else {
                const int64_t div = countPad ? padCount : count;
                yc[oi] = div ? static_cast<float>(sum / double(div)) : 0.0f;
            }
            for (int64_t d = g.nsp - 1; d >= 0; --d) {
                if (++oIdx[d] < g.out[d]) break;
                oIdx[d] = 0;
            }
        }
    }
    return {o.finish()};
}

std::vector<TensorPtr> globalPool(KernelContext& c, bool isMax) {
    const Tensor& x = c.t(0);
    if (x.dims.size() < 3) c.fail("input must have rank >= 3");
    std::vector<int64_t> outDims(x.dims.size(), 1);
    outDims[0] = x.dims[0];
    outDims[1] = x.dims[1];
    const int64_t nc = x.dims[0] * x.dims[1], sp = product(x.dims, 2);
    OutTensor o(x.dtype, outDims);
    dispatchFloat(x.dtype, c.node.opType, [&](auto tag) {
        using T = decltype(tag);
        for (int64_t i = 0; i < nc; ++i) {
            const T* p = x.as<T>() + i * sp;
            if (isMax) {
                T m = sp ? p[0] : T(0);
                for (int64_t k = 1; k < sp; ++k) m = std::max(m, p[k]);
                o.data<T>()[i] = m;
            } else {
                double s = 0;
                for (int64_t k = 0; k < sp; ++k) s += p[k];
                o.data<T>()[i] = static_cast<T>(sp ? s / double(sp) : 0.0);
            }
        }
    });
    return {o.finish()};
}

}  // namespace

void registerConv(KernelRegistry& r) {
    KernelInfo k;
    k.types = {DataType::Float, DataType::Float16};
    k.check = checkAutoPad;
    k.fn = conv;
    r.add("", "Conv", k);
    k.fn = convTranspose;
    r.add("", "ConvTranspose", k);
    k.fn = [](KernelContext& c) { return pool(c, false); };
    r.add("", "AveragePool", k);
    k.fn = [](KernelContext& c) { return pool(c, true); };
    k.sinceMin = 1;
    k.check = [](const Node& n, int64_t opset, std::string* why) {
        if (n.outputs.size() > 1 && n.outputs[1] != kNone) {
            if (why) *why = "the Indices output is not supported";
            return false;
        }
        if (n.attrInt("storage_order", 0) != 0) {
            if (why) *why = "storage_order=1 is not supported";
            return false;
        }
        return checkAutoPad(n, opset, why);
    };
    r.add("", "MaxPool", k);
    // LpPool: p became an int attribute in opset 2; 18 added ceil_mode (dilations are honoured too).
    k.fn = [](KernelContext& c) { return pool(c, false, c.node.attrInt("p", 2)); };
    k.sinceMin = 2;
    k.check = [](const Node& n, int64_t opset, std::string* why) {
        const int64_t p = n.attrInt("p", 2);
        if (p < 1) {
            if (why) *why = "p=" + std::to_string(p) + " is not supported (p >= 1)";
            return false;
        }
        if (opset < 18 && n.attrInt("ceil_mode", 0) != 0) {
            if (why) *why = "ceil_mode before opset 18 is not part of LpPool";
            return false;
        }
        return checkAutoPad(n, opset, why);
    };
    r.add("", "LpPool", k);
    KernelInfo gk;
    gk.types = kFloatTypes;
    gk.fn = [](KernelContext& c) { return globalPool(c, false); };
    r.add("", "GlobalAveragePool", gk);
    gk.fn = [](KernelContext& c) { return globalPool(c, true); };
    r.add("", "GlobalMaxPool", gk);
}

}  // namespace passlens::eval
