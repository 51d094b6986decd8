#include "shape/ShapeEngine.h"

#include <algorithm>
#include <set>

#include <cstring>
#include <exception>

#include "ir/CaptureTypes.h"
#include "ir/Model.h"
#include "shape/Rules.h"

namespace passlens::shape {

using namespace passlens::ir;

bool ValueShape::fullyKnown() const {
    if (!dims) return false;
    for (const Dim& d : *dims)
        if (!d) return false;
    return true;
}

std::optional<std::vector<int64_t>> ValueShape::staticDims() const {
    if (!dims) return std::nullopt;
    std::vector<int64_t> out;
    for (const Dim& d : *dims) {
        if (!d || !d->isConstant()) return std::nullopt;
        out.push_back(*d->constantValue());
    }
    return out;
}

DimExpr RuleContext::fresh(const std::string& reason, std::optional<int64_t> atMost) {
    // A name already in the graph's types (written back by an earlier analysis, before a pass
    // removed a node and the numbering moved) may mean another size: never take it.
    auto used = [&](const std::string& name) {
        return (reserved_ && reserved_->count(name)) ||
               std::any_of(fresh_.begin(), fresh_.end(), [&](const FreshSymbol& f) { return f.name == name; });
    };
    auto issued = [&](const std::string& name) {
        return std::any_of(fresh_.begin(), fresh_.end(), [&](const FreshSymbol& f) { return f.name == name; });
    };
    std::string name;
    while (name.empty() && reused_ < reuse_.size()) {
        const std::string& own = reuse_[reused_++];
        if (!issued(own)) name = own;
    }
    if (name.empty())
        for (size_t k = fresh_.size() + 1; name.empty() || used(name); ++k) name = node.opType + "_n" + std::to_string(k);
    fresh_.push_back({name, node.displayName(), reason});
    return DimExpr::symbol(name, 0, atMost);  // a data-dependent size may be 0: no rule may assume more
}

std::optional<std::vector<int64_t>> RuleContext::constInts(size_t i) const {
    const ValueShape* s = in(i);
    if (!s || !s->values) return std::nullopt;
    std::vector<int64_t> out;
    for (const Dim& d : *s->values) {
        if (!d || !d->isConstant()) return std::nullopt;
        out.push_back(*d->constantValue());
    }
    return out;
}

namespace {

const RuleTable& rules() {
    static const RuleTable table = [] {
        RuleTable t;
        addShapeOpRules(t);
        addElementwiseRules(t);
        addNnRules(t);
        return t;
    }();
    return table;
}

/// The elements of a small integer tensor payload.
std::optional<std::vector<Dim>> tensorValues(const Tensor& t) {
    int64_t n = t.elementCount();
    if (n < 0 || static_cast<size_t>(n) > kMaxValueElements) return std::nullopt;
    if (t.data.size() != static_cast<size_t>(n) * elementSize(t.dtype)) return std::nullopt;
    std::vector<Dim> out;
    for (int64_t i = 0; i < n; ++i) {
        int64_t v;
        switch (t.dtype) {
        case DataType::Int64: std::memcpy(&v, t.data.data() + i * 8, 8); break;
        case DataType::Int32: { int32_t x; std::memcpy(&x, t.data.data() + i * 4, 4); v = x; break; }
        case DataType::Bool:
        case DataType::UInt8: v = static_cast<int64_t>(static_cast<uint8_t>(t.data.data()[i])); break;
        default: return std::nullopt;
        }
        out.push_back(DimExpr::constant(v));
    }
    return out;
}

std::optional<std::vector<double>> tensorReals(const Tensor& t) {
    int64_t n = t.elementCount();
    if (n < 0 || static_cast<size_t>(n) > kMaxValueElements) return std::nullopt;
    if (t.dtype != DataType::Float || t.data.size() != static_cast<size_t>(n) * 4) return std::nullopt;
    std::vector<double> out;
    for (int64_t i = 0; i < n; ++i) {
        float f;
        std::memcpy(&f, t.data.data() + i * 4, 4);
        out.push_back(f);
    }
    return out;
}

}  // namespace

ValueShape shapeOfTensor(const Tensor& t) {
    ValueShape s;
    s.dtype = t.dtype;
    s.dims = constDims(t.dims);
    s.values = tensorValues(t);
    s.reals = tensorReals(t);
    return s;
}

namespace {

/// The dims an IR type states (libonnx's inference, the file's value_info). With `sizeSymbols`,
/// a name that is not an input dim is a symbol >= 0 (see dimFromParam).
ValueShape fromType(const TypeInfo& t, const SizeSymbols* sizeSymbols = nullptr) {
    ValueShape s;
    if (!t.isTensor()) return s;
    s.dtype = t.elemType;
    if (!t.shape) return s;
    std::vector<Dim> dims;
    for (const ir::Dim& d : t.shape->dims) {
        if (d.value) dims.push_back(DimExpr::constant(*d.value));
        else if (!d.param.empty()) dims.push_back(dimFromParam(d.param, sizeSymbols));
        else dims.push_back(std::nullopt);
    }
    s.dims = std::move(dims);
    return s;
}

class Walker {
public:
    /// `sizeSymbols`: the top-level graph's input dims, for a body or a function (null at the top:
    /// the walker collects them from the inputs).
    Walker(const Graph& g, ShapeAnalysis& a, const Walker* parent, const Model* model, int depth = 0,
           const SizeSymbols* sizeSymbols = nullptr)
        : g_(g), a_(a), parent_(parent), model_(model), depth_(depth), sizeSymbols_(sizeSymbols) {
        shapes_.resize(g.valueIdLimit());
    }

    /// `inputs` (by position) replace the graph inputs' own types: a function body's formal
    /// parameters take the call's arguments.
    void run(const std::vector<const ValueShape*>* inputs = nullptr) {
        for (ValueId v : g_.valueIds()) seed(v);
        if (!sizeSymbols_) {
            ownSizeSymbols_.insert(a_.inputSymbols.begin(), a_.inputSymbols.end());
            sizeSymbols_ = &ownSizeSymbols_;
        }
        if (inputs)
            for (size_t i = 0; i < g_.inputs().size() && i < inputs->size(); ++i)
                shapes_[g_.inputs()[i]] = (*inputs)[i] ? *(*inputs)[i] : ValueShape{};
        auto order = g_.topologicalOrder();
        if (!order) return;  // a cycle: leave every computed value to libonnx's types
        for (NodeId n : *order) visit(g_.node(n));
    }

    const ValueShape* lookupByName(const std::string& name) const {
        if (auto v = g_.findValue(name)) return &shapes_[*v];
        return parent_ ? parent_->lookupByName(name) : nullptr;
    }

    std::vector<ValueShape> shapes_;

private:
    void seed(ValueId v) {
        const Value& val = g_.value(v);
        ValueShape& s = shapes_[v];
        if (val.initializer) {
            s = shapeOfTensor(*val.initializer);
            return;
        }
        if (val.isOuterScope) {
            if (parent_)
                if (const ValueShape* outer = parent_->lookupByName(val.name)) s = *outer;
            return;
        }
        if (!val.isGraphInput) return;
        s = fromType(val.type, sizeSymbols_);  // the top level's own inputs: every name is a size
        if (!s.dims) return;
        for (size_t i = 0; i < s.dims->size(); ++i) {
            auto& d = (*s.dims)[i];
            if (d) {
                if (parent_ == nullptr)
                    if (auto name = d->symbolName()) a_.inputSymbols.push_back(*name);
                continue;
            }
            std::string name = val.name + "_dim" + std::to_string(i);
            a_.fresh.push_back({name, "", "graph input '" + val.name + "' dim " + std::to_string(i) + " has neither value nor name"});
            d = DimExpr::symbol(name);
        }
    }

    /// The fresh names an earlier analysis gave this node (`<op>_n<k>` symbols in its outputs'
    /// types), in order: a re-analysis after a pass reuses them, so unchanged values keep their types.
    std::vector<std::string> ownFreshNames(const Node& n) const {
        std::vector<std::string> names;
        const std::string prefix = n.opType + "_n";
        for (ValueId v : n.outputs) {
            if (v == kNone || !g_.value(v).type.shape) continue;
            for (const auto& d : g_.value(v).type.shape->dims) {
                if (d.param.find(prefix) == std::string::npos) continue;
                std::set<std::string> symbols;
                dimFromParam(d.param).collectSymbols(symbols);
                for (const auto& s : symbols)
                    if (s.size() > prefix.size() && s.compare(0, prefix.size(), prefix) == 0 &&
                        s.find_first_not_of("0123456789", prefix.size()) == std::string::npos &&
                        std::find(names.begin(), names.end(), s) == names.end())
                        names.push_back(s);
            }
        }
        return names;
    }

    /// Whether every output dim whose type names one of the node's own fresh symbols now has
    /// exactly that dim from the rule (same expression text).
    bool reusedWhereTheyWere(const Node& n, const std::vector<ValueShape>& outs) const {
        const std::string prefix = n.opType + "_n";
        for (size_t i = 0; i < n.outputs.size() && i < outs.size(); ++i) {
            const ValueId v = n.outputs[i];
            if (v == kNone || !g_.value(v).type.shape) continue;
            const auto& dims = g_.value(v).type.shape->dims;
            for (size_t d = 0; d < dims.size(); ++d) {
                if (dims[d].param.find(prefix) == std::string::npos) continue;
                if (!outs[i].dims || d >= outs[i].dims->size() || !(*outs[i].dims)[d]) return false;
                if ((*outs[i].dims)[d]->toString() != dimFromParam(dims[d].param).toString()) return false;
            }
        }
        return true;
    }

    void visit(const Node& n) {
        std::vector<const ValueShape*> ins;
        for (ValueId v : n.inputs) ins.push_back(v == kNone ? nullptr : &shapes_[v]);
        std::vector<ValueShape> outs(n.outputs.size());
        bool handled = false;
        if (n.domain.empty() || (model_ && model_->findFunction(n.domain, n.opType))) {
            try {
                if (n.opType == "If") handled = visitIf(n, ins, outs);
                else if (const Function* f = model_ ? model_->findFunction(n.domain, n.opType) : nullptr)
                    handled = visitCall(*f, ins, outs);
                else if (auto it = rules().find(n.opType); it != rules().end()) {
                    const size_t freshBefore = a_.fresh.size();
                    std::vector<std::string> own = ownFreshNames(n);
                    {
                        RuleContext ctx(n, ins, outs, a_.fresh, &a_.reservedNames, own);
                        it->second(ctx);
                        refineFloatSizes(ctx);
                    }
                    if (!own.empty() && !reusedWhereTheyWere(n, outs)) {
                        // The rule made its sizes in another order than the types list them:
                        // new names rather than a name that meant another size.
                        a_.fresh.resize(freshBefore);
                        outs.assign(n.outputs.size(), ValueShape{});
                        RuleContext ctx(n, ins, outs, a_.fresh, &a_.reservedNames);
                        it->second(ctx);
                        refineFloatSizes(ctx);
                    }
                    handled = true;
                }
            } catch (const std::exception& e) {
                // ExprError (overflow, division by zero) or a malformed node: nothing known.
                outs.assign(n.outputs.size(), ValueShape{});
                for (auto& o : outs) o.why = n.displayName() + ": " + e.what();
            }
        }
        for (size_t i = 0; i < n.outputs.size(); ++i) {
            if (n.outputs[i] == kNone) continue;
            ValueShape& o = outs[i];
            if (!handled && o.why.empty())
                o.why = n.displayName() + ": no symbolic rule for " + (n.domain.empty() ? "" : n.domain + ".") + n.opType;
            merge(o, g_.value(n.outputs[i]));
            if (!o.fullyKnown() && o.why.empty())
                o.why = n.displayName() + ": " + n.opType + " left " + (o.dims ? "some dims" : "the rank") + " unknown";
            if (o.fullyKnown()) o.why.clear();
            shapes_[n.outputs[i]] = std::move(o);
        }
    }

    /// Combines the engine's result with the type already on the value (libonnx / value_info).
    void merge(ValueShape& o, const Value& val) {
        ValueShape known = fromType(val.type, sizeSymbols_);
        if (o.dtype == DataType::Undefined) o.dtype = known.dtype;
        if (!known.dims) return;
        if (!o.dims) {
            o.dims = known.dims;
            return;
        }
        if (o.dims->size() != known.dims->size()) {
            a_.conflicts.push_back(val.name + ": rank " + std::to_string(known.dims->size()) + " from ONNX inference, " +
                                   std::to_string(o.dims->size()) + " from the symbolic engine");
            o.dims = known.dims;
            o.values.reset();
            return;
        }
        for (size_t i = 0; i < o.dims->size(); ++i) {
            Dim& mine = (*o.dims)[i];
            const Dim& theirs = (*known.dims)[i];
            if (!theirs) continue;
            if (theirs->isConstant()) {
                if (mine && mine->isConstant() && *mine != *theirs)
                    a_.conflicts.push_back(val.name + ": dim " + std::to_string(i) + " is " + theirs->toString() +
                                           " by ONNX inference but " + mine->toString() + " by the symbolic engine");
                mine = theirs;
            } else if (!mine) {
                mine = theirs;
            }
        }
    }

    /// If with a condition the values decide: the taken branch's outputs.
    bool visitIf(const Node& n, const std::vector<const ValueShape*>& ins, std::vector<ValueShape>& outs) {
        if (ins.empty() || !ins[0] || !ins[0]->values || ins[0]->values->size() != 1) return false;
        const Dim& c = (*ins[0]->values)[0];
        if (!c || !c->isConstant()) return false;
        const Attribute* branch = n.attr(*c->constantValue() != 0 ? "then_branch" : "else_branch");
        if (!branch || !branch->g) return false;
        Walker sub(*branch->g, a_, this, model_, depth_, sizeSymbols_);
        sub.run();
        const auto& gOuts = branch->g->outputs();
        for (size_t i = 0; i < outs.size() && i < gOuts.size(); ++i) outs[i] = sub.shapes_[gOuts[i]];
        return true;
    }

    /// A call of a model-local function: its body, with the call's arguments as parameters.
    bool visitCall(const Function& f, const std::vector<const ValueShape*>& ins, std::vector<ValueShape>& outs) {
        if (!f.body || depth_ >= 8) return false;  // recursion is refused at import; 8 levels is plenty
        for (NodeId n : f.body->nodeOrder())
            for (const auto& at : f.body->node(n).attributes)
                if (!at.refAttrName.empty()) return false;  // attribute parameters: not resolved here
        // The body's conflicts stay inside; its fresh symbols continue the caller's numbering, so
        // each call's data-dependent sizes are new symbols, never equal to another call's.
        ShapeAnalysis scratch;
        auto lend = [&] {  // the caller's fresh names and reserved names, moved in and back
            std::swap(scratch.fresh, a_.fresh);
            std::swap(scratch.reservedNames, a_.reservedNames);
        };
        lend();
        Walker sub(*f.body, scratch, nullptr, model_, depth_ + 1, sizeSymbols_);
        try {
            sub.run(&ins);
        } catch (...) {
            lend();
            throw;
        }
        lend();
        const auto& fOuts = f.body->outputs();
        for (size_t i = 0; i < outs.size() && i < fOuts.size(); ++i) outs[i] = sub.shapes_[fOuts[i]];
        return true;
    }

    const Graph& g_;
    ShapeAnalysis& a_;
    const Walker* parent_;
    const Model* model_;
    int depth_;
    const SizeSymbols* sizeSymbols_;
    SizeSymbols ownSizeSymbols_;
};

}  // namespace

ShapeAnalysis analyzeShapes(const Graph& g, const Model* model) {
    ShapeAnalysis a;
    std::set<std::string> params;  // distinct texts first: most values repeat "batch", "seq"
    g.forEachGraph([&params](const Graph& sub) {
        for (ValueId v : sub.valueIds())
            if (const auto& shape = sub.value(v).type.shape)
                for (const auto& d : shape->dims)
                    if (!d.param.empty()) params.insert(d.param);
    });
    std::set<std::string> names;
    for (const auto& p : params) dimFromParam(p).collectSymbols(names);
    a.reservedNames.insert(names.begin(), names.end());
    Walker w(g, a, nullptr, model);
    w.run();
    a.values = std::move(w.shapes_);
    return a;
}

size_t refineValueTypes(Graph& g, const ShapeAnalysis& a) {
    size_t changed = 0;
    for (ValueId v : g.valueIds()) {
        Value& val = g.value(v);
        if (val.producer == kNone || val.initializer || v >= a.values.size()) continue;
        const ValueShape& s = a.values[v];
        if (!s.dims) continue;
        if (val.type.kind == TypeInfo::Kind::Opaque) continue;
        TypeInfo t = val.type;
        if (!t.isTensor()) {
            if (s.dtype == DataType::Undefined) continue;
            t = TypeInfo::tensor(s.dtype);
        }
        if (t.elemType == DataType::Undefined) t.elemType = s.dtype;
        if (t.shape && t.shape->rank() != s.dims->size()) continue;  // reported as a conflict
        if (!t.shape) {
            t.shape = ir::Shape{};
            t.shape->dims.resize(s.dims->size());
        }
        for (size_t i = 0; i < s.dims->size(); ++i) {
            ir::Dim& d = t.shape->dims[i];
            const Dim& e = (*s.dims)[i];
            if (d.value || !e) continue;
            if (auto c = e->constantValue()) {
                if (*c < 0) continue;  // a negative dim is a bad model, not a shape
                d.value = *c;
                d.param.clear();
            } else {
                d.param = e->toString();
            }
        }
        if (t != val.type) {
            val.type = std::move(t);
            ++changed;
        }
    }
    return changed;
}

std::vector<std::string> refineShapesSymbolically(Model& m) {
    std::vector<std::string> warnings;
    try {
        ShapeAnalysis a = analyzeShapes(m.graph, &m);
        refineValueTypes(m.graph, a);
        ir::copyCaptureTypes(m.graph);  // a body's captures: their definitions' (now refined) types
        for (const auto& c : a.conflicts) warnings.push_back("shape inference disagreement: " + c);
    } catch (const std::exception& e) {
        warnings.push_back(std::string("symbolic shape inference skipped: ") + e.what());
    }
    return warnings;
}

ShapeCoverage shapeCoverage(const Graph& g) {
    ShapeCoverage c;
    for (ValueId v : g.valueIds()) {
        const Value& val = g.value(v);
        if (val.initializer || (val.producer == kNone && !val.isGraphInput)) continue;
        ++c.total;
        if (!val.type.isTensor() || !val.type.shape) continue;
        bool all = true;
        for (const auto& d : val.type.shape->dims) all = all && (d.value || !d.param.empty());
        if (all) ++c.known;
    }
    return c;
}

}  // namespace passlens::shape
