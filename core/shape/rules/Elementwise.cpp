// Elementwise ops: broadcasting shapes, and the arithmetic / comparisons / selections of shape
// values (integers only: ONNX integer Div truncates, so it is floor division only where the
// numerator is proven non-negative).
#include <cstdlib>

#include "shape/Rules.h"

namespace passlens::shape {

using ir::DataType;

namespace {

using BinaryFn = Dim (*)(const DimExpr&, const DimExpr&);

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
            // Map the output index onto input k (dims of size 1 broadcast).
            int64_t rem = flat, idx = 0, stride = 1;
            size_t off = od.size() - inDims[k].size();
            for (size_t i = od.size(); i-- > 0;) {
                int64_t coord = rem % od[i];
                rem /= od[i];
                if (i < off) continue;
                int64_t d = inDims[k][i - off];
                idx += (d == 1 ? 0 : coord) * stride;
                stride *= d;
            }
            const Dim& e = (*ins[k]->values)[static_cast<size_t>(idx)];
            if (!e) { known = false; break; }
            args[k] = *e;
        }
        out.push_back(known ? f(args) : std::nullopt);
    }
    return out;
}

/// Shape by broadcasting; values by f when every input has them and the type is an integer.
void elementwise(RuleContext& c, DataType outType, const std::function<Dim(const std::vector<DimExpr>&)>& f) {
    std::vector<const ValueShape*> ins;
    for (size_t i = 0; i < c.inputCount(); ++i) ins.push_back(c.in(i));
    ValueShape& o = c.out(0);
    o.dtype = outType;
    o.dims = broadcastShapes(ins);
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

void reduce(RuleContext& c, bool valuesBySum, bool valuesByProduct) {
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
    if (all && x->values && isIntegerType(x->dtype) && (valuesBySum || valuesByProduct)) {
        DimExpr acc = DimExpr::constant(valuesBySum ? 0 : 1);
        for (const Dim& e : *x->values) {
            if (!e) return;
            acc = valuesBySum ? acc + *e : acc * *e;
        }
        o.values = std::vector<Dim>{acc};
    }
}

}  // namespace

void addElementwiseRules(RuleTable& t) {
    auto binary = [](BinaryFn f) {
        return [f](RuleContext& c) {
            elementwise(c, typeOf(c, 0), [f](const std::vector<DimExpr>& a) { return f(a[0], a[1]); });
        };
    };
    t["Add"] = binary([](const DimExpr& a, const DimExpr& b) -> Dim { return a + b; });
    t["Sub"] = binary([](const DimExpr& a, const DimExpr& b) -> Dim { return a - b; });
    t["Mul"] = binary([](const DimExpr& a, const DimExpr& b) -> Dim { return a * b; });
    t["Div"] = binary(truncDiv);
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
    auto variadic = [](BinaryFn f) {
        return [f](RuleContext& c) {
            elementwise(c, typeOf(c, 0), [f](const std::vector<DimExpr>& a) -> Dim {
                Dim r = a[0];
                for (size_t i = 1; i < a.size() && r; ++i) r = f(*r, a[i]);
                return r;
            });
        };
    };
    t["Max"] = variadic([](const DimExpr& a, const DimExpr& b) -> Dim { return max(a, b); });
    t["Min"] = variadic([](const DimExpr& a, const DimExpr& b) -> Dim { return min(a, b); });
    t["Sum"] = variadic([](const DimExpr& a, const DimExpr& b) -> Dim { return a + b; });
    t["Mean"] = [](RuleContext& c) { elementwise(c, typeOf(c, 0), nullptr); };
    t["Pow"] = [](RuleContext& c) { elementwise(c, typeOf(c, 0), nullptr); };
    t["PRelu"] = t["Pow"];
    t["BitShift"] = t["Pow"];
    t["Neg"] = [](RuleContext& c) { elementwise(c, typeOf(c, 0), [](const std::vector<DimExpr>& a) -> Dim { return -a[0]; }); };
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
        if (!c.in(0)->values || !isIntegerType(c.in(0)->dtype) || !isIntegerType(to)) return;
        if (to == DataType::Bool) {
            std::vector<Dim> v;
            for (const Dim& e : *c.in(0)->values) v.push_back(e ? truth(*e) : std::nullopt);
            o.values = v;
        } else if (to == DataType::Int64 || to == DataType::Int32) {
            o.values = c.in(0)->values;  // shape values fit in int32 when the model is valid
        }
    };
    for (const char* op : {"ReduceMax", "ReduceMin", "ReduceMean", "ReduceL1", "ReduceL2", "ReduceLogSum",
                           "ReduceLogSumExp", "ReduceSumSquare"})
        t[op] = [](RuleContext& c) { reduce(c, false, false); };
    t["ReduceSum"] = [](RuleContext& c) { reduce(c, true, false); };
    t["ReduceProd"] = [](RuleContext& c) { reduce(c, false, true); };
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
