// Float32 arithmetic on sizes, as exporters write it (torchvision's GeneralizedRCNNTransform:
// scale = min(min_size / min(h, w), max_size / max(h, w)), size = floor(h * scale), then padding
// up to a multiple of 32 with ceil(size / 32) * 32). Two kinds of facts per element:
//  - exact: the value is num / 2^shift at every binding. Cast of an integer is exact only when
//    the integer is proven to lie within +-2^24; products, sums and Min/Max stay exact while the
//    result's numerator is proven within +-2^24 too; multiplying or dividing by a power of two
//    only moves the shift; Floor and Ceil of num / 2^shift are floor divisions.
//  - bounds: value <= c * N / D (or >=) with N, D dim expressions, the rounding of every step
//    folded into c as a factor (1 +- 2^-24). Min keeps both operands' upper bounds, so
//    h * min(64 / min(h, w), 64 / max(h, w)) <= 64 * h / max(h, w) * (1 + 2^-24)^k, and
//    h <= max(h, w) is proven on the dim expressions: the resized size is at most 64.
// A Cast to an integer of an exact whole number gives that number; of a non-negative value with
// a proven integer upper bound U, a fresh size in [0, U], which later float steps may treat
// exactly (U < 2^24). No bound ever comes from "tensors are not that big".
#include <cmath>

#include "shape/Rules.h"

namespace passlens::shape {

using ir::DataType;

namespace {

constexpr double kRound = 1.0 / 16777216.0;   // 2^-24: float32's unit roundoff bounds each rounding
constexpr int64_t kExactLimit = int64_t(1) << 24;
constexpr size_t kMaxBounds = 4;

bool provenWithin(const DimExpr& e, int64_t limit) {
    auto lo = e.lowerBound(), hi = e.upperBound();
    return lo && hi && *lo >= -limit && *hi <= limit;
}

bool provenAtLeast(const DimExpr& e, int64_t k) {
    auto lo = e.lowerBound();
    return lo && *lo >= k;
}

DimExpr powerOfTwo(int k) { return DimExpr::constant(int64_t(1) << k); }

/// A float32 constant k as exact num / 2^shift when it is one (|num| <= 2^24).
std::optional<std::pair<int64_t, int>> dyadic(double k) {
    if (!std::isfinite(k)) return std::nullopt;
    for (int shift = 0; shift <= 40; ++shift) {
        const double scaled = std::ldexp(k, shift);
        if (scaled == std::floor(scaled) && std::abs(scaled) <= double(kExactLimit)) return std::make_pair(int64_t(scaled), shift);
    }
    return std::nullopt;
}

/// Rounding bounds need every step in float32's normal range; outside it they are dropped.
FloatFacts checked(FloatFacts f) {
    if (!(f.log2Lo >= -125.0 && f.log2Hi <= 127.0)) {
        f.upper.clear();
        f.lower.clear();
    }
    return f;
}

FloatFacts constantFacts(double k) {
    FloatFacts f;
    if (auto d = dyadic(k)) {
        f.exactNum = DimExpr::constant(d->first);
        f.exactShift = d->second;
    }
    if (k > 0) f.log2Lo = f.log2Hi = std::log2(k);
    if (k >= 0) {
        f.nonNegative = true;
        f.upper.push_back({k, DimExpr::constant(1), DimExpr::constant(1)});
        if (k > 0) f.lower.push_back({k, DimExpr::constant(1), DimExpr::constant(1)});
    }
    return f;
}

/// Facts of a float value that is exactly the integer e (proven within 2^24) or rounds it.
FloatFacts integerFacts(const DimExpr& e) {
    FloatFacts f;
    if (provenWithin(e, kExactLimit)) {
        f.exactNum = e;
        f.exactShift = 0;
    }
    if (provenAtLeast(e, 0)) {
        f.nonNegative = true;
        const double slack = f.exactNum ? 0.0 : kRound;
        f.upper.push_back({1.0 + slack, e, DimExpr::constant(1)});
        if (provenAtLeast(e, 1)) f.lower.push_back({1.0 - slack, e, DimExpr::constant(1)});
    }
    auto hi = e.upperBound();
    f.log2Lo = 0;  // a non-zero integer is at least 1 in magnitude
    f.log2Hi = hi && *hi >= 1 ? std::log2(double(*hi)) + 1e-9 : 63.0;
    return checked(f);
}

/// Element i of input s as float facts (derived facts, or a constant's elements).
std::optional<FloatFacts> factsOf(const ValueShape* s, size_t i) {
    if (!s) return std::nullopt;
    if (s->floats) return i < s->floats->size() ? std::optional<FloatFacts>((*s->floats)[i]) : std::nullopt;
    if (s->reals && s->dtype == DataType::Float) return i < s->reals->size() ? std::optional<FloatFacts>(constantFacts((*s->reals)[i])) : std::nullopt;
    return std::nullopt;
}

/// num / 2^shift with both exact values brought to one shift; nullopt when it overflows.
std::optional<std::pair<DimExpr, DimExpr>> alignExact(const FloatFacts& a, const FloatFacts& b, int& shift) {
    shift = std::max(a.exactShift, b.exactShift);
    if (shift - a.exactShift > 30 || shift - b.exactShift > 30) return std::nullopt;
    return std::make_pair(*a.exactNum * powerOfTwo(shift - a.exactShift), *b.exactNum * powerOfTwo(shift - b.exactShift));
}

void setExact(FloatFacts& f, const DimExpr& num, int shift) {
    if (!provenWithin(num, kExactLimit) || shift < -30 || shift > 60) return;
    if (shift < 0) {
        f.exactNum = num * powerOfTwo(-shift);
        f.exactShift = 0;
        if (!provenWithin(*f.exactNum, kExactLimit)) f.exactNum.reset();
        return;
    }
    f.exactNum = num;
    f.exactShift = shift;
}

/// e when the value is exactly 2^e.
std::optional<int> log2Exact(const FloatFacts& f) {
    auto v = f.exactNum ? f.exactNum->constantValue() : std::nullopt;
    if (!v || *v < 1 || (*v & (*v - 1)) != 0) return std::nullopt;
    int t = 0;
    while ((int64_t(1) << t) < *v) ++t;
    return t - f.exactShift;
}

bool isPowerOfTwoExact(const FloatFacts& f) { return log2Exact(f).has_value(); }

std::vector<RealRatio> products(const std::vector<RealRatio>& xs, const std::vector<RealRatio>& ys, double rounding) {
    std::vector<RealRatio> out;
    for (const auto& x : xs)
        for (const auto& y : ys)
            if (out.size() < kMaxBounds) out.push_back({x.coef * y.coef * rounding, x.num * y.num, x.den * y.den});
    return out;
}

/// 1 / each ratio, for ratios with num >= 1.
std::vector<RealRatio> inverses(const std::vector<RealRatio>& xs, double rounding) {
    std::vector<RealRatio> out;
    for (const auto& x : xs)
        if (x.coef > 0 && provenAtLeast(x.num, 1)) out.push_back({rounding / x.coef, x.den, x.num});
    return out;
}

FloatFacts mul(const FloatFacts& a, const FloatFacts& b) {
    FloatFacts f;
    if (a.exactNum && b.exactNum) setExact(f, *a.exactNum * *b.exactNum, a.exactShift + b.exactShift);
    if (a.nonNegative && b.nonNegative) {
        f.nonNegative = true;
        const bool exactScale = isPowerOfTwoExact(a) || isPowerOfTwoExact(b);
        f.upper = products(a.upper, b.upper, exactScale ? 1.0 : 1.0 + kRound);
        f.lower = products(a.lower, b.lower, exactScale ? 1.0 : 1.0 - kRound);
    }
    f.log2Lo = a.log2Lo + b.log2Lo;
    f.log2Hi = a.log2Hi + b.log2Hi;
    return checked(f);
}

FloatFacts reciprocal(const FloatFacts& a) {
    FloatFacts f;
    if (auto e = log2Exact(a)) setExact(f, DimExpr::constant(1), *e);  // 1 / 2^e
    if (a.nonNegative) {
        f.nonNegative = true;
        const bool exact = f.exactNum.has_value();
        f.upper = inverses(a.lower, exact ? 1.0 : 1.0 + kRound);
        f.lower = inverses(a.upper, exact ? 1.0 : 1.0 - kRound);
    }
    f.log2Lo = -a.log2Hi;
    f.log2Hi = -a.log2Lo;
    return checked(f);
}

FloatFacts div(const FloatFacts& a, const FloatFacts& b) {
    FloatFacts f;
    if (auto e = log2Exact(b); a.exactNum && e) setExact(f, *a.exactNum, a.exactShift + *e);  // a / 2^e
    if (a.nonNegative && b.nonNegative) {
        f.nonNegative = true;
        const bool exact = f.exactNum.has_value();
        f.upper = products(a.upper, inverses(b.lower, 1.0), exact ? 1.0 : 1.0 + kRound);
        f.lower = products(a.lower, inverses(b.upper, 1.0), exact ? 1.0 : 1.0 - kRound);
    }
    f.log2Lo = a.log2Lo - b.log2Hi;
    f.log2Hi = a.log2Hi - b.log2Lo;
    return checked(f);
}

FloatFacts addSub(const FloatFacts& a, const FloatFacts& b, bool add) {
    FloatFacts f;
    int shift = 0;
    if (a.exactNum && b.exactNum)
        if (auto ab = alignExact(a, b, shift)) setExact(f, add ? ab->first + ab->second : ab->first - ab->second, shift);
    if (add && a.nonNegative && b.nonNegative) f.nonNegative = true;
    f.log2Lo = -1000;  // a difference can be arbitrarily small: no bounds after it
    f.log2Hi = std::max(a.log2Hi, b.log2Hi) + 1;
    return checked(f);
}

FloatFacts minMax(const FloatFacts& a, const FloatFacts& b, bool isMax) {
    FloatFacts f;
    int shift = 0;
    if (a.exactNum && b.exactNum)
        if (auto ab = alignExact(a, b, shift)) setExact(f, isMax ? max(ab->first, ab->second) : min(ab->first, ab->second), shift);
    // min(a, b) <= a and <= b; max(a, b) >= a and >= b, when neither side can be NaN (which
    // Min/Max may pass on): a side with a bound or an exact value is a finite number.
    auto finite = [](const FloatFacts& x) { return x.exactNum || !x.upper.empty() || !x.lower.empty(); };
    auto& keep = isMax ? f.lower : f.upper;
    if (finite(a) && finite(b))
        for (const auto* src : {isMax ? &a.lower : &a.upper, isMax ? &b.lower : &b.upper})
            for (const auto& r : *src)
                if (keep.size() < kMaxBounds) keep.push_back(r);
    f.nonNegative = isMax ? (a.nonNegative || b.nonNegative) : (a.nonNegative && b.nonNegative);
    f.log2Lo = std::min(a.log2Lo, b.log2Lo);
    f.log2Hi = std::max(a.log2Hi, b.log2Hi);
    return checked(f);
}

FloatFacts rounded(const FloatFacts& a, bool ceil) {
    FloatFacts f;
    if (a.exactNum) {
        const DimExpr p = powerOfTwo(a.exactShift);
        setExact(f, ceil ? -floorDiv(-*a.exactNum, p) : floorDiv(*a.exactNum, p), 0);
    }
    f.nonNegative = a.nonNegative;
    if (!ceil) f.upper = a.upper;  // floor(x) <= x
    f.log2Lo = 0;  // a non-zero whole number is at least 1 in magnitude
    f.log2Hi = a.log2Hi + (ceil ? 1 : 0);
    return checked(f);
}

/// The smallest integer q in {1, 2, 4, ..., 2^24} with num <= q * den at every binding.
std::optional<int64_t> ratioCeiling(const RealRatio& r) {
    if (auto n = r.num.constantValue(), d = r.den.constantValue(); n && d && *d >= 1) return (*n + *d - 1) / *d;
    for (int64_t q = 1; q <= kExactLimit; q *= 2)
        if (auto lo = (DimExpr::constant(q) * r.den - r.num).lowerBound(); lo && *lo >= 0) return q;
    return std::nullopt;
}

/// A proven integer upper bound of a non-negative value.
std::optional<int64_t> integerUpperBound(const FloatFacts& f) {
    if (f.exactNum && f.exactShift == 0) return f.exactNum->upperBound();
    std::optional<int64_t> best;
    for (const auto& r : f.upper) {
        auto q = ratioCeiling(r);
        if (!q) continue;
        const double bound = std::nextafter(r.coef * double(*q) * (1.0 + 1e-12), INFINITY);
        if (!std::isfinite(bound) || bound >= 4.0e18) continue;
        const int64_t u = int64_t(std::floor(bound));
        if (!best || u < *best) best = u;
    }
    return best;
}

/// Output element i's input element index for an input of `count` elements (1 = broadcast).
std::optional<size_t> elementIndex(const ValueShape* s, size_t i, size_t n) {
    if (!s || !s->dims) return std::nullopt;
    auto count = staticCount(*s->dims);
    if (!count) return std::nullopt;
    if (*count == 1) return 0;
    if (size_t(*count) == n) return i;
    return std::nullopt;
}

bool isElementwiseFloatOp(const std::string& op) {
    return op == "Mul" || op == "Div" || op == "Add" || op == "Sub" || op == "Min" || op == "Max" || op == "Reciprocal" ||
           op == "Floor" || op == "Ceil" || op == "Cast" || op == "Identity";
}

bool isMover(const std::string& op) {
    return op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten" || op == "Identity";
}

}  // namespace

void refineFloatSizes(RuleContext& c) {
    const std::string& op = c.node.opType;
    if (c.outputCount() < 1 || (!isElementwiseFloatOp(op) && !isMover(op) && op != "Concat")) return;
    ValueShape& o = c.out(0);
    if (!o.dims) return;
    auto count = staticCount(*o.dims);
    if (!count || *count < 1 || *count > static_cast<int64_t>(kMaxValueElements)) return;
    const size_t n = size_t(*count);

    // Cast of a float element to an integer: exact whole numbers, or a bounded fresh size.
    if (op == "Cast" && c.in(0) && c.in(0)->dtype == DataType::Float && isIntegerType(o.dtype) && o.dtype != DataType::Bool) {
        if (o.values) return;
        std::vector<Dim> values;
        for (size_t i = 0; i < n; ++i) {
            auto f = factsOf(c.in(0), i);
            if (f && f->exactNum && f->exactShift == 0) {
                values.push_back(*f->exactNum);
                continue;
            }
            auto upper = f && f->nonNegative ? integerUpperBound(*f) : std::nullopt;
            if (!upper) return;
            values.push_back(c.fresh("float size " + std::to_string(i) + " cast to an integer, proven in [0, " +
                                         std::to_string(*upper) + "]",
                                     *upper));
        }
        o.values = values;
        return;
    }
    if (o.dtype != DataType::Float) return;

    std::vector<FloatFacts> out;
    if (op == "Concat") {
        if (o.dims->size() != 1) return;
        for (size_t k = 0; k < c.inputCount(); ++k) {
            const ValueShape* s = c.in(k);
            if (!s || !s->dims) return;
            auto m = staticCount(*s->dims);
            if (!m) return;
            for (size_t i = 0; i < size_t(*m); ++i) {
                auto f = factsOf(s, i);
                if (!f) return;
                out.push_back(*f);
            }
        }
        if (out.size() != n) return;
    } else if (isMover(op) || (op == "Cast" && c.in(0) && c.in(0)->dtype == DataType::Float)) {
        for (size_t i = 0; i < n; ++i) {
            auto f = factsOf(c.in(0), i);
            if (!f) return;
            out.push_back(*f);
        }
    } else if (op == "Cast") {
        const ValueShape* x = c.in(0);
        if (!x || !x->values || x->values->size() != n || !isIntegerType(x->dtype)) return;
        for (const Dim& e : *x->values) {
            if (!e) return;
            out.push_back(integerFacts(*e));
        }
    } else {
        const size_t arity = (op == "Reciprocal" || op == "Floor" || op == "Ceil" || op == "Identity") ? 1 : 2;
        if (c.inputCount() != arity) return;
        for (size_t i = 0; i < n; ++i) {
            std::vector<FloatFacts> args;
            for (size_t k = 0; k < arity; ++k) {
                auto idx = elementIndex(c.in(k), i, n);
                auto f = idx ? factsOf(c.in(k), *idx) : std::nullopt;
                if (!f) return;
                args.push_back(*f);
            }
            if (op == "Mul") out.push_back(mul(args[0], args[1]));
            else if (op == "Div") out.push_back(div(args[0], args[1]));
            else if (op == "Add" || op == "Sub") out.push_back(addSub(args[0], args[1], op == "Add"));
            else if (op == "Min" || op == "Max") out.push_back(minMax(args[0], args[1], op == "Max"));
            else if (op == "Reciprocal") out.push_back(reciprocal(args[0]));
            else if (op == "Floor" || op == "Ceil") out.push_back(rounded(args[0], op == "Ceil"));
            else out.push_back(args[0]);
        }
    }
    // Exact whole numbers are also integer elements (the engine's convention for float sizes).
    std::vector<Dim> whole;
    for (const auto& f : out)
        if (f.exactNum && f.exactShift == 0) whole.push_back(*f.exactNum);
    if (!o.values && whole.size() == n) o.values = whole;
    o.floats = std::move(out);
}

}  // namespace passlens::shape
