// LSTM (ONNX gate order i, o, f, c; default activations Sigmoid/Tanh/Tanh; forward, reverse,
// bidirectional; sequence_lens; peepholes; clip).
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

float sigmoid(float x) { return x >= 0 ? 1.0f / (1.0f + std::exp(-x)) : std::exp(x) / (1.0f + std::exp(x)); }

/// Sizes and types of the optional inputs, so the kernels never read past a buffer.
void checkRnnInputs(const KernelContext& c, int64_t D, int64_t B, int64_t H, int64_t gates, int64_t S, const std::vector<int64_t>& lens) {
    for (size_t i = 0; i < c.in.size(); ++i)
        if (c.has(i) && i != 4 && c.in[i]->dtype != DataType::Float) c.fail("input " + std::to_string(i) + " must be float");
    auto expect = [&](size_t i, int64_t n, const char* what) {
        if (c.has(i) && c.t(i).elementCount() != n) c.fail(std::string(what) + " has " + std::to_string(c.t(i).elementCount()) + " values, expected " + std::to_string(n));
    };
    expect(3, D * 2 * gates * H, "B");
    expect(5, D * B * H, "initial_h");
    expect(6, D * B * H, "initial_c");
    expect(7, D * 3 * H, "P");
    for (int64_t l : lens)
        if (l < 0 || l > S) c.fail("sequence_lens value " + std::to_string(l) + " is outside [0, " + std::to_string(S) + "]");
}

bool checkLstm(const Node& n, int64_t, std::string* why) {
    auto fail = [&](const std::string& w) { if (why) *why = w; return false; };
    if (auto* a = n.attr("activations")) {
        const auto& s = a->strings;
        for (size_t i = 0; i < s.size(); ++i)
            if (s[i] != (i % 3 == 0 ? "Sigmoid" : "Tanh")) return fail("activation '" + s[i] + "' is not supported (only Sigmoid/Tanh/Tanh)");
    }
    if (n.attrInt("input_forget", 0)) return fail("input_forget=1 is not supported");
    return true;
}

std::vector<TensorPtr> lstm(KernelContext& c) {
    const Tensor& X = c.t(0);
    const Tensor& W = c.t(1);
    const Tensor& R = c.t(2);
    if (X.dims.size() != 3 || W.dims.size() != 3 || R.dims.size() != 3) c.fail("X, W, R must be 3-D, got " + shapeText(X.dims) + " " + shapeText(W.dims) + " " + shapeText(R.dims));
    const int64_t S = X.dims[0], B = X.dims[1], I = X.dims[2], D = W.dims[0], H = R.dims[2];
    const std::string direction = c.node.attrString("direction", "forward");
    if ((direction == "bidirectional") != (D == 2)) c.fail("direction does not match W's first dim");
    if (W.dims[1] != 4 * H || W.dims[2] != I || R.dims[1] != 4 * H) c.fail("W/R shapes do not match hidden_size");
    const float clip = c.node.attrFloat("clip", 0.0f);
    const bool hasClip = c.node.attr("clip") != nullptr;
    std::vector<int64_t> lens(B, S);
    if (c.has(4)) {
        auto l = toInt64s(c.t(4));
        if (int64_t(l.size()) != B) c.fail("sequence_lens must have batch_size entries");
        lens = l;
    }
    checkRnnInputs(c, D, B, H, 4, S, lens);
    OutTensor Y(DataType::Float, {S, D, B, H}), Yh(DataType::Float, {D, B, H}), Yc(DataType::Float, {D, B, H});
    std::fill_n(Y.data<float>(), Y.count(), 0.0f);
    std::vector<float> gates(static_cast<size_t>(B * 4 * H)), h(B * H), cs(B * H);
    for (int64_t d = 0; d < D; ++d) {
        const bool reverse = direction == "reverse" || d == 1;
        const float* w = W.as<float>() + d * 4 * H * I;
        const float* rr = R.as<float>() + d * 4 * H * H;
        std::vector<float> bias(4 * H, 0.0f), peep(3 * H, 0.0f);
        if (c.has(3)) {
            const float* b = c.t(3).as<float>() + d * 8 * H;
            for (int64_t i = 0; i < 4 * H; ++i) bias[i] = b[i] + b[4 * H + i];
        }
        if (c.has(7)) std::memcpy(peep.data(), c.t(7).as<float>() + d * 3 * H, 3 * H * sizeof(float));
        if (c.has(5)) std::memcpy(h.data(), c.t(5).as<float>() + d * B * H, B * H * sizeof(float));
        else std::fill(h.begin(), h.end(), 0.0f);
        if (c.has(6)) std::memcpy(cs.data(), c.t(6).as<float>() + d * B * H, B * H * sizeof(float));
        else std::fill(cs.begin(), cs.end(), 0.0f);
        for (int64_t step = 0; step < S; ++step) {
            const int64_t t = reverse ? S - 1 - step : step;
            // gates = X_t W^T + H R^T + bias
            for (int64_t b = 0; b < B; ++b) std::memcpy(gates.data() + b * 4 * H, bias.data(), 4 * H * sizeof(float));
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(B), int(4 * H), int(I), 1.0f, X.as<float>() + t * B * I, int(I), w,
                        int(I), 1.0f, gates.data(), int(4 * H));
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(B), int(4 * H), int(H), 1.0f, h.data(), int(H), rr, int(H), 1.0f,
                        gates.data(), int(4 * H));
            for (int64_t b = 0; b < B; ++b) {
                // reverse direction: a sequence of length L uses steps L-1..0
                const int64_t tb = reverse ? (step < lens[b] ? lens[b] - 1 - step : -1) : (t < lens[b] ? t : -1);
                if (tb < 0) continue;
                if (reverse && tb != t) {
                    // recompute the input projection for this batch row at its own time step
                    float* g = gates.data() + b * 4 * H;
                    std::memcpy(g, bias.data(), 4 * H * sizeof(float));
                    cblas_sgemv(CblasRowMajor, CblasNoTrans, int(4 * H), int(I), 1.0f, w, int(I), X.as<float>() + (tb * B + b) * I, 1, 1.0f, g, 1);
                    cblas_sgemv(CblasRowMajor, CblasNoTrans, int(4 * H), int(H), 1.0f, rr, int(H), h.data() + b * H, 1, 1.0f, g, 1);
                }
                float* g = gates.data() + b * 4 * H;
                auto cl = [&](float v) { return hasClip ? std::clamp(v, -clip, clip) : v; };
                for (int64_t j = 0; j < H; ++j) {
                    float& cprev = cs[b * H + j];
                    const float it = sigmoid(cl(g[j] + peep[j] * cprev));
                    const float ft = sigmoid(cl(g[2 * H + j] + peep[2 * H + j] * cprev));
                    const float ct = std::tanh(cl(g[3 * H + j]));
                    const float cn = ft * cprev + it * ct;
                    const float ot = sigmoid(cl(g[H + j] + peep[H + j] * cn));
                    cprev = cn;
                    h[b * H + j] = ot * std::tanh(cn);
                    Y.data<float>()[((tb * D + d) * B + b) * H + j] = h[b * H + j];
                }
            }
        }
        std::memcpy(Yh.data<float>() + d * B * H, h.data(), B * H * sizeof(float));
        std::memcpy(Yc.data<float>() + d * B * H, cs.data(), B * H * sizeof(float));
    }
    return {Y.finish(), Yh.finish(), Yc.finish()};
}

float activate(const std::string& name, float x) {
    if (name == "Sigmoid") return sigmoid(x);
    if (name == "Relu") return x > 0 ? x : 0.0f;
    return std::tanh(x);
}

/// GRU (gates z, r, h) and simple RNN, one batch row and time step at a time.
std::vector<TensorPtr> gruOrRnn(KernelContext& c, bool gru) {
    const Tensor& X = c.t(0);
    const Tensor& W = c.t(1);
    const Tensor& R = c.t(2);
    if (X.dims.size() != 3 || W.dims.size() != 3 || R.dims.size() != 3)
        c.fail("X, W, R must be 3-D, got " + shapeText(X.dims) + " " + shapeText(W.dims) + " " + shapeText(R.dims));
    const int64_t S = X.dims[0], B = X.dims[1], I = X.dims[2], D = W.dims[0], H = R.dims[2], G = gru ? 3 : 1;
    const std::string direction = c.node.attrString("direction", "forward");
    if ((direction == "bidirectional") != (D == 2)) c.fail("direction does not match W's first dim");
    if (W.dims[1] != G * H || W.dims[2] != I || R.dims[1] != G * H) c.fail("W/R shapes do not match hidden_size");
    std::vector<std::string> acts = c.node.attr("activations") ? c.node.attr("activations")->strings : std::vector<std::string>{};
    const bool lbr = c.node.attrInt("linear_before_reset", 0) != 0;
    const bool hasClip = c.node.attr("clip") != nullptr;
    const float clip = c.node.attrFloat("clip", 0.0f);
    auto cl = [&](float v) { return hasClip ? std::clamp(v, -clip, clip) : v; };
    std::vector<int64_t> lens(B, S);
    if (c.has(4)) lens = toInt64s(c.t(4));
    if (int64_t(lens.size()) != B) c.fail("sequence_lens must have batch_size entries");
    checkRnnInputs(c, D, B, H, G, S, lens);
    OutTensor Y(DataType::Float, {S, D, B, H}), Yh(DataType::Float, {D, B, H});
    std::fill_n(Y.data<float>(), Y.count(), 0.0f);
    std::vector<float> xw(G * H), hr(G * H), h(H), hn(H);
    for (int64_t d = 0; d < D; ++d) {
        const std::string f = acts.size() > size_t(d * (gru ? 2 : 1)) ? acts[d * (gru ? 2 : 1)] : (gru ? "Sigmoid" : "Tanh");
        const std::string g = gru ? (acts.size() > size_t(d * 2 + 1) ? acts[d * 2 + 1] : "Tanh") : f;
        const bool reverse = direction == "reverse" || d == 1;
        const float* w = W.as<float>() + d * G * H * I;
        const float* rr = R.as<float>() + d * G * H * H;
        std::vector<float> wb(G * H, 0.0f), rb(G * H, 0.0f);
        if (c.has(3)) {
            const float* b = c.t(3).as<float>() + d * 2 * G * H;
            std::copy(b, b + G * H, wb.begin());
            std::copy(b + G * H, b + 2 * G * H, rb.begin());
        }
        for (int64_t b = 0; b < B; ++b) {
            if (c.has(5)) std::copy_n(c.t(5).as<float>() + (d * B + b) * H, H, h.begin());
            else std::fill(h.begin(), h.end(), 0.0f);
            for (int64_t step = 0; step < lens[b]; ++step) {
                const int64_t t = reverse ? lens[b] - 1 - step : step;
                xw = wb;
                hr = rb;
                cblas_sgemv(CblasRowMajor, CblasNoTrans, int(G * H), int(I), 1.0f, w, int(I), X.as<float>() + (t * B + b) * I, 1, 1.0f, xw.data(), 1);
                cblas_sgemv(CblasRowMajor, CblasNoTrans, int(G * H), int(H), 1.0f, rr, int(H), h.data(), 1, 1.0f, hr.data(), 1);
                if (!gru) {
                    for (int64_t j = 0; j < H; ++j) hn[j] = activate(f, cl(xw[j] + hr[j]));
                } else {
                    std::vector<float> rh(H);
                    std::vector<float> z(H), rg(H);
                    for (int64_t j = 0; j < H; ++j) {
                        z[j] = activate(f, cl(xw[j] + hr[j]));
                        rg[j] = activate(f, cl(xw[H + j] + hr[H + j]));
                    }
                    if (!lbr) {
                        // (r ⊙ H) Rh^T + Rbh
                        for (int64_t j = 0; j < H; ++j) rh[j] = rg[j] * h[j];
                        std::vector<float> tmp(rb.begin() + 2 * H, rb.end());
                        cblas_sgemv(CblasRowMajor, CblasNoTrans, int(H), int(H), 1.0f, rr + 2 * H * H, int(H), rh.data(), 1, 1.0f, tmp.data(), 1);
                        for (int64_t j = 0; j < H; ++j) {
                            const float ht = activate(g, cl(xw[2 * H + j] + tmp[j]));
                            hn[j] = (1 - z[j]) * ht + z[j] * h[j];
                        }
                    } else {
                        for (int64_t j = 0; j < H; ++j) {
                            const float ht = activate(g, cl(xw[2 * H + j] + rg[j] * hr[2 * H + j]));
                            hn[j] = (1 - z[j]) * ht + z[j] * h[j];
                        }
                    }
                }
                h = hn;
                std::copy(h.begin(), h.end(), Y.data<float>() + ((t * D + d) * B + b) * H);
            }
            std::copy(h.begin(), h.end(), Yh.data<float>() + (d * B + b) * H);
        }
    }
    return {Y.finish(), Yh.finish()};
}

bool checkGruRnn(const Node& n, int64_t, std::string* why) {
    if (auto* a = n.attr("activations"))
        for (const auto& s : a->strings)
            if (s != "Sigmoid" && s != "Tanh" && s != "Relu") {
                if (why) *why = "activation '" + s + "' is not supported";
                return false;
            }
    return true;
}

/// layout=1 (batch first): transposes the inputs to layout 0, runs, and transposes the outputs back.
std::vector<TensorPtr> withLayout(KernelContext& c, std::vector<TensorPtr> (*run)(KernelContext&)) {
    if (c.node.attrInt("layout", 0) == 0) return run(c);
    for (size_t i : {size_t(0), size_t(5), size_t(6)})
        if (c.has(i)) {
            if (c.in[i]->dims.size() != 3) c.fail("input " + std::to_string(i) + " must be 3-D");
            c.in[i] = permuted(*c.in[i], {1, 0, 2});
        }
    auto outs = run(c);
    outs[0] = permuted(*outs[0], {2, 0, 1, 3});  // [S,D,B,H] -> [B,S,D,H]
    for (size_t i = 1; i < outs.size(); ++i) outs[i] = permuted(*outs[i], {1, 0, 2});
    return outs;
}

std::vector<TensorPtr> gru(KernelContext& c) { return gruOrRnn(c, true); }
std::vector<TensorPtr> rnn(KernelContext& c) { return gruOrRnn(c, false); }

}  // namespace

void registerRnn(KernelRegistry& r) {
    {
        KernelInfo k;
        k.types = {DataType::Float, DataType::Float16};
        k.sinceMin = 7;
        k.check = checkGruRnn;
        k.fn = [](KernelContext& c) { return withLayout(c, gru); };
        r.add("", "GRU", k);
        k.fn = [](KernelContext& c) { return withLayout(c, rnn); };
        r.add("", "RNN", k);
    }
    KernelInfo k;
    k.types = {DataType::Float, DataType::Float16};
    k.sinceMin = 7;
    k.check = checkLstm;
    k.fn = [](KernelContext& c) { return withLayout(c, lstm); };
    r.add("", "LSTM", std::move(k));
}

}  // namespace passlens::eval
