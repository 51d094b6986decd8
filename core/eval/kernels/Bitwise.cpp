// BitwiseAnd / BitwiseOr / BitwiseXor (with NumPy broadcasting) and BitwiseNot, opset 18, on the
// integer types.
#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

template <class T> T applyBits(char op, T a, T b) {
    switch (op) {
    case '&': return static_cast<T>(a & b);
    case '|': return static_cast<T>(a | b);
    default: return static_cast<T>(a ^ b);
    }
}

template <class T> void dispatchIntOnly(DataType dt, const std::string& op, T&& f) {
    dispatchNumeric(dt, op, [&](auto tag) {
        using V = decltype(tag);
        if constexpr (std::is_integral_v<V> && !std::is_same_v<V, bool>) f(tag);
        else unsupportedType(op, dt);
    });
}

KernelInfo bitwiseBinary(char op, const char* name) {
    KernelInfo k;
    k.types = kIntTypes;
    k.sinceMin = 18;
    k.float16ViaFloat = false;
    k.fn = [op, name](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& a = c.t(0);
        const Tensor& b = c.t(1);
        if (a.dtype != b.dtype) c.fail("input types differ");
        auto dims = broadcastShapes({a.dims, b.dims}, c.where());
        OutTensor o(a.dtype, dims);
        dispatchIntOnly(a.dtype, name, [&](auto tag) {
            using T = decltype(tag);
            const T* pa = a.as<T>();
            const T* pb = b.as<T>();
            T* y = o.data<T>();
            BroadcastRows br(dims, {a.dims, b.dims});
            br.forEach([&](int64_t off, const int64_t* in, const int64_t* st, int64_t n) {
                for (int64_t i = 0; i < n; ++i) y[off + i] = applyBits<T>(op, pa[in[0] + i * st[0]], pb[in[1] + i * st[1]]);
            });
        });
        return {o.finish()};
    };
    return k;
}

}  // namespace

void registerBitwise(KernelRegistry& r) {
    r.add("", "BitwiseAnd", bitwiseBinary('&', "BitwiseAnd"));
    r.add("", "BitwiseOr", bitwiseBinary('|', "BitwiseOr"));
    r.add("", "BitwiseXor", bitwiseBinary('^', "BitwiseXor"));
    KernelInfo k;
    k.types = kIntTypes;
    k.sinceMin = 18;
    k.float16ViaFloat = false;
    k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        OutTensor o(x.dtype, x.dims);
        dispatchIntOnly(x.dtype, "BitwiseNot", [&](auto tag) {
            using T = decltype(tag);
            for (int64_t i = 0; i < o.count(); ++i) o.data<T>()[i] = static_cast<T>(~x.as<T>()[i]);
        });
        return {o.finish()};
    };
    r.add("", "BitwiseNot", std::move(k));
}

}  // namespace passlens::eval
