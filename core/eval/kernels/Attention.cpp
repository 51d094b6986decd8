// Attention (23) and RotaryEmbedding (23), computed in double. Attention follows the current spec
// text: bottom-right causal alignment with a past cache, boolean or additive masks, GQA/MQA by
// sharing KV heads, softcap, and a zero row where every key is masked.
#include <cmath>
#include <limits>

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

/// A [batch, heads, seq, head_size] view of Q/K/V given as 4-D, or 3-D [batch, seq, heads*head_size].
struct Heads {
    int64_t B = 0, H = 0, S = 0, D = 0;
    std::vector<double> v;  ///< always stored as [B, H, S, D]
    double at(int64_t b, int64_t h, int64_t s, int64_t d) const { return v[((b * H + h) * S + s) * D + d]; }
};

Heads headsOf(const KernelContext& c, const Tensor& t, int64_t heads, const char* what) {
    Heads r;
    const auto vals = toDoubles(t);
    if (t.dims.size() == 4) {
        r.B = t.dims[0], r.H = t.dims[1], r.S = t.dims[2], r.D = t.dims[3];
        r.v = vals;
        return r;
    }
    if (t.dims.size() != 3) c.fail(std::string(what) + " must be 3-D or 4-D, got " + shapeText(t.dims));
    if (heads <= 0) c.fail(std::string("3-D ") + what + " needs q_num_heads and kv_num_heads");
    if (t.dims[2] % heads) c.fail(std::string(what) + " hidden size " + std::to_string(t.dims[2]) + " is not divisible by " +
                                  std::to_string(heads) + " heads");
    r.B = t.dims[0], r.H = heads, r.S = t.dims[1], r.D = t.dims[2] / heads;
    r.v.resize(vals.size());
    for (int64_t b = 0; b < r.B; ++b)
        for (int64_t s = 0; s < r.S; ++s)
            for (int64_t h = 0; h < r.H; ++h)
                for (int64_t d = 0; d < r.D; ++d) r.v[((b * r.H + h) * r.S + s) * r.D + d] = vals[((b * r.S + s) * r.H + h) * r.D + d];
    return r;
}

/// past (4-D cache) followed by the new keys/values along the sequence.
Heads withPast(const KernelContext& c, const Heads& now, size_t pastIdx, const char* what) {
    if (!c.has(pastIdx)) return now;
    const Tensor& p = c.t(pastIdx);
    if (p.dims.size() != 4 || p.dims[0] != now.B || p.dims[1] != now.H || p.dims[3] != now.D)
        c.fail(std::string(what) + " " + shapeText(p.dims) + " does not match [batch, kv_num_heads, past, head_size] = [" +
               std::to_string(now.B) + ", " + std::to_string(now.H) + ", past, " + std::to_string(now.D) + "]");
    const auto pv = toDoubles(p);
    Heads r = now;
    const int64_t P = p.dims[2];
    r.S = P + now.S;
    r.v.assign(static_cast<size_t>(r.B * r.H * r.S * r.D), 0.0);
    for (int64_t b = 0; b < r.B; ++b)
        for (int64_t h = 0; h < r.H; ++h)
            for (int64_t s = 0; s < r.S; ++s)
                for (int64_t d = 0; d < r.D; ++d)
                    r.v[((b * r.H + h) * r.S + s) * r.D + d] =
                        s < P ? pv[((b * r.H + h) * P + s) * r.D + d] : now.at(b, h, s - P, d);
    return r;
}

std::vector<TensorPtr> attention(KernelContext& c) {
    const Tensor& qt = c.t(0);
    const Tensor& kt = c.t(1);
    const Tensor& vt = c.t(2);
    if (qt.dims.size() != kt.dims.size() || qt.dims.size() != vt.dims.size()) c.fail("Q, K and V must have the same rank");
    const bool is3d = qt.dims.size() == 3;
    const int64_t qHeadsAttr = c.node.attrInt("q_num_heads", 0), kvHeadsAttr = c.node.attrInt("kv_num_heads", 0);
    const Heads q = headsOf(c, qt, qHeadsAttr, "Q");
    const Heads kNow = headsOf(c, kt, kvHeadsAttr, "K"), vNow = headsOf(c, vt, kvHeadsAttr, "V");
    if (q.B != kNow.B || q.B != vNow.B) c.fail("Q, K and V have different batch sizes");
    if (q.D != kNow.D) c.fail("Q head size " + std::to_string(q.D) + " differs from K head size " + std::to_string(kNow.D));
    if (kNow.H != vNow.H || kNow.S != vNow.S) c.fail("K and V differ in heads or sequence length");
    if (kNow.H <= 0 || q.H % kNow.H) c.fail(std::to_string(q.H) + " query heads are not a multiple of " + std::to_string(kNow.H) + " kv heads");
    if (c.has(4) != c.has(5)) c.fail("past_key and past_value must be given together");
    const int64_t P = c.has(4) ? c.t(4).dims.size() == 4 ? c.t(4).dims[2] : 0 : 0;
    const Heads k = withPast(c, kNow, 4, "past_key"), v = withPast(c, vNow, 5, "past_value");
    const int64_t B = q.B, H = q.H, Sq = q.S, T = k.S, D = q.D, Dv = v.D, group = q.H / k.H;
    const double scale = c.node.attr("scale") ? double(c.node.attrFloat("scale", 1.0f)) : 1.0 / std::sqrt(double(D));
    const double softcap = c.node.attrFloat("softcap", 0.0f);
    const bool causal = c.node.attrInt("is_causal", 0) != 0;
    const int64_t mode = c.node.attrInt("qk_matmul_output_mode", 0);
    const double ninf = -std::numeric_limits<double>::infinity();

    // Additive bias [B, H, Sq, T] from the mask (broadcast; a short last dim is padded as masked).
    std::vector<double> bias(static_cast<size_t>(B * H * Sq * T), 0.0);
    if (c.has(3)) {
        const Tensor& m = c.t(3);
        const bool isBool = m.dtype == DataType::Bool;
        if (!isBool && m.dtype != DataType::Float && m.dtype != DataType::Double)
            c.unsupported("attn_mask of type " + std::string(dataTypeName(m.dtype)) + " is not supported (bool or the type of Q)");
        if (m.dims.empty() || m.dims.size() > 4) c.fail("attn_mask must have rank 1 to 4, got " + shapeText(m.dims));
        const int64_t mT = m.dims.back();
        if (mT > T) c.fail("attn_mask covers " + std::to_string(mT) + " keys but there are only " + std::to_string(T));
        std::vector<int64_t> md = m.dims;
        md.back() = T;
        const std::vector<int64_t> full{B, H, Sq, T};
        if (broadcastShapes({full, md}, c.where()) != full)
            c.fail("attn_mask " + shapeText(m.dims) + " does not broadcast to " + shapeText(full));
        const auto mv = toDoubles(m);
        std::vector<int64_t> ms(4, 0);
        {
            std::vector<int64_t> md4(4 - md.size(), 1);
            md4.insert(md4.end(), md.begin(), md.end());
            std::vector<int64_t> real = md4;
            real[3] = mT;
            auto st = stridesOf(real);
            for (int d = 0; d < 4; ++d) ms[d] = md4[d] == 1 ? 0 : st[d];
        }
        for (int64_t b = 0; b < B; ++b)
            for (int64_t h = 0; h < H; ++h)
                for (int64_t i = 0; i < Sq; ++i)
                    for (int64_t j = 0; j < T; ++j) {
                        double add = ninf;
                        if (j < mT) {
                            const double val = mv[b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3]];
                            add = isBool ? (val != 0 ? 0.0 : ninf) : val;
                        }
                        bias[((b * H + h) * Sq + i) * T + j] = add;
                    }
    }
    if (causal)
        for (int64_t bh = 0; bh < B * H; ++bh)
            for (int64_t i = 0; i < Sq; ++i)
                for (int64_t j = i + P + 1; j < T; ++j) bias[(bh * Sq + i) * T + j] = ninf;

    std::vector<double> y(static_cast<size_t>(B * H * Sq * Dv), 0.0), qkOut(static_cast<size_t>(B * H * Sq * T));
    std::vector<double> row(static_cast<size_t>(T));
    for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h) {
            const int64_t kh = h / group;
            for (int64_t i = 0; i < Sq; ++i) {
                const int64_t rowOff = ((b * H + h) * Sq + i) * T;
                double mx = ninf, biasMax = ninf;
                for (int64_t j = 0; j < T; ++j) {
                    double s = 0;
                    for (int64_t d = 0; d < D; ++d) s += q.at(b, h, i, d) * k.at(b, kh, j, d);
                    s *= scale;
                    if (mode == 0) qkOut[rowOff + j] = s;
                    if (softcap > 0) s = softcap * std::tanh(s / softcap);
                    if (mode == 1) qkOut[rowOff + j] = s;
                    s += bias[rowOff + j];
                    if (mode == 2) qkOut[rowOff + j] = s;
                    row[j] = s;
                    mx = std::max(mx, s);
                    biasMax = std::max(biasMax, bias[rowOff + j]);
                }
                const bool allMasked = T == 0 || biasMax == ninf;
                double sum = 0;
                for (int64_t j = 0; j < T; ++j) {
                    row[j] = allMasked || row[j] == ninf ? 0.0 : std::exp(row[j] - mx);
                    sum += row[j];
                }
                for (int64_t j = 0; j < T; ++j) {
                    row[j] = allMasked || sum == 0 ? 0.0 : row[j] / sum;
                    if (mode == 3) qkOut[rowOff + j] = row[j];
                }
                double* yr = y.data() + ((b * H + h) * Sq + i) * Dv;
                for (int64_t j = 0; j < T; ++j) {
                    if (row[j] == 0) continue;
                    for (int64_t d = 0; d < Dv; ++d) yr[d] += row[j] * v.at(b, kh, j, d);
                }
            }
        }
    std::vector<TensorPtr> outs;
    if (is3d) {
        std::vector<double> y3(y.size());
        for (int64_t b = 0; b < B; ++b)
            for (int64_t h = 0; h < H; ++h)
                for (int64_t i = 0; i < Sq; ++i)
                    for (int64_t d = 0; d < Dv; ++d) y3[((b * Sq + i) * H + h) * Dv + d] = y[((b * H + h) * Sq + i) * Dv + d];
        outs.push_back(floatsOut(qt.dtype, {B, Sq, H * Dv}, y3, "Attention"));
    } else {
        outs.push_back(floatsOut(qt.dtype, {B, H, Sq, Dv}, y, "Attention"));
    }
    const size_t nOut = c.node.outputs.size();
    if (nOut > 1) outs.push_back(floatsOut(kt.dtype, {B, k.H, T, D}, k.v, "Attention"));
    if (nOut > 2) outs.push_back(floatsOut(vt.dtype, {B, v.H, T, Dv}, v.v, "Attention"));
    if (nOut > 3) outs.push_back(floatsOut(qt.dtype, {B, H, Sq, T}, qkOut, "Attention"));
    return outs;
}

bool checkAttention(const Node& n, int64_t, std::string* why) {
    auto fail = [&](const std::string& w) { if (why) *why = w; return false; };
    const int64_t mode = n.attrInt("qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3) return fail("qk_matmul_output_mode=" + std::to_string(mode) + " is not supported (0 to 3)");
    const bool wantsQk = n.outputs.size() > 3 && n.outputs[3] != kNone;
    if (wantsQk && mode == 0 && n.attrFloat("softcap", 0.0f) > 0)
        return fail("qk_matmul_output with qk_matmul_output_mode=0 and softcap > 0 is not supported (the spec and the "
                    "reference implementation disagree on it)");
    if (n.attrInt("is_causal", 0) != 0 && n.attrInt("is_causal", 0) != 1)
        return fail("is_causal=" + std::to_string(n.attrInt("is_causal", 0)) + " is not supported (0 or 1)");
    return true;
}

std::vector<TensorPtr> rotaryEmbedding(KernelContext& c) {
    const Tensor& x = c.t(0);
    const bool is3d = x.dims.size() == 3;
    if (!is3d && x.dims.size() != 4) c.fail("input must be 3-D or 4-D, got " + shapeText(x.dims));
    const int64_t B = x.dims[0];
    int64_t H, S, D;
    if (is3d) {
        H = c.node.attrInt("num_heads", 0);
        if (H <= 0) c.fail("a 3-D input needs num_heads");
        if (x.dims[2] % H) c.fail("hidden size " + std::to_string(x.dims[2]) + " is not divisible by num_heads " + std::to_string(H));
        S = x.dims[1];
        D = x.dims[2] / H;
    } else {
        H = x.dims[1], S = x.dims[2], D = x.dims[3];
    }
    int64_t R = c.node.attrInt("rotary_embedding_dim", 0);
    if (R == 0) R = D;
    if (R < 0 || R > D || R % 2) c.fail("rotary_embedding_dim " + std::to_string(R) + " must be even and at most the head size " + std::to_string(D));
    const bool interleaved = c.node.attrInt("interleaved", 0) != 0;
    const Tensor& cosT = c.t(1);
    const Tensor& sinT = c.t(2);
    if (cosT.dims != sinT.dims) c.fail("cos_cache " + shapeText(cosT.dims) + " and sin_cache " + shapeText(sinT.dims) + " differ");
    const int64_t half = R / 2;
    if (cosT.dims.empty() || cosT.dims.back() != half)
        c.fail("the caches' last dim must be rotary_embedding_dim/2 = " + std::to_string(half) + ", got " + shapeText(cosT.dims));
    const auto cosv = toDoubles(cosT), sinv = toDoubles(sinT);
    std::vector<int64_t> pos;
    if (c.has(3)) {
        const Tensor& p = c.t(3);
        if (p.dims != std::vector<int64_t>{B, S}) c.fail("position_ids must have shape [batch, sequence], got " + shapeText(p.dims));
        if (cosT.dims.size() != 2) c.fail("with position_ids the caches must be 2-D [max_position, rotary_dim/2]");
        pos = toInt64s(p);
        for (int64_t id : pos)
            if (id < 0 || id >= cosT.dims[0]) c.fail("position id " + std::to_string(id) + " is outside the cache of " + std::to_string(cosT.dims[0]));
    } else if (cosT.dims != std::vector<int64_t>{B, S, half}) {
        c.fail("without position_ids the caches must be [batch, sequence, rotary_dim/2] = " + shapeText({B, S, half}) + ", got " +
               shapeText(cosT.dims));
    }
    const auto xv = toDoubles(x);
    std::vector<double> y = xv;
    auto offset = [&](int64_t b, int64_t s, int64_t h) {
        return is3d ? ((b * S + s) * H + h) * D : ((b * H + h) * S + s) * D;
    };
    for (int64_t b = 0; b < B; ++b)
        for (int64_t s = 0; s < S; ++s) {
            const int64_t cacheRow = pos.empty() ? (b * S + s) : pos[b * S + s];
            const double* cs = cosv.data() + cacheRow * half;
            const double* sn = sinv.data() + cacheRow * half;
            for (int64_t h = 0; h < H; ++h) {
                const int64_t o = offset(b, s, h);
                for (int64_t i = 0; i < half; ++i) {
                    const int64_t i1 = interleaved ? o + 2 * i : o + i, i2 = interleaved ? o + 2 * i + 1 : o + i + half;
                    const double x1 = xv[i1], x2 = xv[i2];
                    y[i1] = cs[i] * x1 - sn[i] * x2;
                    y[i2] = sn[i] * x1 + cs[i] * x2;
                }
            }
        }
    return {floatsOut(x.dtype, x.dims, y, "RotaryEmbedding")};
}

}  // namespace

void registerAttention(KernelRegistry& r) {
    KernelInfo k;
    k.types = kFloatTypes;
    k.sinceMin = 23;
    k.fn = attention;
    k.sinceMax = 23;  // 24 adds nonpad_kv_seqlen
    k.check = checkAttention;
    r.add("", "Attention", k);
    k.sinceMax = std::numeric_limits<int64_t>::max();
    k.fn = rotaryEmbedding;
    k.check = nullptr;
    r.add("", "RotaryEmbedding", k);
}

}  // namespace passlens::eval
