// Gradients of MatMul (batched, broadcast, 1-D operands), Gemm (every transA/transB/alpha/beta)
// and Einsum (explicit or implicit output, no ellipsis or repeated subscripts in one operand).
#include <algorithm>
#include <map>
#include <numeric>

#include "autodiff/GradientBuilder.h"
#include "ir/Error.h"

namespace passlens::autodiff {

using namespace passlens::ir;

namespace {

/// Swaps the last two axes.
ValueId transposeLast2(GradContext& c, ValueId x, int64_t rank) {
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[size_t(rank - 1)], perm[size_t(rank - 2)]);
    return c.op("Transpose", {x}, {Attribute::makeInts("perm", perm)});
}

std::vector<Dim> dimsOf(GradContext& c, ValueId v) {
    c.rank(v);  // throws when unknown
    return c.graph().value(v).type.shape->dims;
}

void matMulGrad(GradContext& c) {
    // Y[..., M, N] = A[..., M, K] · B[..., K, N]; dA = g·Bᵀ, dB = Aᵀ·g, each summed over the batch
    // axes its operand was broadcast along. A 1-D operand is lifted to a matrix first (as MatMul
    // itself does), and the gradient dropped back to 1-D.
    ValueId a = c.input(0), b = c.input(1), g = c.gradOut(0);
    std::vector<Dim> ad = dimsOf(c, a), bd = dimsOf(c, b), gd = dimsOf(c, c.output(0));
    const bool aVec = ad.size() == 1, bVec = bd.size() == 1;
    if (aVec) {
        a = c.unsqueeze(a, {0});
        ad.insert(ad.begin(), Dim::of(1));
        g = c.unsqueeze(g, {int64_t(gd.size()) - (bVec ? 0 : 1)});
        gd.insert(gd.end() - (bVec ? 0 : 1), Dim::of(1));
    }
    if (bVec) {
        b = c.unsqueeze(b, {1});
        bd.push_back(Dim::of(1));
        g = c.unsqueeze(g, {int64_t(gd.size())});
        gd.push_back(Dim::of(1));
    }
    const int64_t ra = int64_t(ad.size()), rb = int64_t(bd.size()), rg = int64_t(gd.size());
    std::vector<Dim> batch(gd.begin(), gd.end() - 2);
    auto finish = [&](ValueId full, const std::vector<Dim>& tail, ValueId original, bool lifted, const std::vector<Dim>& liftedDims) {
        std::vector<Dim> fullDims = batch;
        fullDims.insert(fullDims.end(), tail.begin(), tail.end());
        if (!lifted) return c.sumTo(full, fullDims, original);
        // Sum the batch axes away, then drop the lifted axis with a reshape to the 1-D operand.
        std::vector<int64_t> axes(static_cast<size_t>(rg - 2));
        std::iota(axes.begin(), axes.end(), 0);
        ValueId summed = axes.empty() ? full : c.reduceSum(full, axes, false);
        (void)liftedDims;
        return c.reshapeLike(summed, original);
    };
    if (c.needsGrad(0)) {
        ValueId full = c.op("MatMul", {g, transposeLast2(c, b, rb)});
        c.setGradIn(0, finish(full, {ad[size_t(ra - 2)], ad[size_t(ra - 1)]}, c.input(0), aVec, ad));
    }
    if (c.needsGrad(1) && !bVec && rb == 2 && ra >= 3 && bd[0].isStatic() && bd[1].isStatic()) {
        // A weight matrix under batched activations (a Linear layer on [batch, seq, K], or
        // MultiheadAttention's [seq, batch, K]): every row of A and g pairs up, so dB is one matrix
        // product over the flattened rows. The batched form would first build a [..., K, N] outer
        // product per batch row and sum it away: 115 MB for one projection of a ViT-S.
        ValueId rowsA = c.reshape(a, {-1, *bd[0].value}), rowsG = c.reshape(g, {-1, *bd[1].value});
        c.setGradIn(1, c.op("Gemm", {rowsA, rowsG}, {Attribute::makeInt("transA", 1)}));
    } else if (c.needsGrad(1)) {
        ValueId full = c.op("MatMul", {transposeLast2(c, a, ra), g});
        c.setGradIn(1, finish(full, {bd[size_t(rb - 2)], bd[size_t(rb - 1)]}, c.input(1), bVec, bd));
    }
}

void gemmGrad(GradContext& c) {
    // Y = α·A'·B' + β·C with A' = transA ? Aᵀ : A, B' = transB ? Bᵀ : B. Each gradient is one Gemm.
    const Node& n = c.node();
    const int64_t ta = n.attrInt("transA", 0), tb = n.attrInt("transB", 0);
    const float alpha = n.attrFloat("alpha", 1.f), beta = n.attrFloat("beta", 1.f);
    const ValueId a = c.input(0), b = c.input(1), g = c.gradOut(0);
    auto gemm = [&](ValueId x, ValueId y, int64_t tx, int64_t ty) {
        std::vector<Attribute> attrs;
        if (alpha != 1.f) attrs.push_back(Attribute::makeFloat("alpha", alpha));
        if (tx) attrs.push_back(Attribute::makeInt("transA", 1));
        if (ty) attrs.push_back(Attribute::makeInt("transB", 1));
        return c.op("Gemm", {x, y}, std::move(attrs));
    };
    if (c.needsGrad(0)) c.setGradIn(0, ta ? gemm(b, g, tb, 1) : gemm(g, b, 0, tb ? 0 : 1));
    if (c.needsGrad(1)) c.setGradIn(1, tb ? gemm(g, a, 1, ta) : gemm(a, g, ta ? 0 : 1, 0));
    if (c.needsGrad(2)) {
        ValueId scaled = beta == 1.f ? g : c.op("Mul", {g, c.scalar(beta)});
        c.setGradIn(2, c.sumToShapeOf(scaled, c.input(2)));
    }
}

/// Operand subscripts and output subscript of an Einsum equation (spaces dropped; implicit form:
/// the letters that occur once, in alphabetical order).
std::pair<std::vector<std::string>, std::string> parseEinsum(GradContext& c, std::string eq) {
    eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
    if (eq.find("...") != std::string::npos) c.unsupported("ellipsis ('...') in the equation");
    const size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> ops;
    for (size_t from = 0;;) {
        const size_t comma = lhs.find(',', from);
        ops.push_back(lhs.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
        if (comma == std::string::npos) break;
        from = comma + 1;
    }
    std::string out;
    if (arrow != std::string::npos) {
        out = eq.substr(arrow + 2);
    } else {
        std::map<char, int> count;
        for (const auto& o : ops)
            for (char ch : o) ++count[ch];
        for (const auto& [ch, n] : count)
            if (n == 1) out += ch;
    }
    for (const auto& o : ops)
        for (char ch : o)
            if (std::count(o.begin(), o.end(), ch) > 1) c.unsupported("subscript '" + std::string(1, ch) + "' repeated in operand '" + o + "'");
    return {ops, out};
}

void einsumGrad(GradContext& c) {
    // Operand k's gradient contracts g (subscripts: the output's) with the other operands back
    // to operand k's subscripts. Letters of operand k found nowhere else were summed over in the
    // forward pass: g is the same along them, so they are restored by Unsqueeze and Expand.
    auto [ops, out] = parseEinsum(c, c.node().attrString("equation", ""));
    if (ops.size() != c.inputCount()) c.unsupported("the equation names " + std::to_string(ops.size()) + " operands");
    for (size_t k = 0; k < ops.size(); ++k) {
        if (!c.needsGrad(k)) continue;
        std::string others = out;
        std::vector<ValueId> args{c.gradOut(0)};
        std::string lhs = out;
        for (size_t j = 0; j < ops.size(); ++j) {
            if (j == k) continue;
            lhs += "," + ops[j];
            others += ops[j];
            args.push_back(c.input(j));
        }
        std::string kept;
        std::vector<int64_t> missing;
        for (size_t a = 0; a < ops[k].size(); ++a) {
            if (others.find(ops[k][a]) != std::string::npos) kept += ops[k][a];
            else missing.push_back(int64_t(a));
        }
        ValueId grad = c.op("Einsum", args, {Attribute::makeString("equation", lhs + "->" + kept)});
        if (!missing.empty()) grad = c.op("Expand", {c.unsqueeze(grad, missing), c.shapeOf(c.input(k))});
        c.setGradIn(k, grad);
    }
}

}  // namespace

void registerLinalgGradients(GradientRegistry& r) {
    r.add("MatMul", matMulGrad);
    r.add("Gemm", gemmGrad);
    r.add("Einsum", einsumGrad);
}

}  // namespace passlens::autodiff
