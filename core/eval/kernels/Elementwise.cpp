// Elementwise kernels: unary math and activations, binary arithmetic/comparison/logic with NumPy
// broadcasting, variadic Sum/Min/Max/Mean, Where, Clip, Cast, Identity, Constant.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

struct Params {
    float alpha = 0, beta = 0, gamma = 0;
    bool tanhApprox = false;
};
using ParamFn = Params (*)(const Node&);

template <class Op>
void unaryFloat(KernelRegistry& r, const char* name, Op op, ParamFn params = nullptr, int64_t since = 1) {
    KernelInfo k;
    k.types = kFloatTypes;
    k.sinceMin = since;
    k.fn = [op, params, name](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        const Params p = params ? params(c.node) : Params{};
        return {dispatchFloat(x.dtype, name, [&](auto tag) {
            using T = decltype(tag);
            OutTensor o(x.dtype, x.dims);
            const T* a = x.as<T>();
            T* y = o.data<T>();
            for (int64_t i = 0, n = o.count(); i < n; ++i) y[i] = static_cast<T>(op(a[i], p));
            return o.finish();
        })};
    };
    r.add("", name, std::move(k));
}

template <class Op>
void unaryNumeric(KernelRegistry& r, const char* name, Op op, std::vector<DataType> types = kNumericTypes) {
    KernelInfo k;
    k.types = std::move(types);
    k.fn = [op, name](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& x = c.t(0);
        return {dispatchNumeric(x.dtype, name, [&](auto tag) {
            using T = decltype(tag);
            OutTensor o(x.dtype, x.dims);
            const T* a = x.as<T>();
            T* y = o.data<T>();
            for (int64_t i = 0, n = o.count(); i < n; ++i) y[i] = static_cast<T>(op(a[i]));
            return o.finish();
        })};
    };
    r.add("", name, std::move(k));
}

/// out[i] = op(a[i'], b[i'']) with broadcasting; A, B input element types, O output type.
template <class A, class B, class O, class Op>
TensorPtr broadcastBinary(const Tensor& a, const Tensor& b, DataType outType, const std::string& what, Op op) {
    auto dims = broadcastShapes({a.dims, b.dims}, what);
    OutTensor o(outType, dims);
    const A* pa = a.as<A>();
    const B* pb = b.as<B>();
    O* y = o.data<O>();
    if (a.dims == b.dims) {
        for (int64_t i = 0, n = o.count(); i < n; ++i) y[i] = static_cast<O>(op(pa[i], pb[i]));
    } else if (b.elementCount() == 1 && a.dims == dims) {
        const B s = pb[0];
        for (int64_t i = 0, n = o.count(); i < n; ++i) y[i] = static_cast<O>(op(pa[i], s));
    } else {
        BroadcastRows br(dims, {a.dims, b.dims});
        br.forEach([&](int64_t off, const int64_t* in, const int64_t* st, int64_t n) {
            const A* x = pa + in[0];
            const B* z = pb + in[1];
            O* out = y + off;
            for (int64_t i = 0; i < n; ++i) out[i] = static_cast<O>(op(x[i * st[0]], z[i * st[1]]));
        });
    }
    return o.finish();
}

template <class Op>
void binaryArith(KernelRegistry& r, const char* name, Op op, std::vector<DataType> types = kNumericTypes) {
    KernelInfo k;
    k.types = std::move(types);
    k.fn = [op, name](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& a = c.t(0);
        const Tensor& b = c.t(1);
        if (a.dtype != b.dtype) c.fail("input types differ");
        return {dispatchAll(a.dtype, name, [&](auto tag) {
            using T = decltype(tag);
            if constexpr (std::is_same_v<T, bool>) { unsupportedType(name, a.dtype); return TensorPtr{}; }
            else return broadcastBinary<T, T, T>(a, b, a.dtype, c.where(), [&](T x, T y) { return op(x, y, c); });
        })};
    };
    r.add("", name, std::move(k));
}

template <class Op>
void comparison(KernelRegistry& r, const char* name, Op op, std::vector<DataType> types = kAllTypes) {
    KernelInfo k;
    k.types = std::move(types);
    k.float16ViaFloat = true;
    k.fn = [op, name](KernelContext& c) -> std::vector<TensorPtr> {
        const Tensor& a = c.t(0);
        const Tensor& b = c.t(1);
        if (a.dtype != b.dtype) c.fail("input types differ");
        return {dispatchAll(a.dtype, name, [&](auto tag) {
            using T = decltype(tag);
            return broadcastBinary<T, T, bool>(a, b, DataType::Bool, c.where(), op);
        })};
    };
    r.add("", name, std::move(k));
}

template <class T> T intDiv(T x, T y, const KernelContext& c) {
    if constexpr (std::is_integral_v<T>) {
        if (y == 0) c.fail("integer division by zero");
        return static_cast<T>(x / y);
    } else return x / y;
}

template <class Op>
TensorPtr variadicFold(KernelContext& c, const char* name, Op op) {
    TensorPtr acc = c.ptr(0);
    for (size_t i = 1; i < c.in.size(); ++i) {
        const Tensor& b = c.t(i);
        if (b.dtype != acc->dtype) c.fail("input types differ");
        acc = dispatchNumeric(acc->dtype, name, [&](auto tag) {
            using T = decltype(tag);
            return broadcastBinary<T, T, T>(*acc, b, acc->dtype, c.where(), op);
        });
    }
    if (c.in.size() == 1) acc = castTensor(*acc, acc->dtype);  // fresh copy, same contents
    return acc;
}

template <class T> T clampTo(T x, T lo, T hi) { return x < lo ? lo : (x > hi ? hi : x); }

}  // namespace

void registerElementwise(KernelRegistry& r) {
    // --- unary float math ---
    unaryFloat(r, "Exp", [](auto x, const Params&) { return std::exp(x); });
    unaryFloat(r, "Log", [](auto x, const Params&) { return std::log(x); });
    unaryFloat(r, "Sqrt", [](auto x, const Params&) { return std::sqrt(x); });
    unaryFloat(r, "Reciprocal", [](auto x, const Params&) { return decltype(x)(1) / x; });
    unaryFloat(r, "Floor", [](auto x, const Params&) { return std::floor(x); });
    unaryFloat(r, "Ceil", [](auto x, const Params&) { return std::ceil(x); });
    unaryFloat(r, "Round", [](auto x, const Params&) { return std::nearbyint(x); });
    unaryFloat(r, "Sin", [](auto x, const Params&) { return std::sin(x); });
    unaryFloat(r, "Cos", [](auto x, const Params&) { return std::cos(x); });
    unaryFloat(r, "Tan", [](auto x, const Params&) { return std::tan(x); });
    unaryFloat(r, "Asin", [](auto x, const Params&) { return std::asin(x); });
    unaryFloat(r, "Acos", [](auto x, const Params&) { return std::acos(x); });
    unaryFloat(r, "Atan", [](auto x, const Params&) { return std::atan(x); });
    unaryFloat(r, "Sinh", [](auto x, const Params&) { return std::sinh(x); });
    unaryFloat(r, "Cosh", [](auto x, const Params&) { return std::cosh(x); });
    unaryFloat(r, "Asinh", [](auto x, const Params&) { return std::asinh(x); });
    unaryFloat(r, "Acosh", [](auto x, const Params&) { return std::acosh(x); });
    unaryFloat(r, "Atanh", [](auto x, const Params&) { return std::atanh(x); });
    unaryFloat(r, "Erf", [](auto x, const Params&) { return std::erf(x); });
    unaryFloat(r, "Tanh", [](auto x, const Params&) { return std::tanh(x); });
    unaryFloat(r, "Sigmoid", [](auto x, const Params&) {
        using T = decltype(x);
        // Stable for large |x|.
        return x >= 0 ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
    });
    auto alphaBeta = [](float a, float b) {
        return [a, b](const Node& n) { return Params{n.attrFloat("alpha", a), n.attrFloat("beta", b), 0, false}; };
    };
    (void)alphaBeta;
    unaryFloat(r, "LeakyRelu", [](auto x, const Params& p) { return x >= 0 ? x : x * decltype(x)(p.alpha); },
               [](const Node& n) { return Params{n.attrFloat("alpha", 0.01f), 0, 0, false}; });
    unaryFloat(r, "Elu", [](auto x, const Params& p) { return x >= 0 ? x : decltype(x)(p.alpha) * (std::exp(x) - 1); },
               [](const Node& n) { return Params{n.attrFloat("alpha", 1.0f), 0, 0, false}; });
    unaryFloat(r, "Celu", [](auto x, const Params& p) {
        using T = decltype(x);
        const T a = T(p.alpha);
        return std::max(T(0), x) + std::min(T(0), a * (std::exp(x / a) - 1));
    }, [](const Node& n) { return Params{n.attrFloat("alpha", 1.0f), 0, 0, false}; });
    unaryFloat(r, "Selu", [](auto x, const Params& p) {
        using T = decltype(x);
        return T(p.gamma) * (x > 0 ? x : T(p.alpha) * std::exp(x) - T(p.alpha));
    }, [](const Node& n) { return Params{n.attrFloat("alpha", 1.67326319217681884765625f), 0, n.attrFloat("gamma", 1.05070102214813232421875f), false}; });
    unaryFloat(r, "ThresholdedRelu", [](auto x, const Params& p) { return x > decltype(x)(p.alpha) ? x : decltype(x)(0); },
               [](const Node& n) { return Params{n.attrFloat("alpha", 1.0f), 0, 0, false}; });
    unaryFloat(r, "HardSigmoid", [](auto x, const Params& p) {
        using T = decltype(x);
        return std::max(T(0), std::min(T(1), T(p.alpha) * x + T(p.beta)));
    }, [](const Node& n) { return Params{n.attrFloat("alpha", 0.2f), n.attrFloat("beta", 0.5f), 0, false}; });
    unaryFloat(r, "HardSwish", [](auto x, const Params&) {
        using T = decltype(x);
        return x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5)));
    }, nullptr, 14);
    unaryFloat(r, "Softplus", [](auto x, const Params&) {
        using T = decltype(x);
        return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
    });
    unaryFloat(r, "Softsign", [](auto x, const Params&) { return x / (decltype(x)(1) + std::fabs(x)); });
    unaryFloat(r, "Mish", [](auto x, const Params&) {
        using T = decltype(x);
        const T sp = x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
        return x * std::tanh(sp);
    }, nullptr, 18);
    unaryFloat(r, "Gelu", [](auto x, const Params& p) {
        using T = decltype(x);
        if (p.tanhApprox)
            return T(0.5) * x * (T(1) + std::tanh(T(0.7978845608028654) * (x + T(0.044715) * x * x * x)));
        return T(0.5) * x * (T(1) + std::erf(x * T(0.7071067811865476)));
    }, [](const Node& n) { return Params{0, 0, 0, n.attrString("approximate", "none") == "tanh"}; }, 20);

    // --- unary numeric ---
    unaryNumeric(r, "Abs", [](auto x) {
        using T = decltype(x);
        if constexpr (std::is_unsigned_v<T>) return x;
        else return x < T(0) ? T(-x) : x;
    });
    unaryNumeric(r, "Neg", [](auto x) { return -x; });
    unaryNumeric(r, "Relu", [](auto x) { return x > decltype(x)(0) ? x : decltype(x)(0); });
    unaryNumeric(r, "Sign", [](auto x) {
        using T = decltype(x);
        return T(x > T(0)) - T(x < T(0));
    });

    unaryFloat(r, "Shrink", [](auto x, const Params& p) {
        using T = decltype(x);
        return x < T(-p.alpha) ? T(x + T(p.beta)) : (x > T(p.alpha) ? T(x - T(p.beta)) : T(0));
    }, [](const Node& n) { return Params{n.attrFloat("lambd", 0.5f), n.attrFloat("bias", 0.0f), 0, false}; }, 9);
    {   // BitShift on unsigned integers
        KernelInfo k;
        k.types = {DataType::UInt8, DataType::UInt16, DataType::UInt32, DataType::UInt64};
        k.sinceMin = 11;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& a = c.t(0);
            const Tensor& b = c.t(1);
            if (a.dtype != b.dtype) c.fail("input types differ");
            const bool left = c.node.attrString("direction", "") == "LEFT";
            return {dispatchNumeric(a.dtype, "BitShift", [&](auto tag) {
                using T = decltype(tag);
                return broadcastBinary<T, T, T>(a, b, a.dtype, c.where(), [&](T x, T y) -> T {
                    if constexpr (std::is_integral_v<T>) {
                        if (y >= T(sizeof(T) * 8)) return T(0);
                        return left ? T(x << y) : T(x >> y);
                    } else return x;
                });
            })};
        };
        k.check = [](const Node& n, int64_t, std::string* why) {
            auto d = n.attrString("direction", "");
            if (d == "LEFT" || d == "RIGHT") return true;
            if (why) *why = "direction must be LEFT or RIGHT";
            return false;
        };
        r.add("", "BitShift", std::move(k));
    }

    // IsNaN / IsInf → bool.
    {
        KernelInfo k;
        k.types = kFloatTypes;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& x = c.t(0);
            const bool neg = c.node.attrInt("detect_negative", 1) != 0, pos = c.node.attrInt("detect_positive", 1) != 0;
            const bool isNan = c.node.opType == "IsNaN";
            OutTensor o(DataType::Bool, x.dims);
            dispatchFloat(x.dtype, c.node.opType, [&](auto tag) {
                using T = decltype(tag);
                const T* a = x.as<T>();
                bool* y = o.data<bool>();
                for (int64_t i = 0; i < o.count(); ++i)
                    y[i] = isNan ? std::isnan(a[i]) : (std::isinf(a[i]) && ((a[i] > 0 && pos) || (a[i] < 0 && neg)));
            });
            return {o.finish()};
        };
        r.add("", "IsNaN", k);
        r.add("", "IsInf", k);
    }

    // --- binary arithmetic ---
    binaryArith(r, "Add", [](auto x, auto y, const KernelContext&) { return x + y; });
    binaryArith(r, "Sub", [](auto x, auto y, const KernelContext&) { return x - y; });
    binaryArith(r, "Mul", [](auto x, auto y, const KernelContext&) { return x * y; });
    binaryArith(r, "Div", [](auto x, auto y, const KernelContext& c) { return intDiv(x, y, c); });
    {   // Mod: fmod=0 takes the divisor's sign (Python), fmod=1 the dividend's (C).
        KernelInfo k;
        k.types = kNumericTypes;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& a = c.t(0);
            const Tensor& b = c.t(1);
            if (a.dtype != b.dtype) c.fail("input types differ");
            const bool cmod = c.node.attrInt("fmod", 0) != 0;
            if (!cmod && isFloatingPoint(a.dtype)) c.fail("fmod must be 1 for floating-point inputs");
            return {dispatchNumeric(a.dtype, "Mod", [&](auto tag) {
                using T = decltype(tag);
                return broadcastBinary<T, T, T>(a, b, a.dtype, c.where(), [&](T x, T y) -> T {
                    if constexpr (std::is_floating_point_v<T>) return std::fmod(x, y);
                    else {
                        if (y == 0) c.fail("integer modulo by zero");
                        T m = static_cast<T>(x % y);
                        if constexpr (std::is_signed_v<T>)
                            if (!cmod && m != 0 && ((m < 0) != (y < 0))) m = static_cast<T>(m + y);
                        return m;
                    }
                });
            })};
        };
        r.add("", "Mod", std::move(k));
    }
    {   // Pow: exponent may have another type; computed in double.
        KernelInfo k;
        k.types = {DataType::Float, DataType::Double, DataType::Float16, DataType::Int32, DataType::Int64};
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& a = c.t(0);
            auto b = castTensor(c.t(1), DataType::Double);
            return {dispatchNumeric(a.dtype, "Pow", [&](auto tag) {
                using T = decltype(tag);
                return broadcastBinary<T, double, T>(a, *b, a.dtype, c.where(), [](T x, double y) {
                    if constexpr (std::is_same_v<T, float>) {
                        if (y == 2.0) return x * x;
                        if (y == 0.5) return std::sqrt(x);
                        return static_cast<float>(std::pow(static_cast<double>(x), y));
                    } else return static_cast<T>(std::pow(static_cast<double>(x), y));
                });
            })};
        };
        r.add("", "Pow", std::move(k));
    }
    {   // PRelu: slope broadcasts to X.
        KernelInfo k;
        k.types = kNumericTypes;
        k.sinceMin = 7;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& a = c.t(0);
            const Tensor& b = c.t(1);
            if (a.dtype != b.dtype) c.fail("input types differ");
            return {dispatchNumeric(a.dtype, "PRelu", [&](auto tag) {
                using T = decltype(tag);
                return broadcastBinary<T, T, T>(a, b, a.dtype, c.where(), [](T x, T s) { return x < T(0) ? T(x * s) : x; });
            })};
        };
        r.add("", "PRelu", std::move(k));
    }

    // --- comparisons and logic ---
    comparison(r, "Equal", [](auto x, auto y) { return x == y; });
    comparison(r, "Less", [](auto x, auto y) { return x < y; }, kNumericTypes);
    comparison(r, "Greater", [](auto x, auto y) { return x > y; }, kNumericTypes);
    comparison(r, "LessOrEqual", [](auto x, auto y) { return x <= y; }, kNumericTypes);
    comparison(r, "GreaterOrEqual", [](auto x, auto y) { return x >= y; }, kNumericTypes);
    comparison(r, "And", [](auto x, auto y) { return bool(x) && bool(y); }, {DataType::Bool});
    comparison(r, "Or", [](auto x, auto y) { return bool(x) || bool(y); }, {DataType::Bool});
    comparison(r, "Xor", [](auto x, auto y) { return bool(x) != bool(y); }, {DataType::Bool});
    {
        KernelInfo k;
        k.types = {DataType::Bool};
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& x = c.t(0);
            OutTensor o(DataType::Bool, x.dims);
            for (int64_t i = 0; i < o.count(); ++i) o.data<bool>()[i] = !x.as<bool>()[i];
            return {o.finish()};
        };
        r.add("", "Not", std::move(k));
    }

    // --- variadic ---
    {
        KernelInfo k;
        k.types = kNumericTypes;
        k.sinceMin = 8;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            return {variadicFold(c, "Max", [](auto x, auto y) {
                if constexpr (std::is_floating_point_v<decltype(x)>)
                    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<decltype(x)>::quiet_NaN();
                return std::max(x, y);
            })};
        };
        r.add("", "Max", k);
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            return {variadicFold(c, "Min", [](auto x, auto y) {
                if constexpr (std::is_floating_point_v<decltype(x)>)
                    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<decltype(x)>::quiet_NaN();
                return std::min(x, y);
            })};
        };
        r.add("", "Min", k);
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            return {variadicFold(c, "Sum", [](auto x, auto y) { return x + y; })};
        };
        r.add("", "Sum", k);
        k.types = kFloatTypes;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            auto sum = variadicFold(c, "Mean", [](auto x, auto y) { return x + y; });
            const double n = static_cast<double>(c.in.size());
            return {dispatchFloat(sum->dtype, "Mean", [&](auto tag) {
                using T = decltype(tag);
                OutTensor o(sum->dtype, sum->dims);
                for (int64_t i = 0; i < o.count(); ++i) o.data<T>()[i] = static_cast<T>(sum->as<T>()[i] / n);
                return o.finish();
            })};
        };
        r.add("", "Mean", k);
    }

    {   // Where(cond, x, y)
        KernelInfo k;
        k.types = {DataType::Bool};
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& cond = c.t(0);
            const Tensor& x = c.t(1);
            const Tensor& y = c.t(2);
            if (x.dtype != y.dtype) c.fail("X and Y types differ");
            auto dims = broadcastShapes({cond.dims, x.dims, y.dims}, c.where());
            const size_t es = elementSize(x.dtype);
            OutTensor o(x.dtype, dims);
            BroadcastRows br(dims, {cond.dims, x.dims, y.dims});
            const bool* pc = cond.as<bool>();
            const char* px = x.as<char>();
            const char* py = y.as<char>();
            char* out = o.data<char>();
            br.forEach([&](int64_t off, const int64_t* in, const int64_t* st, int64_t n) {
                for (int64_t i = 0; i < n; ++i) {
                    const char* src = pc[in[0] + i * st[0]] ? px + (in[1] + i * st[1]) * es : py + (in[2] + i * st[2]) * es;
                    std::memcpy(out + (off + i) * es, src, es);
                }
            });
            return {o.finish()};
        };
        k.float16ViaFloat = false;
        r.add("", "Where", std::move(k));
    }

    {   // Clip: attributes before opset 11, optional inputs after.
        KernelInfo k;
        k.types = kNumericTypes;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Tensor& x = c.t(0);
            return {dispatchNumeric(x.dtype, "Clip", [&](auto tag) {
                using T = decltype(tag);
                T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
                if (c.opset < 11) {
                    lo = static_cast<T>(c.node.attrFloat("min", -std::numeric_limits<float>::max()));
                    hi = static_cast<T>(c.node.attrFloat("max", std::numeric_limits<float>::max()));
                } else {
                    for (size_t i = 1; i <= 2; ++i)
                        if (c.has(i) && (c.t(i).dtype != x.dtype || c.t(i).elementCount() != 1))
                            c.fail("min/max must be one value of the input's type");
                    if (c.has(1)) lo = c.t(1).as<T>()[0];
                    if (c.has(2)) hi = c.t(2).as<T>()[0];
                }
                OutTensor o(x.dtype, x.dims);
                const T* a = x.as<T>();
                T* y = o.data<T>();
                for (int64_t i = 0; i < o.count(); ++i) {
                    T v = a[i] < lo ? lo : a[i];
                    y[i] = v > hi ? hi : v;
                }
                return o.finish();
            })};
        };
        r.add("", "Clip", std::move(k));
    }

    {   // Cast / CastLike
        KernelInfo k;
        k.types = kAllTypes;
        k.types.push_back(DataType::BFloat16);
        k.float16ViaFloat = false;
        k.check = [](const Node& n, int64_t, std::string* why) {
            if (n.opType != "Cast") return true;
            const int64_t to = n.attrInt("to", 0);
            if (!isKnownDataType(static_cast<int32_t>(to)) || to == int64_t(DataType::String) || to == 0 ||
                to == int64_t(DataType::Complex64) || to == int64_t(DataType::Complex128) || to > int64_t(DataType::BFloat16)) {
                if (why) *why = "cast to type " + std::to_string(to) + " is not supported";
                return false;
            }
            return true;
        };
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            DataType to = c.node.opType == "CastLike" ? c.t(1).dtype : static_cast<DataType>(c.node.attrInt("to", 0));
            return {castTensor(c.t(0), to)};
        };
        r.add("", "Cast", k);
        k.sinceMin = 15;
        r.add("", "CastLike", k);
    }

    {   // Identity, Dropout (inference)
        KernelInfo k;
        k.float16ViaFloat = false;
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> { return {c.ptr(0)}; };
        r.add("", "Identity", k);
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            if (c.has(2) && c.bools(2)[0]) {
                float ratio = c.has(1) ? toFloats(c.t(1))[0] : 0.5f;
                if (ratio != 0.0f) c.unsupported("training_mode=true with a non-zero ratio is random and not supported");
            }
            const Tensor& x = c.t(0);
            OutTensor mask(DataType::Bool, x.dims);
            std::fill_n(mask.data<bool>(), mask.count(), true);
            return {c.ptr(0), mask.finish()};
        };
        // A training_mode input is fine when it is false at run time (PyTorch exports pass a
        // constant false); the kernel refuses a true one with a non-zero ratio by name.
        r.add("", "Dropout", k);
    }

    {   // Constant
        KernelInfo k;
        k.float16ViaFloat = false;
        k.check = [](const Node& n, int64_t, std::string* why) {
            if (n.attr("value") || n.attr("value_float") || n.attr("value_floats") || n.attr("value_int") || n.attr("value_ints"))
                return true;
            if (why) *why = "only value, value_float(s) and value_int(s) are supported";
            return false;
        };
        k.fn = [](KernelContext& c) -> std::vector<TensorPtr> {
            const Node& n = c.node;
            if (auto* a = n.attr("value")) {
                if (!a->t) c.fail("value attribute holds no tensor");
                return {a->t};
            }
            if (auto* a = n.attr("value_float")) return {makeTensorOf<float>(DataType::Float, {}, {a->f})};
            if (auto* a = n.attr("value_floats"))
                return {makeTensorOf<float>(DataType::Float, {int64_t(a->floats.size())}, a->floats)};
            if (auto* a = n.attr("value_int")) return {scalarInt64(a->i)};
            if (auto* a = n.attr("value_ints")) return {int64Tensor(a->ints, {int64_t(a->ints.size())})};
            c.unsupported("no supported value attribute");
        };
        r.add("", "Constant", std::move(k));
    }
}

}  // namespace passlens::eval
