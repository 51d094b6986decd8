#include "eval/Interpreter.h"
#include "eval/Verify.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <unordered_map>

#include "eval/Kernel.h"
#include "eval/MemoryBudget.h"
#include "ir/Error.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

/// Values of one graph run; outer-scope reads go to the enclosing scope by name.
struct Scope {
    const Graph& g;
    const Scope* parent = nullptr;
    std::vector<TensorPtr> vals;

    Scope(const Graph& graph, const Scope* p) : g(graph), parent(p), vals(graph.valueIdLimit()) {}

    TensorPtr lookup(ValueId v) const {
        if (vals[v]) return vals[v];
        const Value& val = g.value(v);
        if (val.initializer) return val.initializer;
        return parent ? parent->lookupName(val.name) : nullptr;
    }
    TensorPtr lookupName(const std::string& name) const {
        if (auto id = g.findValue(name)) {
            const Value& val = g.value(*id);
            if (vals[*id]) return vals[*id];
            if (val.initializer) return val.initializer;
        }
        return parent ? parent->lookupName(name) : nullptr;
    }
};

std::string domainName(const std::string& d) { return d.empty() ? "ai.onnx" : d; }

class Executor {
public:
    Executor(const Model& m, const RunOptions* o) : m_(m), opts_(o) {}

    int64_t opsetFor(const std::string& domain) const {
        const std::string d = canonicalDomain(domain);
        if (opsets_)
            for (const auto& oi : *opsets_)
                if (canonicalDomain(oi.domain) == d) return oi.version;
        int64_t v = m_.opsetFor(d);
        if (v == 0 && d == "ai.onnx.ml") v = 1;
        return v;
    }

    std::vector<TensorPtr> runGraph(const Graph& g, const std::vector<TensorPtr>& inputs, const Scope* parent,
                                    bool topLevel) {
        Scope scope(g, parent);
        bindInputs(g, scope, inputs, topLevel);
        auto order = g.topologicalOrder();
        if (!order) throwBadInput("graph '" + g.name + "' has a cycle");
        // Last reader of each value, so intermediates can be freed early.
        std::vector<int64_t> lastUse(g.valueIdLimit(), -1);
        for (size_t i = 0; i < order->size(); ++i)
            for (ValueId v : g.readsOf((*order)[i])) lastUse[v] = static_cast<int64_t>(i);
        for (ValueId v : g.outputs()) lastUse[v] = std::numeric_limits<int64_t>::max();

        for (size_t i = 0; i < order->size(); ++i) {
            if (opts_ && opts_->cancel && opts_->cancel->load()) throw Error(ErrorKind::Cancelled, "run cancelled");
            const Node& n = g.node((*order)[i]);
            std::vector<TensorPtr> ins;
            ins.reserve(n.inputs.size());
            for (ValueId v : n.inputs) {
                if (v == kNone) { ins.push_back(nullptr); continue; }
                auto t = scope.lookup(v);
                // An empty name marks an omitted optional input in ONNX files.
                if (!t && !g.value(v).name.empty())
                    throwBadInput("node " + n.displayName() + " reads '" + g.value(v).name + "', which has no value");
                ins.push_back(std::move(t));
            }
            auto outs = runNodeNamed(g, n, std::move(ins), &scope);
            for (size_t k = 0; k < n.outputs.size(); ++k) {
                if (n.outputs[k] == kNone) continue;
                if (k >= outs.size() || !outs[k]) {
                    if (g.value(n.outputs[k]).name.empty()) continue;
                    throwUnsupported("node " + n.displayName() + " (" + n.opType + "): optional output " + std::to_string(k) +
                                     " is not produced by the interpreter");
                }
                if (trace_) std::fprintf(stderr, "[eval] %s %s -> %s %s\n", n.opType.c_str(), n.displayName().c_str(),
                                         g.value(n.outputs[k]).name.c_str(), shapeText(outs[k]->dims).c_str());
                scope.vals[n.outputs[k]] = std::move(outs[k]);
            }
            for (ValueId v : g.readsOf(n.id))
                if (lastUse[v] == static_cast<int64_t>(i)) scope.vals[v].reset();
            if (topLevel && opts_ && opts_->progress) opts_->progress(i + 1, order->size());
        }
        std::vector<TensorPtr> result;
        for (ValueId v : g.outputs()) {
            auto t = scope.lookup(v);
            if (!t) throwBadInput("graph output '" + g.value(v).name + "' has no value");
            result.push_back(std::move(t));
        }
        return result;
    }

    /// runNode, with the node named in any error that does not name it yet.
    std::vector<TensorPtr> runNodeNamed(const Graph& g, const Node& n, std::vector<TensorPtr> ins, const Scope* scope) {
        try {
            return runNode(g, n, std::move(ins), scope);
        } catch (const Error& e) {
            const std::string msg = e.what();
            if (e.kind() == ErrorKind::Cancelled || msg.find(n.displayName()) != std::string::npos) throw;
            throw Error(e.kind(), "node '" + n.displayName() + "' (" + n.opType + "): " + msg);
        }
    }

    std::vector<TensorPtr> runNode(const Graph& g, const Node& n, std::vector<TensorPtr> ins, const Scope* scope) {
        const std::string domain = canonicalDomain(n.domain);
        const int64_t opset = opsetFor(domain);
        const KernelInfo* k = kernelRegistry().find(domain, n.opType, opset);
        if (!k) {
            if (const Function* f = m_.findFunction(n.domain, n.opType)) return runFunction(*f, n, ins, scope);
            if (const Function* f = m_.findFunction(domain, n.opType)) return runFunction(*f, n, ins, scope);
            throwUnsupported("op '" + n.opType + "' (domain '" + domainName(domain) + "', opset " + std::to_string(opset) +
                             ") is not supported by the interpreter (node " + n.displayName() + ")");
        }
        std::string why;
        if (k->check && !k->check(n, opset, &why))
            throwUnsupported("op '" + n.opType + "' (domain '" + domainName(domain) + "', opset " + std::to_string(opset) +
                             "), node " + n.displayName() + ": " + why);
        bool half = false;
        if (k->float16ViaFloat)
            for (auto& t : ins)
                if (t && t->dtype == DataType::Float16) {
                    t = castTensor(*t, DataType::Float);
                    half = true;
                }
        if (!k->types.empty() && !ins.empty() && ins[0]) {
            DataType dt = half && ins[0]->dtype == DataType::Float ? DataType::Float16 : ins[0]->dtype;
            if (std::find(k->types.begin(), k->types.end(), dt) == k->types.end())
                throwUnsupported("op '" + n.opType + "' (domain '" + domainName(domain) + "', opset " + std::to_string(opset) +
                                 "), node " + n.displayName() + ": element type " + std::string(dataTypeName(dt)) +
                                 " is not supported");
        }
        KernelContext ctx{m_, n, opset, std::move(ins), {}};
        ctx.runSubgraph = [this, scope](const Graph& body, const std::vector<TensorPtr>& args) {
            return runGraph(body, args, scope, false);
        };
        auto outs = k->fn(ctx);
        if (half)
            for (auto& t : outs)
                if (t && t->dtype == DataType::Float) t = castTensor(*t, DataType::Float16);
        (void)g;
        return outs;
    }

    std::vector<TensorPtr> runFunction(const Function& f, const Node& call, const std::vector<TensorPtr>& ins,
                                       const Scope* scope) {
        if (!f.body) throwBadInput("function '" + f.name + "' has no body");
        // Import rejects recursive functions; graphs built in code get a clear error, not a stack overflow.
        if (callDepth_ >= kMaxCallDepth)
            throwBadInput("function '" + f.name + "' is called more than " + std::to_string(kMaxCallDepth) + " levels deep (recursion?)");
        struct DepthGuard {
            int& d;
            explicit DepthGuard(int& depth) : d(depth) { ++d; }
            ~DepthGuard() { --d; }
        } depthGuard(callDepth_);
        // Substitute attribute references with the caller's attributes.
        auto body = cloneGraph(*f.body);
        body->forEachGraph([&](Graph& sg) {
            for (NodeId id : sg.nodeOrder()) {
                Node& bn = sg.node(id);
                std::vector<Attribute> resolved;
                for (auto& a : bn.attributes) {
                    if (a.refAttrName.empty()) { resolved.push_back(a); continue; }
                    if (const Attribute* ca = call.attr(a.refAttrName)) {
                        Attribute r = *ca;
                        r.name = a.name;
                        resolved.push_back(std::move(r));
                    }
                }
                bn.attributes = std::move(resolved);
            }
        });
        std::vector<TensorPtr> args(body->inputs().size());
        for (size_t i = 0; i < args.size() && i < ins.size(); ++i) args[i] = ins[i];
        const auto* saved = opsets_;
        opsets_ = &f.opsetImports;
        try {
            auto outs = runGraph(*body, args, nullptr, false);
            opsets_ = saved;
            return outs;
        } catch (...) {
            opsets_ = saved;
            throw;
        }
        (void)scope;
    }

    void bindInputs(const Graph& g, Scope& scope, const std::vector<TensorPtr>& inputs, bool topLevel) {
        size_t next = 0;
        for (ValueId v : g.inputs()) {
            const Value& val = g.value(v);
            if (topLevel && val.initializer) {
                // An input with a default: use the caller's tensor only if they passed one for it.
                continue;
            }
            if (next >= inputs.size()) {
                if (topLevel) throwBadInput("graph input '" + val.name + "' was not given a tensor");
                ++next;
                continue;  // omitted optional subgraph/function input
            }
            const TensorPtr& t = inputs[next++];
            if (topLevel && t) checkInput(val, *t);
            scope.vals[v] = t;
        }
        if (topLevel && next != inputs.size())
            throwBadInput("the model takes " + std::to_string(next) + " inputs, " + std::to_string(inputs.size()) + " were given");
    }

    static void checkInput(const Value& val, const Tensor& t) {
        if (!val.type.isTensor()) return;
        if (val.type.elemType != DataType::Undefined && val.type.elemType != t.dtype)
            throwBadInput("input '" + val.name + "' must be " + std::string(dataTypeName(val.type.elemType)) + ", got " +
                          std::string(dataTypeName(t.dtype)));
        if (!val.type.shape) return;
        const auto& dims = val.type.shape->dims;
        if (dims.size() != t.dims.size())
            throwBadInput("input '" + val.name + "' must have rank " + std::to_string(dims.size()) + ", got shape " +
                          shapeText(t.dims));
        for (size_t i = 0; i < dims.size(); ++i)
            if (dims[i].value && *dims[i].value != t.dims[i])
                throwBadInput("input '" + val.name + "' dim " + std::to_string(i) + " must be " +
                              std::to_string(*dims[i].value) + ", got shape " + shapeText(t.dims));
    }

private:
    const Model& m_;
    const RunOptions* opts_;
    const std::vector<OpsetImport>* opsets_ = nullptr;
    static constexpr int kMaxCallDepth = 64;
    int callDepth_ = 0;
    bool trace_ = std::getenv("PASSLENS_EVAL_TRACE") != nullptr;  ///< debugging aid: print each node's output shapes
};

bool typeAllowed(const KernelInfo& k, DataType dt) {
    return k.types.empty() || dt == DataType::Undefined || std::find(k.types.begin(), k.types.end(), dt) != k.types.end();
}

bool checkNode(const Model& m, const Graph* g, const Node& n, std::string* why, const std::vector<OpsetImport>* opsets,
               int callDepth = 0) {
    const std::string domain = canonicalDomain(n.domain);
    int64_t opset = m.opsetFor(domain);
    if (opsets)
        for (const auto& oi : *opsets)
            if (canonicalDomain(oi.domain) == domain) opset = oi.version;
    if (opset == 0 && domain == "ai.onnx.ml") opset = 1;
    const KernelInfo* k = kernelRegistry().find(domain, n.opType, opset);
    auto prefix = "op '" + n.opType + "' (domain '" + domainName(domain) + "', opset " + std::to_string(opset) + ")";
    if (!k) {
        const Function* f = m.findFunction(n.domain, n.opType);
        if (!f) f = m.findFunction(domain, n.opType);
        if (f && f->body) {
            if (callDepth >= 64) {
                if (why) *why = "function '" + f->name + "' is called more than 64 levels deep (recursion?)";
                return false;
            }
            for (NodeId id : f->body->nodeOrder())
                if (!checkNode(m, nullptr, f->body->node(id), why, &f->opsetImports, callDepth + 1)) return false;
            return true;
        }
        if (why) *why = prefix + " is not supported";
        return false;
    }
    if (g) {
        // Element types the interpreter never handles, on any input or output.
        std::vector<ValueId> vs = n.inputs;
        vs.insert(vs.end(), n.outputs.begin(), n.outputs.end());
        for (ValueId v : vs) {
            if (v == kNone || !g->hasValue(v)) continue;
            const auto& ty = g->value(v).type;
            if (ty.isTensor() && (ty.elemType == DataType::String || ty.elemType == DataType::BFloat16 ||
                                  ty.elemType == DataType::Complex64 || ty.elemType == DataType::Complex128)) {
                if (why) *why = prefix + ": element type " + std::string(dataTypeName(ty.elemType)) + " is not supported";
                return false;
            }
        }
    }
    if (k->check && !k->check(n, opset, why)) {
        if (why) *why = prefix + ": " + *why;
        return false;
    }
    if (g && !n.inputs.empty() && n.inputs[0] != kNone && g->hasValue(n.inputs[0])) {
        const auto& ty = g->value(n.inputs[0]).type;
        if (ty.kind == TypeInfo::Kind::Opaque) {
            if (why) *why = prefix + ": non-tensor input types (sequence/optional/map) are not supported";
            return false;
        }
        if (ty.isTensor() && !typeAllowed(*k, ty.elemType)) {
            if (why) *why = prefix + ": element type " + std::string(dataTypeName(ty.elemType)) + " is not supported";
            return false;
        }
    }
    if (g)
        for (ValueId v : n.outputs)
            if (v != kNone && g->hasValue(v) && g->value(v).type.kind == TypeInfo::Kind::Opaque) {
                if (why) *why = prefix + ": non-tensor output types are not supported";
                return false;
            }
    for (const auto& a : n.attributes) {
        if (a.g)
            for (NodeId id : a.g->nodeOrder())
                if (!checkNode(m, a.g.get(), a.g->node(id), why, opsets, callDepth)) return false;
        for (const auto& sg : a.graphs)
            for (NodeId id : sg->nodeOrder())
                if (!checkNode(m, sg.get(), sg->node(id), why, opsets, callDepth)) return false;
    }
    return true;
}

}  // namespace

std::vector<ValueId> runtimeInputs(const Graph& g) {
    std::vector<ValueId> out;
    for (ValueId v : g.inputs())
        if (!g.value(v).initializer) out.push_back(v);
    return out;
}

std::vector<TensorPtr> run(const Model& m, const std::vector<TensorPtr>& inputs, const RunOptions& o) {
    MemoryBudgetScope budget(o.maxMemoryBytes);
    Executor ex(m, &o);
    return ex.runGraph(m.graph, inputs, nullptr, true);
}

std::vector<TensorPtr> evalNode(const Model& m, const Graph& g, NodeId n, const std::vector<TensorPtr>& inputs) {
    Executor ex(m, nullptr);
    Scope scope(g, nullptr);
    return ex.runNodeNamed(g, g.node(n), inputs, &scope);
}

std::vector<TensorPtr> evalNode(const Model& m, const Graph& g, NodeId n, const std::vector<TensorPtr>& inputs,
                                const std::unordered_map<ValueId, TensorPtr>& captures) {
    Executor ex(m, nullptr);
    Scope scope(g, nullptr);
    for (const auto& [v, t] : captures) scope.vals.at(v) = t;
    return ex.runNodeNamed(g, g.node(n), inputs, &scope);
}

bool isSupported(const Model& m, const Node& n, std::string* whyNot) { return checkNode(m, nullptr, n, whyNot, nullptr); }

bool isSupported(const Model& m, const Graph& g, const Node& n, std::string* whyNot) {
    return checkNode(m, &g, n, whyNot, nullptr);
}

bool isModelSupported(const Model& m, std::string* whyNot) {
    for (NodeId id : m.graph.nodeOrder())
        if (!isSupported(m, m.graph, m.graph.node(id), whyNot)) return false;
    for (ValueId v : m.graph.inputs())
        if (m.graph.value(v).type.kind == TypeInfo::Kind::Opaque) {
            if (whyNot) *whyNot = "graph input '" + m.graph.value(v).name + "' is not a tensor";
            return false;
        }
    return true;
}

namespace {
std::vector<int64_t> concreteDims(const Value& val, const std::vector<std::pair<std::string, int64_t>>& pins,
                                  std::vector<std::string>* unpinned) {
    std::vector<int64_t> dims;
    if (!val.type.shape) throwBadInput("input '" + val.name + "' has no shape; cannot make a random tensor for it");
    for (const auto& d : val.type.shape->dims) {
        if (d.value) { dims.push_back(*d.value); continue; }
        int64_t v = 1;
        bool found = false;
        // Named dims pin by name; unnamed ones by "INPUT[axis]".
        const std::string label = val.name + "[" + std::to_string(dims.size()) + "]";
        for (const auto& [name, pv] : pins)
            if ((!d.param.empty() && name == d.param) || name == label) { v = pv; found = true; }
        if (!found && unpinned) {
            const std::string shown = d.param.empty() ? label : d.param;
            if (std::find(unpinned->begin(), unpinned->end(), shown) == unpinned->end()) unpinned->push_back(shown);
        }
        dims.push_back(v);
    }
    return dims;
}
}  // namespace

std::vector<std::string> unpinnedDims(const Model& m, const std::vector<std::pair<std::string, int64_t>>& dims) {
    std::vector<std::string> out;
    for (ValueId v : runtimeInputs(m.graph)) concreteDims(m.graph.value(v), dims, &out);
    return out;
}

namespace {

bool isImageLike(const std::vector<int64_t>& dims) {
    return dims.size() == 4 && (dims[1] == 1 || dims[1] == 3 || dims[1] == 4) && dims[2] > 1 && dims[3] > 1;
}

/// The size of the axis a Gather reading `v` as its indices picks from (through index-preserving
/// ops), the smallest over all such Gathers; nullopt when `v` is not used as indices.
std::optional<int64_t> gatheredAxisSize(const Graph& g, ValueId v, int depth = 0) {
    static const std::set<std::string> kKeepsIndices = {"Cast", "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity"};
    std::optional<int64_t> best;
    if (depth > 8) return best;
    auto keep = [&](std::optional<int64_t> n) {
        if (n && *n > 0 && (!best || *n < *best)) best = n;
    };
    for (NodeId c : g.value(v).consumers) {
        const Node& n = g.node(c);
        if (!n.domain.empty()) continue;
        if (n.opType == "Gather" && n.inputs.size() == 2 && n.inputs[1] == v) {
            auto data = g.value(n.inputs[0]).staticDims();
            if (!data || data->empty()) continue;
            int64_t axis = n.attrInt("axis", 0);
            if (axis < 0) axis += int64_t(data->size());
            if (axis >= 0 && axis < int64_t(data->size())) keep((*data)[size_t(axis)]);
        } else if (kKeepsIndices.count(n.opType) && !n.inputs.empty() && n.inputs[0] == v && !n.outputs.empty() &&
                   n.outputs[0] != kNone) {
            keep(gatheredAxisSize(g, n.outputs[0], depth + 1));
        }
    }
    return best;
}

}  // namespace

std::vector<TensorPtr> randomInputs(const Model& m, uint64_t seed, const std::vector<std::pair<std::string, int64_t>>& pins) {
    return randomInputs(m, seed, pins, InputRanges::Uniform);
}

std::vector<TensorPtr> randomInputs(const Model& m, uint64_t seed, const std::vector<std::pair<std::string, int64_t>>& pins,
                                    InputRanges ranges) {
    std::mt19937_64 rng(seed);
    std::vector<TensorPtr> out;
    for (ValueId v : runtimeInputs(m.graph)) {
        const Value& val = m.graph.value(v);
        if (!val.type.isTensor()) throwBadInput("input '" + val.name + "' is not a tensor; cannot make a random value for it");
        auto dims = concreteDims(val, pins, nullptr);
        const DataType dt = val.type.elemType;
        OutTensor t(dt == DataType::Float16 ? DataType::Float : dt, dims);
        const bool natural = ranges == InputRanges::Natural;
        std::uniform_real_distribution<double> uni(natural && isImageLike(dims) ? 0.0 : -1.0, 1.0);
        int intHigh = 3;
        if (natural && !isFloatingPoint(dt) && dt != DataType::Bool)
            if (auto n = gatheredAxisSize(m.graph, v)) intHigh = int(std::min<int64_t>(*n - 1, std::numeric_limits<int>::max()));
        std::uniform_int_distribution<int> small(0, intHigh);
        const int64_t n = t.count();
        if (dt == DataType::Float16 || dt == DataType::Float || dt == DataType::Double) {
            for (int64_t i = 0; i < n; ++i) {
                double x = uni(rng);
                if (dt == DataType::Double) t.data<double>()[i] = x;
                else t.data<float>()[i] = static_cast<float>(x);
            }
        } else if (dt == DataType::Bool) {
            for (int64_t i = 0; i < n; ++i) t.data<bool>()[i] = small(rng) & 1;
        } else {
            dispatchAll(dt, "randomInputs", [&](auto tag) {
                using T = decltype(tag);
                for (int64_t i = 0; i < n; ++i) t.data<T>()[i] = static_cast<T>(small(rng));
            });
        }
        auto tensor = t.finish();
        if (dt == DataType::Float16) tensor = castTensor(*tensor, DataType::Float16);
        std::const_pointer_cast<Tensor>(tensor)->name = val.name;
        out.push_back(std::move(tensor));
    }
    return out;
}

std::vector<OutputDiff> compareOutputs(const Model& ref, const std::vector<TensorPtr>& a, const std::vector<TensorPtr>& b,
                                       double rtol, double atol) {
    std::vector<OutputDiff> out;
    const auto& outs = ref.graph.outputs();
    const size_t n = std::max(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
        OutputDiff d;
        d.name = i < outs.size() ? ref.graph.value(outs[i]).name : "output_" + std::to_string(i);
        if (i >= a.size() || i >= b.size() || !a[i] || !b[i] || a[i]->dims != b[i]->dims || a[i]->dtype != b[i]->dtype) {
            d.shapeMismatch = true;
            d.ok = false;
            out.push_back(d);
            continue;
        }
        if (a[i]->dtype == DataType::String) {
            d.ok = a[i]->strings == b[i]->strings;
            if (!d.ok) d.maxAbs = d.maxRel = std::numeric_limits<double>::infinity();
            out.push_back(d);
            continue;
        }
        auto x = toDoubles(*a[i]), y = toDoubles(*b[i]);
        for (size_t k = 0; k < x.size(); ++k) {
            const double p = x[k], q = y[k];
            if (std::isnan(p) || std::isnan(q)) {
                if (std::isnan(p) != std::isnan(q)) {
                    d.ok = false;
                    d.maxAbs = d.maxRel = std::numeric_limits<double>::infinity();
                }
                continue;
            }
            if (p == q) continue;  // also equal infinities
            const double diff = std::fabs(p - q);
            const double rel = q != 0 ? diff / std::fabs(q) : std::numeric_limits<double>::infinity();
            d.maxAbs = std::max(d.maxAbs, diff);
            d.maxRel = std::max(d.maxRel, rel);
            if (!(diff <= atol + rtol * std::fabs(q))) d.ok = false;
        }
        out.push_back(d);
    }
    return out;
}

}  // namespace passlens::eval
