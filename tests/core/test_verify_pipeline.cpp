// optimize --verify cannot be fooled (issue #43): eval::PipelineVerifier names a wrong rewrite
// injected after a basic pass on real torch exports, judges the model as written (export and
// re-import), runs several inputs in natural ranges and refuses to call degenerate outputs a match.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "eval/TensorOps.h"
#include "eval/Verify.h"
#include "examples/Builder.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

namespace passlens {
namespace {

using namespace passlens::ir;
using Verdict = eval::PipelineVerifier::Verdict;

std::string fixture(const std::string& file) { return std::string(PASSLENS_FIXTURES_DIR) + "/" + file; }

std::string joined(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
}

/// Readers of `v` read `to` instead (through the Rewriter, like any pass).
void redirectReaders(passes::Rewriter& rw, ValueId v, ValueId to, const std::string& reason) {
    const std::vector<NodeId> readers = rw.graph().value(v).consumers;
    for (NodeId r : readers) {
        const auto inputs = rw.graph().node(r).inputs;
        for (size_t slot = 0; slot < inputs.size(); ++slot)
            if (inputs[slot] == v) rw.setInput(r, slot, to, reason);
    }
}

/// A float initializer that a node reads: the one the previous pass made (not in `before`) when
/// there is one, else the largest, so the change reaches the outputs.
std::optional<ValueId> constantToBreak(const Graph& g, const std::vector<std::string>& before) {
    std::optional<ValueId> made, largest;
    for (ValueId v : g.initializerOrder()) {
        const auto& t = g.value(v).initializer;
        if (!t || t->dtype != DataType::Float || g.value(v).consumers.empty() || t->elementCount() == 0) continue;
        if (!made && std::find(before.begin(), before.end(), g.value(v).name) == before.end()) made = v;
        if (!largest || t->elementCount() > g.value(*largest).initializer->elementCount()) largest = v;
    }
    return made ? made : largest;
}

std::vector<std::string> initializerNames(const Graph& g) {
    std::vector<std::string> names;
    for (ValueId v : g.initializerOrder()) names.push_back(g.value(v).name);
    return names;
}

/// Fault 1: scales one folded constant by 1.01 (the kind of error a wrong fold makes).
class PerturbConstantPass : public passes::Pass {
public:
    explicit PerturbConstantPass(std::vector<std::string> before) : before_(std::move(before)) {}
    std::string name() const override { return "test-perturb-constant"; }
    std::string description() const override { return "test only: a wrong folded constant"; }

protected:
    void runImpl(passes::PassContext& ctx) const override {
        passes::Rewriter& rw = ctx.rewriter();
        auto v = constantToBreak(rw.graph(), before_);
        if (!v) return;
        const auto& t = *rw.graph().value(*v).initializer;
        std::vector<float> values(t.as<float>(), t.as<float>() + t.elementCount());
        for (float& x : values) x = x * 1.01f + 0.01f;
        const ValueId broken = rw.newInitializer(rw.graph().value(*v).name + "_perturbed",
                                                 makeTensorOf(DataType::Float, t.dims, values));
        redirectReaders(rw, *v, broken, "test: a perturbed constant");
    }

private:
    std::vector<std::string> before_;
};

/// Fault 2: swaps the first two different inputs of the first Concat that has them.
class SwapConcatInputsPass : public passes::Pass {
public:
    std::string name() const override { return "test-swap-concat"; }
    std::string description() const override { return "test only: Concat inputs in the wrong order"; }

protected:
    void runImpl(passes::PassContext& ctx) const override {
        passes::Rewriter& rw = ctx.rewriter();
        for (NodeId n : rw.graph().nodeOrder()) {
            const Node& node = rw.graph().node(n);
            if (node.opType != "Concat" || !node.domain.empty() || node.inputs.size() < 2 ||
                node.inputs[0] == node.inputs[1])
                continue;
            const ValueId a = node.inputs[0], b = node.inputs[1];
            rw.setInput(n, 0, b, "test: swapped Concat inputs");
            rw.setInput(n, 1, a, "test: swapped Concat inputs");
            return;
        }
    }
};

/// Fault 3, seen only in the file: the in-memory constant is right, but its tensor carries
/// "unknown fields" (written back verbatim on export) that hold another raw_data, which the reader
/// of the file takes instead (protobuf: the last occurrence of a field wins).
class WrittenOnlyFaultPass : public passes::Pass {
public:
    std::string name() const override { return "test-written-only"; }
    std::string description() const override { return "test only: a constant whose file form differs"; }

protected:
    void runImpl(passes::PassContext& ctx) const override {
        passes::Rewriter& rw = ctx.rewriter();
        auto v = constantToBreak(rw.graph(), initializerNames(rw.graph()));
        if (!v) return;
        Tensor copy = *rw.graph().value(*v).initializer;
        std::vector<float> other(copy.as<float>(), copy.as<float>() + copy.elementCount());
        for (float& x : other) x = x * 1.5f + 0.25f;
        const std::string bytes(reinterpret_cast<const char*>(other.data()), other.size() * sizeof(float));
        copy.unknownFields = wireBytesField(9, bytes);  // TensorProto.raw_data
        copy.name.clear();
        const ValueId smuggled = rw.newInitializer(rw.graph().value(*v).name + "_smuggled",
                                                   std::make_shared<const Tensor>(std::move(copy)));
        redirectReaders(rw, *v, smuggled, "test: a constant whose file form differs");
    }

private:
    static std::string wireBytesField(int field, const std::string& payload) {
        std::string out(1, char((field << 3) | 2));
        for (uint64_t n = payload.size();; n >>= 7) {
            if (n < 0x80) {
                out += char(n);
                break;
            }
            out += char((n & 0x7f) | 0x80);
        }
        return out + payload;
    }
};

struct VerifiedRun {
    eval::PipelineVerifier::Result result;
    std::string perPassLine;   ///< what afterPass reported ("" when no pass differed in memory)
    bool injected = false;     ///< the test pass changed the model
};

/// The basic level with `fault` inserted after the pass `after`, verified as optimize --verify
/// does: per pass in memory, then the model as written (export, re-import).
VerifiedRun runBasicWithFault(const Model& original, const std::string& after, std::unique_ptr<passes::Pass> fault,
                              const std::vector<std::pair<std::string, int64_t>>& dims = {}) {
    passes::PassManager pm;
    const std::string faultName = fault ? fault->name() : "";
    for (const auto& name : passes::PassRegistry::global().pipeline(passes::Level::Basic)) {
        pm.addPass(name);
        if (name == after && fault) pm.addPass(std::move(fault));
    }
    EXPECT_FALSE(fault) << "no basic pass is called " << after;
    VerifiedRun run;
    eval::PipelineVerifier verifier(original, dims);
    passes::PipelineOptions options;
    options.keepSnapshots = true;
    options.afterPass = [&](const passes::PassResult& r, const Model& m) {
        const std::string line = verifier.afterPass(r.name, m);
        if (!line.empty() && run.perPassLine.empty()) run.perPassLine = line;
    };
    Model work = original;
    const auto result = pm.run(work, options);
    eval::PipelineVerifier::Steps steps;
    for (const auto& s : result.steps) {
        steps.emplace_back(s.result.name, s.snapshot);
        if (s.result.name == faultName) run.injected = s.result.changed;
    }
    run.result = verifier.checkWritten(eval::writtenForm(work, dims), steps);
    return run;
}

const std::vector<std::string>& torchExports() {
    static const std::vector<std::string> files = {"resnet_tiny_static.onnx", "mobilenetv3_small_static.onnx",
                                                   "fasterrcnn_tiny_static.onnx", "gpt_tiny_static.onnx"};
    return files;
}

TEST(VerifyPipeline, CleanBasicPipelineMatchesOnTorchExports) {
    for (const auto& file : torchExports()) {
        SCOPED_TRACE(file);
        const Model m = onnxio::importModelFile(fixture(file));
        const auto run = runBasicWithFault(m, "", nullptr);
        EXPECT_TRUE(run.perPassLine.empty()) << run.perPassLine;
        EXPECT_EQ(run.result.verdict, Verdict::Match) << joined(run.result.lines);
        EXPECT_TRUE(run.result.firstBadPass.empty());
    }
}

// Every injected fault is named, on every model it applies to; each model gets at least one.
TEST(VerifyPipeline, NamesTheInjectedPassOnTorchExports) {
    int swaps = 0;
    for (const auto& file : torchExports()) {
        SCOPED_TRACE(file);
        const Model m = onnxio::importModelFile(fixture(file));
        int applied = 0;
        struct Fault {
            std::string after;
            std::unique_ptr<passes::Pass> pass;
        };
        std::vector<Fault> faults;
        faults.push_back({"constant-folding", std::make_unique<PerturbConstantPass>(initializerNames(m.graph))});
        faults.push_back({"algebraic", std::make_unique<SwapConcatInputsPass>()});
        for (auto& f : faults) {
            const std::string name = f.pass->name();
            SCOPED_TRACE(name + " after " + f.after);
            const auto run = runBasicWithFault(m, f.after, std::move(f.pass));
            if (!run.injected) continue;
            ++applied;
            swaps += name == "test-swap-concat";
            EXPECT_EQ(run.result.verdict, Verdict::Differ) << joined(run.result.lines);
            EXPECT_EQ(run.result.firstBadPass, name) << joined(run.result.lines);
            EXPECT_NE(joined(run.result.lines).find("first differing pass is '" + name + "'"), std::string::npos)
                << joined(run.result.lines);
        }
        EXPECT_GE(applied, 1) << "no fault applies to " << file;
    }
    EXPECT_GE(swaps, 1) << "no model has a Concat to swap";
}

// In memory every pass matches; only the written file differs, and the replay of each step's
// written form names the pass.
TEST(VerifyPipeline, WrittenFileCheckCatchesWhatOnlyTheFileShows) {
    const Model m = onnxio::importModelFile(fixture("resnet_tiny_static.onnx"));
    const auto run = runBasicWithFault(m, "cse", std::make_unique<WrittenOnlyFaultPass>());
    ASSERT_TRUE(run.injected);
    EXPECT_TRUE(run.perPassLine.empty()) << "the in-memory model is right: " << run.perPassLine;
    EXPECT_EQ(run.result.verdict, Verdict::Differ) << joined(run.result.lines);
    EXPECT_NE(joined(run.result.lines).find("verify failed: the written file"), std::string::npos) << joined(run.result.lines);
    EXPECT_EQ(run.result.firstBadPass, "test-written-only") << joined(run.result.lines);
}

/// A rewrite right only for non-negative inputs: Relu(x) -> x.
class DropReluPass : public passes::Pass {
public:
    std::string name() const override { return "test-drop-relu"; }
    std::string description() const override { return "test only: drops a Relu"; }

protected:
    void runImpl(passes::PassContext& ctx) const override {
        passes::Rewriter& rw = ctx.rewriter();
        for (NodeId n : rw.graph().nodeOrder())
            if (rw.graph().node(n).opType == "Relu") {
                rw.bypassNode(n, 0, 0, "test: Relu of a non-negative input");
                return;
            }
    }
};

// The per-pass input (an image in [0,1)) cannot see the fault; another of the verify inputs
// (verify's default, in [-1,1)) does, and replaying the steps on it names the pass.
TEST(VerifyPipeline, AFaultOnlyAnotherInputShowsIsNamed) {
    GraphBuilder b("image");
    auto x = b.input("image", DataType::Float, {1, 3, 4, 4});
    b.output(b.op("Neg", {b.op("Relu", {x}, {}, "relu")}, {}, "neg"));
    const Model m = b.finish();
    passes::PassManager pm;
    pm.addPass("dce");
    pm.addPass(std::make_unique<DropReluPass>());
    pm.addPass("cse");
    eval::PipelineVerifier verifier(m);
    passes::PipelineOptions options;
    std::string perPass;
    options.afterPass = [&](const passes::PassResult& r, const Model& now) { perPass += verifier.afterPass(r.name, now); };
    Model work = m;
    const auto result = pm.run(work, options);
    EXPECT_TRUE(perPass.empty()) << perPass;
    ASSERT_TRUE(result.steps.at(1).result.changed);
    eval::PipelineVerifier::Steps steps;
    for (const auto& s : result.steps) steps.emplace_back(s.result.name, s.snapshot);
    const auto r = verifier.checkWritten(eval::writtenForm(work), steps);
    EXPECT_EQ(r.verdict, Verdict::Differ) << joined(r.lines);
    EXPECT_EQ(r.firstBadPass, "test-drop-relu") << joined(r.lines);
    EXPECT_NE(joined(r.lines).find("on input seed 0, uniform"), std::string::npos) << joined(r.lines);
}

// The in-memory model runs and matches; its written form is what the verdict is about.
TEST(VerifyPipeline, VerdictIsAboutTheModelAsWritten) {
    GraphBuilder b("affine");
    auto x = b.input("x", DataType::Float, {2, 3});
    b.output(b.op("Mul", {x, b.constant("w", floatTensor({3}, {1, 2, 3}))}, {}, "mul"));
    const Model m = b.finish();
    eval::PipelineVerifier v(m);
    EXPECT_EQ(v.checkWritten(eval::writtenForm(m)).verdict, Verdict::Match);
    // A model whose file differs: the written form, not the in-memory one, is judged.
    Model other = m;
    EXPECT_TRUE(v.afterPass("same", other).empty());
    GraphBuilder b2("affine");
    auto x2 = b2.input("x", DataType::Float, {2, 3});
    b2.output(b2.op("Mul", {x2, b2.constant("w", floatTensor({3}, {1, 2, 3.5f}))}, {}, "mul"));
    const auto differ = v.checkWritten(eval::writtenForm(b2.finish()));
    EXPECT_EQ(differ.verdict, Verdict::Differ);
    EXPECT_NE(joined(differ.lines).find("output"), std::string::npos) << joined(differ.lines);
    EXPECT_NE(joined(differ.lines).find("the difference comes from writing the file"), std::string::npos)
        << joined(differ.lines);
}

TEST(VerifyPipeline, DegenerateOutputsAreNotVerified) {
    // Detections below a threshold no input reaches: NonZero(x > 10) is empty for every input.
    GraphBuilder b("threshold");
    auto x = b.input("x", DataType::Float, {1, 3, 4, 4});
    auto above = b.op("Greater", {x, b.scalar("ten", 10.f)}, {}, "gt");
    b.output(b.op("NonZero", {above}, {}, "detections"));
    b.output(b.op("Mul", {x, b.scalar("zero", 0.f)}, {}, "zeros"));
    const Model m = b.finish();
    eval::PipelineVerifier v(m);
    const auto r = v.checkWritten(eval::writtenForm(m));
    EXPECT_EQ(r.verdict, Verdict::NotVerified) << joined(r.lines);
    const std::string text = joined(r.lines);
    EXPECT_NE(text.find("not verified: output '" + m.graph.value(m.graph.outputs()[0]).name + "' is empty on all 4 inputs"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("not verified: output '" + m.graph.value(m.graph.outputs()[1]).name +
                        "' has every element equal (0) on all 4 inputs"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("outputs match"), std::string::npos) << text;

    // One varying output is verified; the degenerate one is still named.
    GraphBuilder b2("mixed");
    auto y = b2.input("x", DataType::Float, {4});
    b2.output(b2.op("Relu", {y}, {}, "relu"));
    b2.output(b2.op("Mul", {y, b2.scalar("zero", 0.f)}, {}, "zeros"));
    const Model mixed = b2.finish();
    eval::PipelineVerifier v2(mixed);
    const auto r2 = v2.checkWritten(eval::writtenForm(mixed));
    EXPECT_EQ(r2.verdict, Verdict::Match) << joined(r2.lines);
    EXPECT_NE(joined(r2.lines).find("not verified: output '" + mixed.graph.value(mixed.graph.outputs()[1]).name),
              std::string::npos)
        << joined(r2.lines);
}

TEST(VerifyPipeline, NaturalRangesForImagesAndTokenIds) {
    GraphBuilder b("natural");
    auto image = b.input("image", DataType::Float, {1, 3, 8, 8});
    auto ids = b.input("ids", DataType::Int64, {1, 64});
    auto other = b.input("other", DataType::Float, {16});
    b.output(b.op("Relu", {image}, {}, "r"));
    b.output(b.op("Gather", {b.constant("table", randomFloats({50, 4}, 1)), ids}, {}, "embed"));
    b.output(b.op("Neg", {other}, {}, "n"));
    const Model m = b.finish();
    const auto natural = eval::randomInputs(m, 3, {}, eval::InputRanges::Natural);
    const auto imageValues = eval::toDoubles(*natural[0]);
    EXPECT_GE(*std::min_element(imageValues.begin(), imageValues.end()), 0.0);
    const auto idValues = eval::toDoubles(*natural[1]);
    EXPECT_GT(*std::max_element(idValues.begin(), idValues.end()), 3.0) << "token ids span the table";
    EXPECT_LT(*std::max_element(idValues.begin(), idValues.end()), 50.0);
    const auto otherValues = eval::toDoubles(*natural[2]);
    EXPECT_LT(*std::min_element(otherValues.begin(), otherValues.end()), 0.0) << "not an image: [-1,1)";
    // Uniform is randomInputs as before, for run and verify.
    const auto uniform = eval::randomInputs(m, 3, {}, eval::InputRanges::Uniform);
    const auto plain = eval::randomInputs(m, 3);
    for (size_t i = 0; i < plain.size(); ++i) EXPECT_TRUE(plain[i]->sameContents(*uniform[i])) << i;
    // The verify inputs: natural at each seed, then passlens-cli verify's default.
    const auto inputs = eval::verifyInputs(m, {});
    ASSERT_EQ(inputs.size(), std::size(eval::kVerifySeeds) + 1);
    EXPECT_EQ(inputs.front().label, "seed 1234");
    for (size_t i = 0; i < plain.size(); ++i)
        EXPECT_TRUE(inputs.back().tensors[i]->sameContents(*eval::randomInputs(m, 0)[i])) << i;
}

// The command line: the verdict line names the written file; a file that cannot be written back
// as it is in memory is reported by the same path.
TEST(VerifyPipeline, CliReportsTheWrittenFileCheck) {
    const std::string dir = test::tempDir("verify_cli");
    auto r = test::runCli({"optimize", fixture("resnet_tiny_static.onnx"), "-o", dir + "/o.onnx", "--verify"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("verify: outputs match the original after every pass (input seed 1234) and in the written "
                         "file (inputs seed 1234; seed 0; seed 1; seed 0, uniform"),
              std::string::npos)
        << r.out;
    // A model whose outputs never vary: not verified, exit 1.
    GraphBuilder b("constant");
    auto x = b.input("x", DataType::Float, {4});
    b.output(b.op("Mul", {x, b.scalar("zero", 0.f)}, {}, "zeros"));
    onnxio::exportModelFile(b.finish(), dir + "/constant.onnx");
    auto c = test::runCli({"optimize", dir + "/constant.onnx", "-o", dir + "/c.onnx", "--verify"});
    EXPECT_EQ(c.exitCode, 1) << c.out << c.err;
    EXPECT_NE(c.err.find("verify: not verified: output"), std::string::npos) << c.err;
    EXPECT_EQ(c.out.find("outputs match"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace passlens
