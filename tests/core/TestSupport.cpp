#include "TestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <fstream>
#include <sstream>

#include "cli/Command.h"
#include "ir/Graph.h"

namespace passlens::test {

std::string tempDir(const std::string& name) {
    // One folder per running test: CTest runs tests in parallel processes, and two tests asking
    // for the same name must not clear each other's files.
    auto p = std::filesystem::path(PASSLENS_TEST_TMP);
    if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info())
        p /= std::string(info->test_suite_name()) + "." + info->name();
    p /= name;
    std::filesystem::remove_all(p);
    std::filesystem::create_directories(p);
    return p.string();
}

const std::vector<std::string>& realModelNames() {
    static const std::vector<std::string> names = {
        "ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx", "ch_ppocr_mobile_v2.0_cls_infer.onnx",
        "silero_vad_legacy.onnx", "silero_vad_v5.onnx"};
    return names;
}

std::string realModel(const std::string& file) {
    const std::string path = modelsDir() + "/" + file;
    if (std::filesystem::exists(path)) return path;
    std::printf("PASSLENS_MODELS_MISSING: %s is not there (tests/fetch_models.sh could not download it, offline?); "
                "this test is skipped\n", path.c_str());
    std::fflush(stdout);
    throw std::runtime_error("model file missing: " + path);
}

std::vector<std::string> testdataModels() {
    std::vector<std::string> out;
    for (const char* sub : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
        auto dir = std::filesystem::path(testdataDir()) / sub;
        if (!std::filesystem::exists(dir)) continue;
        for (const auto& e : std::filesystem::directory_iterator(dir)) {
            auto m = e.path() / "model.onnx";
            if (std::filesystem::exists(m)) out.push_back(m.string());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

static std::string shellQuote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

static std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

CliResult runCli(const std::vector<std::string>& args) {
    std::ostringstream out, err;
    CliResult r;
    r.exitCode = cli::runCommandLine(args, out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
}

CliResult runCliProcess(const std::vector<std::string>& args) {
    static int counter = 0;
    std::string dir = std::string(PASSLENS_TEST_TMP) + "/cli";
    std::filesystem::create_directories(dir);
    std::string base = dir + "/run" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    std::string cmd = shellQuote(cliPath());
    for (const auto& a : args) cmd += " " + shellQuote(a);
    cmd += " >" + base + ".out 2>" + base + ".err";
    int status = std::system(cmd.c_str());
    CliResult r;
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(base + ".out");
    r.err = slurp(base + ".err");
    return r;
}

namespace {

uint64_t fnv1a(const std::byte* p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<uint8_t>(p[i])) * 1099511628211ull;
    return h;
}

void tensorText(const ir::Tensor& t, std::ostream& os) {
    os << "tensor(" << ir::dataTypeName(t.dtype) << ",[";
    for (auto d : t.dims) os << d << ",";
    os << "]," << fnv1a(t.data.data(), t.data.size()) << ",s" << t.strings.size() << ")";
}

void graphText(const ir::Graph& g, std::ostream& os, int depth);

void attrText(const ir::Attribute& a, std::ostream& os, int depth) {
    os << a.name << ":" << static_cast<int>(a.kind) << (a.refAttrName.empty() ? "" : "@" + a.refAttrName) << "=";
    if (a.kind == ir::AttrKind::Tensor && a.t) tensorText(*a.t, os);
    else if (a.kind == ir::AttrKind::Graph && a.g) { os << "{\n"; graphText(*a.g, os, depth + 1); os << "}"; }
    else if (a.kind == ir::AttrKind::Graphs) { for (auto& sg : a.graphs) { os << "{\n"; graphText(*sg, os, depth + 1); os << "}"; } }
    else if (a.kind == ir::AttrKind::Tensors) { for (auto& t : a.tensors) tensorText(*t, os); }
    else if (a.kind == ir::AttrKind::Float) { os << a.f; }
    else if (a.kind == ir::AttrKind::Floats) { for (float f : a.floats) os << f << ","; }
    else if (a.kind == ir::AttrKind::Int) { os << a.i; }
    else if (a.kind == ir::AttrKind::Ints) { for (auto i : a.ints) os << i << ","; }
    else if (a.kind == ir::AttrKind::String) { os << a.s; }
    else if (a.kind == ir::AttrKind::Strings) { for (auto& s : a.strings) os << s << ","; }
    else { for (auto& s : a.opaque) os << s.size() << ","; }
    os << "|doc=" << a.docString;
}

void valueText(const ir::Graph& g, ir::ValueId v, std::ostream& os) {
    if (v == ir::kNone) { os << "<none>"; return; }
    const auto& val = g.value(v);
    os << val.name << ":" << val.type.toString() << (val.isOuterScope ? "^" : "");
}

void graphText(const ir::Graph& g, std::ostream& os, int depth) {
    std::string ind(static_cast<size_t>(depth) * 2, ' ');
    os << ind << "graph " << g.name << " doc=" << g.docString << " sparse=" << g.sparseInitializers.size() << "\n";
    for (auto v : g.inputs()) { os << ind << " in "; valueText(g, v, os); os << " doc=" << g.value(v).docString << "\n"; }
    for (auto v : g.initializerOrder()) { os << ind << " init " << g.value(v).name << " "; tensorText(*g.value(v).initializer, os); os << "\n"; }
    for (auto n : g.nodeOrder()) {
        const auto& node = g.node(n);
        os << ind << " node " << node.name << " " << node.domain << ":" << node.opType << " doc=" << node.docString << " (";
        for (auto v : node.inputs) { valueText(g, v, os); os << ","; }
        os << ")->(";
        for (auto v : node.outputs) { valueText(g, v, os); os << ","; }
        os << ")\n";
        for (const auto& a : node.attributes) { os << ind << "  "; attrText(a, os, depth); os << "\n"; }
    }
    for (auto v : g.outputs()) { os << ind << " out "; valueText(g, v, os); os << "\n"; }
    for (auto v : g.valueInfoOrder()) { os << ind << " vi "; valueText(g, v, os); os << "\n"; }
}

}  // namespace

std::string canonicalText(const ir::Model& m) {
    std::ostringstream os;
    os << "ir=" << m.irVersion << " producer=" << m.producerName << "/" << m.producerVersion << " domain=" << m.domain
       << " version=" << m.modelVersion << " doc=" << m.docString << "\n";
    for (const auto& o : m.opsetImports) os << "opset " << o.domain << "=" << o.version << "\n";
    for (const auto& kv : m.metadataProps) os << "meta " << kv.key << "=" << kv.value << "\n";
    for (const auto& t : m.trainingInfo) os << "training " << t.size() << "\n";
    for (const auto& f : m.functions) {
        os << "function " << f.domain << ":" << f.name << "\n";
        graphText(*f.body, os, 1);
    }
    graphText(m.graph, os, 0);
    return os.str();
}

}  // namespace passlens::test
