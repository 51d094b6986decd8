#include "AutodiffTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "autodiff/Autodiff.h"
#include "eval/Interpreter.h"
#include "eval/TensorOps.h"
#include "onnx/Checker.h"

namespace passlens::test {

using namespace passlens::ir;

namespace {

TensorPtr floatToDouble(const TensorPtr& t) {
    if (!t || t->dtype != DataType::Float) return t;
    std::vector<double> v(t->as<float>(), t->as<float>() + t->elementCount());
    return makeTensorOf<double>(DataType::Double, t->dims, v, t->name);
}

TensorPtr doubles(std::vector<int64_t> dims, const std::vector<double>& v) {
    return makeTensorOf<double>(DataType::Double, std::move(dims), v);
}

std::vector<double> values(const Tensor& t) { return eval::toDoubles(t); }

// ---- float64 references for the ops whose kernels are float32-only ---------------------------

struct Window2d {
    int64_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

Window2d windowOf(const Node& n, int64_t kh, int64_t kw, int64_t H, int64_t W) {
    auto s = n.attrInts("strides", {1, 1});
    auto d = n.attrInts("dilations", {1, 1});
    auto p = n.attrInts("pads", {0, 0, 0, 0});
    const std::string autoPad = n.attrString("auto_pad", "NOTSET");
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        const int64_t in[2] = {H, W}, k[2] = {kh, kw};
        for (int a = 0; a < 2; ++a) {
            const int64_t out = (in[a] + s[a] - 1) / s[a];
            const int64_t total = std::max<int64_t>(0, (out - 1) * s[a] + (k[a] - 1) * d[a] + 1 - in[a]);
            p[a] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
            p[a + 2] = total - p[a];
        }
    }
    return {kh, kw, s[0], s[1], d[0], d[1], p[0], p[1], p[2], p[3]};
}

int64_t outSize(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe, bool ceil = false) {
    const int64_t span = in + pb + pe - (d * (k - 1) + 1);
    if (!ceil) return span / s + 1;
    // ceil_mode: one more window when the stride leaves a remainder, unless it would start in the
    // end padding (ONNX, torch).
    int64_t out = (span + s - 1) / s + 1;
    if ((out - 1) * s >= in + pb) --out;
    return out;
}

TensorPtr convRef(const Node& n, const Tensor& x, const Tensor& w, const Tensor* b) {
    const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
    const int64_t M = w.dims[0], Cg = w.dims[1], G = n.attrInt("group", 1), Mg = M / G;
    const Window2d g = windowOf(n, w.dims[2], w.dims[3], H, W);
    const int64_t Ho = outSize(H, g.kh, g.sh, g.dh, g.pt, g.pb), Wo = outSize(W, g.kw, g.sw, g.dw, g.pl, g.pr);
    auto xv = values(x), wv = values(w);
    std::vector<double> bv = b ? values(*b) : std::vector<double>(size_t(M), 0.0);
    std::vector<double> y(size_t(N * M * Ho * Wo));
    for (int64_t nn = 0; nn < N; ++nn)
        for (int64_t m = 0; m < M; ++m)
            for (int64_t oh = 0; oh < Ho; ++oh)
                for (int64_t ow = 0; ow < Wo; ++ow) {
                    double s = bv[size_t(m)];
                    const int64_t grp = m / Mg;
                    for (int64_t c = 0; c < Cg; ++c)
                        for (int64_t i = 0; i < g.kh; ++i)
                            for (int64_t j = 0; j < g.kw; ++j) {
                                const int64_t h = oh * g.sh + i * g.dh - g.pt, ww = ow * g.sw + j * g.dw - g.pl;
                                if (h < 0 || h >= H || ww < 0 || ww >= W) continue;
                                s += xv[size_t(((nn * C + grp * Cg + c) * H + h) * W + ww)] * wv[size_t(((m * Cg + c) * g.kh + i) * g.kw + j)];
                            }
                    y[size_t(((nn * M + m) * Ho + oh) * Wo + ow)] = s;
                }
    return doubles({N, M, Ho, Wo}, y);
}

/// 2-D ConvTranspose in double: x[n, ci] scattered through W[ci, co] to y[n, grp·Cog + co] at
/// ih·s + kh·d − pad; y's size includes output_padding (explicit pads only).
TensorPtr convTransposeRef(const Node& n, const Tensor& x, const Tensor& w, const Tensor* b) {
    const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
    const int64_t Cog = w.dims[1], G = n.attrInt("group", 1), Cg = C / G, M = Cog * G;
    const Window2d g = windowOf(n, w.dims[2], w.dims[3], H, W);
    const auto op = n.attrInts("output_padding", {0, 0});
    const int64_t Ho = (H - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.pt - g.pb + op[0];
    const int64_t Wo = (W - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.pl - g.pr + op[1];
    auto xv = values(x), wv = values(w);
    std::vector<double> bv = b ? values(*b) : std::vector<double>(size_t(M), 0.0);
    std::vector<double> y(size_t(N * M * Ho * Wo));
    for (int64_t nn = 0; nn < N; ++nn)
        for (int64_t m = 0; m < M; ++m)
            for (int64_t i = 0; i < Ho * Wo; ++i) y[size_t((nn * M + m) * Ho * Wo + i)] = bv[size_t(m)];
    for (int64_t nn = 0; nn < N; ++nn)
        for (int64_t ci = 0; ci < C; ++ci) {
            const int64_t grp = ci / Cg;
            for (int64_t ih = 0; ih < H; ++ih)
                for (int64_t iw = 0; iw < W; ++iw) {
                    const double xval = xv[size_t(((nn * C + ci) * H + ih) * W + iw)];
                    for (int64_t co = 0; co < Cog; ++co)
                        for (int64_t i = 0; i < g.kh; ++i)
                            for (int64_t j = 0; j < g.kw; ++j) {
                                const int64_t h = ih * g.sh + i * g.dh - g.pt, ww = iw * g.sw + j * g.dw - g.pl;
                                if (h < 0 || h >= Ho || ww < 0 || ww >= Wo) continue;
                                y[size_t(((nn * M + grp * Cog + co) * Ho + h) * Wo + ww)] +=
                                    xval * wv[size_t(((ci * Cog + co) * g.kh + i) * g.kw + j)];
                            }
                }
        }
    return doubles({N, M, Ho, Wo}, y);
}

TensorPtr poolRef(const Node& n, const Tensor& x, bool isMax) {
    const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
    auto k = n.attrInts("kernel_shape");
    const Window2d g = windowOf(n, k[0], k[1], H, W);
    const bool includePad = n.attrInt("count_include_pad", 0) != 0, ceil = n.attrInt("ceil_mode", 0) != 0;
    const int64_t Ho = outSize(H, g.kh, g.sh, g.dh, g.pt, g.pb, ceil), Wo = outSize(W, g.kw, g.sw, g.dw, g.pl, g.pr, ceil);
    auto xv = values(x);
    std::vector<double> y(size_t(N * C * Ho * Wo));
    for (int64_t nc = 0; nc < N * C; ++nc)
        for (int64_t oh = 0; oh < Ho; ++oh)
            for (int64_t ow = 0; ow < Wo; ++ow) {
                double best = -INFINITY, sum = 0;
                int64_t count = 0;
                for (int64_t i = 0; i < g.kh; ++i)
                    for (int64_t j = 0; j < g.kw; ++j) {
                        const int64_t h = oh * g.sh + i * g.dh - g.pt, ww = ow * g.sw + j * g.dw - g.pl;
                        if (h < 0 || h >= H || ww < 0 || ww >= W) {
                            count += includePad;
                            continue;
                        }
                        const double v = xv[size_t((nc * H + h) * W + ww)];
                        best = std::max(best, v);
                        sum += v;
                        ++count;
                    }
                y[size_t((nc * Ho + oh) * Wo + ow)] = isMax ? best : sum / double(count);
            }
    return doubles({N, C, Ho, Wo}, y);
}

}  // namespace

Model toDouble(const Model& m) {
    Model d = m;
    d.graph.forEachGraph([](Graph& g) {  // If/Loop bodies too
        for (ValueId v : g.valueIds()) {
            Value& val = g.value(v);
            if (val.type.elemType == DataType::Float) val.type.elemType = DataType::Double;
            if (val.initializer && val.initializer->dtype == DataType::Float) g.setInitializer(v, floatToDouble(val.initializer));
        }
        for (NodeId n : g.nodeOrder()) {
            Node& node = g.node(n);
            if (node.opType == "Cast" && node.attrInt("to", 0) == int64_t(DataType::Float))
                node.setAttr(Attribute::makeInt("to", int64_t(DataType::Double)));
            for (auto& a : node.attributes)
                if (a.kind == AttrKind::Tensor) a.t = floatToDouble(a.t);
        }
        // NonMaxSuppression takes float32 only (it selects indices; the gradient never passes it).
        std::vector<NodeId> nms;
        for (NodeId n : g.nodeOrder())
            if (g.node(n).opType == "NonMaxSuppression") nms.push_back(n);
        for (NodeId n : nms)
            for (size_t slot = 0; slot < 2 && slot < g.node(n).inputs.size(); ++slot) {
                const ValueId in = g.node(n).inputs[slot];
                TypeInfo t = g.value(in).type;
                t.elemType = DataType::Float;
                const ValueId f = g.addValue(g.uniqueValueName(g.value(in).name + "_f32"), t);
                g.addNode("Cast", {in}, {f}, {Attribute::makeInt("to", int64_t(DataType::Float))}, g.uniqueNodeName("nms_f32"), {}, n);
                g.setNodeInput(n, slot, f);
            }
    });
    return d;
}

/// The values of g that the subgraphs of node `n` read, from the values computed so far.
static std::unordered_map<ValueId, TensorPtr> capturesOf(const Graph& g, NodeId n, const std::unordered_map<ValueId, TensorPtr>& env) {
    std::unordered_map<ValueId, TensorPtr> out;
    for (const std::string& name : g.capturedNames(n))
        if (auto v = g.findValue(name); v && env.count(*v)) out[*v] = env.at(*v);
    return out;
}

std::vector<double> runDouble(const Model& m, const std::string& output, const std::map<std::string, TensorPtr>& inputs) {
    const Graph& g = m.graph;
    auto target = g.findValue(output);
    if (!target) throw std::runtime_error("runDouble: no value " + output);
    auto order = *g.topologicalOrder();
    // Only the nodes the output depends on.
    std::unordered_set<ValueId> needed{*target};
    std::vector<NodeId> run;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const Node& n = g.node(*it);
        if (std::none_of(n.outputs.begin(), n.outputs.end(), [&](ValueId v) { return needed.count(v); })) continue;
        run.push_back(*it);
        for (ValueId v : g.readsOf(*it)) needed.insert(v);  // subgraph captures too
    }
    std::reverse(run.begin(), run.end());
    std::unordered_map<ValueId, TensorPtr> env;
    for (ValueId v : g.valueIds()) {
        const Value& val = g.value(v);
        if (val.initializer) env[v] = val.initializer;
        else if (val.isGraphInput) {
            auto it = inputs.find(val.name);
            if (it == inputs.end()) throw std::runtime_error("runDouble: input " + val.name + " not given");
            env[v] = floatToDouble(it->second);
        }
    }
    for (NodeId id : run) {
        const Node& n = g.node(id);
        std::vector<TensorPtr> ins;
        for (ValueId v : n.inputs) ins.push_back(v == kNone ? nullptr : env.at(v));
        std::vector<TensorPtr> outs;
        if (n.opType == "Conv") outs = {convRef(n, *ins[0], *ins[1], ins.size() > 2 && ins[2] ? ins[2].get() : nullptr)};
        else if (n.opType == "ConvTranspose")
            outs = {convTransposeRef(n, *ins[0], *ins[1], ins.size() > 2 && ins[2] ? ins[2].get() : nullptr)};
        else if (n.opType == "MaxPool") outs = {poolRef(n, *ins[0], true)};
        else if (n.opType == "AveragePool") outs = {poolRef(n, *ins[0], false)};
        else outs = eval::evalNode(m, g, id, ins, capturesOf(g, id, env));
        for (size_t i = 0; i < n.outputs.size() && i < outs.size(); ++i)
            if (n.outputs[i] != kNone) env[n.outputs[i]] = outs[i];
    }
    return values(*env.at(*target));
}

void addWeightedSumLoss(GraphBuilder& b, ValueId y, uint64_t seed) {
    auto dims = b.graph().value(y).type.shape->staticDims();
    ValueId weighted = b.op("Mul", {y, b.constant("loss_weights", randomFloats(dims, seed, -1.f, 1.f))}, {}, "weigh");
    ValueId l = b.op("ReduceSum", {weighted}, {Attribute::makeInt("keepdims", 0)}, "sum");
    b.graph().renameValue(l, "L");
    b.output(l);
}

GradReport expectGradientsMatch(const Model& forward, const std::string& loss, const std::vector<std::string>& wrt,
                                const GradCheck& check, const std::string& output) {
    GradReport report;
    autodiff::AutodiffOptions o;
    o.loss = loss;
    o.wrt = wrt;
    o.output = output;
    Model train = autodiff::makeTrainingModel(forward, o);
    // Standard ONNX only, checker-clean.
    for (NodeId n : train.graph.nodeOrder())
        EXPECT_TRUE(canonicalDomain(train.graph.node(n).domain).empty()) << train.graph.node(n).displayName();
    if (auto problem = onnxio::checkModel(train)) ADD_FAILURE() << "checker: " << *problem;

    // Gradients from the training graph, float32.
    std::vector<TensorPtr> runInputs;
    for (ValueId v : eval::runtimeInputs(train.graph)) {
        auto it = check.inputs.find(train.graph.value(v).name);
        if (it == check.inputs.end()) throw std::runtime_error("input " + train.graph.value(v).name + " not given");
        runInputs.push_back(it->second);
    }
    auto outs = eval::run(train, runInputs);
    const size_t firstGrad = train.graph.outputs().size() - wrt.size();

    // Finite differences of the loss, float64, on the training graph's forward + loss part.
    Model dm = toDouble(train);
    for (size_t k = 0; k < wrt.size(); ++k) {
        const Tensor& ad = *outs[firstGrad + k];
        auto adv = values(ad);
        auto vid = dm.graph.findValue(wrt[k]);
        EXPECT_TRUE(vid.has_value()) << wrt[k];
        if (!vid) continue;
        const bool isInit = dm.graph.value(*vid).initializer != nullptr;
        TensorPtr base = isInit ? dm.graph.value(*vid).initializer : floatToDouble(check.inputs.at(wrt[k]));
        auto baseV = values(*base);
        EXPECT_EQ(baseV.size(), adv.size()) << wrt[k];
        if (baseV.size() != adv.size()) continue;
        const size_t stride = std::max<size_t>(1, baseV.size() / check.maxElementsPerTensor);
        std::vector<std::pair<size_t, double>> fds;
        double maxFd = 0;
        for (size_t e = 0; e < baseV.size(); e += stride) {
            double f[2];
            for (int side = 0; side < 2; ++side) {
                auto v = baseV;
                v[e] += side ? -check.step : check.step;
                TensorPtr t = doubles(base->dims, v);
                auto ins = check.inputs;
                if (isInit) dm.graph.setInitializer(*vid, t);
                else ins[wrt[k]] = t;
                f[side] = runDouble(dm, "loss", ins)[0];
            }
            const double fd = (f[0] - f[1]) / (2 * check.step);
            fds.push_back({e, fd});
            maxFd = std::max(maxFd, std::fabs(fd));
        }
        if (isInit) dm.graph.setInitializer(*vid, base);
        const double atol = check.atolScale * std::max(1.0, maxFd);
        for (auto [e, fd] : fds) {
            const double diff = std::fabs(adv[e] - fd);
            ++report.checked;
            const double rel = diff / std::max(std::fabs(fd), atol);
            if (rel > report.worstRel) {
                report.worstRel = rel;
                std::ostringstream ss;
                ss << wrt[k] << "[" << e << "]: ad " << adv[e] << " fd " << fd;
                report.worst = ss.str();
            }
            EXPECT_LE(diff, atol + check.rtol * std::fabs(fd)) << wrt[k] << "[" << e << "]: autodiff " << adv[e] << ", finite difference " << fd;
        }
    }
    return report;
}

}  // namespace passlens::test
