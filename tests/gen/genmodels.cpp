// passlens-genmodels: writes synthetic models the way exporters write them, at any size, so tests
// and benchmarks run at the sizes users have without committing large binaries.
//
//   passlens-genmodels transformer --layers N [--style bert|gpt|vit] [--names scoped|flat|metadata]
//                                   [--hidden H] [--heads K] [--seed S] -o FILE
//   passlens-genmodels chain --nodes N [--seed S] -o FILE
//
// Transformers follow PyTorch's TorchScript exporter at opset 14: symbolic `batch`/`seq` dims,
// Shape→Gather→Unsqueeze→Concat chains computing Reshape targets, decomposed LayerNorm (opset < 17)
// and erf-GELU, residual edges, an additive attention mask. Name styles: `scoped`
// (`/encoder/layer.3/attention/self/query/MatMul`), `flat` (`MatMul_123`, numeric value names) and
// `metadata` (the dynamo exporter: `node_MatMul_12` with `pkg.torch.onnx.name_scopes` metadata).
#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

enum class Names { Scoped, Flat, Metadata };
enum class Style { Bert, Gpt, Vit };

struct Options {
    std::string kind;
    std::string out;
    Names names = Names::Scoped;
    Style style = Style::Bert;
    int layers = 2;
    int hidden = 64;
    int heads = 4;
    int nodes = 1000;
    uint32_t seed = 1;
};

/// Builds one GraphProto the way an exporter emits it: nodes in topological order, every node
/// named after its module scope, initializers for weights and shape constants.
class Emitter {
public:
    Emitter(onnx::GraphProto& g, Names names, uint32_t seed) : g_(g), names_(names), rng_(seed) {}

    /// RAII module scope: `auto s = e.scope("layer.3");`
    struct Scope {
        Emitter& e;
        ~Scope() { e.scopes_.pop_back(); }
    };
    [[nodiscard]] Scope scope(const std::string& module) {
        scopes_.push_back(module);
        return Scope{*this};
    }

    std::string node(const std::string& op, const std::vector<std::string>& inputs,
                     const std::vector<onnx::AttributeProto>& attrs = {}) {
        auto* n = g_.add_node();
        n->set_op_type(op);
        const std::string name = nodeName(op);
        n->set_name(name);
        for (const auto& in : inputs) n->add_input(in);
        const std::string out = valueName(name);
        n->add_output(out);
        for (const auto& a : attrs) *n->add_attribute() = a;
        if (names_ == Names::Metadata) {
            std::string repr = "[''";
            for (const auto& s : scopes_) repr += ", '" + s + "'";
            repr += "]";
            // NodeProto.metadata_props is field 9 from ONNX 1.16 on; libonnx 1.12 predates it, so
            // it is written as an unknown field, byte for byte what a newer exporter writes.
            onnx::StringStringEntryProto p;
            p.set_key("pkg.torch.onnx.name_scopes");
            p.set_value(repr);
            n->GetReflection()->MutableUnknownFields(n)->AddLengthDelimited(9, p.SerializeAsString());
        }
        return out;
    }

    /// A float initializer named after the module path (`encoder.layer.3.query.weight`), uniform
    /// in ±scale.
    std::string weight(const std::string& leaf, const std::vector<int64_t>& dims, float scale) {
        std::string name;
        for (const auto& s : scopes_) name += s + ".";
        name += leaf;
        auto* t = g_.add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        int64_t count = 1;
        for (auto d : dims) {
            t->add_dims(d);
            count *= d;
        }
        std::uniform_real_distribution<float> u(-scale, scale);
        std::string raw(static_cast<size_t>(count) * sizeof(float), '\0');
        auto* p = reinterpret_cast<float*>(raw.data());
        for (int64_t i = 0; i < count; ++i) p[i] = u(rng_);
        t->set_raw_data(std::move(raw));
        return name;
    }
    std::string filled(const std::string& leaf, const std::vector<int64_t>& dims, float v) {
        auto name = weight(leaf, dims, 0.0f);
        auto* raw = g_.mutable_initializer(g_.initializer_size() - 1)->mutable_raw_data();
        auto* p = reinterpret_cast<float*>(raw->data());
        for (size_t i = 0; i < raw->size() / sizeof(float); ++i) p[i] = v;
        return name;
    }
    /// Shared scalar / 1-D constants (`onnx::Gather_1`-style names), one initializer per value.
    std::string scalarF(float v) { return constant(onnx::TensorProto::FLOAT, {}, {static_cast<double>(v)}); }
    std::string ints(const std::vector<int64_t>& v, bool scalar = false) {
        std::vector<double> d(v.begin(), v.end());
        return constant(onnx::TensorProto::INT64, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(v.size())}, d);
    }

    void input(const std::string& name, int elemType, const std::vector<std::string>& dims) {
        setType(g_.add_input(), name, elemType, dims);
    }
    void output(const std::string& name, int elemType, const std::vector<std::string>& dims) {
        setType(g_.add_output(), name, elemType, dims);
    }

    static onnx::AttributeProto attrInts(const std::string& n, const std::vector<int64_t>& v) {
        onnx::AttributeProto a;
        a.set_name(n);
        a.set_type(onnx::AttributeProto::INTS);
        for (auto x : v) a.add_ints(x);
        return a;
    }
    static onnx::AttributeProto attrInt(const std::string& n, int64_t v) {
        onnx::AttributeProto a;
        a.set_name(n);
        a.set_type(onnx::AttributeProto::INT);
        a.set_i(v);
        return a;
    }

private:
    std::string nodeName(const std::string& op) {
        switch (names_) {
            case Names::Flat: return op + "_" + std::to_string(counter_++);
            case Names::Metadata: return "node_" + op + "_" + std::to_string(counter_++);
            case Names::Scoped: {
                std::string path = "/";
                for (const auto& s : scopes_) path += s + "/";
                int& n = perScope_[path + op];
                std::string name = path + op + (n ? "_" + std::to_string(n) : "");
                ++n;
                return name;
            }
        }
        return op;
    }
    std::string valueName(const std::string& nodeName) {
        switch (names_) {
            case Names::Flat: return std::to_string(values_++);
            case Names::Metadata: return "val_" + std::to_string(values_++);
            case Names::Scoped: return nodeName + "_output_0";
        }
        return nodeName;
    }
    std::string constant(int type, const std::vector<int64_t>& dims, const std::vector<double>& v) {
        std::string key = std::to_string(type) + ":" + std::to_string(dims.size());
        for (double x : v) key += "," + std::to_string(x);
        if (auto it = constants_.find(key); it != constants_.end()) return it->second;
        auto* t = g_.add_initializer();
        std::string name = "onnx::Const_" + std::to_string(constants_.size());
        t->set_name(name);
        t->set_data_type(type);
        for (auto d : dims) t->add_dims(d);
        for (double x : v) {
            if (type == onnx::TensorProto::FLOAT) t->add_float_data(static_cast<float>(x));
            else t->add_int64_data(static_cast<int64_t>(x));
        }
        constants_[key] = name;
        return name;
    }
    static void setType(onnx::ValueInfoProto* vi, const std::string& name, int elemType,
                        const std::vector<std::string>& dims) {
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(elemType);
        auto* shape = tt->mutable_shape();
        for (const auto& d : dims) {
            auto* dim = shape->add_dim();
            if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
            else dim->set_dim_param(d);
        }
    }

    onnx::GraphProto& g_;
    Names names_;
    std::mt19937 rng_;
    std::vector<std::string> scopes_;
    std::map<std::string, int> perScope_;
    std::map<std::string, std::string> constants_;
    int counter_ = 0;
    int values_ = 0;
};

using E = Emitter;

struct Dims {
    int64_t hidden, heads, headDim, ffn;
};

std::string linear(E& e, const std::string& module, const std::string& x, int64_t in, int64_t out) {
    auto s = e.scope(module);
    float scale = 1.0f / std::sqrt(static_cast<float>(in));
    auto w = e.weight("weight", {in, out}, scale);  // stored transposed, as the exporter folds it
    auto b = e.weight("bias", {out}, scale);
    return e.node("Add", {e.node("MatMul", {x, w}), b});
}

std::string layerNorm(E& e, const std::string& module, const std::string& x, int64_t hidden) {
    auto s = e.scope(module);
    auto mean = e.node("ReduceMean", {x}, {E::attrInts("axes", {-1}), E::attrInt("keepdims", 1)});
    auto d = e.node("Sub", {x, mean});
    auto sq = e.node("Pow", {d, e.scalarF(2.0f)});
    auto var = e.node("ReduceMean", {sq}, {E::attrInts("axes", {-1}), E::attrInt("keepdims", 1)});
    auto std = e.node("Sqrt", {e.node("Add", {var, e.scalarF(1e-12f)})});
    auto n = e.node("Div", {d, std});
    auto g = e.filled("weight", {hidden}, 1.0f);
    auto b = e.filled("bias", {hidden}, 0.0f);
    return e.node("Add", {e.node("Mul", {n, g}), b});
}

std::string gelu(E& e, const std::string& x) {
    auto s = e.scope("intermediate_act_fn");
    auto erf = e.node("Erf", {e.node("Div", {x, e.scalarF(1.4142135381698608f)})});
    auto half = e.node("Mul", {x, e.node("Add", {erf, e.scalarF(1.0f)})});
    return e.node("Mul", {half, e.scalarF(0.5f)});
}

/// x.size()[:2] + (a, b) as the tracer writes it: Shape, two Gathers, two Unsqueezes, Concat.
std::string shapeTarget(E& e, const std::string& x, const std::vector<int64_t>& tail) {
    auto shape = e.node("Shape", {x});
    std::vector<std::string> parts;
    for (int64_t i = 0; i < 2; ++i) {
        auto dim = e.node("Gather", {shape, e.ints({i}, true)}, {E::attrInt("axis", 0)});
        parts.push_back(e.node("Unsqueeze", {dim, e.ints({0})}));
    }
    for (auto t : tail) parts.push_back(e.ints({t}));
    return e.node("Concat", parts, {E::attrInt("axis", 0)});
}

std::string splitHeads(E& e, const std::string& x, const Dims& d, const std::vector<int64_t>& perm) {
    auto r = e.node("Reshape", {x, shapeTarget(e, x, {d.heads, d.headDim})});
    return e.node("Transpose", {r}, {E::attrInts("perm", perm)});
}

/// Self-attention over x [batch, seq, hidden]; `mask` is additive, broadcast over heads.
std::string attention(E& e, const std::string& x, const std::string& mask, const Dims& d) {
    std::string ctx;
    {
        auto s = e.scope("self");
        auto q = splitHeads(e, linear(e, "query", x, d.hidden, d.hidden), d, {0, 2, 1, 3});
        auto k = splitHeads(e, linear(e, "key", x, d.hidden, d.hidden), d, {0, 2, 1, 3});
        auto v = splitHeads(e, linear(e, "value", x, d.hidden, d.hidden), d, {0, 2, 1, 3});
        auto kt = e.node("Transpose", {k}, {E::attrInts("perm", {0, 1, 3, 2})});
        auto scores = e.node("Div", {e.node("MatMul", {q, kt}), e.scalarF(std::sqrt(float(d.headDim)))});
        if (!mask.empty()) scores = e.node("Add", {scores, mask});
        auto probs = e.node("Softmax", {scores}, {E::attrInt("axis", -1)});
        auto c = e.node("Transpose", {e.node("MatMul", {probs, v})}, {E::attrInts("perm", {0, 2, 1, 3})});
        auto shape = e.node("Shape", {c});
        std::vector<std::string> parts;
        for (int64_t i = 0; i < 2; ++i) {
            auto dim = e.node("Gather", {shape, e.ints({i}, true)}, {E::attrInt("axis", 0)});
            parts.push_back(e.node("Unsqueeze", {dim, e.ints({0})}));
        }
        parts.push_back(e.ints({d.hidden}));
        ctx = e.node("Reshape", {c, e.node("Concat", parts, {E::attrInt("axis", 0)})});
    }
    auto s = e.scope("output");
    return linear(e, "dense", ctx, d.hidden, d.hidden);
}

std::string feedForward(E& e, const std::string& x, const Dims& d) {
    std::string h;
    {
        auto s = e.scope("intermediate");
        h = gelu(e, linear(e, "dense", x, d.hidden, d.ffn));
    }
    auto s = e.scope("output");
    return linear(e, "dense", h, d.ffn, d.hidden);
}

/// BERT (post-LN): x = LN(x + Attn(x)); x = LN(x + FFN(x)).
std::string bertLayer(E& e, const std::string& x, const std::string& mask, const Dims& d) {
    std::string a;
    {
        auto s = e.scope("attention");
        auto o = attention(e, x, mask, d);
        a = layerNorm(e, "LayerNorm", e.node("Add", {o, x}), d.hidden);
    }
    auto f = feedForward(e, a, d);
    auto s = e.scope("output");
    return layerNorm(e, "LayerNorm", e.node("Add", {f, a}), d.hidden);
}

/// GPT / ViT (pre-LN): x = x + Attn(LN(x)); x = x + FFN(LN(x)).
std::string preLnLayer(E& e, const std::string& x, const std::string& mask, const Dims& d) {
    std::string a;
    {
        auto s = e.scope("attention");
        auto o = attention(e, layerNorm(e, "ln_1", x, d.hidden), mask, d);
        a = e.node("Add", {x, o});
    }
    auto s = e.scope("mlp");
    auto f = feedForward(e, layerNorm(e, "ln_2", a, d.hidden), d);
    return e.node("Add", {a, f});
}

constexpr int64_t kVocab = 1000;
constexpr int64_t kMaxPositions = 512;

void buildTransformer(onnx::GraphProto& g, const Options& o) {
    E e(g, o.names, o.seed);
    const Dims d{o.hidden, o.heads, o.hidden / o.heads, 4 * o.hidden};
    const auto I64 = onnx::TensorProto::INT64, F32 = onnx::TensorProto::FLOAT;
    std::string x, mask;
    const char* root = o.style == Style::Bert ? "encoder" : o.style == Style::Gpt ? "transformer" : "vit";
    g.set_name(std::string(o.style == Style::Bert ? "bert" : o.style == Style::Gpt ? "gpt" : "vit") + "_generated");

    if (o.style == Style::Vit) {
        // 32×32 RGB image, 8×8 patches: 16 tokens, plus a class token.
        e.input("pixel_values", F32, {"batch", "3", "32", "32"});
        auto s = e.scope("embeddings");
        auto w = e.weight("patch_embeddings.projection.weight", {d.hidden, 3, 8, 8}, 0.05f);
        auto b = e.weight("patch_embeddings.projection.bias", {d.hidden}, 0.05f);
        auto conv = e.node("Conv", {"pixel_values", w, b},
                           {E::attrInts("kernel_shape", {8, 8}), E::attrInts("strides", {8, 8})});
        auto tokens = e.node("Transpose", {e.node("Reshape", {conv, e.ints({0, d.hidden, -1})})},
                             {E::attrInts("perm", {0, 2, 1})});
        auto batch = e.node("Gather", {e.node("Shape", {"pixel_values"}), e.ints({0}, true)}, {E::attrInt("axis", 0)});
        auto expandShape = e.node("Concat", {e.node("Unsqueeze", {batch, e.ints({0})}), e.ints({1, d.hidden})},
                                  {E::attrInt("axis", 0)});
        auto cls = e.node("Expand", {e.weight("cls_token", {1, 1, d.hidden}, 0.05f), expandShape});
        x = e.node("Add", {e.node("Concat", {cls, tokens}, {E::attrInt("axis", 1)}),
                           e.weight("position_embeddings", {1, 17, d.hidden}, 0.05f)});
    } else {
        e.input("input_ids", I64, {"batch", "seq"});
        if (o.style == Style::Bert) e.input("attention_mask", I64, {"batch", "seq"});
        auto s = e.scope("embeddings");
        auto seqLen = e.node("Gather", {e.node("Shape", {"input_ids"}), e.ints({1}, true)}, {E::attrInt("axis", 0)});
        auto posIds = e.node("Slice", {e.ints([] {
                                           std::vector<int64_t> v(kMaxPositions);
                                           for (int64_t i = 0; i < kMaxPositions; ++i) v[size_t(i)] = i;
                                           return v;
                                       }()),
                                       e.ints({0}), e.node("Unsqueeze", {seqLen, e.ints({0})}), e.ints({0})});
        auto words = e.node("Gather", {e.weight("word_embeddings.weight", {kVocab, d.hidden}, 0.1f), "input_ids"});
        auto pos = e.node("Gather", {e.weight("position_embeddings.weight", {kMaxPositions, d.hidden}, 0.1f), posIds});
        x = e.node("Add", {words, pos});
        if (o.style == Style::Bert) x = layerNorm(e, "LayerNorm", x, d.hidden);
    }

    if (o.style == Style::Bert) {
        // (1 - mask[:, None, None, :]) * -10000
        auto m = e.node("Unsqueeze", {e.node("Unsqueeze", {"attention_mask", e.ints({1})}), e.ints({2})});
        auto f = e.node("Cast", {m}, {E::attrInt("to", onnx::TensorProto::FLOAT)});
        mask = e.node("Mul", {e.node("Sub", {e.scalarF(1.0f), f}), e.scalarF(-10000.0f)});
    } else if (o.style == Style::Gpt) {
        // causal: a [1,1,512,512] buffer of 0 / -1e4 sliced to [seq, seq]
        auto s = e.scope("transformer");
        auto buf = e.filled("bias", {1, 1, kMaxPositions, kMaxPositions}, 0.0f);
        auto* raw = g.mutable_initializer(g.initializer_size() - 1)->mutable_raw_data();
        auto* p = reinterpret_cast<float*>(raw->data());
        for (int64_t i = 0; i < kMaxPositions; ++i)
            for (int64_t j = i + 1; j < kMaxPositions; ++j) p[i * kMaxPositions + j] = -10000.0f;
        auto seqLen = e.node("Gather", {e.node("Shape", {"input_ids"}), e.ints({1}, true)}, {E::attrInt("axis", 0)});
        auto end = e.node("Unsqueeze", {seqLen, e.ints({0})});
        auto rows = e.node("Slice", {buf, e.ints({0}), end, e.ints({2})});
        mask = e.node("Slice", {rows, e.ints({0}), end, e.ints({3})});
    }

    {
        auto s = e.scope(root);
        for (int l = 0; l < o.layers; ++l) {
            auto ls = e.scope(std::string(o.style == Style::Gpt ? "h." : "layer.") + std::to_string(l));
            x = o.style == Style::Bert ? bertLayer(e, x, mask, d) : preLnLayer(e, x, mask, d);
        }
        if (o.style != Style::Bert) x = layerNorm(e, o.style == Style::Gpt ? "ln_f" : "layernorm", x, d.hidden);
    }

    std::string out;
    if (o.style == Style::Gpt) {
        auto s = e.scope("lm_head");
        out = e.node("MatMul", {x, e.weight("weight", {d.hidden, kVocab}, 0.1f)});
        e.output(out, F32, {"batch", "seq", std::to_string(kVocab)});
    } else {
        auto s = e.scope("pooler");
        auto first = e.node("Gather", {x, e.ints({0}, true)}, {E::attrInt("axis", 1)});
        out = e.node("Tanh", {linear(e, "dense", first, d.hidden, d.hidden)});
        e.output(x, F32, o.style == Style::Bert ? std::vector<std::string>{"batch", "seq", std::to_string(d.hidden)}
                                                 : std::vector<std::string>{"batch", "17", std::to_string(d.hidden)});
        e.output(out, F32, {"batch", std::to_string(d.hidden)});
    }
}

/// A long chain of cheap ops over one [1, 64] tensor: the deepest graph a model can be.
void buildChain(onnx::GraphProto& g, const Options& o) {
    E e(g, Names::Flat, o.seed);
    g.set_name("chain_generated");
    e.input("x", onnx::TensorProto::FLOAT, {"1", "64"});
    auto bias = e.weight("bias", {64}, 0.01f);
    auto scale = e.filled("scale", {64}, 0.5f);
    std::string x = "x";
    static const char* ops[] = {"Add", "Relu", "Mul", "Tanh"};
    for (int i = 0; i < o.nodes; ++i) {
        std::string op = ops[i % 4];
        if (op == "Add") x = e.node(op, {x, bias});
        else if (op == "Mul") x = e.node(op, {x, scale});
        else x = e.node(op, {x});
    }
    e.output(x, onnx::TensorProto::FLOAT, {"1", "64"});
}

[[noreturn]] void usage(const std::string& why) {
    if (!why.empty()) std::cerr << "passlens-genmodels: " << why << "\n";
    std::cerr << "usage: passlens-genmodels transformer --layers N [--style bert|gpt|vit] "
                 "[--names scoped|flat|metadata] [--hidden H] [--heads K] [--seed S] -o FILE\n"
                 "       passlens-genmodels chain --nodes N [--seed S] -o FILE\n";
    std::exit(why.empty() ? 0 : 2);
}

Options parse(int argc, char** argv) {
    if (argc < 2) usage("missing kind");
    Options o;
    o.kind = argv[1];
    if (o.kind == "--help" || o.kind == "-h") usage("");
    if (o.kind != "transformer" && o.kind != "chain") usage("unknown kind '" + o.kind + "'");
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) usage(a + " needs a value");
            return argv[++i];
        };
        auto number = [&]() {
            std::string v = next();
            try {
                int n = std::stoi(v);
                if (n <= 0) throw std::out_of_range(v);
                return n;
            } catch (const std::exception&) {
                usage(a + " needs a positive number, got '" + v + "'");
            }
        };
        if (a == "-o") o.out = next();
        else if (a == "--layers") o.layers = number();
        else if (a == "--nodes") o.nodes = number();
        else if (a == "--hidden") o.hidden = number();
        else if (a == "--heads") o.heads = number();
        else if (a == "--seed") o.seed = static_cast<uint32_t>(number());
        else if (a == "--names") {
            auto v = next();
            o.names = v == "scoped" ? Names::Scoped : v == "flat" ? Names::Flat : v == "metadata" ? Names::Metadata
                                                                                    : (usage("unknown --names " + v), Names::Flat);
        } else if (a == "--style") {
            auto v = next();
            o.style = v == "bert" ? Style::Bert : v == "gpt" ? Style::Gpt : v == "vit" ? Style::Vit
                                                                           : (usage("unknown --style " + v), Style::Bert);
        } else usage("unknown option " + a);
    }
    if (o.out.empty()) usage("missing -o FILE");
    if (o.hidden % o.heads != 0) usage("--hidden must be a multiple of --heads");
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.set_producer_name("passlens-genmodels");
    m.set_producer_version(o.kind == "chain" ? "chain" : "pytorch-style");
    m.add_opset_import()->set_version(14);
    if (o.kind == "chain") buildChain(*m.mutable_graph(), o);
    else buildTransformer(*m.mutable_graph(), o);
    std::ofstream f(o.out, std::ios::binary);
    if (!f || !m.SerializeToOstream(&f)) {
        std::cerr << "passlens-genmodels: cannot write " << o.out << "\n";
        return 2;
    }
    std::cout << o.out << ": " << m.graph().node_size() << " nodes\n";
    return 0;
}
