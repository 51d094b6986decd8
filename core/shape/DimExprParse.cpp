// Reads dim expressions in sympy's spelling (what ONNX Runtime's symbolic_shape_infer.py and
// DimExpr::toString write): + - * / // ** with integer literals, names, floor(), ceil(), Mod(),
// Min(), Max() (the last two with two or more arguments).
#include <set>
#include <unordered_map>
#include <mutex>
#include <cctype>
#include <vector>

#include "shape/DimExpr.h"

namespace passlens::shape {

namespace {

int64_t floorOf(std::string_view name, const SizeSymbols* sizeSymbols) {
    return !sizeSymbols || sizeSymbols->count(name) ? 1 : 0;
}

class Parser {
public:
    Parser(std::string_view s, const SizeSymbols* sizeSymbols) : s_(s), sizeSymbols_(sizeSymbols) {}

    std::optional<DimExpr> parseAll() {
        try {
            DimExpr e = sum();
            skipSpace();
            if (pos_ != s_.size()) return std::nullopt;
            return e;
        } catch (const ExprError&) {
            return std::nullopt;
        } catch (const Fail&) {
            return std::nullopt;
        }
    }

private:
    struct Fail {};

    void skipSpace() {
        while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    }
    bool eat(std::string_view tok) {
        skipSpace();
        if (s_.substr(pos_, tok.size()) != tok) return false;
        pos_ += tok.size();
        return true;
    }
    void expect(std::string_view tok) {
        if (!eat(tok)) throw Fail{};
    }

    DimExpr sum() {
        DimExpr e = product();
        for (;;) {
            if (eat("+")) e = e + product();
            else if (eat("-")) e = e - product();
            else return e;
        }
    }
    DimExpr product() {
        DimExpr e = unary();
        for (;;) {
            skipSpace();
            if (s_.substr(pos_, 2) == "**") return e;  // handled in power(); cannot follow here
            if (eat("*")) e = e * unary();
            else if (eat("//") || eat("/")) e = floorDiv(e, unary());
            else return e;
        }
    }
    DimExpr unary() {
        if (eat("-")) return -unary();
        if (eat("+")) return unary();
        return power();
    }
    DimExpr power() {
        DimExpr base = primary();
        if (eat("**")) {
            skipSpace();
            int64_t n = integer();
            if (n < 0 || n > 16) throw Fail{};
            DimExpr r = DimExpr::constant(1);
            for (int64_t i = 0; i < n; ++i) r = r * base;
            return r;
        }
        return base;
    }
    int64_t integer() {
        size_t start = pos_;
        int64_t v = 0;
        while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
            if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[pos_] - '0', &v)) throw Fail{};
            ++pos_;
        }
        if (pos_ == start) throw Fail{};
        return v;
    }
    std::vector<DimExpr> arguments() {
        expect("(");
        std::vector<DimExpr> args{sum()};
        while (eat(",")) args.push_back(sum());
        expect(")");
        return args;
    }
    DimExpr primary() {
        skipSpace();
        if (pos_ >= s_.size()) throw Fail{};
        char c = s_[pos_];
        if (std::isdigit(static_cast<unsigned char>(c))) return DimExpr::constant(integer());
        if (eat("(")) {
            DimExpr e = sum();
            expect(")");
            return e;
        }
        if (!(std::isalpha(static_cast<unsigned char>(c)) || c == '_')) throw Fail{};
        size_t start = pos_;
        while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' ||
                                    s_[pos_] == '.' || s_[pos_] == ':'))
            ++pos_;
        std::string_view name = s_.substr(start, pos_ - start);
        skipSpace();
        bool call = pos_ < s_.size() && s_[pos_] == '(';
        if (!call) return DimExpr::symbol(name, floorOf(name, sizeSymbols_));
        std::vector<DimExpr> args = arguments();
        if (name == "floor" && args.size() == 1) return args[0];  // the division inside already floors
        if (name == "ceil" && args.size() == 1) return ceilOf(start);
        if (name == "Mod" && args.size() == 2) return mod(args[0], args[1]);
        if ((name == "Min" || name == "Max") && args.size() >= 2) {
            DimExpr r = args[0];
            for (size_t i = 1; i < args.size(); ++i) r = name == "Min" ? min(r, args[i]) : max(r, args[i]);
            return r;
        }
        throw Fail{};
    }
    /// ceil(a/b) = -floor(-a/b): re-reads the argument as a product over a product.
    DimExpr ceilOf(size_t nameStart) {
        size_t end = pos_;
        pos_ = nameStart + 4;
        expect("(");
        DimExpr num = unary();
        while (eat("*")) num = num * unary();
        DimExpr den = DimExpr::constant(1);
        if (eat("//") || eat("/")) den = unary();
        expect(")");
        if (pos_ != end) throw Fail{};  // ceil of anything but one division is not supported
        return -floorDiv(-num, den);
    }

    std::string_view s_;
    const SizeSymbols* sizeSymbols_;
    size_t pos_ = 0;
};

}  // namespace

std::optional<DimExpr> parseDimExpr(std::string_view text, const SizeSymbols* sizeSymbols) {
    return Parser(text, sizeSymbols).parseAll();
}

DimExpr dimFromParam(std::string_view param, const SizeSymbols* sizeSymbols) {
    if (param.find_first_of(" (*/") == std::string_view::npos) return DimExpr::symbol(param, floorOf(param, sizeSymbols));
    // The engine writes its expressions back as dim_params and reads them on every analysis:
    // parse each text once (expressions are interned for the process's life anyway). The cache
    // holds the reading with every name >= 1 and the names in it, to tell when that reading holds.
    struct Parsed {
        DimExpr expr;
        std::set<std::string> symbols;
    };
    static std::mutex mutex;
    static std::unordered_map<std::string, Parsed> parsed;
    auto allSizes = [sizeSymbols](const Parsed& p) {
        if (sizeSymbols)
            for (const auto& s : p.symbols)
                if (!sizeSymbols->count(s)) return false;
        return true;
    };
    std::unique_lock lock(mutex);
    auto it = parsed.find(std::string(param));
    if (it == parsed.end()) {
        lock.unlock();
        Parsed p{parseDimExpr(param).value_or(DimExpr::symbol(param)), {}};
        p.expr.collectSymbols(p.symbols);
        lock.lock();
        if (parsed.size() >= 200000) parsed.clear();
        it = parsed.emplace(std::string(param), std::move(p)).first;
    }
    if (allSizes(it->second)) return it->second.expr;
    lock.unlock();
    // A name outside the input dims may be 0: read again with such names >= 0 (rare; not cached).
    return parseDimExpr(param, sizeSymbols).value_or(DimExpr::symbol(param, 0));
}

}  // namespace passlens::shape
