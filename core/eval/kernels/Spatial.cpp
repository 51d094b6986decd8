// Spatial sampling and rearrangement: GridSample (16 with bilinear/bicubic names and 4-D input;
// 20+ with linear/cubic names and N-d input), AffineGrid (20), CenterCropPad (18), Col2Im (18).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

TensorPtr floatsOut(DataType dt, const std::vector<int64_t>& dims, const std::vector<double>& v, const std::string& op) {
    OutTensor o(dt, dims);
    dispatchFloat(dt, op, [&](auto tag) {
        using T = decltype(tag);
        for (size_t i = 0; i < v.size(); ++i) o.data<T>()[i] = static_cast<T>(v[i]);
    });
    return o.finish();
}

// ---- GridSample ----

/// Reflects x by the near border until it lies in [lo, hi] (the reference implementation's rule).
double reflect(double x, double lo, double hi) {
    const double range = hi - lo;
    if (range <= 0) return lo;
    if (x < lo) {
        const double dx = lo - x;
        const int64_t n = int64_t(dx / range);
        const double r = dx - double(n) * range;
        return n % 2 == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        const double dx = x - hi;
        const int64_t n = int64_t(dx / range);
        const double r = dx - double(n) * range;
        return n % 2 == 0 ? hi - r : lo + r;
    }
    return x;
}

void cubicCoeffs(double x, double* w) {
    const double A = -0.75;
    x = std::fabs(x);
    w[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
    w[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    w[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
    w[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
}

enum class Pad { Zeros, Border, Reflection };

std::string gridMode(const Node& n, int64_t opset) {
    std::string m = n.attrString("mode", opset >= 20 ? "linear" : "bilinear");
    if (opset < 20) {
        if (m == "bilinear") m = "linear";
        else if (m == "bicubic") m = "cubic";
        else if (m != "nearest") m = "?" + m;
    } else if (m != "linear" && m != "cubic" && m != "nearest") m = "?" + m;
    return m;
}

std::vector<TensorPtr> gridSample(KernelContext& c) {
    const Tensor& x = c.t(0);
    const Tensor& grid = c.t(1);
    const int64_t nsp = int64_t(x.dims.size()) - 2;
    if (nsp < 1) c.fail("X must have rank >= 3, got " + shapeText(x.dims));
    if (c.opset < 20 && nsp != 2) c.fail("X must be 4-D before opset 20, got " + shapeText(x.dims));
    if (int64_t(grid.dims.size()) != nsp + 2 || grid.dims[0] != x.dims[0] || grid.dims.back() != nsp)
        c.fail("grid " + shapeText(grid.dims) + " does not match X " + shapeText(x.dims) + " (want [N, out..., " + std::to_string(nsp) + "])");
    const std::string mode = gridMode(c.node, c.opset);
    const std::string pm = c.node.attrString("padding_mode", "zeros");
    const Pad pad = pm == "border" ? Pad::Border : pm == "reflection" ? Pad::Reflection : Pad::Zeros;
    const bool align = c.node.attrInt("align_corners", 0) != 0;
    const int64_t N = x.dims[0], C = x.dims[1];
    const std::vector<int64_t> in(x.dims.begin() + 2, x.dims.end());
    const std::vector<int64_t> outSp(grid.dims.begin() + 1, grid.dims.end() - 1);
    const int64_t inSize = product(in), outSize = product(outSp);
    std::vector<int64_t> outDims{N, C};
    outDims.insert(outDims.end(), outSp.begin(), outSp.end());
    const auto xv = toDoubles(x), gv = toDoubles(grid);
    std::vector<double> y(static_cast<size_t>(product(outDims)), 0.0);
    const auto inStrides = stridesOf(in);
    std::vector<double> lo(nsp), hi(nsp);
    for (int64_t d = 0; d < nsp; ++d) {
        lo[d] = align ? 0.0 : -0.5;
        hi[d] = align ? double(in[d] - 1) : double(in[d]) - 0.5;
    }
    // index along dim d with the padding rule; -1 means "zero" (outside, zeros padding)
    auto fetchIndex = [&](int64_t i, int64_t d) -> int64_t {
        if (i >= 0 && i < in[d]) return i;
        if (pad == Pad::Zeros) return -1;
        if (pad == Pad::Border) return std::clamp<int64_t>(i, 0, in[d] - 1);
        return std::clamp<int64_t>(int64_t(reflect(double(i), lo[d], hi[d])), 0, in[d] - 1);
    };
    const int taps = mode == "cubic" ? 4 : mode == "linear" ? 2 : 1;
    std::vector<std::vector<int64_t>> idx(nsp, std::vector<int64_t>(taps));
    std::vector<std::vector<double>> wt(nsp, std::vector<double>(taps));
    std::vector<int> k(nsp);
    for (int64_t n = 0; n < N; ++n)
        for (int64_t o = 0; o < outSize; ++o) {
            const double* g = gv.data() + (n * outSize + o) * nsp;
            for (int64_t d = 0; d < nsp; ++d) {
                // grid holds (x, y, ...) — the last spatial dim first
                const double gn = g[nsp - 1 - d];
                double v = align ? (gn + 1) / 2.0 * double(in[d] - 1) : ((gn + 1) * double(in[d]) - 1) / 2.0;
                if (mode == "nearest") v = std::nearbyint(v);
                if (v < lo[d] || v > hi[d]) {
                    if (pad == Pad::Border) v = std::clamp(v, 0.0, double(in[d] - 1));
                    else if (pad == Pad::Reflection) v = reflect(v, lo[d], hi[d]);
                }
                if (mode == "nearest") {
                    idx[d][0] = fetchIndex(int64_t(v), d);
                    wt[d][0] = 1.0;
                } else {
                    const int64_t f = int64_t(std::floor(v));
                    const double t = v - double(f);
                    if (taps == 2) {
                        idx[d] = {fetchIndex(f, d), fetchIndex(f + 1, d)};
                        wt[d] = {1 - t, t};
                    } else {
                        double w[4];
                        cubicCoeffs(t, w);
                        for (int j = 0; j < 4; ++j) {
                            idx[d][j] = fetchIndex(f - 1 + j, d);
                            wt[d][j] = w[j];
                        }
                    }
                }
            }
            for (int64_t ch = 0; ch < C; ++ch) {
                const double* img = xv.data() + (n * C + ch) * inSize;
                double acc = 0;
                std::fill(k.begin(), k.end(), 0);
                while (true) {
                    double w = 1;
                    int64_t off = 0;
                    bool zero = false;
                    for (int64_t d = 0; d < nsp; ++d) {
                        const int64_t i = idx[d][k[d]];
                        if (i < 0) { zero = true; break; }
                        w *= wt[d][k[d]];
                        off += i * inStrides[d];
                    }
                    if (!zero) acc += w * img[off];
                    int64_t d = nsp - 1;
                    for (; d >= 0; --d) {
                        if (++k[d] < taps) break;
                        k[d] = 0;
                    }
                    if (d < 0) break;
                }
                y[(n * C + ch) * outSize + o] = acc;
            }
        }
    return {floatsOut(x.dtype, outDims, y, "GridSample")};
}

bool checkGridSample(const Node& n, int64_t opset, std::string* why) {
    auto fail = [&](const std::string& w) { if (why) *why = w; return false; };
    const std::string m = gridMode(n, opset);
    if (m[0] == '?')
        return fail("mode '" + m.substr(1) + "' is not supported at opset " + std::to_string(opset) +
                    (opset >= 20 ? " (linear, nearest or cubic)" : " (bilinear, nearest or bicubic)"));
    const auto pm = n.attrString("padding_mode", "zeros");
    if (pm != "zeros" && pm != "border" && pm != "reflection") return fail("padding_mode '" + pm + "' is not supported");
    return true;
}

// ---- AffineGrid ----

std::vector<TensorPtr> affineGrid(KernelContext& c) {
    const Tensor& theta = c.t(0);
    const auto size = toInt64s(c.t(1));
    const bool align = c.node.attrInt("align_corners", 0) != 0;
    if (size.size() != 4 && size.size() != 5) c.fail("size must be [N, C, H, W] or [N, C, D, H, W]");
    const int64_t nsp = int64_t(size.size()) - 2, N = size[0];
    if (theta.dims != std::vector<int64_t>{N, nsp, nsp + 1})
        c.fail("theta " + shapeText(theta.dims) + " must be [N, " + std::to_string(nsp) + ", " + std::to_string(nsp + 1) + "]");
    const std::vector<int64_t> sp(size.begin() + 2, size.end());
    for (int64_t s : sp)
        if (s < 0) c.fail("size has a negative dim");
    auto base = [&](int64_t i, int64_t len) {
        if (align) return len > 1 ? -1.0 + 2.0 * double(i) / double(len - 1) : -1.0;
        return -1.0 + (2.0 * double(i) + 1.0) / double(len);
    };
    const auto th = toDoubles(theta);
    const int64_t pts = product(sp);
    std::vector<int64_t> outDims{N};
    outDims.insert(outDims.end(), sp.begin(), sp.end());
    outDims.push_back(nsp);
    std::vector<double> out(static_cast<size_t>(N * pts * nsp));
    std::vector<double> p(nsp + 1);
    for (int64_t n = 0; n < N; ++n)
        forEachIndex(sp, [&](int64_t e, const std::vector<int64_t>& pos) {
            // homogeneous point (x, y[, z], 1): x runs along the last spatial dim
            for (int64_t d = 0; d < nsp; ++d) p[d] = base(pos[nsp - 1 - d], sp[nsp - 1 - d]);
            p[nsp] = 1.0;
            for (int64_t r = 0; r < nsp; ++r) {
                double s = 0;
                for (int64_t k = 0; k <= nsp; ++k) s += th[(n * nsp + r) * (nsp + 1) + k] * p[k];
                out[(n * pts + e) * nsp + r] = s;
            }
        });
    return {floatsOut(theta.dtype, outDims, out, "AffineGrid")};
}

// ---- CenterCropPad ----

std::vector<TensorPtr> centerCropPad(KernelContext& c) {
    const Tensor& x = c.t(0);
    const auto shape = toInt64s(c.t(1));
    const int64_t rank = int64_t(x.dims.size());
    std::vector<int64_t> axes = c.node.attrInts("axes");
    if (axes.empty())
        for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    if (axes.size() != shape.size())
        c.fail("shape has " + std::to_string(shape.size()) + " entries for " + std::to_string(axes.size()) + " axes");
    std::vector<int64_t> outDims = x.dims, shift(rank, 0);  // source = out + shift
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t a = normAxis(axes[i], rank, c.where());
        if (seen[a]) c.fail("axes repeat");
        seen[a] = true;
        if (shape[i] < 0) c.fail("shape has a negative entry");
        outDims[a] = shape[i];
        shift[a] = (x.dims[a] - shape[i]) >= 0 ? (x.dims[a] - shape[i]) / 2 : -((shape[i] - x.dims[a]) / 2);
    }
    OutTensor o(x.dtype, outDims);
    const size_t es = elementSize(x.dtype);
    std::memset(o.data<char>(), 0, size_t(o.count()) * es);
    const auto xs = stridesOf(x.dims);
    forEachIndex(outDims, [&](int64_t e, const std::vector<int64_t>& pos) {
        int64_t off = 0;
        for (int64_t d = 0; d < rank; ++d) {
            const int64_t s = pos[d] + shift[d];
            if (s < 0 || s >= x.dims[d]) return;
            off += s * xs[d];
        }
        std::memcpy(o.data<char>() + e * es, x.as<char>() + off * es, es);
    });
    return {o.finish()};
}

// ---- Col2Im ----

std::vector<TensorPtr> col2Im(KernelContext& c) {
    const Tensor& x = c.t(0);
    const auto image = toInt64s(c.t(1)), block = toInt64s(c.t(2));
    const int64_t nsp = int64_t(image.size());
    if (nsp < 1 || int64_t(block.size()) != nsp) c.fail("image_shape and block_shape must have the same non-zero length");
    if (x.dims.size() != 3) c.fail("input must be 3-D [N, C*prod(block_shape), L], got " + shapeText(x.dims));
    const auto dil = c.node.attrInts("dilations", std::vector<int64_t>(nsp, 1));
    const auto str = c.node.attrInts("strides", std::vector<int64_t>(nsp, 1));
    const auto pads = c.node.attrInts("pads", std::vector<int64_t>(2 * nsp, 0));
    if (int64_t(dil.size()) != nsp || int64_t(str.size()) != nsp || int64_t(pads.size()) != 2 * nsp)
        c.fail("dilations/strides/pads do not match the image rank");
    const int64_t kSize = product(block);
    if (kSize <= 0 || x.dims[1] % kSize) c.fail("input dim 1 (" + std::to_string(x.dims[1]) + ") is not a multiple of prod(block_shape)");
    const int64_t N = x.dims[0], C = x.dims[1] / kSize, L = x.dims[2];
    std::vector<int64_t> blocks(nsp);
    for (int64_t d = 0; d < nsp; ++d) {
        if (str[d] < 1 || dil[d] < 1 || block[d] < 1) c.fail("strides, dilations and block_shape must be >= 1");
        blocks[d] = (image[d] + pads[d] + pads[d + nsp] - dil[d] * (block[d] - 1) - 1) / str[d] + 1;
        if (blocks[d] < 1) c.fail("the blocks do not fit the padded image");
    }
    if (product(blocks) != L)
        c.fail("input has " + std::to_string(L) + " blocks, the geometry gives " + std::to_string(product(blocks)));
    std::vector<int64_t> outDims{N, C};
    outDims.insert(outDims.end(), image.begin(), image.end());
    const int64_t imSize = product(image);
    const auto xv = toDoubles(x);
    std::vector<double> y(static_cast<size_t>(N * C * imSize), 0.0);
    std::vector<int64_t> kIdx(nsp), bIdx(nsp);
    for (int64_t n = 0; n < N; ++n)
        for (int64_t ch = 0; ch < C; ++ch)
            for (int64_t kk = 0; kk < kSize; ++kk) {
                int64_t rem = kk;
                for (int64_t d = nsp - 1; d >= 0; --d) { kIdx[d] = rem % block[d]; rem /= block[d]; }
                const double* row = xv.data() + ((n * C + ch) * kSize + kk) * L;
                for (int64_t l = 0; l < L; ++l) {
                    rem = l;
                    for (int64_t d = nsp - 1; d >= 0; --d) { bIdx[d] = rem % blocks[d]; rem /= blocks[d]; }
                    int64_t off = 0;
                    bool inside = true;
                    for (int64_t d = 0; d < nsp && inside; ++d) {
                        const int64_t i = bIdx[d] * str[d] - pads[d] + kIdx[d] * dil[d];
                        inside = i >= 0 && i < image[d];
                        off = off * image[d] + i;
                    }
                    if (inside) y[(n * C + ch) * imSize + off] += row[l];
                }
            }
    return {floatsOut(x.dtype, outDims, y, "Col2Im")};
}

}  // namespace

void registerSpatial(KernelRegistry& r) {
    KernelInfo k;
    k.types = kFloatTypes;
    k.sinceMin = 16;
    k.fn = gridSample;
    k.check = checkGridSample;
    r.add("", "GridSample", k);
    k.check = nullptr;
    k.sinceMin = 20;
    k.fn = affineGrid;
    r.add("", "AffineGrid", k);
    k.sinceMin = 18;
    k.fn = col2Im;
    r.add("", "Col2Im", k);
    KernelInfo cc;
    cc.types = kAllTypes;
    cc.float16ViaFloat = false;
    cc.types.push_back(DataType::BFloat16);
    cc.sinceMin = 18;
    cc.fn = centerCropPad;
    r.add("", "CenterCropPad", std::move(cc));
}

}  // namespace passlens::eval
