// Arithmetic rules: constant chains reassociated ((x·c1)·c2 → x·(c1·c2) when a power of two keeps
// it exact; (x+c1)+c2 is refused, float addition is not associative: see passes/FloatExact.h),
// Max(x, LeakyRelu(x)) → LeakyRelu(x) (and Max(x, Relu(x)) → Relu(x)), and x·0 → 0 for
// integer tensors only: for floats NaN·0 and ±Inf·0 are NaN, so the rewrite would change results.
#include <algorithm>
#include <cmath>

#include "passes/FloatExact.h"
#include "passes/algebraic/Rules.h"
#include "passes/match/Match.h"
#include "ir/CheckedMath.h"
#include "ir/Error.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

int64_t product(const std::vector<int64_t>& dims) {
    auto p = checkedProduct(dims);
    if (!p) throwBadInput("a constant's element count overflows int64");
    return *p;
}

/// A float32 constant, not overridable (an initializer that is also a graph input is not).
bool isFloatConstant(const Value& v) {
    return v.initializer && !v.isGraphInput && v.initializer->dtype == DataType::Float &&
           (int64_t)v.initializer->byteSize() >= v.initializer->elementCount() * 4;
}

/// Elementwise a∘b with numpy broadcasting into `dims`; `exact` becomes false when some pair of
/// a product has no power-of-two factor or a product that is not a normal float32 number, i.e.
/// when (x·a)·b could round differently from x·(a·b).
std::vector<float> combine(const Tensor& a, const Tensor& b, const std::vector<int64_t>& dims, bool multiply, bool& exact) {
    exact = true;
    const size_t r = dims.size();
    auto stridesFor = [&](const std::vector<int64_t>& d) {
        std::vector<int64_t> s(r, 0);
        int64_t stride = 1;
        for (size_t i = d.size(); i-- > 0;) {
            const size_t o = r - d.size() + i;
            s[o] = d[i] == 1 ? 0 : stride;
            stride *= d[i];
        }
        return s;
    };
    const auto sa = stridesFor(a.dims), sb = stridesFor(b.dims);
    std::vector<float> out(static_cast<size_t>(product(dims)));
    std::vector<int64_t> idx(r, 0);
    for (size_t flat = 0; flat < out.size(); ++flat) {
        int64_t ia = 0, ib = 0;
        for (size_t k = 0; k < r; ++k) { ia += idx[k] * sa[k]; ib += idx[k] * sb[k]; }
        const float x = a.as<float>()[ia], y = b.as<float>()[ib];
        out[flat] = multiply ? x * y : x + y;
        if (multiply && (!(isPowerOfTwoScale(x) || isPowerOfTwoScale(y)) || !std::isnormal(out[flat]))) exact = false;
        for (size_t k = r; k-- > 0;) {
            if (++idx[k] < dims[k]) break;
            idx[k] = 0;
        }
    }
    return out;
}

/// (x·c1)·c2 → x·(c1·c2) for float32 constants where, element by element, c1 or c2 is a power of
/// two: x·2^k only moves the exponent, so both sides are one rounding of x·c1·c2 (for x whose
/// products stay in the normal range). Otherwise, and for every (x+c1)+c2, a missed remark: the
/// two roundings of the chain differ from the one of the merged node for some x (issue #43).
bool reassociate(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    if (n.inputs.size() != 2 || n.inputs[0] == kNone || n.inputs[1] == kNone) return false;
    const int cs = isFloatConstant(g.value(n.inputs[1])) ? 1 : isFloatConstant(g.value(n.inputs[0])) ? 0 : -1;
    if (cs < 0) return false;
    const ValueId mid = n.inputs[1 - cs], c2 = n.inputs[cs];
    const NodeId innerId = g.value(mid).producer;
    if (innerId == kNone || g.node(innerId).opType != n.opType || !g.node(innerId).domain.empty()) return false;
    const Node& inner = g.node(innerId);
    if (inner.inputs.size() != 2 || inner.inputs[0] == kNone || inner.inputs[1] == kNone) return false;
    const int ics = isFloatConstant(g.value(inner.inputs[1])) ? 1 : isFloatConstant(g.value(inner.inputs[0])) ? 0 : -1;
    if (ics < 0) return false;
    const ValueId x = inner.inputs[1 - ics], c1 = inner.inputs[ics];
    if (g.value(x).initializer) return false;  // all-constant: constant folding's job
    const std::string op = n.opType;  // n is erased by replaceNodes below
    const ValueId out = n.outputs[0];
    const bool multiply = op == "Mul";
    const std::string sym = multiply ? "·" : "+";
    rw.setRule(multiply ? "reassociate-mul" : "reassociate-add");
    const std::string name = n.displayName(), innerName = inner.displayName();
    if (!match::hasSingleReader(rw.graph(), mid)) {
        rw.missed({id, innerId}, "not reassociated: " + innerName + "'s result has other readers", {mid});
        return true;
    }
    const Tensor& t1 = *g.value(c1).initializer;
    const Tensor& t2 = *g.value(c2).initializer;
    auto cDims = broadcastDims(t1.dims, t2.dims);
    if (!cDims) {
        rw.missed({id, innerId}, "not reassociated: the constants' shapes do not broadcast together");
        return true;
    }
    // Broadcasting is associative, so x·(c1·c2) has the shape of (x·c1)·c2 whenever the latter is
    // valid; with static shapes we check it anyway.
    auto xDims = g.value(x).staticDims(), outDims = g.value(n.outputs[0]).staticDims();
    if (xDims && outDims) {
        auto newOut = broadcastDims(*xDims, *cDims);
        if (!newOut || *newOut != *outDims) {
            rw.missed({id, innerId}, "not reassociated: broadcasting would change the result shape");
            return true;
        }
    }
    if (auto combined = checkedProduct(*cDims); !combined || *combined > std::max(t1.elementCount(), t2.elementCount())) {
        rw.missed({id, innerId}, "not reassociated: the combined constant would be larger than both constants");
        return true;
    }
    if (!multiply) {
        rw.missed({id, innerId}, "not reassociated: float32 addition is not associative, (x+c1)+c2 rounds twice and "
                                 "x+(c1+c2) once, so the result would differ in the last bit for some x");
        return true;
    }
    bool exact = true;
    const std::vector<float> values = combine(t1, t2, *cDims, multiply, exact);
    if (!exact) {
        rw.missed({id, innerId}, "not reassociated: '" + g.value(c1).name + "' and '" + g.value(c2).name +
                                     "' meet in elements neither of which is a power of two (or whose product is not a normal "
                                     "float32), so x·(c1·c2) would round differently from (x·c1)·c2");
        return true;
    }
    const ValueId c = rw.newInitializer(g.value(c1).name + (multiply ? "_times_" : "_plus_") + g.value(c2).name,
                                        makeTensorOf(DataType::Float, *cDims, values));
    const std::string why = "(x" + sym + "c1)" + sym + "c2 = x" + sym + "(c1" + sym + "c2): '" + g.value(c1).name +
                            "' and '" + g.value(c2).name + "' combined into one constant";
    const NodeId merged = rw.replaceNodes({innerId, id}, op, {x, c}, {out}, {}, why, name);
    rw.applied({merged}, innerName + " and " + name + ": " + why);
    revisit.push_back(merged);
    return true;
}

/// Max(x, LeakyRelu(x)) = LeakyRelu(x) when alpha ≤ 1 (αx ≤ x for x ≥ 0 and αx ≥ x for x < 0);
/// Max(x, Relu(x)) = Relu(x).
bool maxOfActivation(Rewriter& rw, NodeId id) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    if (n.inputs.size() != 2 || n.inputs[0] == kNone || n.inputs[1] == kNone) return false;
    for (size_t s = 0; s < 2; ++s) {
        const NodeId p = g.value(n.inputs[s]).producer;
        if (p == kNone) continue;
        const Node& act = g.node(p);
        if ((act.opType != "LeakyRelu" && act.opType != "Relu") || !act.domain.empty() || act.inputs.empty() ||
            act.inputs[0] != n.inputs[1 - s])
            continue;
        if (act.opType == "Relu") {
            bypass(rw, id, s, "max-relu", "Max(x, Relu(x)) = Relu(x)");
            return true;
        }
        const float alpha = act.attrFloat("alpha", 0.01f);
        rw.setRule("max-leakyrelu");
        if (!(alpha <= 1.f)) {
            rw.missed({id, p}, "not simplified: alpha of " + act.displayName() + " is above 1, so Max picks x for negative x");
            return true;
        }
        bypass(rw, id, s, "max-leakyrelu", "Max(x, LeakyRelu(x)) = LeakyRelu(x) since alpha <= 1");
        return true;
    }
    return false;
}

/// x·0 = 0 for integer x (static output shape): folded to a zero constant.
bool mulByZero(Rewriter& rw, NodeId id) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    if (n.inputs.size() != 2 || n.inputs[0] == kNone || n.inputs[1] == kNone) return false;
    const int zs = constantAll(g.value(n.inputs[1]), 0.0) ? 1 : constantAll(g.value(n.inputs[0]), 0.0) ? 0 : -1;
    if (zs < 0) return false;
    rw.setRule("mul-zero");
    const ValueId out = n.outputs[0];
    const DataType t = g.value(n.inputs[(size_t)zs]).initializer->dtype;
    if (!isIntegerType(t)) {
        rw.missed({id}, "not simplified: x*0 is not 0 for floating-point x (NaN*0 and Inf*0 are NaN); only integer tensors are folded");
        return true;
    }
    auto dims = g.value(out).staticDims();
    if (!dims) {
        rw.missed({id}, "not simplified: the output shape is not static");
        return true;
    }
    if (g.value(out).isGraphOutput || rw.isCapturedBySubgraph(out)) {
        rw.missed({id}, "not simplified: the result is a graph output or read by a subgraph", {out});
        return true;
    }
    const int64_t bytes = checkedProduct(*dims, (int64_t)elementSize(t)).value_or(INT64_MAX);
    if (bytes > (64ll << 20)) {
        rw.missed({id}, "not simplified: the zero constant would be " + std::to_string(bytes >> 20) + " MB");
        return true;
    }
    const std::string name = n.displayName();
    std::vector<uint8_t> zeros(static_cast<size_t>(bytes), 0);
    rw.foldToConstant(out, makeTensor(t, *dims, zeros.data(), zeros.size()), name + ": integer x*0 = 0");
    rw.applied({}, name + ": integer x*0 = 0 (exact for integers, unlike floats)");
    return true;
}

}  // namespace

bool simplifyArithmetic(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Node& n = rw.graph().node(id);
    if (n.opType == "Mul" && mulByZero(rw, id)) return true;
    if ((n.opType == "Mul" || n.opType == "Add") && reassociate(rw, id, revisit)) return true;
    if (n.opType == "Max") return maxOfActivation(rw, id);
    return false;
}

}  // namespace passlens::passes::algebraic
