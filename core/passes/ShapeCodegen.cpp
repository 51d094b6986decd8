// ShapeCodegen: see ShapeCodegen.h.
#include "passes/ShapeCodegen.h"

#include <algorithm>

#include "ir/Tensor.h"

namespace passlens::passes {

using namespace passlens::ir;
using shape::DimExpr;

namespace {

std::string keyOf(const std::vector<DimExpr>& e, const char* kind) {
    std::string k = kind;
    for (const DimExpr& x : e) k += std::to_string(x.id()) + ",";
    return k;
}

/// `x` with each term c*floor(A/k) that Div cannot build (A not provably >= 0; k a constant
/// dividing c) written as (c/k)*(A - Mod(A, k)): floor(A/k) = (A - Mod(A, k))/k exactly for
/// every integer A, and Mod takes k's sign as floor does. A float size rounded up to a multiple
/// of 32 arrives as -n - 32*floor(-n/32), which is Mod(-n, 32).
DimExpr withFloorsAsMods(const DimExpr& x) {
    const auto terms = shape::monomialsOf(x);
    bool changed = false;
    DimExpr out = DimExpr::constant(0);
    for (const auto& t : terms) {
        std::optional<shape::AtomParts> atom;
        if (t.factors.size() == 1) atom = shape::atomOf(t.factors[0]);
        const auto k = atom && atom->kind == shape::AtomKind::FloorDiv ? atom->b.constantValue() : std::nullopt;
        const auto lowest = k ? atom->a.lowerBound() : std::nullopt;
        if (k && *k != 0 && t.coef % *k == 0 && !(lowest && *lowest >= 0)) {
            out = out + DimExpr::constant(t.coef / *k) * (atom->a - mod(atom->a, DimExpr::constant(*k)));
            changed = true;
            continue;
        }
        DimExpr term = DimExpr::constant(t.coef);
        for (const DimExpr& f : t.factors) term = term * f;
        out = out + term;
    }
    return changed ? out : x;
}

/// The form an element is built by; a vector of one form costs one node per operation.
enum class Form { Constant, Leaf, Atom, Linear, Sum, Unbuildable };

}  // namespace

/// One program: a dry run (no Rewriter: counts nodes) or the real thing. Both walk the same
/// decisions, so cost() is what emit() adds.
class ProgramBuilder {
public:
    /// `memo` takes what this program makes; `base` (and `parent`'s memos) are read too.
    ProgramBuilder(const ShapeCodegen& cg, ShapeCodegen::Memo& memo, const ShapeCodegen::Memo* base, Rewriter* rw,
                   std::string hint, std::string why, std::vector<NodeId> origins, const ProgramBuilder* parent = nullptr)
        : cg_(cg), memo_(memo), base_(base), parent_(parent), rw_(rw), hint_(std::move(hint)), why_(std::move(why)),
          origins_(std::move(origins)) {}

    size_t added = 0;

    std::optional<ShapeCodegen::Made> request(const ShapeCodegen::Request& r) {
        before_ = r.before;
        prefer_ = r.prefer;
        if (r.elements.empty()) return std::nullopt;
        std::vector<DimExpr> elements;
        try {
            for (const DimExpr& e : r.elements) elements.push_back(withFloorsAsMods(e));
        } catch (const shape::ExprError&) {
            return std::nullopt;
        }
        if (!r.scalar) return vec(elements);
        if (elements.size() != 1) return std::nullopt;
        const DimExpr x = elements[0];
        if (auto c = x.constantValue()) return constant({*c}, true);
        // An element of a vector already made: one Gather with a scalar index.
        if (const Made* m = lookup(keyOf(elements, "e")); m && m->lastSource < before_)
            return node("Gather", {*m, constant({m->index}, true)}, {Attribute::makeInt("axis", 0)}, 1, true);
        // A dim: one Gather from the source's whole shape, which other scalars of it share.
        if (const ShapeCodegen::Leaf* leaf = findLeaf(x)) {
            ShapeCodegen::Leaf whole = *leaf;
            whole.dim = 0;
            const Made all = shapeSlice(whole, cg_.sourceDims_.at(leaf->value).size());
            return node("Gather", {all, constant({(int64_t)leaf->dim}, true)}, {Attribute::makeInt("axis", 0)}, 1, true);
        }
        auto squeezed = [x](ProgramBuilder& b) -> std::optional<Made> {
            auto v = b.vec({x});
            if (!v) return std::nullopt;
            if (b.cg_.opset_ >= 13) return b.node("Squeeze", {*v, b.constant({0}, false)}, {}, 1, true);
            return b.node("Squeeze", {*v}, {Attribute::makeInts("axes", {0})}, 1, true);
        };
        auto reduce = [x](ProgramBuilder& b) { return b.reduced(x, true); };
        if (prefersReduce(x, true, reduce, squeezed)) return reduce(*this);
        return squeezed(*this);
    }

private:
    using Made = ShapeCodegen::Made;

    const Made* lookup(const std::string& key) const {
        if (auto it = memo_.find(key); it != memo_.end()) return &it->second;
        if (parent_) return parent_->lookup(key);
        if (base_)
            if (auto it = base_->find(key); it != base_->end()) return &it->second;
        return nullptr;
    }

    /// Nodes `f` would add from here (a dry run on top of what is made so far).
    template <class F>
    std::optional<size_t> trial(F f) const {
        ShapeCodegen::Memo scratch;
        ProgramBuilder dry(cg_, scratch, nullptr, nullptr, {}, {}, {}, this);
        dry.before_ = before_;
        dry.prefer_ = prefer_;
        if (!f(dry)) return std::nullopt;
        return dry.added;
    }

    /// Whether one Reduce builds `x` with fewer nodes than the other way. Decided once per
    /// expression (trials nest, and cost() and emit() must take the same decisions).
    template <class R, class O>
    bool prefersReduce(const DimExpr& x, bool scalar, R reduce, O other) {
        const std::string key = keyOf({x}, scalar ? "rs" : "rv");
        if (auto it = cg_.choices_.find(key); it != cg_.choices_.end()) return it->second;
        auto viaReduce = trial(reduce), viaOther = trial(other);
        const bool choice = viaReduce && (!viaOther || *viaReduce < *viaOther);
        cg_.choices_[key] = choice;
        return choice;
    }

    /// One element that is a Min, Max, product or sum of several parts: one Reduce over their
    /// vector (keepdims = 0 for a scalar, 1 for a [1] vector).
    std::optional<Made> reduced(const DimExpr& x, bool scalar) {
        std::vector<DimExpr> args;
        const char* op = nullptr;
        if (auto atom = shape::atomOf(x); atom && (atom->kind == shape::AtomKind::Min || atom->kind == shape::AtomKind::Max)) {
            op = atom->kind == shape::AtomKind::Min ? "ReduceMin" : "ReduceMax";
            args.push_back(atom->a);
            DimExpr rest = atom->b;
            for (auto next = shape::atomOf(rest); next && next->kind == atom->kind; next = shape::atomOf(rest)) {
                args.push_back(next->a);
                rest = next->b;
            }
            args.push_back(rest);
        } else if (!atom) {
            const auto terms = shape::monomialsOf(x);
            if (terms.size() == 1) {
                op = "ReduceProd";
                args = terms[0].factors;
                if (terms[0].coef != 1) args.push_back(DimExpr::constant(terms[0].coef));
            } else {
                op = "ReduceSum";
                for (const auto& t : terms) {
                    DimExpr term = DimExpr::constant(t.coef);
                    for (const DimExpr& f : t.factors) term = term * f;
                    args.push_back(term);
                }
            }
        }
        if (!op || args.size() < 2) return std::nullopt;
        auto v = vec(args);
        if (!v) return std::nullopt;
        return node(op, {*v}, {Attribute::makeInt("keepdims", scalar ? 0 : 1)}, 1, scalar);
    }

    std::optional<Made> vec(const std::vector<DimExpr>& e) {
        const std::string key = keyOf(e, "v");
        if (const Made* m = lookup(key); m && m->lastSource < before_) return *m;
        auto made = e.size() == 1 ? single(e[0]) : make(e);
        if (!made) return made;
        memo_[key] = *made;
        for (size_t i = 0; i < e.size(); ++i) {
            Made element = *made;
            element.index = (int64_t)i;
            if (!lookup(keyOf({e[i]}, "e"))) memo_.emplace(keyOf({e[i]}, "e"), element);
        }
        return made;
    }

    /// One element: the cheaper of the elementwise program and one Reduce.
    std::optional<Made> single(const DimExpr& x) {
        auto elementwise = [x](ProgramBuilder& b) { return b.make({x}); };
        auto reduce = [x](ProgramBuilder& b) { return b.reduced(x, false); };
        if (x.isConstant() || findLeaf(x)) return elementwise(*this);
        if (prefersReduce(x, false, reduce, elementwise)) return reduce(*this);
        return elementwise(*this);
    }

    std::optional<Made> make(const std::vector<DimExpr>& e) {
        std::vector<int64_t> consts;
        std::vector<DimExpr> distinct;  // non-constant elements, first appearance order
        for (const DimExpr& x : e) {
            if (auto c = x.constantValue()) consts.push_back(*c);
            else if (std::find(distinct.begin(), distinct.end(), x) == distinct.end()) distinct.push_back(x);
        }
        if (distinct.empty()) return constant(consts, false);
        if (auto whole = wholeShapeRun(e)) return whole;
        if (distinct.size() < e.size()) return arrange(e, distinct);
        std::vector<Form> forms;
        for (const DimExpr& x : e) forms.push_back(formOf(x));
        if (std::count(forms.begin(), forms.end(), Form::Unbuildable)) return std::nullopt;
        const bool uniform = std::all_of(forms.begin(), forms.end(), [&](Form f) { return f == forms[0]; });
        if (uniform) {
            std::optional<Made> m;
            switch (forms[0]) {
            case Form::Leaf: m = leaves(e); break;
            case Form::Atom: m = atoms(e); break;
            case Form::Linear: m = linear(e); break;
            default: m = sums(e); break;
            }
            if (m || e.size() == 1) return m;
        }
        // Runs of one form each (single elements when one form for all did not work), one Concat.
        std::vector<Made> pieces;
        for (size_t i = 0; i < e.size();) {
            size_t j = i + 1;
            while (!uniform && j < e.size() && forms[j] == forms[i]) ++j;
            auto p = vec(std::vector<DimExpr>(e.begin() + (long)i, e.begin() + (long)j));
            if (!p) return std::nullopt;
            pieces.push_back(*p);
            i = j;
        }
        return concat(pieces, e.size());
    }

    /// Every element, constants too, is a dim of one source in a row ([batch, h, w, 16] = x's
    /// shape): one Shape slice.
    std::optional<Made> wholeShapeRun(const std::vector<DimExpr>& e) {
        size_t i = 0;
        while (e[i].isConstant()) ++i;
        for (const ShapeCodegen::Leaf* l : sourcesOf(e[i])) {
            const ShapeCodegen::Leaf& leaf = *l;
            if (leaf.dim < i) continue;
            const auto& dims = cg_.sourceDims_.at(leaf.value);
            const size_t start = leaf.dim - i;
            if (start + e.size() > dims.size()) continue;
            bool all = true;
            for (size_t k = 0; k < e.size() && all; ++k) all = dims[start + k] && *dims[start + k] == e[k];
            if (!all) continue;
            ShapeCodegen::Leaf first = leaf;
            first.dim = start;
            return shapeSlice(first, e.size());
        }
        return std::nullopt;
    }

    /// Constants and repeated elements: build the distinct ones, then put every element in place.
    std::optional<Made> arrange(const std::vector<DimExpr>& e, const std::vector<DimExpr>& distinct) {
        auto gathered = [&e, &distinct](ProgramBuilder& b) { return b.gatherInPlace(e, distinct); };
        auto interleaved = [&e](ProgramBuilder& b) { return b.concatSegments(e); };
        const std::string key = keyOf(e, "a");
        auto it = cg_.choices_.find(key);
        if (it == cg_.choices_.end()) {
            auto viaGather = trial(gathered), viaSegments = trial(interleaved);
            it = cg_.choices_.emplace(key, viaSegments && (!viaGather || *viaSegments < *viaGather)).first;
        }
        return it->second ? interleaved(*this) : gathered(*this);
    }

    /// Each run of non-constant elements built on its own, the constants between them as they
    /// are, one Concat ([batch, 5, h, w] = Shape(x, 0, 1), [5], Shape(x, 2, 4)).
    std::optional<Made> concatSegments(const std::vector<DimExpr>& e) {
        std::vector<Made> pieces;
        for (size_t i = 0; i < e.size();) {
            size_t j = i + 1;
            while (j < e.size() && e[j].isConstant() == e[i].isConstant()) ++j;
            std::vector<DimExpr> run(e.begin() + (long)i, e.begin() + (long)j);
            if (run.size() == e.size()) return std::nullopt;  // no constant to split at
            if (e[i].isConstant()) {
                pieces.push_back(constantsOf(e, i, j));
            } else {
                auto p = vec(run);
                if (!p) return std::nullopt;
                pieces.push_back(*p);
            }
            i = j;
        }
        return concat(pieces, e.size());
    }

    /// The distinct non-constant elements built as one vector, then put in place.
    std::optional<Made> gatherInPlace(const std::vector<DimExpr>& e, const std::vector<DimExpr>& distinct) {
        auto v = vec(distinct);
        if (!v) return std::nullopt;
        // [constants..., distinct..., constants...]: one Concat.
        size_t first = 0;
        while (first < e.size() && e[first].isConstant()) ++first;
        bool contiguous = first + distinct.size() <= e.size();
        for (size_t i = 0; contiguous && i < distinct.size(); ++i) contiguous = e[first + i] == distinct[i];
        for (size_t i = first + distinct.size(); contiguous && i < e.size(); ++i) contiguous = e[i].isConstant();
        if (contiguous) {
            std::vector<Made> pieces;
            if (first) pieces.push_back(constantsOf(e, 0, first));
            pieces.push_back(*v);
            if (first + distinct.size() < e.size()) pieces.push_back(constantsOf(e, first + distinct.size(), e.size()));
            return concat(pieces, e.size());
        }
        // Otherwise gather every element from [distinct constants..., distinct...].
        std::vector<int64_t> table;
        for (const DimExpr& x : e)
            if (auto c = x.constantValue(); c && std::find(table.begin(), table.end(), *c) == table.end()) table.push_back(*c);
        std::vector<int64_t> indices;
        for (const DimExpr& x : e) {
            if (auto c = x.constantValue()) indices.push_back(std::find(table.begin(), table.end(), *c) - table.begin());
            else indices.push_back((int64_t)table.size() + (std::find(distinct.begin(), distinct.end(), x) - distinct.begin()));
        }
        Made source = *v;
        if (!table.empty()) source = concat({constant(table, false), *v}, table.size() + distinct.size());
        return node("Gather", {source, constant(indices, false)}, {Attribute::makeInt("axis", 0)}, e.size());
    }

    Form formOf(const DimExpr& x) const {
        if (x.isConstant()) return Form::Constant;
        if (findLeaf(x)) return Form::Leaf;
        if (auto atom = shape::atomOf(x)) return atom->kind == shape::AtomKind::Symbol ? Form::Unbuildable : Form::Atom;
        auto terms = shape::monomialsOf(x);
        size_t variable = 0;
        for (const auto& t : terms) variable += !t.factors.empty();
        return variable == 1 ? Form::Linear : Form::Sum;
    }

    /// Consecutive dims of one source per run: one Shape slice each and a Concat; or, when all
    /// are dims of one source and that is cheaper, one slice over them all and a Gather.
    std::optional<Made> leaves(const std::vector<DimExpr>& e) {
        std::vector<std::pair<const ShapeCodegen::Leaf*, size_t>> runs;
        for (size_t i = 0; i < e.size();) {
            const ShapeCodegen::Leaf* best = nullptr;
            size_t bestLength = 0;
            for (const ShapeCodegen::Leaf* l : sourcesOf(e[i])) {
                const ShapeCodegen::Leaf& leaf = *l;
                const auto& dims = cg_.sourceDims_.at(leaf.value);
                size_t n = 0;
                while (i + n < e.size() && leaf.dim + n < dims.size() && dims[leaf.dim + n] && *dims[leaf.dim + n] == e[i + n]) ++n;
                if (n > bestLength) { best = &leaf; bestLength = n; }
            }
            if (!best) return std::nullopt;
            runs.push_back({best, bestLength});
            i += bestLength;
        }
        if (runs.size() >= 2)
            if (auto one = gatheredFromOneSource(e)) return one;
        std::vector<Made> pieces;
        for (const auto& [leaf, n] : runs) pieces.push_back(shapeSlice(*leaf, n));
        return concat(pieces, e.size());
    }

    std::optional<Made> gatheredFromOneSource(const std::vector<DimExpr>& e) {
        for (const ShapeCodegen::Leaf* c : sourcesOf(e[0])) {
            const ShapeCodegen::Leaf& candidate = *c;
            const auto& dims = cg_.sourceDims_.at(candidate.value);
            std::vector<int64_t> at;
            for (const DimExpr& x : e) {
                size_t k = 0;
                while (k < dims.size() && !(dims[k] && *dims[k] == x)) ++k;
                if (k == dims.size()) break;
                at.push_back((int64_t)k);
            }
            if (at.size() != e.size()) continue;
            const int64_t lo = *std::min_element(at.begin(), at.end()), hi = *std::max_element(at.begin(), at.end());
            for (int64_t& k : at) k -= lo;
            ShapeCodegen::Leaf span = candidate;
            span.dim = (size_t)lo;
            const Made all = shapeSlice(span, (size_t)(hi - lo + 1));
            return node("Gather", {all, constant(at, false)}, {Attribute::makeInt("axis", 0)}, e.size());
        }
        return std::nullopt;
    }

    Made shapeSlice(const ShapeCodegen::Leaf& leaf, size_t n) {
        const size_t rank = cg_.sourceDims_.at(leaf.value).size();
        const int64_t start = (int64_t)leaf.dim, end = (int64_t)(leaf.dim + n);
        const std::string key = "s" + std::to_string(leaf.value) + ":" + std::to_string(start) + ":" + std::to_string(end);
        if (const Made* m = lookup(key)) return *m;
        Made made;
        if (leaf.elements && leaf.dim == 0 && n == rank) {
            made = sourceOf(leaf);  // the vector itself
        } else if (leaf.elements) {
            std::vector<int64_t> indices;
            for (int64_t k = start; k < end; ++k) indices.push_back(k);
            made = node("Gather", {sourceOf(leaf), constant(indices, false)}, {Attribute::makeInt("axis", 0)}, n);
        } else if (leaf.dim == 0 && n == rank) {
            made = node("Shape", {sourceOf(leaf)}, {}, n);
        } else if (cg_.opset_ >= 15) {
            // Both bounds, as dim-as-shape-slice writes them: equal slices stay equal for CSE.
            made = node("Shape", {sourceOf(leaf)}, {Attribute::makeInt("start", start), Attribute::makeInt("end", end)}, n);
        } else {
            ShapeCodegen::Leaf whole = leaf;
            whole.dim = 0;
            Made all = shapeSlice(whole, rank);
            std::vector<int64_t> indices;
            for (int64_t k = start; k < end; ++k) indices.push_back(k);
            made = node("Gather", {all, constant(indices, false)}, {Attribute::makeInt("axis", 0)}, n);
        }
        memo_[key] = made;
        memo_["u" + std::to_string(leaf.value)] = made;
        return made;
    }

    /// Every element the same atom kind: one Div/Mod/Min/Max over the operand vectors.
    std::optional<Made> atoms(const std::vector<DimExpr>& e) {
        std::vector<DimExpr> a, b;
        shape::AtomKind kind = shape::atomOf(e[0])->kind;
        for (const DimExpr& x : e) {
            auto atom = shape::atomOf(x);
            if (!atom || atom->kind != kind) return std::nullopt;
            a.push_back(atom->a);
            b.push_back(atom->b);
            if (kind == shape::AtomKind::FloorDiv) {
                // ONNX Div truncates: equal to floor only for a >= 0 and b >= 1.
                auto la = atom->a.lowerBound(), lb = atom->b.lowerBound();
                if (!la || *la < 0 || !lb || *lb < 1) return std::nullopt;
            } else if (kind == shape::AtomKind::Mod) {
                auto c = atom->b.constantValue();
                auto lb = atom->b.lowerBound();
                if (!(c && *c != 0) && !(lb && *lb >= 1)) return std::nullopt;
            }
        }
        const char* op = kind == shape::AtomKind::FloorDiv ? "Div"
                         : kind == shape::AtomKind::Mod    ? "Mod"
                         : kind == shape::AtomKind::Min    ? "Min"
                                                           : "Max";
        auto va = vec(a);
        if (!va) return std::nullopt;
        auto vb = vec(b);
        if (!vb) return std::nullopt;
        return node(op, {*va, *vb}, {}, e.size());
    }

    /// c*M + d with one variable monomial M: M, then one Neg/Mul and one Add (or one Sub for d - M).
    std::optional<Made> linear(const std::vector<DimExpr>& e) {
        std::vector<int64_t> coefs, offsets;
        std::vector<DimExpr> firsts, rests;
        size_t factorCount = 0;
        for (const DimExpr& x : e) {
            int64_t c = 0, d = 0;
            std::vector<DimExpr> factors;
            for (const auto& t : shape::monomialsOf(x)) {
                if (t.factors.empty()) d = t.coef;
                else { c = t.coef; factors = t.factors; }
            }
            if (factors.empty()) return std::nullopt;
            if (&x != &e[0] && factors.size() != factorCount) return std::nullopt;
            factorCount = factors.size();
            coefs.push_back(c);
            offsets.push_back(d);
            firsts.push_back(factors[0]);
            DimExpr rest = DimExpr::constant(1);
            for (size_t i = 1; i < factors.size(); ++i) rest = rest * factors[i];
            rests.push_back(rest);
        }
        std::optional<Made> m = vec(firsts);
        if (!m) return std::nullopt;
        if (factorCount > 1) {
            auto r = vec(rests);
            if (!r) return std::nullopt;
            m = node("Mul", {*m, *r}, {}, e.size());
        }
        const bool unit = std::all_of(coefs.begin(), coefs.end(), [](int64_t c) { return c == 1; });
        const bool negated = std::all_of(coefs.begin(), coefs.end(), [](int64_t c) { return c == -1; });
        const bool offset = std::any_of(offsets.begin(), offsets.end(), [](int64_t d) { return d != 0; });
        if (negated && offset) return node("Sub", {constant(offsets, false), *m}, {}, e.size());
        if (negated) m = node("Neg", {*m}, {}, e.size());
        else if (!unit) m = node("Mul", {*m, constant(coefs, false)}, {}, e.size());
        if (offset) m = node("Add", {*m, constant(offsets, false)}, {}, e.size());
        return m;
    }

    /// Several variable monomials: P - N (the positive and negated negative terms) when every
    /// element has both, else the first term plus the rest.
    std::optional<Made> sums(const std::vector<DimExpr>& e) {
        std::vector<DimExpr> pos, neg, head, tail;
        bool split = true;
        for (const DimExpr& x : e) {
            DimExpr p, n;
            const auto terms = shape::monomialsOf(x);
            for (const auto& t : terms) {
                DimExpr term = DimExpr::constant(t.coef < 0 ? -t.coef : t.coef);
                for (const DimExpr& f : t.factors) term = term * f;
                if (t.coef < 0) n = n + term;
                else p = p + term;
            }
            split = split && !p.isConstant() && !n.isConstant();
            pos.push_back(p);
            neg.push_back(n);
            DimExpr first = DimExpr::constant(terms[0].coef);
            for (const DimExpr& f : terms[0].factors) first = first * f;
            head.push_back(first);
            tail.push_back(x - first);
        }
        const std::vector<DimExpr>& l = split ? pos : head;
        const std::vector<DimExpr>& r = split ? neg : tail;
        auto vl = vec(l);
        if (!vl) return std::nullopt;
        auto vr = vec(r);
        if (!vr) return std::nullopt;
        return node(split ? "Sub" : "Add", {*vl, *vr}, {}, e.size());
    }

    /// The values that have `x` as a dim and come before the reader, latest first: a Shape next
    /// to its reader does not keep an early activation alive, and stays inside its block.
    std::vector<const ShapeCodegen::Leaf*> sourcesOf(const DimExpr& x) const {
        std::vector<const ShapeCodegen::Leaf*> out;
        auto it = cg_.leaves_.find(x.id());
        if (it == cg_.leaves_.end()) return out;
        for (auto l = it->second.rbegin(); l != it->second.rend(); ++l)
            if (l->position < before_) out.push_back(&*l);
        // A value whose shape is read already comes first: its slices are shared.
        std::stable_partition(out.begin(), out.end(), [this](const ShapeCodegen::Leaf* l) { return lookup("u" + std::to_string(l->value)) != nullptr; });
        std::stable_partition(out.begin(), out.end(), [this](const ShapeCodegen::Leaf* l) {
            return std::find(prefer_.begin(), prefer_.end(), l->value) != prefer_.end();
        });
        return out;
    }

    const ShapeCodegen::Leaf* findLeaf(const DimExpr& x) const {
        auto all = sourcesOf(x);
        return all.empty() ? nullptr : all.front();
    }

    Made constantsOf(const std::vector<DimExpr>& e, size_t from, size_t to) {
        std::vector<int64_t> v;
        for (size_t i = from; i < to; ++i) v.push_back(*e[i].constantValue());
        return constant(v, false);
    }

    Made constant(const std::vector<int64_t>& v, bool scalar) {
        Made m;
        if (rw_) {
            std::vector<int64_t> dims;
            if (!scalar) dims.push_back((int64_t)v.size());
            m.value = rw_->newInitializer(hint_ + "_const", int64Tensor(dims, v));
        }
        return m;
    }

    Made sourceOf(const ShapeCodegen::Leaf& leaf) {
        Made m;
        m.value = leaf.value;
        m.lastSource = leaf.position;
        return m;
    }

    Made concat(const std::vector<Made>& pieces, size_t n) {
        if (pieces.size() == 1) return pieces[0];
        return node("Concat", pieces, {Attribute::makeInt("axis", 0)}, n);
    }

    Made node(const char* op, const std::vector<Made>& inputs, std::vector<Attribute> attrs, size_t n, bool scalar = false) {
        ++added;
        Made m;
        for (const Made& in : inputs) m.lastSource = std::max(m.lastSource, in.lastSource);
        if (!rw_) return m;
        Shape s;
        if (!scalar) s.dims.push_back(Dim::of((int64_t)n));
        m.value = rw_->newValue(hint_ + "_" + op, TypeInfo::tensor(DataType::Int64, s));
        std::vector<ValueId> ins;
        for (const Made& in : inputs) ins.push_back(in.value);
        rw_->addNode(op, ins, {m.value}, std::move(attrs), origins_, why_, hint_ + "_" + op);
        return m;
    }

    const ShapeCodegen& cg_;
    ShapeCodegen::Memo& memo_;
    const ShapeCodegen::Memo* base_;
    const ProgramBuilder* parent_;
    Rewriter* rw_;
    std::string hint_, why_;
    std::vector<NodeId> origins_;
    int64_t before_ = INT64_MAX;
    std::vector<ValueId> prefer_;
};

void ShapeCodegen::addSource(ValueId v, int64_t position, const std::vector<shape::Dim>& dims) {
    if (sourceDims_.count(v)) return;
    sourceDims_[v] = dims;
    for (size_t k = 0; k < dims.size(); ++k)
        if (dims[k] && !dims[k]->isConstant()) leaves_[dims[k]->id()].push_back({position, v, k});
}

void ShapeCodegen::addElementSource(ValueId v, int64_t position, const std::vector<DimExpr>& elements) {
    if (sourceDims_.count(v)) return;
    std::vector<shape::Dim> dims(elements.begin(), elements.end());
    sourceDims_[v] = dims;
    for (size_t k = 0; k < elements.size(); ++k)
        if (!elements[k].isConstant()) leaves_[elements[k].id()].push_back({position, v, k, true});
}

void ShapeCodegen::addExistingVector(ValueId v, int64_t position, const std::vector<DimExpr>& elements) {
    if (elements.empty()) return;
    Made m;
    m.value = v;
    m.lastSource = position;
    made_.emplace(keyOf(elements, "v"), m);
}

std::optional<size_t> ShapeCodegen::cost(const std::vector<Request>& requests) const {
    Memo scratch;
    ProgramBuilder b(*this, scratch, &made_, nullptr, {}, {}, {});
    for (const Request& r : requests)
        if (!b.request(r)) return std::nullopt;
    return b.added;
}

ValueId ShapeCodegen::emit(Rewriter& rw, const Request& r, const std::string& nameHint, const std::string& why,
                           const std::vector<NodeId>& origins) {
    ProgramBuilder b(*this, made_, nullptr, &rw, nameHint, why, origins);
    auto made = b.request(r);
    return made ? made->value : kNone;
}

}  // namespace passlens::passes
