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

bool checkLstm(const Node& n, int64_t, std::string* why) {
    auto fail = [&](const std::string& w) { if (why) *why = w; return false; };
    if (auto* a = n.attr("activations")) {
        const auto& s = a->strings;
        for (size_t i = 0; i < s.size(); ++i)
            if (s[i] != (i % 3 == 0 ? "Sigmoid" : "Tanh")) return fail("activation '" + s[i] + "' is not supported (only Sigmoid/Tanh/Tanh)");
    }
    if (n.attrInt("input_forget", 0)) return fail("input_forget=1 is not supported");
    if (n.attrInt("layout", 0)) return fail("layout=1 is not supported");
    return true;
}

std::vector<TensorPtr> lstm(KernelContext& c) {
    const Tensor& X = c.t(0);
    const Tensor& W = c.t(1);
    const Tensor& R = c.t(2);
    if (X.dims.size() != 3 || W.dims.size() != 3 || R.dims.size() != 3) c.fail("X, W, R must be 3-D");
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

}  // namespace

void registerRnn(KernelRegistry& r) {
    KernelInfo k;
    k.types = {DataType::Float, DataType::Float16};
    k.sinceMin = 7;
    k.check = checkLstm;
    k.fn = lstm;
    r.add("", "LSTM", std::move(k));
}

}  // namespace passlens::eval
