// window-type-table (shape-chain-folding): see SymbolicRewrites.h.
//
// Why it holds. A source is Range(0, N, 1) with N = n·k, k a constant window that divides N (the
// shape engine proves it) and x = i - N an index's offset from the end. Cut into windows,
// i = w·k + a (w < n, a < k), so x = (w - n)·k + a: in the last window x = a - k whatever n is, in
// every other window x <= -k - 1. A comparison of x with a constant that gives one answer for every
// x <= -k - 1 thus gives at (w, a) the answer it gives when n = 2 at (τ(w), a), τ(w) = 1 for the
// last window and 0 for the others. Elementwise functions of such comparisons and of one-element
// constants keep that, axis by axis, and so do reshapes and transposes that move whole window and
// in-window axes. So the result at any n is the result at n = 2 read at τ(w): a table of window
// types (Swin's mask: not last / last, for rows and for columns), which an edge Pad by n - 2 at
// the start of each window axis repeats (by n - 1 and a Slice of the first, when n may be 0: ONNX
// Runtime's edge Pad refuses to make an empty tensor).
//
// The proof is checked on the graph: every value between the sources and the result gets an
// abstract form (which window / in-window / whole-index axes it has, and whether it is the index,
// the offset or a function of comparisons), checked against the shape engine's dims, and the
// comparisons' constants against -k - 1. As defence in depth, the original is also evaluated at
// 1, 2 and 3 windows per axis and compared with the table, element by element.
#include <algorithm>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "eval/Interpreter.h"
#include "ir/Tensor.h"
#include "passes/LiveNodes.h"
#include "passes/ShapeCodegen.h"
#include "passes/SymbolicRewrites.h"
#include "passes/match/Match.h"

namespace passlens::passes {

using namespace passlens::ir;
using shape::DimExpr;

namespace {

constexpr int64_t kMaxElements = int64_t(1) << 22;  ///< per evaluated value, and for the table
constexpr size_t kMaxSources = 3;                     ///< 3^sources evaluations to check

enum class Role : uint8_t { Whole, Window, InWindow };
struct Seg {
    int source = 0;
    Role role = Role::Whole;
    bool operator==(const Seg&) const = default;
};
using Axis = std::vector<Seg>;  ///< row-major: the last segment varies fastest; empty = size 1

/// Index: i itself. Offset: i - N. Local: a function of comparisons of offsets and constants.
enum class Kind : uint8_t { Index, Offset, Local };
struct Form {
    Kind kind = Kind::Local;
    std::vector<Axis> axes;
};

struct Source {
    NodeId range = kNone;
    DimExpr total;                                         ///< N
    int64_t window = 0;                                    ///< k, once a reshape cuts the index
    int64_t constantUpTo = std::numeric_limits<int64_t>::max();  ///< comparisons agree for every x <= this
    NodeId tightest = kNone;                               ///< the comparison that set it
};

const std::set<std::string> kLayout{"Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity"};
const std::set<std::string> kCompare{"Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Equal"};
const std::set<std::string> kElementwise{"Add", "Sub", "Mul", "Div", "Where", "And", "Or", "Xor", "Not", "Neg",
                                         "Abs", "Cast", "Max", "Min", "Sign", "Less", "LessOrEqual",
                                         "Greater", "GreaterOrEqual", "Equal"};

bool isIntType(DataType t) { return t == DataType::Int64 || t == DataType::Int32; }

/// The one integer of a one-element int32/int64 constant.
std::optional<int64_t> intConstant(const Tensor& t) {
    if (t.elementCount() != 1 || t.byteSize() != elementSize(t.dtype)) return std::nullopt;
    if (t.dtype == DataType::Int64) return t.as<int64_t>()[0];
    if (t.dtype == DataType::Int32) return t.as<int32_t>()[0];
    return std::nullopt;
}

std::vector<Seg> flatten(const std::vector<Axis>& axes) {
    std::vector<Seg> out;
    for (const Axis& a : axes) out.insert(out.end(), a.begin(), a.end());
    return out;
}


/// Nodes reading results of sources, one connected piece each.
struct Component {
    std::vector<NodeId> nodes;  ///< topological
};

class WindowTypeTable {
public:
    WindowTypeTable(Rewriter& rw, const shape::ShapeAnalysis& a, bool captures)
        : rw_(rw), g_(rw.graph()), a_(a), captures_(captures), live_(rw.graph()) {}

    void run(const std::vector<Component>& components) {
        rw_.setRule("window-type-table");
        bool changed = false;
        for (const Component& c : components) changed = tabulate(c) || changed;
        if (changed) rw_.restoreTopologicalOrder();
    }

private:
    // ---- operands ---------------------------------------------------------------------------------
    /// The element of a one-element int tensor computed elsewhere (the padded size N), by the engine.
    std::optional<DimExpr> symbolicScalar(ValueId v) const {
        if (v == kNone || match::constantOf(g_, v) || v >= a_.values.size()) return std::nullopt;
        const shape::ValueShape& s = a_.of(v);
        auto dims = knownDims(a_, v);
        if (!dims || !s.values || s.values->size() != 1 || !(*s.values)[0] || !isIntType(s.dtype)) return std::nullopt;
        for (const DimExpr& d : *dims)
            if (d.constantValue() != 1) return std::nullopt;
        return *(*s.values)[0];
    }


    std::optional<DimExpr> segSize(const Seg& s) const {
        const Source& src = sources_[s.source];
        if (s.role == Role::Whole) return src.total;
        if (src.window < 1) return std::nullopt;
        if (s.role == Role::InWindow) return DimExpr::constant(src.window);
        return shape::floorDiv(src.total, DimExpr::constant(src.window));
    }

    std::optional<DimExpr> axisSize(const Axis& axis) const {
        DimExpr p = DimExpr::constant(1);
        for (const Seg& s : axis) {
            auto size = segSize(s);
            if (!size) return std::nullopt;
            p = p * *size;
        }
        return p;
    }

    bool fail(NodeId at, std::string why) {
        if (failedAt_ == kNone) {
            failedAt_ = at;
            failure_ = std::move(why);
        }
        return false;
    }

    /// Cuts source s's whole index after `prod` so the axis is `d`: d = prod · N/k.
    bool cut(int s, const DimExpr& prod, const DimExpr& d, const std::vector<int64_t>& windows) {
        Source& src = sources_[s];
        std::vector<int64_t> tries = src.window ? std::vector<int64_t>{src.window} : windows;
        for (int64_t k : tries) {
            if (k < 2) continue;
            const DimExpr kk = DimExpr::constant(k);
            if (shape::mod(src.total, kk).constantValue() != 0 || prod * shape::floorDiv(src.total, kk) != d) continue;
            src.window = k;
            return true;
        }
        return false;
    }

    /// A row-major reshape of `in` to `dims` when it moves whole segments (and cuts a whole index
    /// into windows of a k among the constant dims).
    std::optional<std::vector<Axis>> regroup(const std::vector<Axis>& in, const std::vector<DimExpr>& dims) {
        std::deque<Seg> rest;
        for (const Seg& s : flatten(in)) rest.push_back(s);
        std::vector<int64_t> windows;
        for (const DimExpr& d : dims)
            if (d.constantValue().value_or(0) > 1) windows.push_back(*d.constantValue());
        std::vector<Axis> out;
        for (const DimExpr& d : dims) {
            Axis axis;
            DimExpr prod = DimExpr::constant(1);
            while (prod != d) {
                if (rest.empty() || axis.size() > 8) return std::nullopt;
                if (d.constantValue() && prod.constantValue() && *prod.constantValue() > *d.constantValue()) return std::nullopt;
                const Seg s = rest.front();
                rest.pop_front();
                if (s.role == Role::Whole && prod * sources_[s.source].total != d && cut(s.source, prod, d, windows)) {
                    axis.push_back({s.source, Role::Window});
                    rest.push_front({s.source, Role::InWindow});
                    prod = prod * *segSize(axis.back());
                    continue;
                }
                auto size = segSize(s);
                if (!size) return std::nullopt;
                axis.push_back(s);
                prod = prod * *size;
            }
            out.push_back(std::move(axis));
        }
        if (!rest.empty()) return std::nullopt;
        return out;
    }

    /// Numpy broadcasting of operands' axes: an axis is 1 (no segments) or the same segments.
    static std::optional<std::vector<Axis>> broadcast(const std::vector<std::vector<Axis>>& operands) {
        size_t rank = 0;
        for (const auto& o : operands) rank = std::max(rank, o.size());
        std::vector<Axis> out(rank);
        for (const auto& o : operands)
            for (size_t k = 0; k < o.size(); ++k) {
                Axis& target = out[rank - o.size() + k];
                if (o[k].empty()) continue;
                if (!target.empty() && target != o[k]) return std::nullopt;
                target = o[k];
            }
        return out;
    }

    // ---- the abstract forms ---------------------------------------------------------------------------
    bool interpret(const Component& c) {
        for (NodeId id : c.nodes)
            if (!step(id)) return false;
        for (size_t s = 0; s < sources_.size(); ++s) {
            const Source& src = sources_[s];
            const std::string range = g_.node(src.range).displayName();
            if (src.window == 0) return fail(src.range, range + "'s index is never cut into windows");
            if (src.constantUpTo < -src.window - 1)
                return fail(src.tightest, g_.node(src.tightest).displayName() + " compares the offset from the end of " + range +
                                              " with a constant that separates windows other than the last (window " +
                                              std::to_string(src.window) + ")");
            for (size_t t = 0; t < s; ++t)
                if (sources_[t].total == src.total && sources_[t].window != src.window)
                    return fail(src.range, range + " and " + g_.node(sources_[t].range).displayName() +
                                               " count the same size in windows of different sizes");
        }
        return true;
    }

    bool step(NodeId id) {
        const Node& n = g_.node(id);
        const ValueId out = n.outputs[0];
        const std::string name = n.displayName();
        auto dims = knownDims(a_, out);
        if (!dims) return fail(id, "the shape engine does not know the dims of " + name + "'s result");
        try {
            std::optional<Form> made = formOf(id, *dims);
            if (!made) return fail(id, failure_.empty() ? name + " is not a window label step" : failure_);
            // The engine's dims are the truth at every binding: the form must agree with them.
            if (made->axes.size() != dims->size()) return fail(id, name + "'s result has another rank than its form");
            for (size_t k = 0; k < dims->size(); ++k) {
                auto size = axisSize(made->axes[k]);
                if (!size || *size != (*dims)[k])
                    return fail(id, name + "'s dim " + std::to_string(k) + " is not the product of its window axes");
            }
            forms_[out] = std::move(*made);
            return true;
        } catch (const shape::ExprError&) {
            return fail(id, name + ": size arithmetic overflows");
        }
    }

    std::optional<Form> formOf(NodeId id, const std::vector<DimExpr>& dims) {
        const Node& n = g_.node(id);
        const std::string name = n.displayName();
        if (n.opType == "Range") {
            auto total = symbolicScalar(n.inputs[1]);
            if (!total || dims.size() != 1 || dims[0] != *total)
                return failWith(id, name + "'s length is not a size the shape engine knows as its dim");
            sources_.push_back(Source{id, *total, 0, std::numeric_limits<int64_t>::max(), kNone});
            return Form{Kind::Index, {{Seg{int(sources_.size()) - 1, Role::Whole}}}};
        }
        const Form* data = formOfInput(n.inputs[0]);
        if (kLayout.count(n.opType)) {
            if (!data) return std::nullopt;
            for (size_t k = 1; k < n.inputs.size(); ++k)
                if (n.inputs[k] != kNone && !match::constantOf(g_, n.inputs[k]))
                    return failWith(id, name + "'s shape input is computed");
            auto axes = regroup(data->axes, dims);
            if (!axes) return failWith(id, name + " splits or merges window axes other than by whole windows");
            return Form{data->kind, std::move(*axes)};
        }
        if (n.opType == "Transpose") {
            if (!data) return std::nullopt;
            const size_t rank = data->axes.size();
            std::vector<int64_t> perm = n.attrInts("perm");
            if (!n.attr("perm"))
                for (size_t k = 0; k < rank; ++k) perm.push_back(int64_t(rank - 1 - k));
            std::vector<int64_t> sorted = perm;
            std::sort(sorted.begin(), sorted.end());
            for (size_t k = 0; k < sorted.size(); ++k)
                if (sorted[k] != int64_t(k)) sorted.clear();
            if (perm.size() != rank || sorted.size() != rank) return failWith(id, name + " has an invalid perm");
            Form f{data->kind, {}};
            for (int64_t p : perm) f.axes.push_back(data->axes[p]);
            return f;
        }
        // x = i - N: the offset from the end.
        if (n.opType == "Sub" && data && data->kind == Kind::Index) {
            auto total = n.inputs.size() == 2 ? symbolicScalar(n.inputs[1]) : std::nullopt;
            const std::vector<Seg> segs = flatten(data->axes);
            if (segs.empty()) return std::nullopt;
            const int s = segs.front().source;
            if (!total || *total != sources_[s].total)
                return failWith(id, name + " subtracts from " + g_.node(sources_[s].range).displayName() +
                                        "'s index something other than its length");
            auto axes = broadcast({data->axes, std::vector<Axis>(knownDims(a_, n.inputs[1])->size())});
            if (!axes) return std::nullopt;
            return Form{Kind::Offset, std::move(*axes)};
        }
        if (kCompare.count(n.opType)) {
            if (auto f = comparisonOfOffset(id)) return f;
            if (failedAt_ != kNone) return std::nullopt;
        }
        if (!kElementwise.count(n.opType)) return failWith(id, name + " (" + n.opType + ") is not elementwise");
        std::vector<std::vector<Axis>> operands;
        for (ValueId v : n.inputs) {
            if (v == kNone) return failWith(id, name + " has an omitted input");
            if (const Form* f = formOfInput(v)) {
                if (f->kind == Kind::Index) return failWith(id, name + " reads the index of a Range itself");
                if (f->kind == Kind::Offset)
                    return failWith(id, name + " reads the offset i - N other than in a comparison with a constant");
                operands.push_back(f->axes);
            } else if (TensorPtr t = match::constantOf(g_, v); t && t->elementCount() == 1) {
                operands.push_back(std::vector<Axis>(t->dims.size()));
            } else {
                return failWith(id, name + " reads '" + g_.value(v).name + "', which is neither a window label nor a one-element constant");
            }
        }
        auto axes = broadcast(operands);
        if (!axes) return failWith(id, name + " lines up different window axes");
        return Form{Kind::Local, std::move(*axes)};
    }

    /// A comparison of an offset with a constant: one answer for every x <= the bound recorded.
    std::optional<Form> comparisonOfOffset(NodeId id) {
        const Node& n = g_.node(id);
        if (n.inputs.size() != 2 || n.inputs[0] == kNone || n.inputs[1] == kNone) return std::nullopt;
        int slot = -1;
        for (int k = 0; k < 2; ++k) {
            const Form* f = formOfInput(n.inputs[k]);
            if (f && f->kind == Kind::Offset) slot = k;
        }
        if (slot < 0) return std::nullopt;
        const Form& x = *formOfInput(n.inputs[slot]);
        if (flatten(x.axes).empty()) return failWith(id, n.displayName() + " compares an offset with no index axis");
        TensorPtr t = match::constantOf(g_, n.inputs[1 - slot]);
        std::optional<int64_t> c = t ? intConstant(*t) : std::nullopt;
        if (!c) return failWith(id, n.displayName() + " compares the offset i - N with something other than a one-element integer constant");
        std::string op = n.opType;
        if (slot == 1) {  // c < x is x > c
            static const std::map<std::string, std::string> kFlip{{"Less", "Greater"}, {"Greater", "Less"},
                                                                 {"LessOrEqual", "GreaterOrEqual"},
                                                                 {"GreaterOrEqual", "LessOrEqual"}, {"Equal", "Equal"}};
            op = kFlip.at(op);
        }
        // x < c, x >= c and x == c agree for every x < c; x > c and x <= c for every x <= c.
        const int64_t lowest = std::numeric_limits<int64_t>::min();
        const int64_t bound = (op == "Greater" || op == "LessOrEqual") ? *c : (*c == lowest ? lowest : *c - 1);
        Source& src = sources_[flatten(x.axes).front().source];
        if (bound < src.constantUpTo) {
            src.constantUpTo = bound;
            src.tightest = id;
        }
        auto axes = broadcast({x.axes, std::vector<Axis>(t->dims.size())});
        if (!axes) return std::nullopt;
        return Form{Kind::Local, std::move(*axes)};
    }

    std::optional<Form> failWith(NodeId id, std::string why) {
        fail(id, std::move(why));
        return std::nullopt;
    }

    const Form* formOfInput(ValueId v) const {
        auto it = v == kNone ? forms_.end() : forms_.find(v);
        return it == forms_.end() ? nullptr : &it->second;
    }

    // ---- evaluation -------------------------------------------------------------------------------------
    /// Elements of a value of this form at `counts` windows per source.
    int64_t elementsAt(const Form& f, const std::vector<int64_t>& counts) const {
        int64_t e = 1;
        for (const Seg& s : flatten(f.axes)) {
            const Source& src = sources_[s.source];
            const int64_t size = s.role == Role::Window ? counts[s.source]
                                 : s.role == Role::InWindow ? src.window
                                                            : counts[s.source] * src.window;
            if (size > 0 && e > kMaxElements / size) return kMaxElements + 1;
            e *= size;
        }
        return e;
    }

    /// The value of `target` with counts[s] windows per source s, by the interpreter.
    TensorPtr evaluate(const std::vector<NodeId>& cone, ValueId target, const std::vector<int64_t>& counts) const {
        std::unordered_map<ValueId, TensorPtr> env;
        try {
            for (NodeId id : cone) {
                const Node& n = g_.node(id);
                if (elementsAt(forms_.at(n.outputs[0]), counts) > kMaxElements) return nullptr;
                std::vector<TensorPtr> inputs;
                for (ValueId v : n.inputs) {
                    if (v == kNone) inputs.push_back(nullptr);
                    else if (auto it = env.find(v); it != env.end()) inputs.push_back(it->second);
                    else if (TensorPtr t = match::constantOf(g_, v)) inputs.push_back(t);
                    else if (TensorPtr t = sizeAt(v, counts)) inputs.push_back(t);
                    else return nullptr;
                }
                auto outs = eval::evalNode(rw_.model(), g_, id, inputs);
                if (outs.size() != 1 || !outs[0]) return nullptr;
                env[n.outputs[0]] = outs[0];
            }
        } catch (const std::exception&) {
            return nullptr;
        }
        auto it = env.find(target);
        return it == env.end() ? nullptr : it->second;
    }

    /// A source's length N = count · k as the tensor `v` holds it.
    TensorPtr sizeAt(ValueId v, const std::vector<int64_t>& counts) const {
        auto e = symbolicScalar(v);
        auto dims = knownDims(a_, v);
        if (!e || !dims) return nullptr;
        const std::vector<int64_t> shape(dims->size(), 1);
        for (size_t s = 0; s < sources_.size(); ++s) {
            if (sources_[s].total != *e) continue;
            const int64_t total = counts[s] * sources_[s].window;
            if (a_.of(v).dtype == DataType::Int32)
                return makeTensorOf<int32_t>(DataType::Int32, shape, {int32_t(total)});
            return makeTensorOf<int64_t>(DataType::Int64, shape, {total});
        }
        return nullptr;
    }

    /// The component's nodes that `v` depends on, in order.
    std::vector<NodeId> coneOf(const Component& c, ValueId v) const {
        std::set<ValueId> needed{v};
        std::vector<NodeId> cone;
        for (auto it = c.nodes.rbegin(); it != c.nodes.rend(); ++it) {
            const Node& n = g_.node(*it);
            if (!needed.count(n.outputs[0])) continue;
            cone.push_back(*it);
            for (ValueId in : n.inputs)
                if (in != kNone) needed.insert(in);
        }
        std::reverse(cone.begin(), cone.end());
        return cone;
    }

    /// The table read at τ: element by element, the original at `counts` windows per source.
    bool matchesTable(const Form& f, const Tensor& table, const Tensor& got, const std::vector<int64_t>& counts) const {
        const std::vector<Seg> segs = flatten(f.axes);
        std::vector<int64_t> sizes, tableSizes;
        for (const Seg& s : segs) {
            const int64_t k = sources_[s.source].window;
            sizes.push_back(s.role == Role::Window ? counts[s.source] : k);
            tableSizes.push_back(s.role == Role::Window ? 2 : k);
        }
        // The dims the original made: each axis the product of its segments at these counts.
        std::vector<int64_t> dims;
        size_t at = 0;
        for (const Axis& axis : f.axes) {
            int64_t d = 1;
            for (size_t k = 0; k < axis.size(); ++k) d *= sizes[at++];
            dims.push_back(d);
        }
        if (got.dims != dims || got.dtype != table.dtype) return false;
        const size_t es = elementSize(got.dtype);
        const int64_t count = got.elementCount();
        if (es == 0 || got.byteSize() != size_t(count) * es) return false;
        std::vector<int64_t> digit(segs.size(), 0);
        for (int64_t e = 0; e < count; ++e) {
            int64_t t = 0;
            for (size_t k = 0; k < segs.size(); ++k) {
                int64_t d = digit[k];
                if (segs[k].role == Role::Window) d = d == counts[segs[k].source] - 1 ? 1 : 0;
                t = t * tableSizes[k] + d;
            }
            if (std::memcmp(got.as<char>() + e * es, table.as<char>() + t * es, es) != 0) return false;
            for (size_t k = segs.size(); k-- > 0;) {
                if (++digit[k] < sizes[k]) break;
                digit[k] = 0;
            }
        }
        return true;
    }

    // ---- the rewrite ----------------------------------------------------------------------------------
    /// One axis of the Pad: a window axis of a source, or a run of in-window / size-1 axes.
    struct Piece {
        int64_t size = 1;
        int source = -1;  ///< >= 0 for a window axis
    };

    bool tabulate(const Component& c) {
        sources_.clear();
        forms_.clear();
        failedAt_ = kNone;
        failure_.clear();
        const bool remark = looksLikeLabels(c);
        if (!interpret(c)) {
            if (remark) rw_.missed({failedAt_}, "not rewritten: " + failure_);
            return false;
        }
        if (sources_.size() > kMaxSources) return false;
        // The results read outside: the masks.
        // Every table is made before any rewrite: a mask's cone may hold another one.
        std::set<NodeId> inside(c.nodes.begin(), c.nodes.end());
        std::vector<Table> tables;
        for (NodeId id : c.nodes) {
            const ValueId v = g_.node(id).outputs[0];
            bool readOutside = g_.value(v).isGraphOutput || (captures_ && rw_.isCapturedBySubgraph(v));
            for (NodeId r : g_.value(v).consumers) readOutside = readOutside || (!inside.count(r) && live_.live(r));
            const Form& f = forms_.at(v);
            if (!readOutside || f.kind != Kind::Local) continue;
            std::string why;
            if (auto t = tableOf(c, id, f, why)) tables.push_back(std::move(*t));
            else if (remark && !why.empty()) rw_.missed({id}, "not rewritten: " + why);
        }
        bool changed = false;
        for (const Table& t : tables) {
            std::string why;
            bool replaced = false;
            try {
                replaced = replace(c, t, why);
            } catch (const shape::ExprError&) {
                why = "size arithmetic overflows";
            }
            if (replaced) changed = true;
            else if (remark && !why.empty()) rw_.missed({t.producer}, "not rewritten: " + why);
        }
        return changed;
    }

    /// A mask and its value at 2 windows per source, checked at 1 to 3.
    struct Table {
        NodeId producer = kNone;
        int windowAxis = -1;
        TensorPtr values;
    };

    std::optional<Table> tableOf(const Component& c, NodeId producer, const Form& f, std::string& why) const {
        const ValueId out = g_.node(producer).outputs[0];
        const std::string name = g_.node(producer).displayName();
        // Where the window axes are: in one axis of the result, never a whole index.
        int windowAxis = -1;
        for (size_t k = 0; k < f.axes.size(); ++k)
            for (const Seg& s : f.axes[k]) {
                if (s.role == Role::Whole) return (why = name + " has an index not cut into windows"), std::nullopt;
                if (s.role != Role::Window) continue;
                if (windowAxis >= 0 && windowAxis != int(k)) return (why = name + " has windows on two axes"), std::nullopt;
                windowAxis = int(k);
            }
        if (windowAxis < 0) return std::nullopt;  // the same at every size: constant folding's business
        const std::vector<int64_t> two(sources_.size(), 2);
        const std::vector<NodeId> cone = coneOf(c, out);
        if (elementsAt(f, two) > kMaxElements / 4) return (why = name + " would make a table of too many elements"), std::nullopt;
        TensorPtr table = evaluate(cone, out, two);
        if (!table) return (why = "the interpreter cannot evaluate " + name + " at two windows per axis"), std::nullopt;
        if (!checkedAtSmallSizes(f, cone, out, *table)) {
            why = name + " at 1 to 3 windows per axis differs from its table of window types";
            return std::nullopt;
        }
        return Table{producer, windowAxis, table};
    }

    /// Worth a remark when refused: some comparison tests a computed value against a constant.
    bool looksLikeLabels(const Component& c) const {
        for (NodeId id : c.nodes) {
            const Node& n = g_.node(id);
            if (kCompare.count(n.opType) && n.inputs.size() == 2 &&
                (match::constantOf(g_, n.inputs[0]) || match::constantOf(g_, n.inputs[1])))
                return true;
        }
        return false;
    }

    bool replace(const Component& c, const Table& t, std::string& why) {
        const NodeId producer = t.producer;
        const ValueId out = g_.node(producer).outputs[0];
        const std::string name = g_.node(producer).displayName();
        const Form& f = forms_.at(out);
        const int windowAxis = t.windowAxis;
        const TensorPtr& table = t.values;
        // The Pad's axes: each window axis alone, the rest in runs.
        std::vector<Piece> pieces;
        std::vector<int64_t> target;
        bool needReshape = false;
        for (size_t k = 0; k < f.axes.size(); ++k) {
            int64_t size = 1;
            for (const Seg& s : f.axes[k]) size *= sources_[s.source].window;
            if (int(k) != windowAxis) {
                pieces.push_back(Piece{size, -1});
                target.push_back(size);
                continue;
            }
            target.push_back(-1);
            size_t first = pieces.size();
            for (const Seg& s : f.axes[k]) {
                if (s.role == Role::Window) pieces.push_back(Piece{2, s.source});
                else if (pieces.size() > first && pieces.back().source < 0) pieces.back().size *= sources_[s.source].window;
                else pieces.push_back(Piece{sources_[s.source].window, -1});
            }
            needReshape = pieces.size() - first > 1;
        }
        // An edge Pad cannot make an empty tensor in ONNX Runtime: pad by n - 1 and slice off the first
        // when some window count may be 0.
        bool mayBeEmpty = false;
        std::vector<DimExpr> counts(sources_.size());
        for (size_t s = 0; s < sources_.size(); ++s) {
            counts[s] = shape::floorDiv(sources_[s].total, DimExpr::constant(sources_[s].window));
            mayBeEmpty = mayBeEmpty || counts[s].lowerBound().value_or(0) < 1;
        }
        std::vector<DimExpr> pads(2 * pieces.size(), DimExpr::constant(0));
        std::vector<int64_t> sliced;
        for (size_t k = 0; k < pieces.size(); ++k)
            if (pieces[k].source >= 0) {
                pads[k] = counts[pieces[k].source] - DimExpr::constant(mayBeEmpty ? 1 : 2);
                sliced.push_back(int64_t(k));
            }
        ShapeCodegen codegen = codegenFor(c);
        ShapeCodegen::Request request{pads, false, position_.at(producer), {}};
        auto padCost = codegen.cost({request});
        if (!padCost) return (why = "the window counts of " + name + " cannot be read from dims computed before it"), false;
        const size_t added = *padCost + 1 + (mayBeEmpty ? 1 : 0) + (needReshape ? 1 : 0);
        const size_t removed = exclusiveNodes(rw_, live_, {producer}, captures_);
        if (added >= removed) {
            why = "the table of window types would add " + std::to_string(added) + " nodes where " + name + " frees " +
                  std::to_string(removed);
            return false;
        }
        std::string windows;
        for (const Piece& p : pieces)
            if (p.source >= 0) windows += std::string(windows.empty() ? "" : " x ") + std::to_string(sources_[p.source].window);
        const std::string reason = name + " is alike in every window but the last of each axis (windows of " + windows +
                                   "): each comparison of an index's offset from the end gives one answer in all the "
                                   "others, so it is its table at 2 windows per axis (checked at 1 to 3) repeated by an edge Pad";
        std::vector<int64_t> tableDims;
        for (const Piece& p : pieces) tableDims.push_back(p.size);
        const ValueId tableValue = rw_.newInitializer(
            "window_types", makeTensor(table->dtype, tableDims, table->data.data(), table->byteSize()));
        const ValueId padsValue = codegen.emit(rw_, request, g_.value(out).name + "_window_pads", reason, {producer});
        if (padsValue == kNone) return (why = "the window counts of " + name + " could not be built"), false;
        const DataType dtype = table->dtype;
        const bool last = !mayBeEmpty && !needReshape;
        ValueId padded = last ? out : rw_.newValue(g_.value(out).name + "_types", TypeInfo::tensor(dtype));
        std::vector<NodeId> made;
        const Attribute edge = Attribute::makeString("mode", "edge");
        if (last) made.push_back(rw_.replaceNodes({producer}, "Pad", {tableValue, padsValue}, {out}, {edge}, reason, name));
        else made.push_back(rw_.addNode("Pad", {tableValue, padsValue}, {padded}, {edge}, {producer}, reason, name + "_types"));
        if (mayBeEmpty) {
            auto ints = [&](const std::string& hint, std::vector<int64_t> v) {
                return rw_.newInitializer(hint, makeTensorOf<int64_t>(DataType::Int64, {int64_t(v.size())}, v));
            };
            const std::vector<ValueId> in{padded, ints("window_types_start", std::vector<int64_t>(sliced.size(), 1)),
                                          ints("window_types_end", std::vector<int64_t>(sliced.size(), std::numeric_limits<int64_t>::max())),
                                          ints("window_types_axes", sliced)};
            if (!needReshape) {
                made.push_back(rw_.replaceNodes({producer}, "Slice", in, {out}, {}, reason, name));
            } else {
                padded = rw_.newValue(g_.value(out).name + "_types", TypeInfo::tensor(dtype));
                made.push_back(rw_.addNode("Slice", in, {padded}, {}, {producer}, reason, name + "_types"));
            }
        }
        if (needReshape) {
            const ValueId shapeValue =
                rw_.newInitializer("window_types_shape", makeTensorOf<int64_t>(DataType::Int64, {int64_t(target.size())}, target));
            made.push_back(rw_.replaceNodes({producer}, "Reshape", {padded, shapeValue}, {out}, {}, reason, name));
        }
        rw_.applied(made, reason);
        return true;
    }

    /// Defence in depth: the original at 1, 2 and 3 windows per source is the table read at τ.
    bool checkedAtSmallSizes(const Form& f, const std::vector<NodeId>& cone, ValueId out, const Tensor& table) const {
        const size_t n = sources_.size();
        std::vector<int64_t> counts(n, 1);
        for (;;) {
            bool consistent = true;  // sources of one length have one count
            for (size_t s = 0; s < n; ++s)
                for (size_t t = 0; t < s; ++t)
                    if (sources_[s].total == sources_[t].total && counts[s] != counts[t]) consistent = false;
            if (consistent) {
                TensorPtr got = evaluate(cone, out, counts);
                if (!got || !matchesTable(f, table, *got, counts)) return false;
            }
            size_t k = 0;
            while (k < n && ++counts[k] > 3) counts[k++] = 1;
            if (k == n) return true;
        }
    }

    /// Dims of values before the result, outside the component, as leaves for the pads.
    ShapeCodegen codegenFor(const Component& c) {
        ShapeCodegen codegen(rw_.model().opsetFor(""));
        const std::set<NodeId> inside(c.nodes.begin(), c.nodes.end());
        position_.clear();
        const std::vector<NodeId>& order = g_.nodeOrder();
        for (size_t i = 0; i < order.size(); ++i) position_[order[i]] = int64_t(i);
        // Dims of tensors, and int64 vectors computed already (the window counts the partition's
        // Reshape target is made of are read as they are, not computed again).
        auto add = [&](ValueId v, int64_t position) {
            if (v == kNone || v >= a_.values.size() || g_.value(v).initializer) return;
            const shape::ValueShape& s = a_.of(v);
            if (s.dims && !s.values) codegen.addSource(v, position, *s.dims);
            else if (auto e = knownElements(g_, a_, v); e && s.dims && s.dims->size() == 1) codegen.addExistingVector(v, position, *e);
        };
        for (ValueId v : g_.inputs()) add(v, -1);
        for (size_t i = 0; i < order.size(); ++i)
            if (!inside.count(order[i]) && live_.live(order[i]))
                for (ValueId o : g_.node(order[i]).outputs) add(o, int64_t(i));
        return codegen;
    }

    Rewriter& rw_;
    const Graph& g_;
    const shape::ShapeAnalysis& a_;
    bool captures_;
    Liveness live_;
    std::vector<Source> sources_;
    std::unordered_map<ValueId, Form> forms_;
    NodeId failedAt_ = kNone;
    std::string failure_;
    std::unordered_map<NodeId, int64_t> position_;
};

/// Range(0, N, 1) over int64 or int32 with N computed (a symbolic size).
bool isSource(const Graph& g, const Node& n) {
    if (n.opType != "Range" || !match::inDefaultDomain(n) || n.inputs.size() != 3 || n.outputs.size() != 1) return false;
    for (ValueId v : n.inputs)
        if (v == kNone) return false;
    TensorPtr start = match::constantOf(g, n.inputs[0]), delta = match::constantOf(g, n.inputs[2]);
    return start && delta && isIntType(start->dtype) && intConstant(*start) == 0 && intConstant(*delta) == 1 &&
           !match::constantOf(g, n.inputs[1]);
}

bool isStep(const Node& n) {
    return match::inDefaultDomain(n) && !n.hasSubgraphs() && n.outputs.size() == 1 && n.outputs[0] != kNone &&
           !n.inputs.empty() && (kLayout.count(n.opType) || kElementwise.count(n.opType) || n.opType == "Transpose");
}

/// Sources and the steps that read them (and only them, constants and one-element integers), in
/// connected pieces.
std::vector<Component> componentsOf(const Graph& g) {
    std::unordered_map<NodeId, NodeId> parent;
    auto root = [&](NodeId n) {
        while (parent[n] != n) n = parent[n] = parent[parent[n]];
        return n;
    };
    std::vector<NodeId> members;
    for (NodeId id : g.nodeOrder()) {
        const Node& n = g.node(id);
        if (isSource(g, n)) {
            parent[id] = id;
            members.push_back(id);
            continue;
        }
        if (!isStep(n)) continue;
        std::vector<NodeId> joined;
        bool ok = true;
        for (ValueId v : n.inputs) {
            if (v == kNone) continue;
            const NodeId p = g.value(v).producer;
            if (p != kNone && parent.count(p)) joined.push_back(p);
            else if (!match::constantOf(g, v) && g.value(v).type.isTensor() && !isIntType(g.value(v).type.elemType)) ok = false;
        }
        if (!ok || joined.empty()) continue;
        parent[id] = id;
        members.push_back(id);
        for (NodeId p : joined) parent[root(p)] = id;
    }
    std::map<NodeId, Component> byRoot;
    for (NodeId id : members) byRoot[root(id)].nodes.push_back(id);
    std::vector<Component> out;
    for (auto& entry : byRoot) out.push_back(std::move(entry.second));
    return out;
}

}  // namespace

void tabulateWindowTypes(Rewriter& rw, bool captures) {
    // Pad's pads input (11).
    if (rw.model().opsetFor("") < 11) return;
    std::vector<Component> components = componentsOf(rw.graph());
    if (components.empty()) return;
    const shape::ShapeAnalysis a = shape::analyzeShapes(rw.graph(), &rw.model());
    WindowTypeTable(rw, a, captures).run(components);
}

}  // namespace passlens::passes
