// Shape and data-movement kernels. They copy elements by size, so every element type (float16
// included) passes through unchanged.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

/// dst[out index] = src[base + sum(idx[d] * inStrides[d])], elements of `es` bytes.
void stridedCopy(const char* src, size_t es, int64_t base, const std::vector<int64_t>& outDims,
                 const std::vector<int64_t>& inStrides, char* dst) {
    const int64_t total = product(outDims);
    if (total == 0) return;
    const size_t r = outDims.size();
    if (r == 0) { std::memcpy(dst, src + base * es, es); return; }
    const int64_t inner = outDims[r - 1], st = inStrides[r - 1];
    std::vector<int64_t> idx(r, 0);
    int64_t off = base;
    for (int64_t row = 0; row < total / inner; ++row) {
        if (st == 1) std::memcpy(dst, src + off * es, inner * es);
        else if (es == 4) {
            const uint32_t* s = reinterpret_cast<const uint32_t*>(src) + off;
            uint32_t* d = reinterpret_cast<uint32_t*>(dst);
            for (int64_t i = 0; i < inner; ++i) d[i] = s[i * st];
        } else {
            for (int64_t i = 0; i < inner; ++i) std::memcpy(dst + i * es, src + (off + i * st) * es, es);
        }
        dst += inner * es;
        for (int64_t d = static_cast<int64_t>(r) - 2; d >= 0; --d) {
            ++idx[d];
            off += inStrides[d];
            if (idx[d] < outDims[d]) break;
            off -= inStrides[d] * outDims[d];
            idx[d] = 0;
        }
    }
}

TensorPtr copyWith(const Tensor& x, const std::vector<int64_t>& outDims, int64_t base, const std::vector<int64_t>& inStrides) {
    OutTensor o(x.dtype, outDims);
    stridedCopy(x.as<char>(), elementSize(x.dtype), base, outDims, inStrides, o.data<char>());
    return o.finish();
}

std::vector<int64_t> intsInput(const KernelContext& c, size_t i) { return toInt64s(c.t(i)); }

std::vector<int64_t> axesFrom(const KernelContext& c, size_t inputIdx, int64_t attrUntil) {
    if (c.opset < attrUntil) return c.node.attrInts("axes");
    return c.has(inputIdx) ? intsInput(c, inputIdx) : std::vector<int64_t>{};
}

KernelInfo movement(KernelFn fn, int64_t since = 1) {
    KernelInfo k;
    k.fn = std::move(fn);
    k.float16ViaFloat = false;
    k.sinceMin = since;
    k.types = kAllTypes;
    k.types.push_back(DataType::BFloat16);
    return k;
}

}  // namespace

void registerShape(KernelRegistry& r) {
    r.add("", "Reshape", movement([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        auto shape = intsInput(c, 1);
        const bool allowZero = c.node.attrInt("allowzero", 0) != 0;
        int64_t known = 1, inferAt = -1;
        for (size_t i = 0; i < shape.size(); ++i) {
            if (shape[i] == 0 && !allowZero) {
                if (i >= x.dims.size()) c.fail("shape has 0 at dim " + std::to_string(i) + " beyond the input rank");
                shape[i] = x.dims[i];
            }
            if (shape[i] == -1) {
                if (inferAt >= 0) c.fail("shape has more than one -1");
                inferAt = static_cast<int64_t>(i);
            } else if (shape[i] < 0) c.fail("negative dim in shape");
            else if (__builtin_mul_overflow(known, shape[i], &known))
                c.fail("cannot reshape to " + shapeText(shape) + ": its element count overflows int64");
        }
        const int64_t n = x.elementCount();
        if (inferAt >= 0) {
            if (known == 0 || n % known) c.fail("cannot reshape " + shapeText(x.dims) + " to " + shapeText(shape));
            shape[inferAt] = n / known;
        } else if (known != n) c.fail("cannot reshape " + shapeText(x.dims) + " to " + shapeText(shape));
        return {reshaped(c.ptr(0), shape)};
    }, 5));

    r.add("", "Flatten", movement([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        const int64_t rank = int64_t(x.dims.size());
        int64_t axis = c.node.attrInt("axis", 1);
        if (axis < -rank || axis > rank) c.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
        if (axis < 0) axis += rank;
        return {reshaped(c.ptr(0), {product(x.dims, 0, axis), product(x.dims, axis)})};
    }));

    r.add("", "Transpose", movement([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        const int64_t rank = int64_t(x.dims.size());
        auto perm = c.node.attrInts("perm");
        if (perm.empty())
            for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
        if (int64_t(perm.size()) != rank) c.fail("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
        auto st = stridesOf(x.dims);
        std::vector<int64_t> outDims, inStrides;
        std::vector<bool> seen(rank, false);
        for (int64_t p : perm) {
            p = normAxis(p, rank, c.where());
            if (seen[p]) c.fail("perm repeats an axis");
            seen[p] = true;
            outDims.push_back(x.dims[p]);
            inStrides.push_back(st[p]);
        }
        return {copyWith(x, outDims, 0, inStrides)};
    }));

    auto squeeze = [](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        const int64_t rank = int64_t(x.dims.size());
        auto axes = axesFrom(c, 1, 13);
        std::vector<bool> drop(rank, false);
        if (axes.empty()) {
            for (int64_t i = 0; i < rank; ++i) drop[i] = x.dims[i] == 1;
        } else {
            for (int64_t a : axes) {
                a = normAxis(a, rank, c.where());
                if (x.dims[a] != 1) c.fail("cannot squeeze axis " + std::to_string(a) + " of shape " + shapeText(x.dims));
                drop[a] = true;
            }
        }
        std::vector<int64_t> dims;
        for (int64_t i = 0; i < rank; ++i)
            if (!drop[i]) dims.push_back(x.dims[i]);
        return {reshaped(c.ptr(0), dims)};
    };
    r.add("", "Squeeze", movement(squeeze));

    r.add("", "Unsqueeze", movement([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        auto axes = axesFrom(c, 1, 13);
        const int64_t outRank = int64_t(x.dims.size() + axes.size());
        std::vector<bool> ins(outRank, false);
        for (int64_t a : axes) {
            a = normAxis(a, outRank, c.where());
            if (ins[a]) c.fail("axes repeat");
            ins[a] = true;
        }
        std::vector<int64_t> dims;
        size_t k = 0;
        for (int64_t i = 0; i < outRank; ++i) dims.push_back(ins[i] ? 1 : x.dims[k++]);
        return {reshaped(c.ptr(0), dims)};
    }));

    r.add("", "Concat", movement([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& first = c.t(0);
        const int64_t rank = int64_t(first.dims.size());
        const int64_t axis = normAxis(c.node.attrInt("axis", 0), rank, c.where());
        std::vector<int64_t> dims = first.dims;
        dims[axis] = 0;
        for (size_t i = 0; i < c.in.size(); ++i) {
            const Tensor& t = c.t(i);
            if (t.dtype != first.dtype) c.fail("input types differ");
            if (int64_t(t.dims.size()) != rank) c.fail("inputs have different ranks");
            for (int64_t d = 0; d < rank; ++d)
                if (d != axis && t.dims[d] != first.dims[d])
                    c.fail("input shapes " + shapeText(first.dims) + " and " + shapeText(t.dims) + " differ off the axis");
            dims[axis] += t.dims[axis];
        }
        OutTensor o(first.dtype, dims);
        const size_t es = elementSize(first.dtype);
        const int64_t outer = product(dims, 0, axis), inner = product(dims, axis + 1);
        char* out = o.data<char>();
        const int64_t outRow = dims[axis] * inner;
        int64_t at = 0;
        for (size_t i = 0; i < c.in.size(); ++i) {
            const Tensor& t = c.t(i);
            const int64_t chunk = t.dims[axis] * inner;
            for (int64_t k = 0; k < outer; ++k)
                std::memcpy(out + (k * outRow + at) * es, t.as<char>() + k * chunk * es, chunk * es);
            at += chunk;
        }
        return {o.finish()};
    }));

    r.add("", "Split", movement([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        const int64_t rank = int64_t(x.dims.size());
        const int64_t axis = normAxis(c.node.attrInt("axis", 0), rank, c.where());
        const size_t nOut = c.node.outputs.size();
        std::vector<int64_t> split = c.opset < 13 ? c.node.attrInts("split") : (c.has(1) ? intsInput(c, 1) : std::vector<int64_t>{});
        const int64_t len = x.dims[axis];
        if (nOut == 0) c.fail("Split has no outputs");
        if (split.empty()) {
            if (c.opset >= 18 && c.node.attrInt("num_outputs", int64_t(nOut)) <= 0) c.fail("num_outputs must be >= 1");
            const int64_t n = c.opset >= 18 ? c.node.attrInt("num_outputs", int64_t(nOut)) : int64_t(nOut);
            if (n != int64_t(nOut)) c.fail("num_outputs=" + std::to_string(n) + " but the node has " + std::to_string(nOut) + " outputs");
            const int64_t chunk = (len + n - 1) / n;
            for (int64_t i = 0; i < n; ++i) split.push_back(std::max<int64_t>(0, std::min(chunk, len - i * chunk)));
            if (c.opset < 18 && len % n) c.fail("axis length " + std::to_string(len) + " does not split evenly into " + std::to_string(n));
        }
        if (std::accumulate(split.begin(), split.end(), int64_t(0)) != len) c.fail("split sizes do not sum to the axis length");
        auto st = stridesOf(x.dims);
        std::vector<TensorPtr> outs;
        int64_t start = 0;
        for (int64_t s : split) {
            auto dims = x.dims;
            dims[axis] = s;
            outs.push_back(copyWith(x, dims, start * st[axis], st));
            start += s;
        }
        return outs;
    }));

    r.add("", "Slice", movement([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        const int64_t rank = int64_t(x.dims.size());
        std::vector<int64_t> starts, ends, axes, steps;
        if (c.opset < 10) {
            starts = c.node.attrInts("starts");
            ends = c.node.attrInts("ends");
            axes = c.node.attrInts("axes");
        } else {
            starts = intsInput(c, 1);
            ends = intsInput(c, 2);
            if (c.has(3)) axes = intsInput(c, 3);
            if (c.has(4)) steps = intsInput(c, 4);
        }
        if (axes.empty())
            for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
        if (steps.empty()) steps.assign(starts.size(), 1);
        if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
            c.fail("starts/ends/axes/steps have different lengths");
        auto st = stridesOf(x.dims);
        std::vector<int64_t> outDims = x.dims, inStrides = st;
        int64_t base = 0;
        for (size_t i = 0; i < starts.size(); ++i) {
            const int64_t a = normAxis(axes[i], rank, c.where());
            const int64_t dim = x.dims[a], step = steps[i];
            if (step == 0) c.fail("step is 0");
            int64_t s = starts[i], e = ends[i];
            if (s < 0) s += dim;
            if (e < 0) e += dim;
            int64_t count;
            if (step > 0) {
                s = std::clamp<int64_t>(s, 0, dim);
                e = std::clamp<int64_t>(e, 0, dim);
                count = e > s ? (e - s + step - 1) / step : 0;
            } else {
                s = std::clamp<int64_t>(s, 0, dim - 1);
                e = std::clamp<int64_t>(e, -1, dim - 1);
                count = s > e ? (s - e + (-step) - 1) / (-step) : 0;
            }
            outDims[a] = count;
            if (count > 0) base += s * st[a];
            inStrides[a] = st[a] * step;
        }
        return {copyWith(x, outDims, product(outDims) ? base : 0, inStrides)};
    }));

    r.add("", "Gather", movement([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        const Tensor& idxT = c.t(1);
        const int64_t rank = int64_t(x.dims.size());
        const int64_t axis = normAxis(c.node.attrInt("axis", 0), rank, c.where());
        auto idx = toInt64s(idxT);
        std::vector<int64_t> dims(x.dims.begin(), x.dims.begin() + axis);
        dims.insert(dims.end(), idxT.dims.begin(), idxT.dims.end());
        dims.insert(dims.end(), x.dims.begin() + axis + 1, x.dims.end());
        OutTensor o(x.dtype, dims);
        const size_t es = elementSize(x.dtype);
        const int64_t outer = product(x.dims, 0, axis), inner = product(x.dims, axis + 1), len = x.dims[axis];
        char* out = o.data<char>();
        for (int64_t k = 0; k < outer; ++k)
            for (size_t j = 0; j < idx.size(); ++j) {
                int64_t i = idx[j] < 0 ? idx[j] + len : idx[j];
                if (i < 0 || i >= len) c.fail("index " + std::to_string(idx[j]) + " is out of range for axis length " + std::to_string(len));
                std::memcpy(out, x.as<char>() + ((k * len + i) * inner) * es, inner * es);
                out += inner * es;
            }
        return {o.finish()};
    }));

    r.add("", "GatherElements", movement([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        const Tensor& idxT = c.t(1);
        const int64_t rank = int64_t(x.dims.size());
        if (int64_t(idxT.dims.size()) != rank) c.fail("indices rank differs from data rank");
        const int64_t axis = normAxis(c.node.attrInt("axis", 0), rank, c.where());
        auto idx = toInt64s(idxT);
        OutTensor o(x.dtype, idxT.dims);
        const size_t es = elementSize(x.dtype);
        auto xs = stridesOf(x.dims);
        forEachIndex(idxT.dims, [&](int64_t e, const std::vector<int64_t>& pos) {
            const int64_t off = offsetWithAxisIndex(pos, axis, idx[e], x.dims, xs);
            if (off < 0) c.fail("index out of range");
            std::memcpy(o.data<char>() + e * es, x.as<char>() + off * es, es);
        });
        return {o.finish()};
    }, 11));

    r.add("", "Expand", movement([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        auto shape = intsInput(c, 1);
        auto dims = broadcastShapes({x.dims, shape}, c.where());
        BroadcastRows br(dims, {x.dims});
        return {copyWith(x, dims, 0, br.strides[0])};
    }, 8));

    r.add("", "Tile", movement([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        auto reps = intsInput(c, 1);
        if (reps.size() != x.dims.size()) c.fail("repeats has the wrong length");
        std::vector<int64_t> dims = x.dims;
        for (size_t i = 0; i < dims.size(); ++i) dims[i] *= reps[i];
        OutTensor o(x.dtype, dims);
        const size_t es = elementSize(x.dtype);
        const int64_t rank = int64_t(dims.size());
        auto xs = stridesOf(x.dims);
        std::vector<int64_t> pos(rank, 0);
        for (int64_t e = 0; e < o.count(); ++e) {
            int64_t off = 0;
            for (int64_t d = 0; d < rank; ++d) off += (pos[d] % x.dims[d]) * xs[d];
            std::memcpy(o.data<char>() + e * es, x.as<char>() + off * es, es);
            for (int64_t d = rank - 1; d >= 0; --d) {
                if (++pos[d] < dims[d]) break;
                pos[d] = 0;
            }
        }
        return {o.finish()};
    }, 6));

    {
        KernelInfo k = movement([](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& x = c.t(0);
            const int64_t rank = int64_t(x.dims.size());
            std::vector<int64_t> pads;
            const std::string mode = c.node.attrString("mode", "constant");
            double value = 0;
            if (c.opset < 11) {
                pads = c.node.attrInts("pads");
                value = c.node.attrFloat("value", 0.0f);
            } else {
                pads = intsInput(c, 1);
                if (c.has(2) && c.t(2).elementCount() > 0) value = toDoubles(c.t(2))[0];
                if (c.has(3)) {
                    auto axes = intsInput(c, 3);
                    std::vector<int64_t> full(2 * rank, 0);
                    for (size_t i = 0; i < axes.size(); ++i) {
                        const int64_t a = normAxis(axes[i], rank, c.where());
                        full[a] = pads[i];
                        full[a + rank] = pads[i + axes.size()];
                    }
                    pads = full;
                }
            }
            if (int64_t(pads.size()) != 2 * rank) c.fail("pads must have 2*rank entries");
            std::vector<int64_t> dims(rank);
            for (int64_t d = 0; d < rank; ++d) {
                dims[d] = x.dims[d] + pads[d] + pads[d + rank];
                if (dims[d] < 0) c.fail("pads make a negative dim");
            }
            OutTensor o(x.dtype, dims);
            const size_t es = elementSize(x.dtype);
            // the fill value in the element type
            auto fill = castTensor(*makeTensorOf<double>(DataType::Double, {}, {value}), x.dtype == DataType::Float16 ? DataType::Float16 : x.dtype);
            auto xs = stridesOf(x.dims);
            std::vector<int64_t> pos(rank, 0);
            for (int64_t e = 0; e < o.count(); ++e) {
                int64_t off = 0;
                bool outside = false;
                for (int64_t d = 0; d < rank && !outside; ++d) {
                    int64_t p = pos[d] - pads[d];
                    const int64_t n = x.dims[d];
                    if (p < 0 || p >= n) {
                        if (mode == "constant" || n == 0) { outside = true; break; }
                        if (mode == "edge") p = p < 0 ? 0 : n - 1;
                        else if (mode == "reflect") {
                            if (n == 1) p = 0;
                            else {
                                const int64_t period = 2 * (n - 1);
                                p = ((p % period) + period) % period;
                                if (p >= n) p = period - p;
                            }
                        } else if (mode == "wrap") p = ((p % n) + n) % n;
                        else c.unsupported("pad mode '" + mode + "'");
                    }
                    off += p * xs[d];
                }
                std::memcpy(o.data<char>() + e * es, outside ? fill->as<char>() : x.as<char>() + off * es, es);
                for (int64_t d = rank - 1; d >= 0; --d) {
                    if (++pos[d] < dims[d]) break;
                    pos[d] = 0;
                }
            }
            return {o.finish()};
        }, 2);
        k.check = [](const Node& n, int64_t, std::string* why) {
            auto mode = n.attrString("mode", "constant");
            if (mode == "constant" || mode == "reflect" || mode == "edge" || mode == "wrap") return true;
            if (why) *why = "pad mode '" + mode + "' is not supported";
            return false;
        };
        r.add("", "Pad", std::move(k));
    }

    r.add("", "Shape", movement([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        const int64_t rank = int64_t(x.dims.size());
        int64_t start = c.node.attrInt("start", 0), end = c.node.attrInt("end", rank);
        if (start < 0) start += rank;
        if (end < 0) end += rank;
        start = std::clamp<int64_t>(start, 0, rank);
        end = std::clamp<int64_t>(end, 0, rank);
        std::vector<int64_t> dims(x.dims.begin() + start, x.dims.begin() + std::max(start, end));
        return {int64Tensor(dims, {int64_t(dims.size())})};
    }));
    r.add("", "Size", movement([](KernelContext& c) -> std::vector<TensorPtr> { return {scalarInt64(c.t(0).elementCount())}; }));

    {
        KernelInfo k = movement([](KernelContext& c) -> std::vector<TensorPtr> {
            auto dims = intsInput(c, 0);
            TensorPtr value = makeTensorOf<float>(DataType::Float, {1}, {0.0f});
            if (auto* a = c.node.attr("value"); a && a->t) value = a->t;
            if (value->elementCount() != 1) c.fail("value must hold one element");
            OutTensor o(value->dtype, dims);
            const size_t es = elementSize(value->dtype);
            for (int64_t i = 0; i < o.count(); ++i) std::memcpy(o.data<char>() + i * es, value->data.data(), es);
            return {o.finish()};
        }, 9);
        k.types = kIntTypes;
        r.add("", "ConstantOfShape", std::move(k));
    }

    {
        KernelInfo k;
        k.types = {DataType::Float, DataType::Double, DataType::Int16, DataType::Int32, DataType::Int64};
        k.sinceMin = 11;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& s = c.t(0);
            return {dispatchNumeric(s.dtype, "Range", [&](auto tag) {
                using T = decltype(tag);
                for (size_t i = 0; i < 3; ++i)
                    if (c.t(i).dtype != s.dtype || c.t(i).elementCount() != 1) c.fail("start, limit and delta must be scalars of one type");
                const T start = s.as<T>()[0], limit = c.t(1).as<T>()[0], delta = c.t(2).as<T>()[0];
                if (delta == T(0)) c.fail("delta is 0");
                const double n = std::ceil((double(limit) - double(start)) / double(delta));
                const int64_t count = std::max<int64_t>(0, int64_t(n));
                OutTensor o(s.dtype, {count});
                for (int64_t i = 0; i < count; ++i) o.data<T>()[i] = static_cast<T>(start + T(i) * delta);
                return o.finish();
            })};
        };
        r.add("", "Range", std::move(k));
    }

    r.add("", "DepthToSpace", movement([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        if (x.dims.size() != 4) c.fail("input must be 4-D");
        const int64_t b = c.node.attrInt("blocksize", 1), N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
        if (b <= 0 || C % (b * b)) c.fail("channels not divisible by blocksize^2");
        const bool crd = c.node.attrString("mode", "DCR") == "CRD";
        const int64_t oc = C / (b * b);
        // View as 6-D, then transpose.
        std::vector<int64_t> v6 = crd ? std::vector<int64_t>{N, oc, b, b, H, W} : std::vector<int64_t>{N, b, b, oc, H, W};
        auto st = stridesOf(v6);
        std::vector<int64_t> perm = crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2};
        std::vector<int64_t> od, is;
        for (auto p : perm) { od.push_back(v6[p]); is.push_back(st[p]); }
        auto t = copyWith(x, od, 0, is);
        return {reshaped(t, {N, oc, H * b, W * b})};
    }));
    r.add("", "SpaceToDepth", movement([](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        if (x.dims.size() != 4) c.fail("input must be 4-D");
        const int64_t b = c.node.attrInt("blocksize", 1), N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
        if (b <= 0 || H % b || W % b) c.fail("spatial dims not divisible by blocksize");
        std::vector<int64_t> v6{N, C, H / b, b, W / b, b};
        auto st = stridesOf(v6);
        std::vector<int64_t> perm{0, 3, 5, 1, 2, 4}, od, is;
        for (auto p : perm) { od.push_back(v6[p]); is.push_back(st[p]); }
        auto t = copyWith(x, od, 0, is);
        return {reshaped(t, {N, C * b * b, H / b, W / b})};
    }));
}

}  // namespace passlens::eval
