// Elementwise ops: broadcasting shapes, and the arithmetic / comparisons / selections of shape
// values (integers only: ONNX integer Div truncates, so it is floor division only where the
// numerator is proven non-negative).
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "shape/Rules.h"

namespace passlens::shape {

using ir::DataType;

namespace {

using BinaryFn = Dim (*)(const DimExpr&, const DimExpr&);

/// Flat index into an input of dims `in` for flat output index `flat` of dims `out` (dims of
/// size 1 broadcast).
int64_t broadcastIndex(int64_t flat, const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
    int64_t idx = 0, stride = 1;
    const size_t off = out.size() - in.size();
    for (size_t i = out.size(); i-- > 0;) {
        int64_t coord = flat % out[i];
        flat /= out[i];
        if (i < off) continue;
        int64_t d = in[i - off];
        idx += (d == 1 ? 0 : coord) * stride;
        stride *= d;
    }
    return idx;
}

/// Elements of small constant float tensors computed in float32, as the model computes them
/// (an exporter's image-resize arithmetic: sizes = floor(h * scale)); nullopt when an input has
/// no known elements.
std::optional<std::vector<double>> broadcastReals(const std::vector<const ValueShape*>& ins, const std::vector<Dim>& outDims,
                                                  const std::function<double(const std::vector<double>&)>& f) {
    auto count = staticCount(outDims);
    if (!count || *count > static_cast<int64_t>(kMaxValueElements)) return std::nullopt;
    std::vector<std::vector<int64_t>> inDims;
    for (const ValueShape* s : ins) {
        if (!s || !s->reals) return std::nullopt;
        auto d = s->staticDims();
        if (!d || *staticCount(*s->dims) != static_cast<int64_t>(s->reals->size())) return std::nullopt;
        inDims.push_back(*d);
    }
    std::vector<int64_t> od;
    for (const Dim& d : outDims) od.push_back(*d->constantValue());
    std::vector<double> out, args(ins.size());
    for (int64_t flat = 0; flat < *count; ++flat) {
        for (size_t k = 0; k < ins.size(); ++k) args[k] = (*ins[k]->reals)[static_cast<size_t>(broadcastIndex(flat, od, inDims[k]))];
        out.push_back(static_cast<float>(f(args)));  // float32 rounding after every op
    }
    return out;
}

bool isFloat32(DataType t) { return t == DataType::Float; }

std::optional<std::vector<Dim>> broadcastValues(const std::vector<const ValueShape*>& ins, const std::vector<Dim>& outDims,
                                                const std::function<Dim(const std::vector<DimExpr>&)>& f) {
    auto count = staticCount(outDims);
    if (!count || *count > static_cast<int64_t>(kMaxValueElements)) return std::nullopt;
    std::vector<std::vector<int64_t>> inDims;
    for (const ValueShape* s : ins) {
        if (!s || !s->values) return std::nullopt;
        auto d = s->staticDims();
        if (!d) return std::nullopt;
        inDims.push_back(*d);
    }
    std::vector<int64_t> od;
    for (const Dim& d : outDims) od.push_back(*d->constantValue());
    std::vector<Dim> out;
    std::vector<DimExpr> args(ins.size());
    for (int64_t flat = 0; flat < *count; ++flat) {
        bool known = true;
        for (size_t k = 0; k < ins.size(); ++k) {
            const int64_t idx = broadcastIndex(flat, od, inDims[k]);
            const Dim& e = (*ins[k]->values)[static_cast<size_t>(idx)];
            if (!e) { known = false; break; }
            args[k] = *e;
        }
        out.push_back(known ? f(args) : std::nullopt);
    }
    return out;
}

using RealFn = std::function<double(const std::vector<double>&)>;

/// Shape by broadcasting; values by f when every input has them and the type is an integer;
/// float32 elements by `real` when every input's are known.
void elementwise(RuleContext& c, DataType outType, const std::function<Dim(const std::vector<DimExpr>&)>& f,
                 const RealFn& real = nullptr) {
    std::vector<const ValueShape*> ins;
    for (size_t i = 0; i < c.inputCount(); ++i) ins.push_back(c.in(i));
    ValueShape& o = c.out(0);
    o.dtype = outType;
    o.dims = broadcastShapes(ins);
    if (o.dims && real && isFloat32(outType)) o.reals = broadcastReals(ins, *o.dims, real);
    if (!o.dims || !f) return;
    for (const ValueShape* s : ins)
        if (!s || !isIntegerType(s->dtype)) return;
    o.values = broadcastValues(ins, *o.dims, f);
}

DataType typeOf(const RuleContext& c, size_t i) { return c.in(i) ? c.in(i)->dtype : DataType::Undefined; }

Dim truncDiv(const DimExpr& a, const DimExpr& b) {
    auto x = a.constantValue(), y = b.constantValue();
    if (x && y) {
        if (*y == 0 || (*x == INT64_MIN && *y == -1)) return std::nullopt;
        return DimExpr::constant(*x / *y);
    }
    auto la = a.lowerBound();
    if (!la || *la < 0) return std::nullopt;
    if (y && *y < 0) return -floorDiv(a, -b);
    auto lb = b.lowerBound();
    if (lb && *lb >= 1) return floorDiv(a, b);
    // b may be 0, where an integer division has no result (ONNX leaves it undefined; ONNX Runtime
    // traps): at every binding with a result, a = q*b gives q (torchvision's Swin divides
    // batch*nh*nw by nh*nw, each window count 0 for an image under one patch).
    if (lb && *lb >= 0 && !(y && *y == 0)) {
        DimExpr q = floorDiv(a, b);
        if (q * b == a) return q;
    }
    return std::nullopt;
}

/// 1 / 0 when the comparison is decided for every binding, else unknown.
Dim less(const DimExpr& a, const DimExpr& b) {
    if (auto d = (b - a).lowerBound(); d && *d >= 1) return DimExpr::constant(1);
    if (auto d = (a - b).lowerBound(); d && *d >= 0) return DimExpr::constant(0);
    return std::nullopt;
}
Dim equal(const DimExpr& a, const DimExpr& b) {
    if (a == b) return DimExpr::constant(1);
    DimExpr d = a - b;
    if (d.isConstant()) return DimExpr::constant(0);
    if (auto l = d.lowerBound(); l && *l >= 1) return DimExpr::constant(0);
    if (auto l = (-d).lowerBound(); l && *l >= 1) return DimExpr::constant(0);
    return std::nullopt;
}
Dim negate(const Dim& x) {
    if (!x || !x->isConstant()) return std::nullopt;
    return DimExpr::constant(*x->constantValue() == 0 ? 1 : 0);
}
/// Truth of an integer element: decided when constant or proven >= 1.
Dim truth(const DimExpr& x) {
    if (auto v = x.constantValue()) return DimExpr::constant(*v != 0);
    if (auto l = x.lowerBound(); l && *l >= 1) return DimExpr::constant(1);
    return std::nullopt;
}

void passthrough(RuleContext& c) {
    if (!c.in(0)) return;
    ValueShape& o = c.out(0);
    o.dtype = c.in(0)->dtype;
    o.dims = c.in(0)->dims;
}

enum class ReduceValues { None, Sum, Product, Min, Max };

void reduce(RuleContext& c, ReduceValues how) {
    const ValueShape* x = c.in(0);
    if (!x) return;
    ValueShape& o = c.out(0);
    o.dtype = x->dtype;
    if (!x->dims) return;
    bool keep = c.node.attrInt("keepdims", 1) != 0;
    std::optional<std::vector<int64_t>> axes;
    if (const ir::Attribute* a = c.node.attr("axes")) axes = a->ints;
    else if (c.in(1)) {
        axes = c.constInts(1);
        if (!axes) return;  // axes computed at run time: rank depends on them unless keepdims
    } else axes = std::vector<int64_t>{};
    size_t rank = x->dims->size();
    std::vector<bool> reduced(rank, false);
    if (axes->empty()) {
        if (c.node.attrInt("noop_with_empty_axes", 0) != 0) {
            o.dims = x->dims;
            o.values = x->values;
            return;
        }
        reduced.assign(rank, true);
    }
    for (int64_t a : *axes) {
        auto n = normAxis(a, rank);
        if (!n) throw std::runtime_error("reduction axis out of range");
        reduced[*n] = true;
    }
    std::vector<Dim> dims;
    for (size_t i = 0; i < rank; ++i) {
        if (!reduced[i]) dims.push_back((*x->dims)[i]);
        else if (keep) dims.push_back(DimExpr::constant(1));
    }
    o.dims = dims;
    bool all = std::all_of(reduced.begin(), reduced.end(), [](bool b) { return b; });
    // Min/Max of whole numbers held in a float tensor (a Cast of sizes) are whole numbers too.
    const bool wholeFloats = isFloat32(x->dtype) && (how == ReduceValues::Min || how == ReduceValues::Max);
    if (all && x->values && !x->values->empty() && (isIntegerType(x->dtype) || wholeFloats) && how != ReduceValues::None) {
        std::optional<DimExpr> acc;
        for (const Dim& e : *x->values) {
            if (!e) return;
            if (!acc) { acc = *e; continue; }
            switch (how) {
                case ReduceValues::Sum: acc = *acc + *e; break;
                case ReduceValues::Product: acc = *acc * *e; break;
                case ReduceValues::Min: acc = min(*acc, *e); break;
                case ReduceValues::Max: acc = max(*acc, *e); break;
                case ReduceValues::None: return;
            }
        }
        o.values = std::vector<Dim>{*acc};
    }
}

}  // namespace

void addElementwiseRules(RuleTable& t) {
    auto binary = [](BinaryFn f, double (*real)(double, double)) {
        return [f, real](RuleContext& c) {
            elementwise(c, typeOf(c, 0), [f](const std::vector<DimExpr>& a) { return f(a[0], a[1]); },
                        [real](const std::vector<double>& a) { return real(a[0], a[1]); });
        };
    };
    t["Add"] = binary([](const DimExpr& a, const DimExpr& b) -> Dim { return a + b; }, [](double a, double b) { return a + b; });
    t["Sub"] = binary([](const DimExpr& a, const DimExpr& b) -> Dim { return a - b; }, [](double a, double b) { return a - b; });
    t["Mul"] = binary([](const DimExpr& a, const DimExpr& b) -> Dim { return a * b; }, [](double a, double b) { return a * b; });
    t["Div"] = binary(truncDiv, [](double a, double b) { return a / b; });
    t["Mod"] = [](RuleContext& c) {
        bool fmod = c.node.attrInt("fmod", 0) != 0;
        elementwise(c, typeOf(c, 0), [fmod](const std::vector<DimExpr>& a) -> Dim {
            if (!fmod) return mod(a[0], a[1]);
            // fmod takes the dividend's sign: equal to Mod for a >= 0, b > 0.
            auto la = a[0].lowerBound(), lb = a[1].lowerBound();
            if (la && *la >= 0 && lb && *lb >= 1) return mod(a[0], a[1]);
            return std::nullopt;
        });
    };
    auto variadic = [](BinaryFn f, double (*real)(double, double)) {
        return [f, real](RuleContext& c) {
            elementwise(
                c, typeOf(c, 0),
                [f](const std::vector<DimExpr>& a) -> Dim {
                    Dim r = a[0];
                    for (size_t i = 1; i < a.size() && r; ++i) r = f(*r, a[i]);
                    return r;
                },
                [real](const std::vector<double>& a) {
                    double r = a[0];
                    for (size_t i = 1; i < a.size(); ++i) r = real(r, a[i]);
                    return r;
                });
        };
    };
    t["Max"] = variadic([](const DimExpr& a, const DimExpr& b) -> Dim { return max(a, b); }, [](double a, double b) { return std::max(a, b); });
    t["Min"] = variadic([](const DimExpr& a, const DimExpr& b) -> Dim { return min(a, b); }, [](double a, double b) { return std::min(a, b); });
    t["Sum"] = variadic([](const DimExpr& a, const DimExpr& b) -> Dim { return a + b; }, [](double a, double b) { return a + b; });
    t["Mean"] = [](RuleContext& c) { elementwise(c, typeOf(c, 0), nullptr); };
    t["Pow"] = [](RuleContext& c) { elementwise(c, typeOf(c, 0), nullptr); };
    t["PRelu"] = t["Pow"];
    t["BitShift"] = t["Pow"];
    t["Abs"] = [](RuleContext& c) {
        elementwise(c, typeOf(c, 0), [](const std::vector<DimExpr>& a) -> Dim { return max(a[0], -a[0]); });
    };
    auto compare = [](BinaryFn f) {
        return [f](RuleContext& c) {
            elementwise(c, DataType::Bool, [f](const std::vector<DimExpr>& a) { return f(a[0], a[1]); });
        };
    };
    t["Equal"] = compare(equal);
    t["Less"] = compare(less);
    t["Greater"] = compare([](const DimExpr& a, const DimExpr& b) { return less(b, a); });
    t["LessOrEqual"] = compare([](const DimExpr& a, const DimExpr& b) { return negate(less(b, a)); });
    t["GreaterOrEqual"] = compare([](const DimExpr& a, const DimExpr& b) { return negate(less(a, b)); });
    t["Not"] = [](RuleContext& c) {
        elementwise(c, DataType::Bool, [](const std::vector<DimExpr>& a) { return negate(truth(a[0])); });
    };
    t["And"] = compare([](const DimExpr& a, const DimExpr& b) -> Dim {
        Dim x = truth(a), y = truth(b);
        if ((x && x->constantValue() == 0) || (y && y->constantValue() == 0)) return DimExpr::constant(0);
        if (x && y) return DimExpr::constant(1);
        return std::nullopt;
    });
    t["Or"] = compare([](const DimExpr& a, const DimExpr& b) -> Dim {
        Dim x = truth(a), y = truth(b);
        if ((x && x->constantValue() == 1) || (y && y->constantValue() == 1)) return DimExpr::constant(1);
        if (x && y) return DimExpr::constant(0);
        return std::nullopt;
    });
    t["Xor"] = [](RuleContext& c) { elementwise(c, DataType::Bool, nullptr); };
    t["Where"] = [](RuleContext& c) {
        std::vector<const ValueShape*> ins{c.in(0), c.in(1), c.in(2)};
        ValueShape& o = c.out(0);
        o.dtype = typeOf(c, 1);
        o.dims = broadcastShapes(ins);
        if (!o.dims || !c.in(1) || !isIntegerType(c.in(1)->dtype)) return;
        o.values = broadcastValues(ins, *o.dims, [](const std::vector<DimExpr>& a) -> Dim {
            Dim cond = truth(a[0]);
            if (!cond) return a[1] == a[2] ? Dim(a[1]) : std::nullopt;
            return cond->constantValue() != 0 ? a[1] : a[2];
        });
    };

    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Erf", "Softmax", "LogSoftmax",
                           "Hardmax", "Clip", "LeakyRelu", "Gelu", "HardSigmoid", "HardSwish", "Elu", "Selu",
                           "Softplus", "Softsign", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos",
                           "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "IsNaN",
                           "IsInf", "InstanceNormalization", "LRN", "CumSum", "Celu", "Mish", "Shrink", "Trilu",
                           "ThresholdedRelu", "LpNormalization", "MeanVarianceNormalization", "BatchNormalization",
                           "LayerNormalization", "Dropout", "ScatterND", "ScatterElements", "Scatter",
                           "GroupNormalization"})
        t[op] = passthrough;
    // Float32 elements through the unary steps of an exporter's size arithmetic; Floor, Ceil and
    // Round results are whole numbers, so they also get integer elements for the Unsqueeze /
    // Concat / Cast(int64) after them.
    auto unaryReal = [](double (*real)(double), bool whole) {
        return [real, whole](RuleContext& c) {
            passthrough(c);
            const ValueShape* x = c.in(0);
            if (!x || !x->reals || !isFloat32(x->dtype)) return;
            ValueShape& o = c.out(0);
            std::vector<double> r;
            std::vector<Dim> v;
            for (double e : *x->reals) {
                r.push_back(static_cast<float>(real(e)));
                if (whole && std::isfinite(r.back()) && std::abs(r.back()) < 4.0e18) v.push_back(DimExpr::constant(static_cast<int64_t>(r.back())));
            }
            o.reals = r;
            if (whole && v.size() == r.size()) o.values = v;
        };
    };
    t["Floor"] = unaryReal([](double x) { return std::floor(x); }, true);
    t["Ceil"] = unaryReal([](double x) { return std::ceil(x); }, true);
    t["Round"] = unaryReal([](double x) { return std::nearbyint(x); }, true);  // half to even, like ONNX
    t["Sqrt"] = unaryReal([](double x) { return std::sqrt(x); }, false);
    t["Reciprocal"] = unaryReal([](double x) { return 1.0 / x; }, false);
    t["Neg"] = [](RuleContext& c) {
        elementwise(c, typeOf(c, 0), [](const std::vector<DimExpr>& a) -> Dim { return -a[0]; },
                    [](const std::vector<double>& a) { return -a[0]; });
    };
    // Outputs that are not the data: Dropout's mask has the data's shape, as bool.
    t["Dropout"] = [](RuleContext& c) {
        passthrough(c);
        if (c.outputCount() > 1 && c.in(0)) {
            c.out(1).dims = c.in(0)->dims;
            c.out(1).dtype = DataType::Bool;
        }
    };
    t["Identity"] = [](RuleContext& c) {
        if (c.in(0)) c.out(0) = *c.in(0);
    };
    t["Cast"] = [](RuleContext& c) {
        if (!c.in(0)) return;
        auto to = static_cast<DataType>(c.node.attrInt("to", 0));
        ValueShape& o = c.out(0);
        o.dtype = to;
        o.dims = c.in(0)->dims;
        const ValueShape& x = *c.in(0);
        if (isFloat32(to) && x.reals) {
            o.reals = x.reals;  // float32 to float32
        } else if (isFloat32(to) && x.values && isIntegerType(x.dtype)) {
            // Integers (sizes, far below 2^24, so exact in float32) stay whole numbers: kept as
            // values, and as float32 elements when all are constants.
            o.values = x.values;
            std::vector<double> r;
            for (const Dim& e : *x.values) {
                auto v = e ? e->constantValue() : std::nullopt;
                if (!v || std::abs(*v) > (int64_t(1) << 24)) return;
                r.push_back(static_cast<double>(*v));
            }
            o.reals = r;
            return;
        } else if (isIntegerType(to) && to != DataType::Bool && x.reals && isFloat32(x.dtype)) {
            std::vector<Dim> v;  // float to integer truncates toward zero
            for (double e : *x.reals) {
                if (!std::isfinite(e) || std::abs(e) > 4.0e18) return;
                v.push_back(DimExpr::constant(static_cast<int64_t>(std::trunc(e))));
            }
            o.values = v;
            return;
        } else if (isIntegerType(to) && to != DataType::Bool && x.values && isFloat32(x.dtype)) {
            o.values = x.values;  // whole numbers (Floor/Ceil/Round results) carried as integers
            return;
        }
        if (!c.in(0)->values || !isIntegerType(c.in(0)->dtype) || !isIntegerType(to)) return;
        if (to == DataType::Bool) {
            std::vector<Dim> v;
            for (const Dim& e : *c.in(0)->values) v.push_back(e ? truth(*e) : std::nullopt);
            o.values = v;
        } else if (to == DataType::Int64 || to == DataType::Int32) {
            o.values = c.in(0)->values;  // shape values fit in int32 when the model is valid
        }
    };
    for (const char* op : {"ReduceMean", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
        t[op] = [](RuleContext& c) { reduce(c, ReduceValues::None); };
    t["ReduceSum"] = [](RuleContext& c) { reduce(c, ReduceValues::Sum); };
    t["ReduceProd"] = [](RuleContext& c) { reduce(c, ReduceValues::Product); };
    t["ReduceMin"] = [](RuleContext& c) { reduce(c, ReduceValues::Min); };  // torchvision: min(h, w)
    t["ReduceMax"] = [](RuleContext& c) { reduce(c, ReduceValues::Max); };
    auto arg = [](RuleContext& c) {
        const ValueShape* x = c.in(0);
        ValueShape& o = c.out(0);
        o.dtype = DataType::Int64;
        if (!x || !x->dims) return;
        auto axis = normAxis(c.node.attrInt("axis", 0), x->dims->size());
        if (!axis) throw std::runtime_error("axis out of range");
        std::vector<Dim> dims = *x->dims;
        if (c.node.attrInt("keepdims", 1) != 0) dims[*axis] = DimExpr::constant(1);
        else dims.erase(dims.begin() + static_cast<long>(*axis));
        o.dims = dims;
    };
    t["ArgMax"] = arg;
    t["ArgMin"] = arg;
}

}  // namespace passlens::shape
