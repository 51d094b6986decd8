// The `layout` pass: moves layout-sensitive ops to channels-last ("passlens.nhwc" domain) with a
// Transpose at each boundary, or back to standard NCHW ONNX. The `transpose` pass then removes the
// Transposes that cancel.
#include <algorithm>
#include <set>

#include "ir/Error.h"
#include "passes/layout/LayoutPasses.h"
#include "passes/layout/TransposeUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::layoututil;

namespace {

const Perm kToNhwc = {0, 2, 3, 1};
const Perm kToNchw = {0, 3, 1, 2};

/// Only the data tensor (input 0 / output 0) changes layout; other outputs must be absent.
bool convertible(const Graph& g, const Node& n, std::string& why) {
    if (n.inputs.empty() || n.inputs[0] == kNone) { why = "no data input"; return false; }
    for (size_t i = 1; i < n.outputs.size(); ++i)
        if (n.outputs[i] != kNone) { why = "it has a second output"; return false; }
    int64_t r = rankOf(g, n.inputs[0]);
    if (r < 0 && (n.opType == "Conv" || n.opType == "ConvTranspose") && n.inputs.size() > 1) r = rankOf(g, n.inputs[1]);
    if (r != 4) { why = r < 0 ? "the data rank is unknown" : "only 2-D spatial (rank 4) data is converted"; return false; }
    return true;
}

void convertNode(Rewriter& rw, NodeId n, const Perm& in, const Perm& out, const std::string& domain,
                 const std::string& reason) {
    const Graph& g = rw.graph();
    const Node& node = g.node(n);
    // Copies before the first edit: the node is replaced below.
    ValueId x = node.inputs[0], y = node.outputs[0];
    std::vector<ValueId> inputs = node.inputs;
    const std::string opType = node.opType, name = node.name;
    std::vector<Attribute> attrs = node.attributes;
    ValueId xt = rw.newValue(g.value(x).name + (domain.empty() ? "_nchw" : "_nhwc"), permutedType(g.value(x).type, in));
    ValueId yt = rw.newValue(g.value(y).name + (domain.empty() ? "_nchw" : "_nhwc"), permutedType(g.value(y).type, in));
    inputs[0] = xt;
    NodeId moved = rw.replaceNodes({n}, opType, inputs, {yt}, attrs, reason, name, domain);
    rw.addNode("Transpose", {x}, {xt}, {Attribute::makeInts("perm", in)}, {}, reason, "Transpose");
    rw.addNode("Transpose", {yt}, {y}, {Attribute::makeInts("perm", out)}, {}, reason, "Transpose");
    rw.applied({moved}, reason);
}

class LayoutPass : public Pass {
public:
    std::string name() const override { return "layout"; }
    std::string description() const override {
        return "Converts layout-sensitive ops to channels-last (NHWC) or back to NCHW, with Transposes at the boundaries";
    }
    std::vector<PassOption> options() const override {
        return {{"to", PassOption::Type::Choice, {"NHWC", "NCHW"}, "--target-layout", "the layout to convert to",
                 [](PassOptions& o, const std::string& v) { o.targetLayout = v; }}};
    }

protected:
    void runImpl(PassContext& ctx) const override {
        const std::string target = ctx.options().targetLayout;
        if (target != "NHWC" && target != "NCHW")
            throw Error(ErrorKind::BadInput, "layout pass: --target-layout must be NHWC or NCHW, got '" + target + "'");
        const bool toNhwc = target == "NHWC";
        ctx.forEachGraph([&](Rewriter& rw) {
            const Graph& g = rw.graph();
            std::vector<NodeId> order = g.nodeOrder();
            for (NodeId n : order) {
                if (!g.hasNode(n)) continue;
                const Node& node = g.node(n);
                if (toNhwc) {
                    if (!node.domain.empty() || !isNhwcOp(node.opType)) continue;
                    rw.setRule("to-nhwc");
                    std::string why;
                    if (!convertible(g, node, why)) {
                        rw.missed({n}, node.displayName() + " stays NCHW: " + why);
                        continue;
                    }
                    convertNode(rw, n, kToNhwc, kToNchw, kNhwcDomain,
                                node.displayName() + " runs channels-last (" + std::string(kNhwcDomain) + ")");
                } else {
                    if (node.domain != kNhwcDomain) continue;
                    rw.setRule("to-nchw");
                    convertNode(rw, n, kToNchw, kToNhwc, "", node.displayName() + " back to standard NCHW ONNX");
                }
            }
        });
        // The opset import follows the nodes: present while any node uses the domain.
        const std::vector<std::string> domains = nonStandardDomains(ctx.model());
        const bool used = std::ranges::count(domains, std::string(kNhwcDomain)) > 0;
        Rewriter& top = ctx.rewriter();
        top.setRule({});
        if (used && ctx.model().opsetFor(kNhwcDomain) == 0)
            top.setOpsetImport(kNhwcDomain, kNhwcDomainVersion,
                               "channels-last nodes need the " + std::string(kNhwcDomain) + " opset import");
        if (!used)
            top.removeOpsetImport(kNhwcDomain, "no node uses " + std::string(kNhwcDomain) + " any more");
    }
};

}  // namespace

std::vector<std::string> nonStandardDomains(const Model& m) {
    std::set<std::string> domains;
    m.graph.forEachGraph([&](const Graph& g) {
        for (NodeId n : g.nodeOrder()) {
            const std::string d = canonicalDomain(g.node(n).domain);
            if (!d.empty() && d != "ai.onnx.ml") domains.insert(d);
        }
    });
    return {domains.begin(), domains.end()};
}

std::unique_ptr<Pass> makeLayoutPass() { return std::make_unique<LayoutPass>(); }

}  // namespace passlens::passes
