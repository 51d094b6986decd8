#include "shape/DimExpr.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <utility>
#include <vector>

namespace passlens::shape {

enum class Kind { Poly, Symbol, FloorDiv, Mod, Min, Max };

struct Factor {
    const ExprNode* atom;
    int exponent;
};

struct Term {
    int64_t coef = 0;
    std::vector<Factor> factors;  ///< sorted by atom order; empty = the constant term
};

struct ExprNode {
    Kind kind = Kind::Poly;
    uint64_t id = 0;
    std::string name;             ///< Symbol
    int64_t symbolFloor = 1;      ///< Symbol: its smallest value (1 for an input dim, 0 for a data-dependent size)
    std::optional<int64_t> symbolCeil;  ///< Symbol: its largest value, when the model bounds it
    std::vector<Term> terms;      ///< Poly, sorted; empty = 0
    const ExprNode* a = nullptr;  ///< FloorDiv/Mod/Min/Max operands (always Polys)
    const ExprNode* b = nullptr;
    uint64_t weight = 1;          ///< size of the expression as a tree (its printed length, roughly)
    /// Interval holding the value at every binding with symbols >= 1, from the operands' intervals
    /// alone (no case analysis); computed once when the node is interned. Unset = unbounded.
    std::optional<int64_t> lo, hi;
};

namespace {

constexpr size_t kMaxTerms = 256;
/// Tree size past which an expression is "too large" (an unknown dim to the engine's callers).
/// Shared subexpressions make the DAG small but the printed text and every walk over it grow
/// exponentially with nesting: torchvision's Swin-T at dynamic height/width nests Max/Min/Mod one
/// level per stage, and without a cap its import took over a minute and its export grew to GBs.
constexpr uint64_t kMaxWeight = 3000;

int64_t addChecked(int64_t x, int64_t y) {
    int64_t r;
    if (__builtin_add_overflow(x, y, &r)) throw ExprError("dim arithmetic overflows int64");
    return r;
}
int64_t mulChecked(int64_t x, int64_t y) {
    int64_t r;
    if (__builtin_mul_overflow(x, y, &r)) throw ExprError("dim arithmetic overflows int64");
    return r;
}
int64_t floorDivInt(int64_t x, int64_t y) {
    if (y == 0) throw ExprError("division by zero in a dim expression");
    if (x == INT64_MIN && y == -1) throw ExprError("dim arithmetic overflows int64");
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
    return q;
}
int64_t modInt(int64_t x, int64_t y) {
    if (y == 0) throw ExprError("Mod by zero in a dim expression");
    if (y == -1) return 0;
    int64_t r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
}

// ---- structural order (deterministic text, independent of creation order) -------------------
int compareNodes(const ExprNode* x, const ExprNode* y);

int compareTerms(const Term& x, const Term& y) {
    // Higher degree first, then factors structurally, then coefficient.
    int dx = 0, dy = 0;
    for (const auto& f : x.factors) dx += f.exponent;
    for (const auto& f : y.factors) dy += f.exponent;
    if (dx != dy) return dx > dy ? -1 : 1;
    for (size_t i = 0; i < std::min(x.factors.size(), y.factors.size()); ++i) {
        if (int c = compareNodes(x.factors[i].atom, y.factors[i].atom)) return c;
        if (x.factors[i].exponent != y.factors[i].exponent) return x.factors[i].exponent > y.factors[i].exponent ? -1 : 1;
    }
    if (x.factors.size() != y.factors.size()) return x.factors.size() < y.factors.size() ? -1 : 1;
    return 0;
}

int compareNodes(const ExprNode* x, const ExprNode* y) {
    if (x == y) return 0;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    switch (x->kind) {
    case Kind::Symbol: return x->name.compare(y->name) < 0 ? -1 : 1;
    case Kind::Poly:
        for (size_t i = 0; i < std::min(x->terms.size(), y->terms.size()); ++i) {
            if (int c = compareTerms(x->terms[i], y->terms[i])) return c;
            if (x->terms[i].coef != y->terms[i].coef) return x->terms[i].coef < y->terms[i].coef ? -1 : 1;
        }
        return x->terms.size() < y->terms.size() ? -1 : (x->terms.size() > y->terms.size() ? 1 : 0);
    default:
        if (int c = compareNodes(x->a, y->a)) return c;
        return compareNodes(x->b, y->b);
    }
}

// ---- intervals -----------------------------------------------------------------------------
// Conservative [lo, hi] over every binding with symbols >= 1; an unset end is unbounded, and any
// overflow while combining ends makes that end unbounded (never a wrong bound).
struct Interval {
    std::optional<int64_t> lo, hi;
};

std::optional<int64_t> addOpt(std::optional<int64_t> x, std::optional<int64_t> y) {
    int64_t r;
    if (!x || !y || __builtin_add_overflow(*x, *y, &r)) return std::nullopt;
    return r;
}
std::optional<int64_t> mulOpt(int64_t x, int64_t y) {
    int64_t r;
    if (__builtin_mul_overflow(x, y, &r)) return std::nullopt;
    return r;
}

Interval scaleInterval(const Interval& v, int64_t c) {
    auto times = [c](std::optional<int64_t> x) { return x ? mulOpt(*x, c) : std::nullopt; };
    if (c >= 0) return {times(v.lo), times(v.hi)};
    return {times(v.hi), times(v.lo)};
}

Interval mulInterval(const Interval& x, const Interval& y) {
    if (x.lo && y.lo && *x.lo >= 0 && *y.lo >= 0) {
        // Both non-negative: the product grows with each end.
        Interval r{mulOpt(*x.lo, *y.lo), std::nullopt};
        if (x.hi && y.hi) r.hi = mulOpt(*x.hi, *y.hi);
        return r;
    }
    if (!x.lo || !x.hi || !y.lo || !y.hi) return {};
    Interval r{INT64_MAX, INT64_MIN};
    for (int64_t a : {*x.lo, *x.hi})
        for (int64_t b : {*y.lo, *y.hi}) {
            auto p = mulOpt(a, b);
            if (!p) return {};
            r.lo = std::min(*r.lo, *p);
            r.hi = std::max(*r.hi, *p);
        }
    return r;
}

/// The interval of a node from its operands' stored intervals.
Interval directInterval(const ExprNode& n) {
    switch (n.kind) {
    case Kind::Symbol: return {n.symbolFloor, n.symbolCeil};
    case Kind::Poly: {
        Interval sum{0, 0};
        for (const auto& t : n.terms) {
            Interval prod{1, 1};
            for (const auto& f : t.factors)
                for (int e = 0; e < f.exponent; ++e) prod = mulInterval(prod, {f.atom->lo, f.atom->hi});
            Interval term = scaleInterval(prod, t.coef);
            sum = {addOpt(sum.lo, term.lo), addOpt(sum.hi, term.hi)};
        }
        return sum;
    }
    case Kind::FloorDiv: {
        const ExprNode* a = n.a;
        if (n.b->lo && n.b->hi && *n.b->lo == *n.b->hi && *n.b->lo > 0) {
            // floor is monotone in a for a positive constant divisor.
            int64_t k = *n.b->lo;
            return {a->lo ? std::optional<int64_t>(floorDivInt(*a->lo, k)) : std::nullopt,
                    a->hi ? std::optional<int64_t>(floorDivInt(*a->hi, k)) : std::nullopt};
        }
        // b >= 1: a >= 0 gives 0 <= a/b <= a; a < 0 gives a <= a/b < 0 (so a <= floor(a/b) <= -1).
        // Either way floor(a/b) lies in [min(a, 0), max(a, 0)].
        if (n.b->lo && *n.b->lo >= 1)
            return {a->lo ? std::optional<int64_t>(std::min<int64_t>(*a->lo, 0)) : std::nullopt,
                    a->hi ? std::optional<int64_t>(std::max<int64_t>(*a->hi, 0)) : std::nullopt};
        return {};
    }
    case Kind::Mod: {
        // b >= 1: 0 <= Mod(a, b) <= b - 1, and Mod(a, b) <= a when a >= 0.
        if (!n.b->lo || *n.b->lo < 1) return {};
        Interval r{0, n.b->hi ? std::optional<int64_t>(*n.b->hi - 1) : std::nullopt};
        if (n.a->lo && *n.a->lo >= 0 && n.a->hi && (!r.hi || *n.a->hi < *r.hi)) r.hi = n.a->hi;
        return r;
    }
    case Kind::Max: {
        // Max(a, b) >= each operand; it is at most the larger upper end.
        Interval r;
        if (n.a->lo && n.b->lo) r.lo = std::max(*n.a->lo, *n.b->lo);
        else r.lo = n.a->lo ? n.a->lo : n.b->lo;
        if (n.a->hi && n.b->hi) r.hi = std::max(*n.a->hi, *n.b->hi);
        return r;
    }
    case Kind::Min: {
        Interval r;
        if (n.a->hi && n.b->hi) r.hi = std::min(*n.a->hi, *n.b->hi);
        else r.hi = n.a->hi ? n.a->hi : n.b->hi;
        if (n.a->lo && n.b->lo) r.lo = std::min(*n.a->lo, *n.b->lo);
        return r;
    }
    }
    return {};
}

// ---- interning ----------------------------------------------------------------------------
class Table {
public:
    const ExprNode* intern(ExprNode&& n) {
        n.weight = weightOf(n);
        if (n.weight > kMaxWeight) throw ExprError("dim expression too large");
        Interval iv = directInterval(n);
        n.lo = iv.lo;
        n.hi = iv.hi;
        std::string key = keyOf(n);
        std::lock_guard lock(mutex_);
        auto it = nodes_.find(key);
        if (it != nodes_.end()) return it->second.get();
        n.id = nodes_.size() + 1;
        auto owned = std::make_unique<ExprNode>(std::move(n));
        const ExprNode* p = owned.get();
        nodes_.emplace(std::move(key), std::move(owned));
        return p;
    }

private:
    static uint64_t weightOf(const ExprNode& n) {
        switch (n.kind) {
        case Kind::Symbol: return 1;
        case Kind::Poly: {
            uint64_t w = 1;
            for (const auto& t : n.terms) {
                w += 1;
                for (const auto& f : t.factors) w += f.atom->weight;
            }
            return w;
        }
        default: return 1 + n.a->weight + n.b->weight;
        }
    }
    static std::string keyOf(const ExprNode& n) {
        std::string k = std::to_string(static_cast<int>(n.kind)) + ":";
        switch (n.kind) {
        case Kind::Symbol:
            k += n.name;
            if (n.symbolFloor != 1) k += "#" + std::to_string(n.symbolFloor);
            if (n.symbolCeil) k += "<=" + std::to_string(*n.symbolCeil);
            break;
        case Kind::Poly:
            for (const auto& t : n.terms) {
                k += std::to_string(t.coef);
                for (const auto& f : t.factors) k += "*" + std::to_string(f.atom->id) + "^" + std::to_string(f.exponent);
                k += "+";
            }
            break;
        default: k += std::to_string(n.a->id) + "," + std::to_string(n.b->id); break;
        }
        return k;
    }
    std::mutex mutex_;
    std::unordered_map<std::string, std::unique_ptr<ExprNode>> nodes_;
};

Table& table() {
    static Table* t = new Table;  // never destroyed: expressions may be read during static teardown
    return *t;
}

const ExprNode* makePoly(std::vector<Term> terms) {
    for (auto& t : terms)
        std::sort(t.factors.begin(), t.factors.end(),
                  [](const Factor& x, const Factor& y) { return compareNodes(x.atom, y.atom) < 0; });
    // Merge equal factors inside a term (x*x -> x**2).
    for (auto& t : terms) {
        std::vector<Factor> merged;
        for (const auto& f : t.factors) {
            if (!merged.empty() && merged.back().atom == f.atom) merged.back().exponent += f.exponent;
            else merged.push_back(f);
        }
        t.factors = std::move(merged);
    }
    std::sort(terms.begin(), terms.end(), [](const Term& x, const Term& y) { return compareTerms(x, y) < 0; });
    std::vector<Term> out;
    for (auto& t : terms) {
        if (!out.empty() && compareTerms(out.back(), t) == 0) out.back().coef = addChecked(out.back().coef, t.coef);
        else out.push_back(std::move(t));
    }
    std::erase_if(out, [](const Term& t) { return t.coef == 0; });
    if (out.size() > kMaxTerms) throw ExprError("dim expression too large");
    ExprNode n;
    n.kind = Kind::Poly;
    n.terms = std::move(out);
    return table().intern(std::move(n));
}

const ExprNode* makeAtom(Kind kind, const ExprNode* a, const ExprNode* b) {
    ExprNode n;
    n.kind = kind;
    n.a = a;
    n.b = b;
    return table().intern(std::move(n));
}

DimExpr atomExpr(const ExprNode* atom) {
    Term t;
    t.coef = 1;
    t.factors.push_back({atom, 1});
    return DimExpr(makePoly({t}));
}

std::optional<int64_t> constOf(const ExprNode* p) {
    if (p->terms.empty()) return 0;
    if (p->terms.size() == 1 && p->terms[0].factors.empty()) return p->terms[0].coef;
    return std::nullopt;
}

/// The single atom a Poly is exactly (coefficient 1, exponent 1), if it is one.
const ExprNode* soleAtom(const ExprNode* p) {
    if (p->terms.size() == 1 && p->terms[0].coef == 1 && p->terms[0].factors.size() == 1 &&
        p->terms[0].factors[0].exponent == 1)
        return p->terms[0].factors[0].atom;
    return nullptr;
}

DimExpr scaled(const ExprNode* p, int64_t k, bool divide) {
    std::vector<Term> terms = p->terms;
    for (auto& t : terms) t.coef = divide ? t.coef / k : mulChecked(t.coef, k);
    return DimExpr(makePoly(std::move(terms)));
}

/// a / b when b is one term and divides every term of a exactly (coefficients and factors).
std::optional<DimExpr> exactMonomialDivide(const ExprNode* a, const ExprNode* b) {
    if (b->terms.size() != 1 || b->terms[0].coef == 0) return std::nullopt;
    const Term& d = b->terms[0];
    std::vector<Term> out;
    for (const auto& t : a->terms) {
        if (t.coef % d.coef != 0) return std::nullopt;
        Term q;
        q.coef = t.coef / d.coef;
        q.factors = t.factors;
        for (const auto& f : d.factors) {
            auto it = std::find_if(q.factors.begin(), q.factors.end(), [&](const Factor& g) { return g.atom == f.atom; });
            if (it == q.factors.end() || it->exponent < f.exponent) return std::nullopt;
            it->exponent -= f.exponent;
            if (it->exponent == 0) q.factors.erase(it);
        }
        out.push_back(std::move(q));
    }
    return DimExpr(makePoly(std::move(out)));
}

/// k when a = k*b for an integer k (b a polynomial of several terms: floor(6*(x*y + x)/(x*y + x)) = 6).
std::optional<int64_t> constantMultiple(const DimExpr& a, const DimExpr& b) {
    const ExprNode* pb = b.node();
    if (pb->terms.empty() || a.node()->terms.size() != pb->terms.size()) return std::nullopt;
    const Term& lead = pb->terms[0];
    for (const auto& t : a.node()->terms) {
        bool same = t.factors.size() == lead.factors.size() &&
                    std::equal(t.factors.begin(), t.factors.end(), lead.factors.begin(), [](const Factor& x, const Factor& y) {
                        return x.atom == y.atom && x.exponent == y.exponent;
                    });
        if (!same) continue;
        if (lead.coef == 0 || t.coef % lead.coef != 0) return std::nullopt;
        int64_t k = t.coef / lead.coef;
        if (a - DimExpr::constant(k) * b == DimExpr()) return k;
        return std::nullopt;
    }
    return std::nullopt;
}

int64_t gcdOfCoefs(const ExprNode* p, int64_t k) {
    int64_t g = k < 0 ? -k : k;
    for (const auto& t : p->terms) g = std::gcd(g, t.coef < 0 ? -t.coef : t.coef);
    return g;
}

// ---- evaluation and printing -----------------------------------------------------------------
std::optional<int64_t> eval(const ExprNode* n, const Bindings& b) {
    switch (n->kind) {
    case Kind::Symbol: {
        auto it = b.find(n->name);
        if (it == b.end()) return std::nullopt;
        return it->second;
    }
    case Kind::Poly: {
        int64_t sum = 0;
        for (const auto& t : n->terms) {
            int64_t prod = t.coef;
            for (const auto& f : t.factors) {
                auto v = eval(f.atom, b);
                if (!v) return std::nullopt;
                for (int e = 0; e < f.exponent; ++e) prod = mulChecked(prod, *v);
            }
            sum = addChecked(sum, prod);
        }
        return sum;
    }
    default: {
        auto x = eval(n->a, b), y = eval(n->b, b);
        if (!x || !y) return std::nullopt;
        switch (n->kind) {
        case Kind::FloorDiv: return floorDivInt(*x, *y);
        case Kind::Mod: return modInt(*x, *y);
        case Kind::Min: return std::min(*x, *y);
        default: return std::max(*x, *y);
        }
    }
    }
}

std::string polyText(const ExprNode* p);

std::string atomText(const ExprNode* n) {
    auto operand = [](const ExprNode* q, bool divisor) {
        std::string s = polyText(q);
        bool simple = q->terms.size() <= 1;
        if (divisor && !constOf(q) && !soleAtom(q)) simple = false;
        if (divisor && constOf(q) && *constOf(q) < 0) simple = false;
        return simple ? s : "(" + s + ")";
    };
    switch (n->kind) {
    case Kind::Symbol: return n->name;
    case Kind::FloorDiv: return "floor(" + operand(n->a, false) + "/" + operand(n->b, true) + ")";
    case Kind::Mod: return "Mod(" + polyText(n->a) + ", " + polyText(n->b) + ")";
    case Kind::Min:
    case Kind::Max: {
        // Nested to the right in canonical form; printed flat like sympy: Max(a, b, c).
        std::string s = n->kind == Kind::Max ? "Max(" : "Min(";
        const ExprNode* cur = n;
        for (;;) {
            s += polyText(cur->a) + ", ";
            const ExprNode* next = soleAtom(cur->b);
            if (!next || next->kind != n->kind) break;
            cur = next;
        }
        return s + polyText(cur->b) + ")";
    }
    case Kind::Poly: return polyText(n);
    }
    return "?";
}

std::string termText(const Term& t, bool absolute) {
    int64_t c = absolute && t.coef < 0 ? -t.coef : t.coef;  // INT64_MIN cannot occur with a sign flip printed
    std::string s;
    if (t.factors.empty()) return std::to_string(c);
    if (c == -1) s = "-";
    else if (c != 1) s = std::to_string(c) + "*";
    for (size_t i = 0; i < t.factors.size(); ++i) {
        if (i) s += "*";
        s += atomText(t.factors[i].atom);
        if (t.factors[i].exponent != 1) s += "**" + std::to_string(t.factors[i].exponent);
    }
    return s;
}

std::string polyText(const ExprNode* p) {
    if (p->terms.empty()) return "0";
    std::string s = termText(p->terms[0], false);
    for (size_t i = 1; i < p->terms.size(); ++i) {
        const Term& t = p->terms[i];
        s += t.coef < 0 ? " - " : " + ";
        s += termText(t, true);
    }
    return s;
}

void collect(const ExprNode* n, std::set<std::string>& out) {
    switch (n->kind) {
    case Kind::Symbol: out.insert(n->name); return;
    case Kind::Poly:
        for (const auto& t : n->terms)
            for (const auto& f : t.factors) collect(f.atom, out);
        return;
    default: collect(n->a, out); collect(n->b, out); return;
    }
}

}  // namespace

// ---- DimExpr -------------------------------------------------------------------------------
DimExpr::DimExpr() : node_(makePoly({})) {}

DimExpr DimExpr::constant(int64_t v) {
    Term t;
    t.coef = v;
    return DimExpr(makePoly({t}));
}

DimExpr DimExpr::symbol(std::string_view name, int64_t atLeast, std::optional<int64_t> atMost) {
    ExprNode n;
    n.kind = Kind::Symbol;
    n.name = std::string(name);
    n.symbolFloor = atLeast;
    n.symbolCeil = atMost;
    return atomExpr(table().intern(std::move(n)));
}

bool DimExpr::isConstant() const { return constOf(node_).has_value(); }
std::optional<int64_t> DimExpr::constantValue() const { return constOf(node_); }
std::optional<std::string> DimExpr::symbolName() const {
    const ExprNode* a = soleAtom(node_);
    if (a && a->kind == Kind::Symbol) return a->name;
    return std::nullopt;
}
uint64_t DimExpr::id() const { return node_->id; }

std::optional<int64_t> DimExpr::evaluate(const Bindings& b) const {
    try {
        return eval(node_, b);
    } catch (const ExprError&) {
        return std::nullopt;
    }
}
void DimExpr::collectSymbols(std::set<std::string>& out) const { collect(node_, out); }
std::string DimExpr::toString() const { return polyText(node_); }

std::optional<AtomParts> atomOf(const DimExpr& e) {
    const ExprNode* atom = soleAtom(e.node());
    if (!atom) return std::nullopt;
    AtomParts parts;
    switch (atom->kind) {
    case Kind::Symbol: return parts;
    case Kind::FloorDiv: parts.kind = AtomKind::FloorDiv; break;
    case Kind::Mod: parts.kind = AtomKind::Mod; break;
    case Kind::Min: parts.kind = AtomKind::Min; break;
    case Kind::Max: parts.kind = AtomKind::Max; break;
    case Kind::Poly: return std::nullopt;
    }
    parts.a = DimExpr(atom->a);
    parts.b = DimExpr(atom->b);
    return parts;
}

std::vector<Monomial> monomialsOf(const DimExpr& e) {
    std::vector<Monomial> out;
    for (const auto& t : e.node()->terms) {
        Monomial m;
        m.coef = t.coef;
        for (const auto& f : t.factors)
            for (int i = 0; i < f.exponent; ++i) m.factors.push_back(atomExpr(f.atom));
        out.push_back(std::move(m));
    }
    return out;
}

DimExpr operator+(const DimExpr& a, const DimExpr& b) {
    std::vector<Term> terms = a.node()->terms;
    terms.insert(terms.end(), b.node()->terms.begin(), b.node()->terms.end());
    return DimExpr(makePoly(std::move(terms)));
}
DimExpr operator-(const DimExpr& a) { return scaled(a.node(), -1, false); }
DimExpr operator-(const DimExpr& a, const DimExpr& b) { return a + (-b); }
DimExpr operator*(const DimExpr& a, const DimExpr& b) {
    if (a.node()->terms.size() * b.node()->terms.size() > kMaxTerms) throw ExprError("dim expression too large");
    std::vector<Term> terms;
    for (const auto& x : a.node()->terms)
        for (const auto& y : b.node()->terms) {
            Term t;
            t.coef = mulChecked(x.coef, y.coef);
            t.factors = x.factors;
            t.factors.insert(t.factors.end(), y.factors.begin(), y.factors.end());
            terms.push_back(std::move(t));
        }
    return DimExpr(makePoly(std::move(terms)));
}

// ---- bounds by case analysis ------------------------------------------------------------------
namespace {

/// How many Min/Max atoms one bound query may split on (2^budget polynomials at most).
constexpr int kSplitBudget = 3;

/// p with every occurrence of the atom replaced by the polynomial `by`.
DimExpr substituteAtom(const ExprNode* p, const ExprNode* atom, const ExprNode* by) {
    DimExpr out;
    for (const auto& t : p->terms) {
        Term kept;
        kept.coef = t.coef;
        int power = 0;
        for (const auto& f : t.factors) {
            if (f.atom == atom) power += f.exponent;
            else kept.factors.push_back(f);
        }
        DimExpr term(makePoly({kept}));
        for (int e = 0; e < power; ++e) term = term * DimExpr(by);
        out = out + term;
    }
    return out;
}

std::optional<int64_t> maxKnown(std::optional<int64_t> x, std::optional<int64_t> y) {
    if (x && y) return std::max(*x, *y);
    return x ? x : y;
}
std::optional<int64_t> minKnown(std::optional<int64_t> x, std::optional<int64_t> y) {
    if (x && y) return std::min(*x, *y);
    return x ? x : y;
}
std::optional<int64_t> minBoth(std::optional<int64_t> x, std::optional<int64_t> y) {
    if (x && y) return std::min(*x, *y);
    return std::nullopt;
}
std::optional<int64_t> maxBoth(std::optional<int64_t> x, std::optional<int64_t> y) {
    if (x && y) return std::max(*x, *y);
    return std::nullopt;
}

/// The stored interval of a polynomial, narrowed by case analysis on its Min/Max atoms. At every
/// binding Max(a, b) equals a or b (same for Min), so the polynomial P equals P[M:=a] or P[M:=b]
/// and lies in the union of their intervals; substituting lets terms cancel (x - Max(0, x - 3) is
/// x or 3), which per-term intervals cannot see. When M is a lone linear term c*M, more holds:
/// c > 0 with Max (or c < 0 with Min) makes P >= both substitutions, since Max(a, b) >= a, b and
/// -Min(a, b) >= -a, -b; c < 0 with Max (or c > 0 with Min) makes P <= both. So
/// a - Min(a, X) >= max(a - a, lo(a - X)) >= 0 although X is unbounded.
Interval refinedInterval(const ExprNode* p, int budget) {
    Interval base{p->lo, p->hi};
    if (budget <= 0 || (base.lo && base.hi && *base.lo == *base.hi)) return base;
    const ExprNode* atom = nullptr;
    for (const auto& t : p->terms) {
        for (const auto& f : t.factors)
            if (f.atom->kind == Kind::Max || f.atom->kind == Kind::Min) { atom = f.atom; break; }
        if (atom) break;
    }
    if (!atom) return base;
    int occurrences = 0;
    int64_t linearCoef = 0;
    for (const auto& t : p->terms)
        for (const auto& f : t.factors)
            if (f.atom == atom) {
                occurrences += f.exponent;
                if (t.factors.size() == 1 && f.exponent == 1) linearCoef = t.coef;
            }
    bool linear = occurrences == 1 && linearCoef != 0;
    Interval ia, ib;
    try {
        ia = refinedInterval(substituteAtom(p, atom, atom->a).node(), budget - 1);
        ib = refinedInterval(substituteAtom(p, atom, atom->b).node(), budget - 1);
    } catch (const ExprError&) {
        return base;  // a substitution too large or overflowing: keep what is known
    }
    Interval split{minBoth(ia.lo, ib.lo), maxBoth(ia.hi, ib.hi)};
    if (linear) {
        bool atLeastBoth = (atom->kind == Kind::Max) == (linearCoef > 0);
        if (atLeastBoth) split.lo = maxKnown(ia.lo, ib.lo);
        else split.hi = minKnown(ia.hi, ib.hi);
    }
    return {maxKnown(base.lo, split.lo), minKnown(base.hi, split.hi)};
}

Interval boundsOf(const DimExpr& e) { return refinedInterval(e.node(), kSplitBudget); }

/// x <= y at every binding (proven, not sampled).
bool provenLessEqual(const DimExpr& x, const DimExpr& y) {
    auto lo = boundsOf(y - x).lo;
    return lo && *lo >= 0;
}

}  // namespace

std::optional<int64_t> DimExpr::lowerBound() const { return boundsOf(*this).lo; }
std::optional<int64_t> DimExpr::upperBound() const { return boundsOf(*this).hi; }

/// p with every factor Mod(X, m) whose constant m is a multiple of k replaced by X: the same value
/// modulo k (see mod()).
static const ExprNode* withoutModsOfMultiples(const ExprNode* p, int64_t k) {
    bool any = false;
    for (const auto& t : p->terms)
        for (const auto& f : t.factors)
            if (f.atom->kind == Kind::Mod)
                if (auto m = constOf(f.atom->b); m && *m != 0 && *m % k == 0) any = true;
    if (!any) return p;
    DimExpr out;
    for (const auto& t : p->terms) {
        Term kept;
        kept.coef = t.coef;
        DimExpr term;
        std::vector<const ExprNode*> replaced;
        for (const auto& f : t.factors) {
            auto m = f.atom->kind == Kind::Mod ? constOf(f.atom->b) : std::nullopt;
            if (m && *m != 0 && *m % k == 0)
                for (int e = 0; e < f.exponent; ++e) replaced.push_back(f.atom->a);
            else
                kept.factors.push_back(f);
        }
        term = DimExpr(makePoly({kept}));
        for (const ExprNode* x : replaced) term = term * DimExpr(x);
        out = out + term;
    }
    return out.node();
}

DimExpr floorDiv(const DimExpr& a, const DimExpr& b) {
    const ExprNode* pa = a.node();
    if (auto k = b.constantValue()) {
        if (*k == 0) throw ExprError("division by zero in a dim expression");
        if (*k < 0) return floorDiv(-a, DimExpr::constant(*k == INT64_MIN ? throw ExprError("overflow") : -*k));
        if (*k == 1) return a;
        if (auto c = constOf(pa)) return DimExpr::constant(floorDivInt(*c, *k));
        // c*k <= a < (c+1)*k at every binding: floor(a/k) = c (floor(a/k) = 0 when 0 <= a < k).
        if (auto iv = boundsOf(a); iv.lo && iv.hi && floorDivInt(*iv.lo, *k) == floorDivInt(*iv.hi, *k))
            return DimExpr::constant(floorDivInt(*iv.lo, *k));
        // floor((k*Q + R)/k) = Q + floor(R/k) for integer-valued Q.
        std::vector<Term> q, r;
        for (const auto& t : pa->terms) {
            if (t.coef / *k != 0) q.push_back({t.coef / *k, t.factors});
            if (t.coef % *k != 0) r.push_back({t.coef % *k, t.factors});
        }
        DimExpr quotient(makePoly(std::move(q)));
        const ExprNode* rest = makePoly(std::move(r));
        if (auto c = constOf(rest)) return quotient + DimExpr::constant(floorDivInt(*c, *k));
        // floor(g*X / (g*m)) = floor(X/m) for g > 0.
        int64_t g = gcdOfCoefs(rest, *k);
        int64_t m = *k / g;
        if (g > 1) rest = scaled(rest, g, true).node();
        // floor(floor(X/p)/m) = floor(X/(p*m)) for positive p, m.
        if (const ExprNode* inner = soleAtom(rest); inner && inner->kind == Kind::FloorDiv)
            if (auto p = constOf(inner->b); p && *p > 0)
                return quotient + floorDiv(DimExpr(inner->a), DimExpr::constant(mulChecked(*p, m)));
        return quotient + atomExpr(makeAtom(Kind::FloorDiv, rest, DimExpr::constant(m).node()));
    }
    if (a == b) return DimExpr::constant(1);
    if (a.isConstant() && *a.constantValue() == 0) return a;
    if (auto exact = exactMonomialDivide(pa, b.node())) return *exact;
    if (auto k = constantMultiple(a, b)) return DimExpr::constant(*k);
    // 0 <= a < b: 0 <= a/b < 1.
    if (auto lo = a.lowerBound(); lo && *lo >= 0 && provenLessEqual(a + DimExpr::constant(1), b)) return DimExpr();
    return atomExpr(makeAtom(Kind::FloorDiv, pa, b.node()));
}

DimExpr mod(const DimExpr& a, const DimExpr& b) {
    const ExprNode* pa = a.node();
    if (auto k = b.constantValue()) {
        if (*k == 0) throw ExprError("Mod by zero in a dim expression");
        if (*k < 0) return -mod(-a, DimExpr::constant(*k == INT64_MIN ? throw ExprError("overflow") : -*k));
        if (*k == 1) return DimExpr();
        if (auto c = constOf(pa)) return DimExpr::constant(modInt(*c, *k));
        // c*k <= a < (c+1)*k at every binding: Mod(a, k) = a - c*k (= a when 0 <= a < k).
        if (auto iv = boundsOf(a); iv.lo && iv.hi && floorDivInt(*iv.lo, *k) == floorDivInt(*iv.hi, *k))
            return a - DimExpr::constant(mulChecked(floorDivInt(*iv.lo, *k), *k));
        // Mod(X, m) = X - m*floor(X/m) is X plus a multiple of k when k divides m, and sums and
        // products keep congruences mod k: Mod(-Mod(a, 4) + c, 4) = Mod(-a + c, 4).
        pa = withoutModsOfMultiples(pa, *k);
        // Mod(k*Q + R, k) = Mod(R, k): coefficients reduced to (-k/2, k/2], the constant to [0, k).
        std::vector<Term> r;
        for (const auto& t : pa->terms) {
            int64_t c = modInt(t.coef, *k);
            if (!t.factors.empty() && c > *k / 2) c -= *k;
            if (c != 0) r.push_back({c, t.factors});
        }
        const ExprNode* rest = makePoly(std::move(r));
        if (auto c = constOf(rest)) return DimExpr::constant(modInt(*c, *k));
        // Mod(g*X, g*m) = g*Mod(X, m) for g > 0.
        int64_t g = gcdOfCoefs(rest, *k);
        if (g > 1) return DimExpr::constant(g) * mod(scaled(rest, g, true), DimExpr::constant(*k / g));
        return atomExpr(makeAtom(Kind::Mod, rest, b.node()));
    }
    if (a == b || (a.isConstant() && *a.constantValue() == 0)) return DimExpr();
    if (exactMonomialDivide(pa, b.node()) || constantMultiple(a, b)) return DimExpr();
    // 0 <= a < b: floor(a/b) = 0, so Mod(a, b) = a.
    if (auto lo = a.lowerBound(); lo && *lo >= 0 && provenLessEqual(a + DimExpr::constant(1), b)) return a;
    return atomExpr(makeAtom(Kind::Mod, pa, b.node()));
}

/// The arguments of a chain of the same Min/Max atom: Max(a, Max(b, c)) -> {a, b, c}.
static void flattenMinMax(const ExprNode* p, Kind kind, std::vector<const ExprNode*>& out) {
    const ExprNode* atom = soleAtom(p);
    if (atom && atom->kind == kind) {
        flattenMinMax(atom->a, kind, out);
        flattenMinMax(atom->b, kind, out);
    } else if (std::find(out.begin(), out.end(), p) == out.end()) {
        out.push_back(p);
    }
}

static DimExpr minMax(const DimExpr& a, const DimExpr& b, bool isMax) {
    if (a == b) return a;
    if (auto x = a.constantValue())
        if (auto y = b.constantValue()) return DimExpr::constant(isMax ? std::max(*x, *y) : std::min(*x, *y));
    if (provenLessEqual(b, a)) return isMax ? a : b;
    if (provenLessEqual(a, b)) return isMax ? b : a;
    // n-ary canonical form: the distinct arguments, none dominated by another, sorted, nested to
    // the right, so Max(a, Max(a, b)) = Max(a, b) and the order of building does not matter.
    Kind kind = isMax ? Kind::Max : Kind::Min;
    std::vector<const ExprNode*> args;
    flattenMinMax(a.node(), kind, args);
    flattenMinMax(b.node(), kind, args);
    std::vector<const ExprNode*> kept;
    for (const ExprNode* p : args) {
        bool dominated = false;
        for (const ExprNode* q : args) {
            if (q == p) continue;
            DimExpr pe(p), qe(q);
            if (isMax ? provenLessEqual(pe, qe) : provenLessEqual(qe, pe)) {
                // q makes p irrelevant; of two proven equal, keep the first in structural order.
                bool back = isMax ? provenLessEqual(qe, pe) : provenLessEqual(pe, qe);
                if (!back || compareNodes(q, p) < 0) { dominated = true; break; }
            }
        }
        if (!dominated) kept.push_back(p);
    }
    std::sort(kept.begin(), kept.end(), [](const ExprNode* x, const ExprNode* y) { return compareNodes(x, y) < 0; });
    if (kept.size() == 1) return DimExpr(kept[0]);
    const ExprNode* acc = kept.back();
    for (size_t i = kept.size() - 1; i-- > 0;) acc = atomExpr(makeAtom(kind, kept[i], acc)).node();
    return DimExpr(acc);
}
DimExpr min(const DimExpr& a, const DimExpr& b) { return minMax(a, b, false); }
DimExpr max(const DimExpr& a, const DimExpr& b) { return minMax(a, b, true); }

}  // namespace passlens::shape
