// Two binary elementwise ops in a row with constant coefficients become one:
//   (x·a)·b → x·(ab)   (x·a)/b → x·(a/b)   (x/a)·b → x·(b/a)   (x/a)/b → x/(ab)
//   (x+a)+b → x+(a+b)  (x+a)−b → x+(a−b)   (x−a)+b → x+(b−a)   (x−a)−b → x−(a+b)
// The coefficients must be single-element float32 constants (so no broadcast changes the result's
// shape) and the first op's output must have the second as its only reader.
#include <cmath>
#include <map>

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

/// The combined op and coefficient of (x∘a)∘b.
std::pair<char, double> combine(const Step& first, const Step& second) {
    const bool multiplicative = first.op == '*' || first.op == '/';
    if (multiplicative != (second.op == '*' || second.op == '/')) return {0, 0};
    const double a = first.c, b = second.c;
    if (multiplicative) {
        if (first.op == '*' && second.op == '*') return {'*', a * b};
        if (first.op == '*' && second.op == '/') return {'*', a / b};
        if (first.op == '/' && second.op == '*') return {'*', b / a};
        return {'/', a * b};
    }
    if (first.op == '+' && second.op == '+') return {'+', a + b};
    if (first.op == '+' && second.op == '-') return {'+', a - b};
    if (first.op == '-' && second.op == '+') return {'+', b - a};
    return {'-', a + b};
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
                auto [op, c] = combine(*first, *second);
                if (!op || !std::isfinite(c)) break;
                const TensorPtr ta = constantOf(g, first->k);
                const TensorPtr tb = constantOf(g, second->k);
                std::vector<int64_t> dims = ta->dims.size() >= tb->dims.size() ? ta->dims : tb->dims;
                const std::string names = g.node(cur).displayName() + " + " + g.node(nextId).displayName();
                ValueId k = rw.newInitializer(g.value(first->k).name + "_chained", makeTensorOf(DataType::Float, dims, std::vector<float>{float(c)}));
                std::vector<ValueId> old{first->k, second->k};
                cur = rw.replaceNodes({cur, nextId}, opName(op), {first->x, k}, {g.node(nextId).outputs[0]}, {},
                                      names + ": two constant " + opName(first->op) + "/" + opName(second->op) + " steps are one " + opName(op),
                                      g.node(cur).displayName());
                rw.applied({cur}, names + " folded into one " + opName(op) + " by " + Attribute::makeFloat("", float(c)).valueToString());
                removeUnreadConstants(rw, old, "chain folding");
            }
        }
    });
}

std::unique_ptr<Pass> makeFoldConstantChainsPass() { return std::make_unique<FoldConstantChains>(); }

}  // namespace passlens::passes
