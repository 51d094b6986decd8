// Decomposed layer normalization → LayerNormalization (opset 17):
//   μ = ReduceMean(X, axes), d = X − μ, v = ReduceMean(d², axes), y = d / sqrt(v + ε) · γ + β
// as exporters emit it (Pow(d, 2) or Mul(d, d); one Sub or two; γ·n or n·γ). The traps each get a
// missed remark: keepdims=0, axes given as an input (opset 18), γ/β of a shape other than
// X.shape[axis:], and an intermediate value with a reader outside the pattern.
#include <map>
#include <algorithm>
#include <numeric>
#include <set>

#include "passes/algebraic/Rules.h"
#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::pattern;

namespace {

constexpr int64_t kLayerNormOpset = 17;

struct Match {
    std::vector<NodeId> nodes;       // every node of the pattern
    ValueId x = kNone, gamma = kNone, beta = kNone, out = kNone;
    int64_t axis = -1;
    std::vector<int64_t> normShape;  // X.shape[axis:], the shape of Scale and B
    float epsilon = 1e-5f;
    std::string refusal;             // set when the pattern matched far enough to explain a refusal
    std::vector<ValueId> blocking;
};

class Matcher {
public:
    Matcher(const Graph& g) : g_(g) {}

    /// Starts at the first ReduceMean (μ). Returns nullopt when this is no layer-norm shape at all.
    std::optional<Match> match(NodeId meanId) {
        const Node& mean = g_.node(meanId);
        Match m;
        m.x = mean.inputs.at(0);
        m.nodes.push_back(meanId);
        ValueId mu = mean.outputs.at(0);
        // Sub(X, μ) readers of μ: one or two (some exporters repeat the Sub for each branch).
        std::vector<NodeId> subs;
        for (NodeId c : g_.value(mu).consumers)
            if (isOp(g_.node(c), "Sub") && g_.node(c).inputs.size() == 2 && g_.node(c).inputs[0] == m.x && g_.node(c).inputs[1] == mu)
                subs.push_back(c);
        std::sort(subs.begin(), subs.end());
        subs.erase(std::unique(subs.begin(), subs.end()), subs.end());
        if (subs.empty()) return std::nullopt;
        // Find the square and the division among the Subs' readers.
        NodeId square = kNone, div = kNone;
        for (NodeId s : subs) {
            ValueId d = g_.node(s).outputs[0];
            for (NodeId c : g_.value(d).consumers) {
                const Node& n = g_.node(c);
                if (isOp(n, "Pow") && n.inputs.size() == 2 && n.inputs[0] == d && near(scalarOf(g_, n.inputs[1]).value_or(0), 2.0)) square = c;
                else if (isOp(n, "Mul") && n.inputs.size() == 2 && n.inputs[0] == d && n.inputs[1] == d) square = c;
                else if (isOp(n, "Div") && n.inputs.size() == 2 && n.inputs[0] == d) div = c;
            }
        }
        if (square == kNone || div == kNone) return std::nullopt;
        NodeId mean2 = single(g_.node(square).outputs[0], "ReduceMean");
        if (mean2 == kNone) return std::nullopt;
        NodeId addEps = single(g_.node(mean2).outputs[0], "Add");
        if (addEps == kNone) return std::nullopt;
        ValueId epsValue = otherInput(g_.node(addEps), g_.node(mean2).outputs[0]);
        auto eps = scalarOf(g_, epsValue);
        if (!eps) return std::nullopt;
        NodeId sqrt = single(g_.node(addEps).outputs[0], "Sqrt");
        if (sqrt == kNone || g_.node(div).inputs[1] != g_.node(sqrt).outputs[0]) return std::nullopt;
        m.epsilon = float(*eps);
        for (NodeId s : subs) m.nodes.push_back(s);
        m.nodes.insert(m.nodes.end(), {square, mean2, addEps, sqrt, div});
        m.out = g_.node(div).outputs[0];
        // Optional γ (Mul by a constant) and β (Add of a constant).
        if (NodeId mul = single(m.out, "Mul"); mul != kNone && constantOf(g_, otherInput(g_.node(mul), m.out))) {
            m.gamma = otherInput(g_.node(mul), m.out);
            m.nodes.push_back(mul);
            m.out = g_.node(mul).outputs[0];
            if (NodeId add = single(m.out, "Add"); add != kNone && constantOf(g_, otherInput(g_.node(add), m.out))) {
                m.beta = otherInput(g_.node(add), m.out);
                m.nodes.push_back(add);
                m.out = g_.node(add).outputs[0];
            }
        }
        explainRefusal(m, meanId, mean2);
        return m;
    }

private:
    /// The only reader of `v` when it is a default-domain `op` (kNone otherwise). A second reader
    /// is found later by the reader check, which names it.
    NodeId single(ValueId v, const std::string& op) const {
        for (NodeId c : g_.value(v).consumers)
            if (isOp(g_.node(c), op)) return c;
        return kNone;
    }

    void refuse(Match& m, std::string why, std::vector<ValueId> blocking = {}) const {
        if (m.refusal.empty()) {
            m.refusal = std::move(why);
            m.blocking = std::move(blocking);
        }
    }

    void explainRefusal(Match& m, NodeId mean1, NodeId mean2) const {
        // Axes and keepdims of both reductions.
        std::optional<std::vector<int64_t>> axes;
        for (NodeId r : {mean1, mean2}) {
            const Node& n = g_.node(r);
            // Opset 18 gives the axes as an input: fine when it is a constant.
            bool axesGiven = false;
            auto read = algebraic::intsFromAttrOrInput(g_, n, "axes", 1, &axesGiven);
            if (axesGiven && !read) {
                refuse(m, n.displayName() + " takes its axes from a computed input; LayerNormalization needs them fixed",
                       {n.inputs[1]});
                return;
            }
            if (n.attrInt("keepdims", 1) != 1) {
                refuse(m, n.displayName() + " has keepdims=0, so the mean does not broadcast back over X");
                return;
            }
            const std::vector<int64_t> a = read.value_or(std::vector<int64_t>{});
            if (a.empty()) {
                refuse(m, n.displayName() + " reduces over all axes (no axes attribute)");
                return;
            }
            if (axes && *axes != a) {
                refuse(m, "the two ReduceMeans reduce over different axes");
                return;
            }
            axes = a;
        }
        // The axes must be the trailing ones: [r-k, ..., r-1].
        auto rank = g_.value(m.x).rank();
        std::vector<int64_t> norm = *axes;
        for (auto& a : norm) {
            if (a < 0 && rank) a += int64_t(*rank);
        }
        std::sort(norm.begin(), norm.end());
        bool trailing = true;
        if (rank) {
            for (size_t i = 0; i < norm.size(); ++i) trailing &= norm[i] == int64_t(*rank) - int64_t(norm.size() - i);
        } else {
            for (size_t i = 0; i < norm.size(); ++i) trailing &= norm[i] == -int64_t(norm.size() - i);
        }
        if (!trailing) {
            refuse(m, "the mean is taken over axes " + Attribute::makeInts("", *axes).valueToString() +
                          ", not the trailing axes LayerNormalization normalizes");
            return;
        }
        m.axis = norm.front();
        if (g_.value(m.x).type.elemType != DataType::Float) {
            refuse(m, "X is not float32");
            return;
        }
        // Every intermediate value is read only inside the pattern.
        for (NodeId n : m.nodes) {
            ValueId v = g_.node(n).outputs[0];
            if (v == m.out) continue;
            if (readOutside(g_, v, m.nodes)) {
                refuse(m, "intermediate '" + g_.value(v).name + "' of " + g_.node(n).displayName() + " has " +
                              std::to_string(readerCount(g_, v)) + " readers (" + readersOf(g_, v) + ")",
                       {v});
                return;
            }
        }
        // γ and β: shaped exactly like X.shape[axis:] (leading 1s tolerated). When those dims are
        // not known statically (dynamic reshapes upstream, as in PP-OCR's rec head), a 1-D γ/β over
        // the last axis is taken as the normalized length, which the original Mul/Add required.
        const size_t k = norm.size();
        std::optional<std::vector<int64_t>> want;
        if (auto shape = g_.value(m.x).type.shape) {
            std::vector<int64_t> tail;
            for (size_t i = shape->rank() >= k ? shape->rank() - k : 0; i < shape->rank(); ++i)
                if (shape->dims[i].isStatic()) tail.push_back(*shape->dims[i].value);
            if (tail.size() == k) want = tail;
        }
        for (ValueId p : {m.gamma, m.beta}) {
            if (p == kNone) continue;
            const TensorPtr t = constantOf(g_, p);
            std::vector<int64_t> have = t->dims;
            while (!have.empty() && have.front() == 1 && have.size() > (want ? want->size() : 1)) have.erase(have.begin());
            if (!want && k == 1 && have.size() == 1) want = have;
            const std::string what = std::string(p == m.gamma ? "γ" : "β") + " '" + g_.value(p).name + "' has shape " +
                                     Attribute::makeInts("", t->dims).valueToString();
            if (!want) {
                refuse(m, what + " and X.shape[axis:] is not known statically", {p});
                return;
            }
            if (have != *want || t->dtype != DataType::Float) {
                refuse(m, what + ", not X.shape[axis:] = " + Attribute::makeInts("", *want).valueToString(), {p});
                return;
            }
        }
        if (m.gamma == kNone && !want) {
            refuse(m, "X.shape[axis:] is not known statically, so no unit scale can be made");
            return;
        }
        m.normShape = want.value_or(std::vector<int64_t>{});
    }

    const Graph& g_;
};

/// A float constant with exactly the given dims (the same payload when the dims already match).
TensorPtr reshaped(const Tensor& t, const std::vector<int64_t>& dims) {
    if (t.dims == dims) return nullptr;
    return makeTensor(t.dtype, dims, t.data.data(), t.data.size());
}

}  // namespace

void FuseLayerNorm::runImpl(PassContext& ctx) const {
    const int64_t opset = defaultOpset(ctx.model());
    ctx.forEachGraph([&](Rewriter& rw) { fuseLayerNorms(rw, opset, kLayerNormOpset); });
}

void fuseLayerNorms(Rewriter& rw, int64_t opset, int64_t minOpset) {
    {
        const Graph& g = rw.graph();
        rw.setRule("layer-norm");
        std::map<std::vector<int64_t>, ValueId> onesByShape;  // one all-ones scale per shape, shared
        for (NodeId id : std::vector<NodeId>(g.nodeOrder())) {
            if (!g.hasNode(id) || !isOp(g.node(id), "ReduceMean")) continue;
            Matcher matcher(g);
            auto m = matcher.match(id);
            if (!m) continue;
            const std::string where = "LayerNorm pattern at " + g.node(id).displayName();
            if (!m->refusal.empty()) {
                rw.missed(m->nodes, where + " not fused: " + m->refusal, m->blocking);
                continue;
            }
            if (opset < minOpset) {
                rw.missed(m->nodes, where + " not fused: LayerNormalization needs opset " + std::to_string(minOpset) +
                                        ", the model has opset " + std::to_string(opset) + " (use --target-opset " +
                                        std::to_string(minOpset) + ")");
                continue;
            }
            std::vector<ValueId> oldConstants;
            for (NodeId n : m->nodes)
                for (ValueId v : g.node(n).inputs)
                    if (constantOf(g, v)) oldConstants.push_back(v);
            // Scale and bias shaped exactly X.shape[axis:]; ones when the pattern had no γ.
            const auto& want = m->normShape;
            ValueId scale = m->gamma, bias = m->beta;
            if (scale == kNone) {
                auto shared = onesByShape.find(want);
                if (shared != onesByShape.end() && g.hasValue(shared->second)) {
                    scale = shared->second;
                } else {
                    int64_t n = checkedElementCount(want, "the LayerNormalization scale");
                    scale = rw.newInitializer(g.node(id).displayName() + ".scale_ones",
                                              makeTensorOf(DataType::Float, want, std::vector<float>(size_t(n), 1.f)));
                    onesByShape[want] = scale;
                }
            } else if (auto t = reshaped(*constantOf(g, scale), want)) {
                scale = rw.newInitializer(g.value(scale).name + "_ln", t);
            }
            if (bias != kNone)
                if (auto t = reshaped(*constantOf(g, bias), want)) bias = rw.newInitializer(g.value(bias).name + "_ln", t);
            std::vector<ValueId> inputs{m->x, scale};
            if (bias != kNone) inputs.push_back(bias);
            std::vector<Attribute> attrs{Attribute::makeInt("axis", m->axis), Attribute::makeFloat("epsilon", m->epsilon)};
            const std::string hint = g.node(id).displayName() + ".layernorm";
            NodeId fused = rw.replaceNodes(m->nodes, "LayerNormalization", inputs, {m->out}, std::move(attrs),
                                           where + ": " + std::to_string(m->nodes.size()) + " nodes are one LayerNormalization",
                                           hint);
            rw.applied({fused}, where + ": " + std::to_string(m->nodes.size()) + " nodes fused into LayerNormalization (axis " +
                                    std::to_string(m->axis) + ", epsilon " + Attribute::makeFloat("", m->epsilon).valueToString() + ")");
            removeUnreadConstants(rw, oldConstants, "layer-norm fusion");
        }
    }
}

std::unique_ptr<Pass> makeFuseLayerNormPass() { return std::make_unique<FuseLayerNorm>(); }

}  // namespace passlens::passes
