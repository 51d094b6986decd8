// Two multiplicative ops in a row with constant coefficients become one when one of the two steps
// is a scaling by a power of two p (passes/FloatExact.h): that step only moves the exponent, so the
// chain rounds once, and the other step's op takes the power of two into its coefficient, which
// stays exact and rounds the same real number:
//   (x·a)·p, (x·p)·a → x·(a·p)    (x/b)·p, (x·p)/b → x/(b/p)    (x/p) counts as x·(1/p)
// Any other pair rounds twice where the merged node rounds once, and additive chains ((x+a)−b …)
// always do, so they stay, with a missed remark (issue #43: a detector's Floor and
// NonMaxSuppression turn the last-bit difference into another box). The coefficients must be
// single-element float32 constants (so no broadcast changes the result's shape) and the first
// op's output must have the second as its only reader.
#include <cmath>
#include <map>

#include "passes/FloatExact.h"
#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::pattern;

namespace {

struct Step {
    NodeId node = kNone;
    ValueId x = kNone, k = kNone;  // variable operand and constant coefficient
    double c = 0;
    char op = 0;                   // '*', '/', '+', '-'
};

/// x∘c with x the variable operand (first operand for Sub/Div); nullopt otherwise.
std::optional<Step> stepOf(const Graph& g, NodeId id) {
    const Node& n = g.node(id);
    if (n.inputs.size() != 2 || !canonicalDomain(n.domain).empty()) return std::nullopt;
    static const std::map<std::string, char> ops = {{"Mul", '*'}, {"Div", '/'}, {"Add", '+'}, {"Sub", '-'}};
    auto it = ops.find(n.opType);
    if (it == ops.end()) return std::nullopt;
    Step s{id, n.inputs[0], n.inputs[1], 0, it->second};
    const bool commutative = s.op == '*' || s.op == '+';
    if (commutative && constantOf(g, s.x) && !constantOf(g, s.k)) std::swap(s.x, s.k);
    const TensorPtr t = constantOf(g, s.k);
    if (constantOf(g, s.x) || !t || t->dtype != DataType::Float || t->elementCount() != 1) return std::nullopt;
    if (g.value(s.x).type.elemType != DataType::Float) return std::nullopt;
    s.c = t->as<float>()[0];
    return s;
}

/// The one op and coefficient computing (x∘a)∘b with the same rounding, or op 0 with why not.
struct Combined {
    char op = 0;
    float c = 0;
    std::string why;  ///< when op is 0 and the chain is one family: the reason it is not exact
};

Combined combine(const Step& first, const Step& second) {
    const bool multiplicative = first.op == '*' || first.op == '/';
    if (multiplicative != (second.op == '*' || second.op == '/')) return {};
    if (!multiplicative)
        return {0, 0, "float32 addition is not associative: the chain rounds twice and one " + std::string(1, second.op) +
                          " by a merged constant rounds once, so the result would differ in the last bit for some x"};
    const float a = static_cast<float>(first.c), b = static_cast<float>(second.c);
    // The step by a power of two is exact; the other one keeps its op and absorbs the factor.
    const bool secondScales = isPowerOfTwoScale(b), firstScales = isPowerOfTwoScale(a);
    if (!secondScales && !firstScales)
        return {0, 0, "neither coefficient is a power of two: the chain rounds twice and one op by a merged constant "
                      "rounds once, so the result would differ in the last bit for some x"};
    const Step& kept = secondScales ? first : second;
    const Step& scale = secondScales ? second : first;
    const float p = scale.op == '*' ? static_cast<float>(scale.c) : 1.f / static_cast<float>(scale.c);  // exact
    const float k = static_cast<float>(kept.c);
    const float c = kept.op == '*' ? k * p : k / p;
    if (!std::isnormal(c) || (kept.op == '*' ? c / p : c * p) != k)
        return {0, 0, "the merged coefficient is not exact in float32"};
    return {kept.op, c, ""};
}

std::string opName(char op) { return op == '*' ? "Mul" : op == '/' ? "Div" : op == '+' ? "Add" : "Sub"; }

}  // namespace

void FoldConstantChains::runImpl(PassContext& ctx) const {
    ctx.forEachGraph([&](Rewriter& rw) {
        const Graph& g = rw.graph();
        rw.setRule("constant-chain");
        for (NodeId id : std::vector<NodeId>(g.nodeOrder())) {
            NodeId cur = id;
            // Fold forward while the next reader continues the chain.
            while (g.hasNode(cur)) {
                auto first = stepOf(g, cur);
                if (!first) break;
                ValueId y = g.node(cur).outputs[0];
                if (g.value(y).consumers.size() != 1 || readOutside(g, y, {g.value(y).consumers[0]})) break;
                NodeId nextId = g.value(y).consumers[0];
                auto second = stepOf(g, nextId);
                if (!second || second->x != y) break;
                const Combined merged = combine(*first, *second);
                if (!merged.op) {
                    if (!merged.why.empty())
                        rw.missed({cur, nextId}, g.node(cur).displayName() + " + " + g.node(nextId).displayName() +
                                                     " not folded: " + merged.why);
                    break;
                }
                const char op = merged.op;
                const float c = merged.c;
                const TensorPtr ta = constantOf(g, first->k);
                const TensorPtr tb = constantOf(g, second->k);
                std::vector<int64_t> dims = ta->dims.size() >= tb->dims.size() ? ta->dims : tb->dims;
                const std::string names = g.node(cur).displayName() + " + " + g.node(nextId).displayName();
                ValueId k = rw.newInitializer(g.value(first->k).name + "_chained", makeTensorOf(DataType::Float, dims, std::vector<float>{c}));
                std::vector<ValueId> old{first->k, second->k};
                cur = rw.replaceNodes({cur, nextId}, opName(op), {first->x, k}, {g.node(nextId).outputs[0]}, {},
                                      names + ": two constant " + opName(first->op) + "/" + opName(second->op) + " steps are one " + opName(op),
                                      g.node(cur).displayName());
                rw.applied({cur}, names + " folded into one " + opName(op) + " by " + Attribute::makeFloat("", c).valueToString());
                removeUnreadConstants(rw, old, "chain folding");
            }
        }
    });
}

std::unique_ptr<Pass> makeFoldConstantChainsPass() { return std::make_unique<FoldConstantChains>(); }

}  // namespace passlens::passes
