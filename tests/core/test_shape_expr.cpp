// The dim expression algebra of core/shape: canonical forms, the spelling ONNX Runtime's
// symbolic_shape_infer.py writes, parsing it back, and a random-expression property test that
// simplification never changes a value.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <random>

#include "shape/DimExpr.h"

using namespace passlens::shape;

namespace passlens::shape {
void PrintTo(const DimExpr& e, std::ostream* os) { *os << e.toString(); }
}  // namespace passlens::shape

namespace {
DimExpr sym(const char* n) { return DimExpr::symbol(n); }
DimExpr k(int64_t v) { return DimExpr::constant(v); }
}  // namespace

TEST(ShapeExpr, SpellsLikeSympy) {
    DimExpr seq = sym("seq"), h = sym("height"), a = sym("a"), b = sym("b"), w = sym("w");
    EXPECT_EQ((k(2) * seq).toString(), "2*seq");
    EXPECT_EQ(floorDiv(h, k(32)).toString(), "floor(height/32)");
    EXPECT_EQ(max(a, b).toString(), "Max(a, b)");
    EXPECT_EQ(max(b, a).toString(), "Max(a, b)");
    EXPECT_EQ(mod(w, k(7)).toString(), "Mod(w, 7)");
    EXPECT_EQ((a * b + k(1)).toString(), "a*b + 1");
    EXPECT_EQ((k(1) - a).toString(), "-a + 1");
    EXPECT_EQ((a * a * k(3) - b).toString(), "3*a**2 - b");
    EXPECT_EQ(floorDiv(h + k(7), k(8)).toString(), "floor((height + 7)/8)");
    EXPECT_EQ(floorDiv(a, b * k(2)).toString(), "floor(a/(2*b))");
    EXPECT_EQ(mod(k(8) - mod(h, k(8)), k(8)).toString(), "Mod(-height, 8)");
    EXPECT_EQ((floorDiv(h - k(1), k(2)) + k(1)).toString(), "floor((height - 1)/2) + 1");
    EXPECT_EQ(DimExpr().toString(), "0");
    EXPECT_EQ(k(-5).toString(), "-5");
}

TEST(ShapeExpr, CanonicalFormsAreTheSameObject) {
    DimExpr a = sym("a"), b = sym("b");
    EXPECT_EQ((a + b) * (a - b), a * a - b * b);
    EXPECT_EQ(a * b, b * a);
    EXPECT_EQ(a + a, k(2) * a);
    EXPECT_EQ(a - a, DimExpr());
    EXPECT_EQ((a + b).id(), (b + a).id());
    EXPECT_EQ(min(a, b), min(b, a));
    EXPECT_NE(a, b);
    EXPECT_NE(min(a, b), max(a, b));
}

TEST(ShapeExpr, SimplifiesOnlyWhatHoldsForEveryBinding) {
    DimExpr h = sym("h"), w = sym("w");
    EXPECT_EQ(floorDiv(k(8) * h, k(8)), h);
    EXPECT_EQ(floorDiv(h, k(1)), h);
    EXPECT_EQ(mod(k(8) * h, k(8)), DimExpr());
    EXPECT_EQ(max(h, h), h);
    EXPECT_EQ(max(h, k(1)), h);   // symbols are >= 1
    EXPECT_EQ(min(h, k(0)), k(0));
    EXPECT_EQ(floorDiv(k(8) * h + k(3), k(8)), h);
    EXPECT_EQ(mod(k(8) * h + k(3), k(8)), k(3));
    EXPECT_EQ(floorDiv(h * w, h), w);
    EXPECT_EQ(floorDiv(k(2) * h + k(4), k(4)), floorDiv(h, k(2)) + k(1));
    EXPECT_EQ(floorDiv(floorDiv(h, k(2)), k(4)), floorDiv(h, k(8)));
    // Never: floor(h/8)*8 = h, or Mod(h, 8) = h.
    EXPECT_NE(floorDiv(h, k(8)) * k(8), h);
    EXPECT_NE(mod(h, k(8)), h);
    EXPECT_NE(max(h, k(2)), h);
    // Constant folding follows floor division and Python's Mod.
    EXPECT_EQ(floorDiv(k(-7), k(2)), k(-4));
    EXPECT_EQ(mod(k(-7), k(3)), k(2));
    EXPECT_EQ(mod(k(7), k(-3)), k(-2));
    EXPECT_THROW(floorDiv(h, k(0)), ExprError);
    EXPECT_THROW(k(INT64_MAX) + k(1), ExprError);
}

TEST(ShapeExpr, EvaluatesAtBindings) {
    DimExpr h = sym("h"), w = sym("w");
    DimExpr pad = mod(k(8) - mod(h, k(8)), k(8));
    EXPECT_EQ(pad.evaluate({{"h", 13}}), 3);
    EXPECT_EQ(pad.evaluate({{"h", 16}}), 0);
    EXPECT_EQ(floorDiv(h + pad, k(8)).evaluate({{"h", 13}}), 2);
    EXPECT_EQ((h * w).evaluate({{"h", 3}}), std::nullopt);  // w unbound
    EXPECT_EQ(floorDiv(h, w).evaluate({{"h", 3}, {"w", 0}}), std::nullopt);
    std::set<std::string> syms;
    (floorDiv(h, w) + k(1)).collectSymbols(syms);
    EXPECT_EQ(syms, (std::set<std::string>{"h", "w"}));
}

TEST(ShapeExpr, ParsesWhatOnnxRuntimeAndPassLensWrite) {
    auto p = [](const char* s) { return parseDimExpr(s); };
    EXPECT_EQ(p("2*seq"), k(2) * sym("seq"));
    EXPECT_EQ(p("floor(height/32)"), floorDiv(sym("height"), k(32)));
    EXPECT_EQ(p("Max(a, b)"), max(sym("a"), sym("b")));
    EXPECT_EQ(p("Mod(w, 7)"), mod(sym("w"), k(7)));
    EXPECT_EQ(p("seq + 1"), sym("seq") + k(1));
    EXPECT_EQ(p("8 - h"), k(8) - sym("h"));
    EXPECT_EQ(p("h**2"), sym("h") * sym("h"));
    EXPECT_EQ(p("h//4"), floorDiv(sym("h"), k(4)));
    EXPECT_EQ(p("Min(a, b, 3)"), min(min(sym("a"), sym("b")), k(3)));
    EXPECT_EQ(p("ceil(h/2)")->evaluate({{"h", 7}}), 4);
    EXPECT_EQ(p("ceil(3*h/4)")->evaluate({{"h", 3}}), 3);
    EXPECT_EQ(p("floor((h - 1)/2) + 1")->evaluate({{"h", 224}}), 112);
    EXPECT_FALSE(p("2*"));
    EXPECT_FALSE(p("Mod(a)"));
    EXPECT_FALSE(p("a + (b"));
    EXPECT_FALSE(p("sqrt(a)"));
    // dim_params: plain names stay names, even with characters an expression would use.
    EXPECT_EQ(dimFromParam("batch"), sym("batch"));
    EXPECT_EQ(dimFromParam("batch-size"), sym("batch-size"));
    EXPECT_EQ(dimFromParam("unk__12"), sym("unk__12"));
    EXPECT_EQ(dimFromParam("2*seq"), k(2) * sym("seq"));
    EXPECT_EQ(dimFromParam("floor(h/2) + 1"), floorDiv(sym("h"), k(2)) + k(1));
    EXPECT_EQ(dimFromParam("Dynamic dim (not an expression)"), sym("Dynamic dim (not an expression)"));
}

// ---- property test: random trees, simplified vs evaluated directly -----------------------------
namespace {

struct Tree {
    enum Op { Const, Sym, Add, Sub, Mul, Neg, Div, Mod, Min, Max } op = Const;
    int64_t value = 0;
    std::string name;
    std::unique_ptr<Tree> l, r;
};

std::unique_ptr<Tree> randomTree(std::mt19937_64& rng, int depth) {
    auto t = std::make_unique<Tree>();
    std::uniform_int_distribution<int> pick(0, depth <= 0 ? 1 : 9);
    t->op = static_cast<Tree::Op>(pick(rng));
    if (t->op == Tree::Const) t->value = std::uniform_int_distribution<int64_t>(-12, 12)(rng);
    else if (t->op == Tree::Sym) t->name = std::string(1, static_cast<char>('a' + std::uniform_int_distribution<int>(0, 2)(rng)));
    else {
        t->l = randomTree(rng, depth - 1);
        if (t->op != Tree::Neg) {
            // Divisors: mostly small non-zero constants (the common case), sometimes a subtree.
            bool constDivisor = (t->op == Tree::Div || t->op == Tree::Mod) && std::uniform_int_distribution<int>(0, 3)(rng) != 0;
            if (constDivisor) {
                t->r = std::make_unique<Tree>();
                int64_t v = 0;
                while (v == 0) v = std::uniform_int_distribution<int64_t>(-9, 9)(rng);
                t->r->value = v;
            } else {
                t->r = randomTree(rng, depth - 1);
            }
        }
    }
    return t;
}

int64_t floorDivRef(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// Direct evaluation with the documented semantics; nullopt on division by zero.
std::optional<int64_t> direct(const Tree& t, const Bindings& b) {
    switch (t.op) {
    case Tree::Const: return t.value;
    case Tree::Sym: return b.at(t.name);
    case Tree::Neg: { auto x = direct(*t.l, b); return x ? std::optional<int64_t>(-*x) : std::nullopt; }
    default: break;
    }
    auto x = direct(*t.l, b), y = direct(*t.r, b);
    if (!x || !y) return std::nullopt;
    switch (t.op) {
    case Tree::Add: return *x + *y;
    case Tree::Sub: return *x - *y;
    case Tree::Mul: return *x * *y;
    case Tree::Div: if (*y == 0) return std::nullopt; return floorDivRef(*x, *y);
    case Tree::Mod: if (*y == 0) return std::nullopt; return *x - *y * floorDivRef(*x, *y);
    case Tree::Min: return std::min(*x, *y);
    case Tree::Max: return std::max(*x, *y);
    default: return std::nullopt;
    }
}

DimExpr build(const Tree& t) {
    switch (t.op) {
    case Tree::Const: return DimExpr::constant(t.value);
    case Tree::Sym: return DimExpr::symbol(t.name);
    case Tree::Add: return build(*t.l) + build(*t.r);
    case Tree::Sub: return build(*t.l) - build(*t.r);
    case Tree::Mul: return build(*t.l) * build(*t.r);
    case Tree::Neg: return -build(*t.l);
    case Tree::Div: return floorDiv(build(*t.l), build(*t.r));
    case Tree::Mod: return mod(build(*t.l), build(*t.r));
    case Tree::Min: return min(build(*t.l), build(*t.r));
    case Tree::Max: return max(build(*t.l), build(*t.r));
    }
    return {};
}

std::string show(const Tree& t) {
    switch (t.op) {
    case Tree::Const: return std::to_string(t.value);
    case Tree::Sym: return t.name;
    case Tree::Neg: return "-(" + show(*t.l) + ")";
    default: break;
    }
    static const char* names[] = {"", "", "+", "-", "*", "", "div", "mod", "min", "max"};
    return std::string(names[t.op]) + "(" + show(*t.l) + ", " + show(*t.r) + ")";
}

}  // namespace

TEST(ShapeExpr, SimplificationNeverChangesAValue) {
    std::mt19937_64 rng(20261126);
    size_t built = 0, compared = 0, simplifiedAway = 0;
    for (int i = 0; i < 4000; ++i) {
        auto tree = randomTree(rng, 4);
        DimExpr e;
        try {
            e = build(*tree);
        } catch (const ExprError&) {
            continue;  // a symbolic divisor simplified to the constant 0
        }
        ++built;
        // Printing and parsing back gives the same canonical object.
        auto reparsed = parseDimExpr(e.toString());
        ASSERT_TRUE(reparsed) << e.toString();
        ASSERT_EQ(*reparsed, e) << show(*tree) << "\n  printed " << e.toString() << "\n  reparsed " << reparsed->toString();
        for (int j = 0; j < 12; ++j) {
            Bindings b;
            for (const char* s : {"a", "b", "c"}) b[s] = std::uniform_int_distribution<int64_t>(1, 40)(rng);
            auto want = direct(*tree, b);
            if (!want) continue;  // undefined at this binding (division by zero inside)
            auto got = e.evaluate(b);
            ++compared;
            ASSERT_EQ(got, want) << show(*tree) << "\n  simplified to " << e.toString() << "\n  a=" << b["a"]
                                 << " b=" << b["b"] << " c=" << b["c"];
            if (auto lb = e.lowerBound()) {
                ASSERT_LE(*lb, *want) << e.toString();
            }
            if (auto ub = e.upperBound()) {
                ASSERT_GE(*ub, *want) << e.toString();
            }
        }
        if (e.isConstant() && tree->op != Tree::Const) ++simplifiedAway;
    }
    EXPECT_GT(built, 3500u);
    EXPECT_GT(compared, 30000u);
    EXPECT_GT(simplifiedAway, 100u);  // the simplifier does real work on these trees
}

TEST(ShapeExpr, MinMaxAreNaryAndAbsorbRepeats) {
    DimExpr a = sym("a"), b = sym("b"), c = sym("c");
    EXPECT_EQ(max(a, max(a, b)), max(a, b));
    EXPECT_EQ(max(max(c, a), b), max(a, max(b, c)));
    EXPECT_EQ(max(max(c, a), b).toString(), "Max(a, b, c)");
    EXPECT_EQ(min(b, min(a, b)).toString(), "Min(a, b)");
    EXPECT_EQ(max(max(a, b), a + k(1)), max(a + k(1), b));  // a + 1 makes a irrelevant
    EXPECT_EQ(parseDimExpr("Max(c, b, a)"), max(a, max(b, c)));
}

TEST(ShapeExpr, BoundsCancelInsideMinMaxByCaseAnalysis) {
    DimExpr x = sym("x");
    // x - Max(0, x - 3) is x (when x <= 3) or 3: in [1, 3] for x >= 1, though Max alone is unbounded.
    EXPECT_EQ((x - max(k(0), x - k(3))).lowerBound(), 1);
    EXPECT_EQ((x - max(k(0), x - k(3))).upperBound(), 3);
    EXPECT_EQ(mod(x, k(7)).upperBound(), 6);
    EXPECT_EQ((-mod(x, k(7))).lowerBound(), -6);
    EXPECT_EQ(floorDiv(mod(x, k(7)) + k(20), k(3)).lowerBound(), 6);
    EXPECT_FALSE(x.upperBound());
    EXPECT_FALSE((x - k(5)).upperBound());
}

TEST(ShapeExpr, MinMaxDropArgumentsTheRangesDecide) {
    DimExpr x = sym("x"), h = sym("h"), a = sym("a"), b = sym("b");
    DimExpr m = mod(h, k(7));  // in [0, 6]
    EXPECT_EQ(max(k(0), m), m);
    EXPECT_EQ(max(k(0), -m), k(0));
    EXPECT_EQ(min(k(0), m), k(0));
    EXPECT_EQ(min(k(6), m), m);
    EXPECT_EQ(max(k(6), m), k(6));
    // Absorption: Min(a, b) <= a and Max(a, b) >= a whatever b is.
    EXPECT_EQ(max(a, min(a, b)), a);
    EXPECT_EQ(min(a, max(a, b)), a);
    // Refused: x - 5 is below 0 at x = 1 and above it at x = 9; 5 - m is 5 at m = 0 (h = 7).
    EXPECT_EQ(max(k(0), x - k(5)).toString(), "Max(0, x - 5)");
    EXPECT_EQ(min(x, k(5)).toString(), "Min(x, 5)");
    EXPECT_EQ(max(m, k(5) - m).toString(), "Max(-Mod(h, 7) + 5, Mod(h, 7))");
}

TEST(ShapeExpr, ADataDependentSizeMayBeZero) {
    // An input dim is >= 1, so Max(1, x) is x; NonZero's count may be 0, so Max(1, n) stays, and
    // Max(0, n - 1) is not n - 1 (at n = 0 they differ).
    const DimExpr x = sym("x"), n = DimExpr::symbol("NonZero_n1", 0);
    EXPECT_EQ(max(k(1), x), x);
    EXPECT_EQ(n.lowerBound(), std::optional<int64_t>(0));
    EXPECT_NE(max(k(1), n), n);
    EXPECT_NE(max(k(0), n - k(1)), n - k(1));
    EXPECT_EQ(max(k(0), x - k(1)), x - k(1));
    EXPECT_EQ(max(k(0), n), n);
}

TEST(ShapeExpr, SlicesAroundAShiftAddBackToTheWholeDim) {
    // Swin's shifted window cuts a padded size P at P - 3: the parts are Max(0, P - 3) and
    // Max(0, P - Max(0, P - 3)), and their sum is P for every P >= 0. Here P is a symbol (>= 1)
    // and a padded size that may be 0 (floor(h/4) + Mod(-floor(h/4), 7)).
    DimExpr x = sym("x");
    DimExpr f = floorDiv(sym("h"), k(4));
    DimExpr padded = f + mod(-f, k(7));
    for (const DimExpr& p : {x, f, padded}) {
        DimExpr tail = max(k(0), p - k(3));
        DimExpr head = max(k(0), p - tail);
        EXPECT_EQ(head, p - tail) << p.toString();
        EXPECT_EQ(head + tail, p) << p.toString();
        // Cropping the padded size back to the unpadded one: Min(f, P) = f as P >= f.
        EXPECT_EQ(min(f, head + tail), min(f, p));
    }
    EXPECT_EQ(min(f, padded), f);
    EXPECT_EQ(max(f, min(f, padded)), f);
}

TEST(ShapeExpr, SwinStagesStartAgainFromTheUnpaddedSize) {
    // torchvision's Swin-T per stage: pad to a multiple of 7, cut around the shift of 3, crop back
    // to the unpadded size, then (stages 1-3) patch merging halves it (pad to even, every second row). Before
    // the range rules the crop stayed a Max/Min tree that doubled per stage and passed the size cap
    // at stage 2 of 4; now each crop is the stage's input size again.
    DimExpr f = floorDiv(sym("height"), k(4));
    for (int stage = 0; stage < 4; ++stage) {
        DimExpr padded = f + mod(-f, k(7));
        DimExpr tail = max(k(0), padded - k(3));
        DimExpr head = max(k(0), padded - tail);
        DimExpr cropped = max(f, min(f, head + tail));
        ASSERT_EQ(cropped, f) << "stage " << stage << ": " << cropped.toString();
        if (stage < 3) f = floorDiv(cropped + mod(cropped, k(2)) + k(1), k(2));  // no merge after the last
    }
    // Patch merging still writes its size twice per stage (f and Mod(f, 2)): 8 copies after three.
    EXPECT_LT(f.toString().size(), 400u) << f.toString();
    EXPECT_EQ(f.evaluate({{"height", 224}}), 7);
    EXPECT_EQ(f.evaluate({{"height", 200}}), 7);
    EXPECT_EQ(f.evaluate({{"height", 101}}), 4);
}

TEST(ShapeExpr, ModOfAMultipleInsideModIsItsArgument) {
    // Mod(X, m) differs from X by a multiple of m, so by a multiple of any k dividing m.
    DimExpr h = sym("h"), w = sym("w");
    DimExpr f = floorDiv(h, k(4));
    EXPECT_EQ(mod(-mod(f, k(4)), k(4)), mod(-f, k(4)));
    EXPECT_EQ(mod(k(4) - mod(f, k(4)), k(4)).toString(), "Mod(-floor(h/4), 4)");
    EXPECT_EQ(mod(mod(h, k(8)) + w, k(4)), mod(h + w, k(4)));
    EXPECT_EQ(mod(k(3) * mod(h, k(-8)) * mod(w, k(6)), k(2)), mod(h * w, k(2)));
    EXPECT_EQ(mod(mod(h, k(8)) * mod(h, k(8)), k(4)), mod(h * h, k(4)));
    // Not when k does not divide m: Mod(Mod(h, 6), 4) is not Mod(h, 4) (h = 6 gives 0 and 2).
    EXPECT_NE(mod(mod(h, k(6)), k(4)), mod(h, k(4)));
    EXPECT_NE(mod(-mod(h, k(2)), k(4)), mod(-h, k(4)));
    for (int64_t v = 1; v <= 40; ++v)
        for (int64_t u = 1; u <= 9; ++u) {
            Bindings b{{"h", v}, {"w", u}};
            auto floorMod = [](int64_t x, int64_t m) { return ((x % m) + m) % m; };
            EXPECT_EQ(mod(-mod(f, k(4)), k(4)).evaluate(b), floorMod(-floorMod(v / 4, 4), 4));
            EXPECT_EQ(mod(mod(h, k(8)) + w, k(4)).evaluate(b), floorMod(floorMod(v, 8) + u, 4));
        }
}

TEST(ShapeExpr, FloorAndModInsideOneBlockFold) {
    DimExpr h = sym("h"), w = sym("w");
    DimExpr m3 = mod(h, k(3));  // in [0, 2]
    EXPECT_EQ(mod(m3, k(7)), m3);
    EXPECT_EQ(floorDiv(m3, k(7)), k(0));
    EXPECT_EQ(floorDiv(m3 + k(7), k(7)), k(1));
    EXPECT_EQ(mod(m3 + k(15), k(7)), m3 + k(1));
    // Symbolic divisor: 0 <= Mod(h, 3) <= 2 < w + 3.
    EXPECT_EQ(floorDiv(m3, w + k(3)), k(0));
    EXPECT_EQ(mod(m3, w + k(3)), m3);
    // Refused: Mod(h, 8) in [0, 7] spans two blocks of 5; Mod(h, 3) may reach w + 1 when w = 1.
    EXPECT_EQ(floorDiv(mod(h, k(8)), k(5)).toString(), "floor(Mod(h, 8)/5)");
    EXPECT_EQ(mod(mod(h, k(8)), k(5)).toString(), "Mod(Mod(h, 8), 5)");
    EXPECT_EQ(floorDiv(m3, w + k(1)).toString(), "floor(Mod(h, 3)/(w + 1))");
    EXPECT_EQ(floorDiv(h, k(7)).toString(), "floor(h/7)");
}

TEST(ShapeExpr, NestingPastTheSizeCapIsAnErrorNotAnExponentialWalk) {
    // Each Swin stage nests the previous one's padded size inside Max/Min/Mod; shared subterms keep
    // the DAG small but the tree (printing, parsing, lowerBound) doubles per level. Past the cap the
    // expression is refused (callers turn that into an unknown dim) instead.
    DimExpr h = DimExpr::symbol("height");
    DimExpr four = DimExpr::constant(4);
    bool refused = false;
    int level = 0;
    for (; level < 64 && !refused; ++level) {
        try {
            DimExpr padded = h + mod(-h, four);
            h = max(floorDiv(padded, DimExpr::constant(2)), min(h, padded - DimExpr::constant(2)));
        } catch (const passlens::shape::ExprError&) {
            refused = true;
        }
    }
    EXPECT_TRUE(refused) << "no cap after " << level << " levels";
    EXPECT_LT(level, 40);
    EXPECT_LT(h.toString().size(), 100000u);  // what was built before the cap still prints
}
