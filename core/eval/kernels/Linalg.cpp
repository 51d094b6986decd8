// MatMul and Gemm on OpenBLAS (float); double and integer MatMul by plain loops.
#include <cblas.h>

#include <cstring>

#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

TensorPtr matmul(KernelContext& c, const Tensor& a, const Tensor& b) {
    if (a.dtype != b.dtype) c.fail("input types differ");
    if (a.dims.empty() || b.dims.empty()) c.fail("inputs must not be scalars");
    std::vector<int64_t> ad = a.dims, bd = b.dims;
    const bool aVec = ad.size() == 1, bVec = bd.size() == 1;
    if (aVec) ad.insert(ad.begin(), 1);
    if (bVec) bd.push_back(1);
    const int64_t M = ad[ad.size() - 2], K = ad.back(), N = bd.back();
    if (bd[bd.size() - 2] != K) c.fail("inner dims differ: " + shapeText(a.dims) + " x " + shapeText(b.dims));
    std::vector<int64_t> abatch(ad.begin(), ad.end() - 2), bbatch(bd.begin(), bd.end() - 2);
    auto batch = broadcastShapes({abatch, bbatch}, c.where());
    std::vector<int64_t> outDims = batch;
    if (!aVec) outDims.push_back(M);
    if (!bVec) outDims.push_back(N);
    OutTensor o(a.dtype, outDims);
    const int64_t nb = product(batch);
    // batch offsets through broadcasting
    std::vector<int64_t> aOff, bOff;
    {
        auto bdims = batch;
        bdims.push_back(1);
        auto a2 = abatch, b2 = bbatch;
        a2.push_back(1);
        b2.push_back(1);
        BroadcastRows br(bdims, {a2, b2});
        br.forEach([&](int64_t, const int64_t* in, const int64_t*, int64_t) {
            aOff.push_back(in[0]);
            bOff.push_back(in[1]);
        });
    }
    dispatchNumeric(a.dtype, "MatMul", [&](auto tag) {
        using T = decltype(tag);
        const T* pa = a.as<T>();
        const T* pb = b.as<T>();
        T* y = o.data<T>();
        for (int64_t i = 0; i < nb; ++i) {
            const T* A = pa + aOff[i] * M * K;
            const T* B = pb + bOff[i] * K * N;
            T* C = y + i * M * N;
            if constexpr (std::is_same_v<T, float>) {
                if (M * N * K > 0) {
                    if (M == 1)
                        cblas_sgemv(CblasRowMajor, CblasTrans, int(K), int(N), 1.0f, B, int(N), A, 1, 0.0f, C, 1);
                    else
                        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(M), int(N), int(K), 1.0f, A, int(K), B, int(N), 0.0f, C, int(N));
                }
            } else if constexpr (std::is_same_v<T, double>) {
                if (M * N * K > 0)
                    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(M), int(N), int(K), 1.0, A, int(K), B, int(N), 0.0, C, int(N));
            } else {
                for (int64_t m = 0; m < M; ++m)
                    for (int64_t n = 0; n < N; ++n) {
                        T s = 0;
                        for (int64_t k = 0; k < K; ++k) s = static_cast<T>(s + A[m * K + k] * B[k * N + n]);
                        C[m * N + n] = s;
                    }
            }
        }
    });
    return o.finish();
}

}  // namespace

void registerLinalg(KernelRegistry& r) {
    {   // MatMulInteger: (A - a_zero_point) x (B - b_zero_point) in int32
        KernelInfo k;
        k.types = {DataType::Int8, DataType::UInt8};
        k.sinceMin = 10;
        k.float16ViaFloat = false;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& a = c.t(0);
            const Tensor& b = c.t(1);
            if (a.dims.empty() || b.dims.empty()) c.fail("inputs must not be scalars");
            auto shifted = [&](const Tensor& t, size_t zpIdx, bool perRow) {
                auto v = toInt64s(t);
                std::vector<int64_t> zp{0};
                if (c.has(zpIdx)) zp = toInt64s(c.t(zpIdx));
                const int64_t cols = t.dims.back(), rows = t.dims.size() >= 2 ? t.dims[t.dims.size() - 2] : 1;
                const int64_t n = perRow ? rows : cols;
                if (zp.size() != 1 && int64_t(zp.size()) != n) c.fail("zero point has the wrong length");
                std::vector<int32_t> out(v.size());
                for (size_t i = 0; i < v.size(); ++i) {
                    const int64_t at = perRow ? (int64_t(i) / cols) % rows : int64_t(i) % cols;
                    out[i] = int32_t(v[i] - (zp.size() == 1 ? zp[0] : zp[at]));
                }
                return makeTensorOf<int32_t>(DataType::Int32, t.dims, out);
            };
            auto a32 = shifted(a, 2, true);
            auto b32 = shifted(b, 3, false);
            return {matmul(c, *a32, *b32)};
        };
        r.add("", "MatMulInteger", std::move(k));
    }
    {
        KernelInfo k;
        k.types = {DataType::Float, DataType::Double, DataType::Float16, DataType::Int32, DataType::Int64, DataType::UInt32, DataType::UInt64};
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> { return {matmul(c, c.t(0), c.t(1))}; };
        r.add("", "MatMul", std::move(k));
    }
    {
        KernelInfo k;
        k.types = {DataType::Float, DataType::Float16, DataType::Double};
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& a = c.t(0);
            const Tensor& b = c.t(1);
            if (a.dims.size() != 2 || b.dims.size() != 2) c.fail("A and B must be 2-D");
            if (a.dtype != b.dtype || (c.has(2) && c.t(2).dtype != a.dtype)) c.fail("input types differ");
            const bool ta = c.node.attrInt("transA", 0), tb = c.node.attrInt("transB", 0);
            const double alpha = c.node.attrFloat("alpha", 1.0f), beta = c.node.attrFloat("beta", 1.0f);
            const int64_t M = ta ? a.dims[1] : a.dims[0], K = ta ? a.dims[0] : a.dims[1];
            const int64_t N = tb ? b.dims[0] : b.dims[1], K2 = tb ? b.dims[1] : b.dims[0];
            if (K != K2) c.fail("inner dims differ");
            OutTensor o(a.dtype, {M, N});
            dispatchFloat(a.dtype, "Gemm", [&](auto tag) {
                using T = decltype(tag);
                T* y = o.data<T>();
                if (c.has(2) && beta != 0.0) {
                    const Tensor& cc = c.t(2);
                    broadcastShapes({{M, N}, cc.dims}, c.where());
                    BroadcastRows br({M, N}, {cc.dims});
                    const T* pc = cc.as<T>();
                    br.forEach([&](int64_t off, const int64_t* in, const int64_t* st, int64_t n) {
                        for (int64_t i = 0; i < n; ++i) y[off + i] = static_cast<T>(beta * pc[in[0] + i * st[0]]);
                    });
                }
                const double bt = c.has(2) && beta != 0.0 ? 1.0 : 0.0;
                if (M * N * K == 0) return;
                if constexpr (std::is_same_v<T, float>)
                    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(M), int(N), int(K),
                                float(alpha), a.as<float>(), int(a.dims[1]), b.as<float>(), int(b.dims[1]), float(bt), y, int(N));
                else
                    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(M), int(N), int(K),
                                alpha, a.as<double>(), int(a.dims[1]), b.as<double>(), int(b.dims[1]), bt, y, int(N));
            });
            return {o.finish()};
        };
        k.sinceMin = 6;
        r.add("", "Gemm", std::move(k));
    }
}

}  // namespace passlens::eval
