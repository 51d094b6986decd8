// reshape-target-from-symbols and rebuild-shape-vectors (shape-chain-folding): see SymbolicRewrites.h.
#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/IntsText.h"
#include "ir/Tensor.h"
#include "passes/ShapeCodegen.h"
#include "passes/SymbolicRewrites.h"
#include "passes/match/Match.h"

namespace passlens::passes {

using namespace passlens::ir;
using shape::DimExpr;

namespace {


std::string describe(const std::vector<DimExpr>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i].toString();
    return s + "]";
}


/// One rebuilt vector: `value`'s elements for `readers` (a Reshape reading it as its target gets
/// its own, with 0 and -1 entries; the other readers share one).
struct Candidate {
    ValueId value = kNone;
    std::vector<NodeId> readers;
    ShapeCodegen::Request request;
};

class Rebuild {
public:
    Rebuild(Rewriter& rw, const shape::ShapeAnalysis& a, bool captures)
        : rw_(rw), g_(rw.graph()), a_(a), captures_(captures), codegen_(rw.model().opsetFor("")) {
        order_ = g_.nodeOrder();
        for (size_t i = 0; i < order_.size(); ++i) position_[order_[i]] = (int64_t)i;
        for (ValueId v : g_.inputs()) addSource(v, -1);
        for (NodeId id : order_)
            for (ValueId o : g_.node(id).outputs) addSource(o, position_[id]);
        for (NodeId id : order_)
            if (computesShapeArithmetic(id)) shapeArithmetic_.insert(id);
        // Nodes an earlier rule of the sweep left unread (dce removes them after the pass): a
        // reader among them keeps nothing alive, or a second run would find more to rebuild.
        std::unordered_set<NodeId> live;
        for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
            bool used = false;
            for (ValueId o : g_.node(*it).outputs) {
                if (o == kNone) continue;
                used = used || visible(o);
                for (NodeId r : g_.value(o).consumers) used = used || live.count(r) != 0;
            }
            if (used) live.insert(*it);
            else unreadAlready_.insert(*it);
        }
    }

    void run() {
        foldConstantReshapeTargets();
        std::vector<Candidate> candidates = collect();
        if (candidates.empty()) return;
        std::set<ValueId> all;
        std::vector<ShapeCodegen::Request> requests;
        for (const Candidate& c : candidates) {
            all.insert(c.value);
            requests.push_back(c.request);
        }
        // All at once first: vectors shared between readers (a padded size read by a Reshape, a
        // Range and a ConstantOfShape) are paid once, and the shared chain dies only as a whole.
        auto joint = codegen_.cost(requests);
        const std::vector<NodeId> dead = deadCone(all);
        if (joint && counted(dead) > *joint) {
            for (const Candidate& c : candidates) apply(c);
            erase(dead, "rebuilt: " + std::to_string(counted(dead)) + " nodes of shape arithmetic replaced by " +
                            std::to_string(*joint));
            rw_.restoreTopologicalOrder();
            return;
        }
        // Else value by value (every reader of one value at once), where that pays.
        bool any = false;
        for (ValueId v : all) {
            if (!g_.hasNode(g_.value(v).producer)) continue;
            std::vector<ShapeCodegen::Request> mine;
            for (const Candidate& c : candidates)
                if (c.value == v) mine.push_back(c.request);
            auto cost = codegen_.cost(mine);
            const std::vector<NodeId> cone = deadCone({v});
            if (!cost || counted(cone) <= *cost) continue;
            for (const Candidate& c : candidates)
                if (c.value == v) apply(c);
            erase(cone, "replaced by " + std::to_string(*cost) + " nodes");
            any = true;
        }
        if (any) rw_.restoreTopologicalOrder();
    }

private:
    void addSource(ValueId v, int64_t position) {
        if (v == kNone || v >= a_.values.size() || g_.value(v).initializer) return;
        const shape::ValueShape& s = a_.of(v);
        if (s.dims && !s.values) codegen_.addSource(v, position, *s.dims);
        else if (castFromFloat(v))
            if (auto e = knownElements(g_, a_, v); e && s.dims->size() == 1) codegen_.addElementSource(v, position, *e);
    }

    /// An int64 vector cast from float32 sizes (a resized image's [height, width]): its symbols
    /// are born there, so no program rebuilds it, and a rebuilt vector reads it as it is.
    bool castFromFloat(ValueId v) const {
        const NodeId p = g_.value(v).producer;
        if (p == kNone || !g_.hasNode(p)) return false;
        const Node& n = g_.node(p);
        return n.opType == "Cast" && match::inDefaultDomain(n) && !n.inputs.empty() && n.inputs[0] != kNone &&
               g_.value(n.inputs[0]).type.elemType == DataType::Float;
    }

    /// A node whose every output is a small int64 vector the engine knows (or a bool one, a
    /// comparison inside such arithmetic): shape arithmetic. Decided once, before any rewrite.
    bool isShapeArithmetic(NodeId id) const { return shapeArithmetic_.count(id) != 0; }

    bool computesShapeArithmetic(NodeId id) const {
        const Node& n = g_.node(id);
        if (!match::inDefaultDomain(n) || n.hasSubgraphs() || n.outputs.empty()) return false;
        // A size cast from float32 is where its symbols are born: read by programs, never rebuilt.
        if (castFromFloat(n.outputs[0])) return false;
        for (ValueId o : n.outputs)
            if (o == kNone || !(knownElements(g_, a_, o) || knownCondition(o))) return false;
        return true;
    }

    bool knownCondition(ValueId v) const {
        if (v >= a_.values.size() || g_.value(v).type.elemType != DataType::Bool) return false;
        const shape::ValueShape& s = a_.of(v);
        if (!s.values || !s.dims || s.dims->size() > 1 || s.values->empty() || s.values->size() > 64) return false;
        return std::all_of(s.values->begin(), s.values->end(), [](const shape::Dim& e) { return e.has_value(); });
    }

    bool visible(ValueId v) const { return g_.value(v).isGraphOutput || (captures_ && rw_.isCapturedBySubgraph(v)); }

    /// The Reshape target with copies as 0 and, when that is cheaper and safe, one -1.
    ShapeCodegen::Request reshapeRequest(NodeId reshape, std::vector<DimExpr> e, int64_t before) const {
        const Node& n = g_.node(reshape);
        ShapeCodegen::Request r{e, false, before, {}};
        const ValueId data = n.inputs[0], out = n.outputs[0];
        if (data >= a_.values.size() || out >= a_.values.size()) return r;
        const auto& in = a_.of(data).dims;
        if (n.attrInt("allowzero", 0) == 0 && in)
            for (size_t i = 0; i < e.size() && i < in->size(); ++i)
                if (!e[i].isConstant() && (*in)[i] && *(*in)[i] == e[i]) e[i] = DimExpr();
        r.elements = e;
        // -1 infers the dim from the element count: exact unless another dim is 0 (then it fails).
        const auto& dims = a_.of(out).dims;
        if (!dims || dims->size() != e.size()) return r;
        for (const DimExpr& x : e)
            if (x.constantValue() == std::optional<int64_t>(-1)) return r;
        const ShapeCodegen::Request base = r;
        auto best = codegen_.cost({r});
        for (size_t j = 0; j < e.size(); ++j) {
            if (e[j].isConstant()) continue;
            bool othersPositive = true;
            for (size_t k = 0; k < dims->size() && othersPositive; ++k) {
                if (k == j) continue;
                auto lb = (*dims)[k] ? (*dims)[k]->lowerBound() : std::nullopt;
                othersPositive = lb && *lb >= 1;
            }
            if (!othersPositive) continue;
            ShapeCodegen::Request t = base;  // one -1 at most
            t.elements[j] = DimExpr::constant(-1);
            auto c = codegen_.cost({t});
            if (c && (!best || *c < *best)) {
                best = c;
                r = t;
            }
        }
        return r;
    }

    /// A Reshape whose computed target becomes a constant ([batch*seq, 64] → [-1, 64]) gets it,
    /// whoever else reads the target: no node is added.
    void foldConstantReshapeTargets() {
        for (NodeId id : order_) {
            const Node& n = g_.node(id);
            if (n.opType != "Reshape" || !match::inDefaultDomain(n) || n.inputs.size() < 2 || n.inputs[1] == kNone) continue;
            const ValueId target = n.inputs[1];
            auto e = knownElements(g_, a_, target);
            if (!e || match::constantOf(g_, target)) continue;
            const ShapeCodegen::Request r = reshapeRequest(id, *e, position_[id]);
            std::vector<int64_t> values;
            for (const DimExpr& x : r.elements)
                if (auto c = x.constantValue()) values.push_back(*c);
            if (values.size() != r.elements.size()) continue;
            rw_.setRule("reshape-target-from-symbols");
            const std::string why = n.displayName() + "'s target " + describe(*e) + " is known from the input dims: constant target " +
                                    intsText(values);
            ValueId folded = rw_.newInitializer(g_.value(target).name + "_folded", int64Tensor({(int64_t)values.size()}, values));
            rw_.setInput(id, 1, folded, why);
            rw_.applied({id}, why);
        }
    }

    /// Known int64 vectors computed by shape arithmetic and read by something else (a Reshape, a
    /// Pad, a Range, a Slice, ...): each is rebuilt as a whole.
    std::vector<Candidate> collect() const {
        std::vector<Candidate> out, scalars;
        for (NodeId id : order_) {
            if (!g_.hasNode(id) || !isShapeArithmetic(id) || g_.node(id).opType == "Constant") continue;
            for (ValueId o : g_.node(id).outputs) {
                const Value& v = g_.value(o);
                if (visible(o) || v.consumers.empty() || !knownElements(g_, a_, o)) continue;
                bool readOutside = false;
                for (NodeId r : v.consumers) readOutside = readOutside || !isShapeArithmetic(r);
                if (!readOutside) continue;
                const std::vector<DimExpr> e = *knownElements(g_, a_, o);
                const bool scalar = a_.of(o).dims->empty();
                std::vector<Candidate> mine;
                Candidate shared{o, {}, {e, scalar, INT64_MAX, {}}};
                for (NodeId r : v.consumers) {
                    const Node& rn = g_.node(r);
                    if (std::find(shared.readers.begin(), shared.readers.end(), r) != shared.readers.end()) continue;
                    if (rn.opType == "Reshape" && match::inDefaultDomain(rn) && rn.inputs.size() > 1 && rn.inputs[1] == o && rn.inputs[0] != o) {
                        mine.push_back({o, {r}, reshapeRequest(r, e, position_.at(r))});
                    } else {
                        shared.readers.push_back(r);
                        shared.request.before = std::min(shared.request.before, position_.at(r));
                    }
                }
                if (!shared.readers.empty()) mine.push_back(shared);
                const std::vector<ValueId> read = shapeSourcesOf(o);
                for (Candidate& c : mine) c.request.prefer = read;
                bool buildable = true;
                for (const Candidate& c : mine) buildable = buildable && codegen_.cost({c.request}).has_value();
                if (!buildable) continue;
                for (Candidate& c : mine) (scalar ? scalars : out).push_back(std::move(c));
            }
        }
        // Scalars last: they can read an element of a vector the others make.
        for (Candidate& c : scalars) out.push_back(std::move(c));
        return out;
    }

    /// The values whose Shape the chain computing `v` reads (the rebuilt vector reads them first).
    std::vector<ValueId> shapeSourcesOf(ValueId v) const {
        std::vector<ValueId> out;
        std::set<NodeId> seen;
        std::vector<NodeId> work{g_.value(v).producer};
        while (!work.empty() && seen.size() < 64) {
            const NodeId id = work.back();
            work.pop_back();
            if (id == kNone || !g_.hasNode(id) || !seen.insert(id).second || !isShapeArithmetic(id)) continue;
            const Node& n = g_.node(id);
            if (n.opType == "Shape" && !n.inputs.empty()) out.push_back(n.inputs[0]);
            for (ValueId in : n.inputs)
                if (in != kNone) work.push_back(g_.value(in).producer);
        }
        return out;
    }

    /// Nodes that count as saved: a Constant node is an initializer after constant-folding.
    size_t counted(const std::vector<NodeId>& nodes) const {
        return (size_t)std::count_if(nodes.begin(), nodes.end(), [&](NodeId id) { return g_.node(id).opType != "Constant"; });
    }

    /// Shape-arithmetic nodes that are only read (through others of them) by the values in
    /// `redirected`, whose readers will all read a rebuilt value: they die with the rewrite.
    std::vector<NodeId> deadCone(const std::set<ValueId>& redirected) const {
        std::set<NodeId> dead;
        std::vector<NodeId> out;
        for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
            const NodeId id = *it;
            if (!g_.hasNode(id) || !isShapeArithmetic(id)) continue;
            bool dies = true, read = false;
            for (ValueId o : g_.node(id).outputs) {
                if (visible(o)) dies = false;
                if (redirected.count(o)) { read = true; continue; }
                for (NodeId r : g_.value(o).consumers) {
                    read = true;
                    if (!dead.count(r) && !unreadAlready_.count(r)) dies = false;
                }
            }
            if (dies && read) {
                dead.insert(id);
                out.push_back(id);
            }
        }
        return out;  // readers first
    }

    void apply(const Candidate& c) {
        rw_.setRule("rebuild-shape-vector");
        const ValueId old = c.value;
        const std::string name = g_.value(old).name;
        const std::string why = "'" + name + "' = " + describe(c.request.elements) + " rebuilt from the dims it is made of";
        const ValueId made = codegen_.emit(rw_, c.request, name, why, {g_.value(old).producer});
        if (made == kNone) return;
        for (NodeId r : c.readers)
            for (size_t slot = 0; slot < g_.node(r).inputs.size(); ++slot)
                if (g_.node(r).inputs[slot] == old) rw_.setInput(r, slot, made, why);
        rw_.applied({}, why);
    }

    void erase(const std::vector<NodeId>& dead, const std::string& why) {
        for (NodeId id : dead) {
            if (!g_.hasNode(id)) continue;
            bool unread = true;
            for (ValueId o : g_.node(id).outputs) unread = unread && g_.value(o).consumers.empty();
            if (unread) rw_.eraseNode(id, why);
        }
    }

    Rewriter& rw_;
    const Graph& g_;
    const shape::ShapeAnalysis& a_;
    bool captures_;
    ShapeCodegen codegen_;
    std::vector<NodeId> order_;
    std::unordered_map<NodeId, int64_t> position_;
    std::unordered_set<NodeId> shapeArithmetic_;  ///< nodes of the graph as it was analyzed (new ones are not)
    std::unordered_set<NodeId> unreadAlready_;    ///< nodes whose results reach no output or capture
};

}  // namespace

void rebuildShapeVectors(Rewriter& rw, const shape::ShapeAnalysis& a, bool captures) {
    if (rw.graph().nodeOrder().empty()) return;
    Rebuild(rw, a, captures).run();
}

std::optional<std::vector<DimExpr>> knownDims(const shape::ShapeAnalysis& a, ValueId v) {
    if (v >= a.values.size() || !a.of(v).dims) return std::nullopt;
    std::vector<DimExpr> out;
    for (const shape::Dim& d : *a.of(v).dims) {
        if (!d) return std::nullopt;
        out.push_back(*d);
    }
    return out;
}

std::optional<std::vector<DimExpr>> knownElements(const Graph& g, const shape::ShapeAnalysis& a, ValueId v) {
    if (v == kNone || v >= a.values.size() || g.value(v).initializer) return std::nullopt;
    const shape::ValueShape& s = a.of(v);
    if (!s.values || !s.dims || s.dims->size() > 1 || s.dtype != DataType::Int64 || g.value(v).type.elemType != DataType::Int64)
        return std::nullopt;
    std::vector<DimExpr> out;
    for (const shape::Dim& e : *s.values) {
        if (!e) return std::nullopt;
        out.push_back(*e);
    }
    if (out.empty() || out.size() > 64) return std::nullopt;
    return out;
}

}  // namespace passlens::passes
