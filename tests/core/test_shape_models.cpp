// The symbolic shape engine on the real models: coverage (values whose every dim is known) with
// libonnx alone and with the engine, and a shape oracle: the reference interpreter runs each model
// at two bindings of its input dims with every intermediate value as an output, and every dim the
// IR states (a number, or an expression over the input symbols) must equal the real one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "onnx/Import.h"
#include "onnx/ShapeInference.h"
#include "shape/ShapeEngine.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

ir::Model importWith(const std::string& path, bool symbolic) {
    onnxio::ImportOptions o;
    o.inferShapes = false;
    ir::Model m = onnxio::importModelFile(path, o);
    onnxio::inferShapes(m, symbolic);
    return m;
}

/// Input tensors at a binding of the input dims (named or fresh "<input>_dim<i>" symbols).
std::vector<TensorPtr> inputsAt(const ir::Model& m, const shape::ShapeAnalysis& a, const shape::Bindings& b) {
    std::vector<TensorPtr> out;
    uint64_t seed = 1;
    for (ValueId v : eval::runtimeInputs(m.graph)) {
        const Value& val = m.graph.value(v);
        std::vector<int64_t> dims;
        for (const auto& d : *a.of(v).dims) {
            auto value = d ? d->evaluate(b) : std::nullopt;
            if (!value) throw std::runtime_error("input '" + val.name + "' has a dim the binding does not fix");
            dims.push_back(*value);
        }
        int64_t n = 1;
        for (int64_t d : dims) n *= d;
        if (val.type.elemType == DataType::Float) out.push_back(randomFloats(dims, seed++));
        else if (val.type.elemType == DataType::Int64)  // a scalar is silero's sample rate; tensors are token ids
            out.push_back(int64Tensor(dims, std::vector<int64_t>(static_cast<size_t>(n), dims.empty() ? 16000 : 1)));
        else throw std::runtime_error("no input generator for " + val.name);
    }
    return out;
}

struct OracleResult {
    size_t checkedDims = 0, values = 0, checkedElements = 0;
    std::vector<std::string> mismatches;
};

/// Runs the model at `b` and compares every stated dim of every node output with the real one.
OracleResult checkAt(const ir::Model& m, const shape::ShapeAnalysis& a, const shape::Bindings& inputDims) {
    OracleResult r;
    // A data-dependent size (a fresh symbol) takes its value where it first appears alone, as a
    // dim or an element, within its proven range; every later expression over it is checked.
    shape::Bindings b = inputDims;
    auto learn = [&](const shape::DimExpr& e, int64_t real, const std::string& where) {
        auto name = e.symbolName();
        if (!name || b.count(*name)) return;
        b.emplace(*name, real);
        auto lo = e.lowerBound(), hi = e.upperBound();
        if ((lo && real < *lo) || (hi && real > *hi))
            r.mismatches.push_back(where + ": " + *name + " = " + std::to_string(real) + ", outside its proven range");
    };
    ir::Model probe = m;
    std::vector<ValueId> watched;
    for (NodeId n : probe.graph.nodeOrder())
        for (ValueId v : probe.graph.node(n).outputs)
            if (v != kNone && !probe.graph.value(v).isGraphOutput && probe.graph.value(v).type.isTensor()) {
                probe.graph.markOutput(v);
                watched.push_back(v);
            }
    auto outputs = eval::run(probe, inputsAt(m, a, b));
    const auto& outs = probe.graph.outputs();
    for (size_t i = 0; i < outs.size(); ++i) {
        const Value& val = m.graph.value(outs[i]);
        if (!val.type.shape || !outputs[i]) continue;
        ++r.values;
        const auto& stated = val.type.shape->dims;
        const auto& real = outputs[i]->dims;
        if (stated.size() != real.size()) {
            r.mismatches.push_back(val.name + ": rank " + std::to_string(stated.size()) + " stated, " + std::to_string(real.size()) + " real");
            continue;
        }
        // The elements the engine propagates (what folding turns into constants) must be the real ones.
        const shape::ValueShape& known = a.of(outs[i]);
        const Tensor& t = *outputs[i];
        if (known.values && (t.dtype == DataType::Int64 || t.dtype == DataType::Int32) &&
            known.values->size() == static_cast<size_t>(t.elementCount())) {
            for (size_t k = 0; k < known.values->size(); ++k) {
                const auto& e = (*known.values)[k];
                const int64_t got = t.dtype == DataType::Int64 ? t.as<int64_t>()[k] : t.as<int32_t>()[k];
                if (e) learn(*e, got, val.name + " element " + std::to_string(k));
                std::optional<int64_t> want = e ? e->evaluate(b) : std::nullopt;
                if (!want) continue;
                ++r.checkedElements;
                if (*want != got)
                    r.mismatches.push_back(val.name + " element " + std::to_string(k) + ": engine " + e->toString() + " = " +
                                           std::to_string(*want) + ", real " + std::to_string(got));
            }
        }
        const auto& engineDims = known.dims;
        for (size_t k = 0; k < stated.size(); ++k) {
            if (engineDims && k < engineDims->size() && (*engineDims)[k])
                learn(*(*engineDims)[k], real[k], val.name + " dim " + std::to_string(k));
            std::optional<int64_t> want;
            std::string text;
            if (stated[k].value) { want = stated[k].value; text = std::to_string(*want); }
            else if (!stated[k].param.empty()) { want = shape::dimFromParam(stated[k].param).evaluate(b); text = stated[k].param; }
            if (!want) continue;  // unknown, or a data-dependent symbol
            ++r.checkedDims;
            if (*want != real[k])
                r.mismatches.push_back(val.name + " dim " + std::to_string(k) + ": stated " + text + " = " + std::to_string(*want) +
                                       ", real " + std::to_string(real[k]));
        }
    }
    return r;
}

struct ModelCase {
    std::string file;
    std::vector<shape::Bindings> bindings;
};

std::vector<ModelCase> cases() {
    const std::string d0 = "p2o.DynamicDimension.0", d1 = "p2o.DynamicDimension.1", d2 = "p2o.DynamicDimension.2";
    return {
        {"ch_PP-OCRv4_det_infer.onnx", {{{d0, 1}, {d1, 64}, {d2, 96}}, {{d0, 2}, {d1, 96}, {d2, 32}}}},
        {"ch_PP-OCRv4_rec_infer.onnx", {{{d0, 1}, {d1, 80}}, {{d0, 2}, {d1, 168}}}},
        {"ch_ppocr_mobile_v2.0_cls_infer.onnx", {{{d0, 1}, {d1, 48}, {d2, 192}}, {{d0, 3}, {d1, 40}, {d2, 100}}}},
        {"silero_vad_legacy.onnx", {{{"batch", 1}, {"sequence", 512}}, {{"batch", 2}, {"sequence", 1536}}}},
        {"silero_vad_v5.onnx", {{{"input_dim0", 1}, {"input_dim1", 512}, {"state_dim1", 1}},
                                {{"input_dim0", 2}, {"input_dim1", 576}, {"state_dim1", 2}}}},
    };
}

}  // namespace

class ShapeModels : public ::testing::TestWithParam<ModelCase> {};

TEST_P(ShapeModels, CoverageDoesNotGoDownAndNoStaticDimDisagrees) {
    const auto& c = GetParam();
    ir::Model before = importWith(test::realModel(c.file), false);
    ir::Model after = importWith(test::realModel(c.file), true);
    auto cb = shape::shapeCoverage(before.graph), ca = shape::shapeCoverage(after.graph);
    std::cout << "[ coverage ] " << c.file << ": libonnx " << cb.known << "/" << cb.total << ", with the symbolic engine "
              << ca.known << "/" << ca.total << "\n";
    EXPECT_EQ(cb.total, ca.total);
    EXPECT_GE(ca.known, cb.known);
    // What libonnx knows is kept: every static dim stays the same number.
    for (ValueId v : before.graph.valueIds()) {
        const auto& tb = before.graph.value(v).type;
        const auto& ta = after.graph.value(v).type;
        if (!tb.shape) continue;
        ASSERT_TRUE(ta.shape) << before.graph.value(v).name;
        ASSERT_EQ(tb.shape->rank(), ta.shape->rank()) << before.graph.value(v).name;
        for (size_t k = 0; k < tb.shape->rank(); ++k)
            if (tb.shape->dims[k].value) {
                EXPECT_EQ(tb.shape->dims[k].value, ta.shape->dims[k].value) << before.graph.value(v).name;
            }
    }
    auto a = shape::analyzeShapes(after.graph, &after);
    EXPECT_TRUE(a.conflicts.empty()) << a.conflicts.front();
    // The import path gives the same types as import-then-infer.
    ir::Model imported = onnxio::importModelFile(test::realModel(c.file));
    EXPECT_EQ(shape::shapeCoverage(imported.graph).known, ca.known);
}

TEST_P(ShapeModels, EveryStatedDimMatchesTheInterpreterAtTwoBindings) {
    const auto& c = GetParam();
    ir::Model m = onnxio::importModelFile(test::realModel(c.file));
    auto a = shape::analyzeShapes(m.graph, &m);
    for (const auto& b : c.bindings) {
        OracleResult r = checkAt(m, a, b);
        std::cout << "[ oracle   ] " << c.file << ": " << r.checkedDims << " dims of " << r.values << " values checked\n";
        EXPECT_GT(r.checkedDims, 0u);
        for (const auto& mm : r.mismatches) ADD_FAILURE() << c.file << ": " << mm;
    }
}

// Exports in a folder named by PASSLENS_SHAPE_ORACLE_DIR (e.g. the torch fixtures): every
// *_dynamic.onnx at two bindings of the usual dynamic_axes names. A binding the model cannot run
// at (the interpreter refuses it) is reported, not failed.
TEST(ShapeModelsExtra, EveryStatedDimMatchesTheInterpreterOnTheDynamicExports) {
    // The committed torch exports (tests/models), or another folder of *_dynamic.onnx exports.
    const char* env = std::getenv("PASSLENS_SHAPE_ORACLE_DIR");
    const std::string dir = env ? env : PASSLENS_FIXTURES_DIR;
    const std::vector<shape::Bindings> bindings = {
        {{"batch", 1}, {"seq", 5}, {"sequence", 5}, {"height", 64}, {"width", 96}, {"time", 7}},
        {{"batch", 3}, {"seq", 11}, {"sequence", 11}, {"height", 96}, {"width", 64}, {"time", 4}}};
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().string().ends_with("_dynamic.onnx")) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), env ? 1u : 10u) << dir;
    for (const auto& f : files) {
        ir::Model m = onnxio::importModelFile(f);
        auto a = shape::analyzeShapes(m.graph, &m);
        auto cov = shape::shapeCoverage(m.graph);
        // At least 99% of the values get every dim (a Loop's trip count may stay unknown).
        if (f.find("loop") == std::string::npos) {
            EXPECT_GE(cov.known * 100, cov.total * 99) << f;
        }
        for (const auto& b : bindings) {
            try {
                OracleResult r = checkAt(m, a, b);
                std::cout << "[ oracle   ] " << f << ": coverage " << cov.known << "/" << cov.total << ", " << r.checkedDims
                          << " dims of " << r.values << " values and " << r.checkedElements << " shape-tensor elements checked, "
                          << r.mismatches.size() << " wrong\n";
                for (const auto& mm : r.mismatches) ADD_FAILURE() << f << ": " << mm;
            } catch (const std::exception& e) {
                std::cout << "[ oracle   ] " << f << ": not run at this binding: " << e.what() << "\n";
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Real, ShapeModels, ::testing::ValuesIn(cases()), [](const auto& info) {
    std::string n = info.param.file.substr(0, info.param.file.find(".onnx"));
    for (char& ch : n)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return n;
});

TEST(ShapeModelsExtra, MemplanCountsEveryValueOfTheDynamicExports) {
    // Unbound input dims are planned at 1 and reported; bound ones are used; no value of these
    // exports is left "unknown size" (their sizes are not data-dependent).
    const std::string dir = PASSLENS_FIXTURES_DIR;
    for (const std::string name : {"vit_tiny_dynamic", "transformer_encoder_dynamic", "gpt_tiny_dynamic", "swin_tiny_dynamic"}) {
        auto r = test::runCli({"memplan", dir + "/" + name + ".onnx", "--json"});
        ASSERT_EQ(r.exitCode, 0) << name << ": " << r.err;
        auto j = nlohmann::json::parse(r.out);
        EXPECT_TRUE(j["unknown_size_values"].empty()) << name << ": " << j["unknown_size_values"].dump();
        ASSERT_TRUE(j.contains("assumed_dims")) << name;
        EXPECT_EQ(j["assumed_dims"]["batch"], 1) << name;
        EXPECT_NE(r.err.find("planning at batch=1"), std::string::npos) << name;
        auto bound = test::runCli({"memplan", dir + "/" + name + ".onnx", "--json", "--dim", "batch=4"});
        ASSERT_EQ(bound.exitCode, 0) << name << ": " << bound.err;
        auto jb = nlohmann::json::parse(bound.out);
        EXPECT_FALSE(jb.contains("assumed_dims") && jb["assumed_dims"].contains("batch")) << name;
        EXPECT_GT(jb["dynamic_bytes"].get<int64_t>(), j["dynamic_bytes"].get<int64_t>()) << name << ": batch 4 needs more";
    }
}
