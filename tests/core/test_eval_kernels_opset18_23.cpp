// Interpreter kernels added for opsets 18–23 and detection exports. Expected values are either
// worked out by hand (see the comments) or golden values computed offline with NumPy ports of the
// ONNX reference implementation (onnx/reference/ops/op_<name>.py) — marked "reference port".
// Graphs are built in code (no import), so opsets above libonnx's 17 work here.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "eval/Interpreter.h"
#include "eval/TensorOps.h"
#include "examples/Builder.h"
#include "ir/Error.h"

namespace passlens {
namespace {

using namespace passlens::ir;

std::vector<float> floats(const TensorPtr& t) { return eval::toFloats(*t); }
std::vector<int64_t> ints(const TensorPtr& t) { return eval::toInt64s(*t); }

/// sin(i * a + b) for i = 0..n-1, times k (the sequences the golden script used).
TensorPtr seq(std::vector<int64_t> dims, double a, double b = 0, double k = 1) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = float(std::sin(double(i) * a + b) * k);
    return floatTensor(std::move(dims), std::move(v));
}

TensorPtr boolTensor(std::vector<int64_t> dims, const std::vector<bool>& v) {
    std::vector<uint8_t> bytes(v.begin(), v.end());
    return makeTensor(DataType::Bool, std::move(dims), bytes.data(), bytes.size());
}

template <class T> TensorPtr typed(DataType dt, std::vector<int64_t> dims, std::vector<T> v) {
    return makeTensorOf<T>(dt, std::move(dims), v);
}

/// One node whose inputs are initializers (nullptr = omitted optional input).
Model oneOp(int64_t opset, const std::string& op, const std::vector<TensorPtr>& inputs, std::vector<Attribute> attrs = {},
            size_t outputs = 1) {
    GraphBuilder b(op, opset);
    std::vector<ValueId> ins;
    for (size_t i = 0; i < inputs.size(); ++i)
        ins.push_back(inputs[i] ? b.constant("in" + std::to_string(i), inputs[i]) : kNone);
    for (ValueId v : b.opMulti(op, ins, outputs, std::move(attrs), "node")) b.output(v);
    return b.model();
}

std::vector<TensorPtr> runOp(int64_t opset, const std::string& op, const std::vector<TensorPtr>& inputs,
                             std::vector<Attribute> attrs = {}, size_t outputs = 1) {
    return eval::run(oneOp(opset, op, inputs, std::move(attrs), outputs), {});
}

/// isSupported() refuses before running, and running throws Unsupported; returns the reason.
std::string refusal(int64_t opset, const std::string& op, const std::vector<TensorPtr>& inputs, std::vector<Attribute> attrs = {},
                    size_t outputs = 1) {
    Model m = oneOp(opset, op, inputs, std::move(attrs), outputs);
    std::string why;
    EXPECT_FALSE(eval::isSupported(m, m.graph, m.graph.node(m.graph.nodeOrder()[0]), &why)) << op;
    try {
        eval::run(m, {});
        ADD_FAILURE() << op << ": expected Unsupported";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
        EXPECT_NE(std::string(e.what()).find(op), std::string::npos) << e.what();
    }
    return why;
}

/// A BadInput error (never a crash) whose message contains `needle`.
void expectBadInput(const std::function<void()>& f, const std::string& needle) {
    try {
        f();
        ADD_FAILURE() << "expected BadInput mentioning '" << needle << "'";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
}

void expectNear(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// ---------------- NonMaxSuppression ----------------

TEST(EvalKernelsDetection, NmsPerClassWithScoreThreshold) {
    // Corner boxes [y1, x1, y2, x2]: b1 overlaps b0 with IoU 0.9/1.1 = 0.82; b2 is disjoint; b3 is b0
    // with flipped corners. Class 0 keeps b1 (0.95) and b2, drops b0 (suppressed by b1) and b3 (score
    // 0.3 < 0.4); class 1 keeps b3 (0.7) then b2 (0.6), the others are under the score threshold.
    auto boxes = floatTensor({1, 4, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3, 1, 1, 0, 0});
    auto scores = floatTensor({1, 2, 4}, {0.9f, 0.95f, 0.5f, 0.3f, 0.1f, 0.2f, 0.6f, 0.7f});
    auto out = runOp(11, "NonMaxSuppression", {boxes, scores, int64Tensor({1}, {3}), floatTensor({1}, {0.5f}), floatTensor({1}, {0.4f})});
    EXPECT_EQ(out[0]->dtype, DataType::Int64);
    EXPECT_EQ(out[0]->dims, (std::vector<int64_t>{4, 3}));
    EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{0, 0, 1, 0, 0, 2, 0, 1, 3, 0, 1, 2}));
    // max_output_boxes_per_class = 1: the best box per class only
    out = runOp(11, "NonMaxSuppression", {boxes, scores, int64Tensor({1}, {1}), floatTensor({1}, {0.5f}), floatTensor({1}, {0.4f})});
    EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{0, 0, 1, 0, 1, 3}));
}

TEST(EvalKernelsDetection, NmsCenterPointBoxes) {
    // [x_c, y_c, w, h]: b1 overlaps b0 (IoU 0.82); b2 (0.5×0.5 inside b0) overlaps b1 with IoU
    // 0.25/1.0 = 0.25, kept at threshold 0.3 and suppressed at 0.2.
    auto boxes = floatTensor({1, 3, 4}, {0.5f, 0.5f, 1, 1, 0.6f, 0.5f, 1, 1, 0.5f, 0.5f, 0.5f, 0.5f});
    auto scores = floatTensor({1, 1, 3}, {0.8f, 0.9f, 0.7f});
    auto cpb = Attribute::makeInt("center_point_box", 1);
    auto out = runOp(11, "NonMaxSuppression", {boxes, scores, int64Tensor({1}, {10}), floatTensor({1}, {0.3f})}, {cpb});
    EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
    out = runOp(11, "NonMaxSuppression", {boxes, scores, int64Tensor({1}, {10}), floatTensor({1}, {0.2f})}, {cpb});
    EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{0, 0, 1}));
}

TEST(EvalKernelsDetection, NmsEqualScoresKeepTheLowerIndexFirst) {
    auto boxes = floatTensor({1, 3, 4}, {0, 0, 1, 1, 0, 5, 1, 6, 0, 10, 1, 11});
    auto scores = floatTensor({1, 1, 3}, {0.5f, 0.7f, 0.5f});
    auto out = runOp(10, "NonMaxSuppression", {boxes, scores, int64Tensor({}, {5})});
    EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0, 0, 2}));
}

TEST(EvalKernelsDetection, NmsEdgeCasesGiveEmptySelections) {
    // no boxes at all
    auto out = runOp(11, "NonMaxSuppression", {floatTensor({1, 0, 4}, {}), floatTensor({1, 2, 0}, {}), int64Tensor({1}, {5})});
    EXPECT_EQ(out[0]->dims, (std::vector<int64_t>{0, 3}));
    // max_output_boxes_per_class omitted: the spec's default is 0 boxes
    auto boxes = floatTensor({1, 1, 4}, {0, 0, 1, 1});
    out = runOp(11, "NonMaxSuppression", {boxes, floatTensor({1, 1, 1}, {0.9f})});
    EXPECT_EQ(out[0]->dims, (std::vector<int64_t>{0, 3}));
    // every score under the threshold
    out = runOp(11, "NonMaxSuppression", {boxes, floatTensor({1, 1, 1}, {0.1f}), int64Tensor({1}, {5}), nullptr, floatTensor({1}, {0.5f})});
    EXPECT_EQ(out[0]->dims, (std::vector<int64_t>{0, 3}));
}

TEST(EvalKernelsDetection, NmsRefusesAndRejectsClearly) {
    auto boxes = floatTensor({1, 1, 4}, {0, 0, 1, 1});
    auto scores = floatTensor({1, 1, 1}, {0.9f});
    const auto why = refusal(11, "NonMaxSuppression", {boxes, scores}, {Attribute::makeInt("center_point_box", 2)});
    EXPECT_NE(why.find("center_point_box=2"), std::string::npos) << why;
    expectBadInput([&] { runOp(11, "NonMaxSuppression", {floatTensor({1, 1, 3}, {0, 0, 1}), scores}); }, "boxes");
    expectBadInput([&] { runOp(11, "NonMaxSuppression", {boxes, floatTensor({1, 1, 2}, {0.9f, 0.1f})}); }, "scores");
}

// ---------------- RoiAlign ----------------

TEST(EvalKernelsDetection, RoiAlignMaxModeMatchesReference) {
    // reference port (op_roi_align.py): max of the weighted corner values per sample point, as
    // ONNX Runtime computes it; half_pixel, sampling_ratio 2, output 2×2.
    auto x = seq({2, 2, 5, 5}, 0.37);
    std::vector<float> xv = floats(x);
    for (auto& v : xv) v = v * 2 + 0.5f;
    x = floatTensor({2, 2, 5, 5}, xv);
    auto rois = floatTensor({2, 4}, {0.5f, 1.0f, 3.5f, 4.0f, 1.0f, 0.0f, 4.0f, 2.5f});
    auto idx = int64Tensor({2}, {1, 0});
    auto out = runOp(16, "RoiAlign", {x, rois, idx},
                     {Attribute::makeString("mode", "max"), Attribute::makeInt("output_height", 2), Attribute::makeInt("output_width", 2),
                      Attribute::makeInt("sampling_ratio", 2)});
    ASSERT_EQ(out[0]->dims, (std::vector<int64_t>{2, 2, 2, 2}));
    expectNear(floats(out[0]), {1.84583081f, 1.5833743f, 0.253199923f, 0.303248089f, 0.703463917f, 1.03802764f, 1.57030898f, 1.14036125f,
                                1.15535989f, 2.0049727f, 1.71702148f, 0.907083213f, 0.105972371f, 0.0288344179f, 1.12406747f, 1.50032588f});

    // opset 10 has no coordinate_transformation_mode and behaves as output_half_pixel
    // (reference port: avg, adaptive sampling, spatial_scale 0.5, output 2×3)
    auto rois2 = floatTensor({2, 4}, {1, 2, 7, 8, 2, 0, 8, 5});
    std::vector<Attribute> avg{Attribute::makeInt("output_height", 2), Attribute::makeInt("output_width", 3),
                               Attribute::makeFloat("spatial_scale", 0.5f)};
    const std::vector<float> want{0.331583014f, -0.0679171208f, -0.390552338f, 0.181407793f, 0.60205782f, 1.0088948f,
                                  0.468263568f, 0.885638915f, 1.25081984f, 1.00564836f, 0.598453248f, 0.177932953f,
                                  1.71384489f, 1.52914535f, 1.20515583f, -0.456393679f, -0.657104591f, -0.701206825f,
                                  -0.74466785f, -0.635772787f, -0.373156206f, 1.314185f, 1.58061483f, 1.70078852f};
    expectNear(floats(runOp(10, "RoiAlign", {x, rois2, idx}, avg)[0]), want);
    auto ohp = avg;
    ohp.push_back(Attribute::makeString("coordinate_transformation_mode", "output_half_pixel"));
    expectNear(floats(runOp(16, "RoiAlign", {x, rois2, idx}, ohp)[0]), want);
    // ...and opset 16's default (half_pixel) differs
    auto hp = floats(runOp(16, "RoiAlign", {x, rois2, idx}, avg)[0]);
    EXPECT_GT(std::fabs(hp[0] - want[0]), 1e-3f);
}

TEST(EvalKernelsDetection, RoiAlignRefusesUnknownModesAndBadIndices) {
    auto x = seq({1, 1, 4, 4}, 0.3);
    auto rois = floatTensor({1, 4}, {0, 0, 2, 2});
    auto why = refusal(16, "RoiAlign", {x, rois, int64Tensor({1}, {0})}, {Attribute::makeString("mode", "median")});
    EXPECT_NE(why.find("mode 'median'"), std::string::npos) << why;
    why = refusal(16, "RoiAlign", {x, rois, int64Tensor({1}, {0})}, {Attribute::makeString("coordinate_transformation_mode", "corners")});
    EXPECT_NE(why.find("coordinate_transformation_mode 'corners'"), std::string::npos) << why;
    expectBadInput([&] { runOp(16, "RoiAlign", {x, rois, int64Tensor({1}, {3})}); }, "batch index 3");
    // zero rois: an empty output
    auto out = runOp(16, "RoiAlign", {x, floatTensor({0, 4}, {}), int64Tensor({0}, {})});
    EXPECT_EQ(out[0]->dims, (std::vector<int64_t>{0, 1, 1, 1}));
}

// ---------------- Normalizations ----------------

TEST(EvalKernelsNorm, GroupNormalizationPerGroupAt18PerChannelAt21) {
    // reference port: x = sin(0.33 i), [2, 4, 3], 2 groups
    auto x = seq({2, 4, 3}, 0.33);
    auto at = Attribute::makeInt("num_groups", 2);
    auto out18 = runOp(18, "GroupNormalization", {x, floatTensor({2}, {2, -1}), floatTensor({2}, {0.5f, 1})}, {at});
    expectNear(floats(out18[0]), {-2.95132631f, -1.15654445f, 0.444552966f, 1.679183f, 2.41411018f, 2.5700246f, -0.308880664f, 0.057604156f,
                                  0.587888342f, 1.22474611f, 1.89945075f, 2.53919131f, 2.2485134f, -0.495159011f, -1.75541274f, -1.39624709f,
                                  0.543578442f, 3.85472699f, 2.58879436f, 1.88474877f, 1.17760469f, 0.543673779f, 0.0513669014f, -0.246188496f},
               2e-5f);
    auto out21 = runOp(21, "GroupNormalization", {x, floatTensor({4}, {1, 2, 3, 4}), floatTensor({4}, {0.1f, 0.2f, 0.3f, 0.4f})}, {at});
    expectNear(floats(out21[0]), {-1.62566315f, -0.728272224f, 0.0722764829f, 1.379183f, 2.11411018f, 2.2700246f, 4.22664199f, 3.12718753f,
                                  1.53633498f, -0.498984433f, -3.197803f, -5.75676523f, 0.974256702f, -0.397579505f, -1.02770637f, -1.69624709f,
                                  0.243578442f, 3.55472699f, -4.46638307f, -2.35424631f, -0.23281406f, 2.22530488f, 4.19453239f, 5.38475398f},
               2e-5f);
    // per-channel scale at opset 18 is a mismatch, not silently reinterpreted
    expectBadInput([&] { runOp(18, "GroupNormalization", {x, floatTensor({4}, {1, 2, 3, 4}), floatTensor({4}, {0, 0, 0, 0})}, {at}); },
                   "num_groups");
    expectBadInput([&] { runOp(21, "GroupNormalization", {x, floatTensor({4}, {1, 2, 3, 4}), floatTensor({4}, {0, 0, 0, 0})},
                               {Attribute::makeInt("num_groups", 3)}); },
                   "num_groups=3");
    const auto why = refusal(21, "GroupNormalization", {x, floatTensor({4}, {1, 2, 3, 4}), floatTensor({4}, {0, 0, 0, 0})},
                             {at, Attribute::makeInt("stash_type", 16)});
    EXPECT_NE(why.find("stash_type=16"), std::string::npos) << why;
    // not an op before 18
    std::string whyOld;
    Model m = oneOp(17, "GroupNormalization", {x, floatTensor({2}, {1, 1}), floatTensor({2}, {0, 0})}, {at});
    EXPECT_FALSE(eval::isSupported(m, m.graph.node(m.graph.nodeOrder()[0]), &whyOld));
}

TEST(EvalKernelsNorm, RmsNormalizationLastAxisAndFromAxis1) {
    // reference port (op_rms_normalization.py)
    auto x = seq({2, 3, 4}, 0.41);
    auto out = runOp(23, "RMSNormalization", {x, floatTensor({4}, {0.5f, 1.5f, -1, 2})});
    expectNear(floats(out[0]), {0, 0.950811595f, -1.16267882f, 2.99751902f, 0.66483816f, 1.77410362f, -0.839746843f, 0.715125769f,
                                -0.0995674935f, -1.12870093f, 1.18107185f, -2.82780777f, -0.708594719f, -1.7711083f, 0.748570964f,
                                -0.384642341f, 0.18161652f, 1.26412585f, -1.18257514f, 2.65275602f, 0.750905701f, 1.74228081f,
                                -0.628697945f, -0.0166731746f});
    out = runOp(23, "RMSNormalization", {x, seq({3, 4}, 0.2, 1)}, {Attribute::makeInt("axis", 1)});
    expectNear(floats(out[0]), {0, 0.536549883f, 1.0405597f, 1.36056564f, 1.40306811f, 1.16529395f, 0.735644984f, 0.261695297f,
                                -0.102714085f, -0.252214282f, -0.166769842f, 0.0825834487f, -1.19045793f, -1.09858834f, -0.73640114f,
                                -0.191906141f, 0.384788418f, 0.833586453f, 1.04004582f, 0.974573567f, 0.701128394f, 0.352377907f,
                                0.0803494607f, 0.000440718373f});
    expectBadInput([&] { runOp(23, "RMSNormalization", {x, floatTensor({3}, {1, 1, 1})}); }, "broadcast");
}

TEST(EvalKernelsNorm, LpNormalizationByHand) {
    // rows [3, 4] and [0, 0]: L2 → [0.6, 0.8] and zeros (a zero vector stays zero); L1 → [3/7, 4/7]
    auto x = floatTensor({2, 2}, {3, 4, 0, 0});
    expectNear(floats(runOp(1, "LpNormalization", {x})[0]), {0.6f, 0.8f, 0, 0});
    expectNear(floats(runOp(1, "LpNormalization", {x}, {Attribute::makeInt("p", 1)})[0]), {3.f / 7, 4.f / 7, 0, 0});
    // along axis 0: columns [3, 0] and [4, 0]
    expectNear(floats(runOp(1, "LpNormalization", {x}, {Attribute::makeInt("axis", 0)})[0]), {1, 1, 0, 0});
    const auto why = refusal(1, "LpNormalization", {x}, {Attribute::makeInt("p", 3)});
    EXPECT_NE(why.find("p=3"), std::string::npos) << why;
}

TEST(EvalKernelsNorm, MeanVarianceNormalizationByHand) {
    // axes {1}: row [1, 3] → mean 2, std 1 → [-1, 1]; row [2, 2] → std 0 → [0, 0]
    auto out = runOp(13, "MeanVarianceNormalization", {floatTensor({2, 2}, {1, 3, 2, 2})}, {Attribute::makeInts("axes", {1})});
    expectNear(floats(out[0]), {-1, 1, 0, 0});
}

// ---------------- Attention / RotaryEmbedding ----------------

TEST(EvalKernelsAttention, FourDimensionalMultiHead) {
    // reference port (op_attention.py), default scale 1/sqrt(4)
    auto out = runOp(23, "Attention", {seq({1, 2, 3, 4}, 0.37), seq({1, 2, 3, 4}, 0.53, 1), seq({1, 2, 3, 4}, 0.71, 2)});
    ASSERT_EQ(out[0]->dims, (std::vector<int64_t>{1, 2, 3, 4}));
    expectNear(floats(out[0]), {0.704797982f, 0.428426042f, -0.0549940284f, -0.511836791f, 0.753334553f, 0.375947791f, -0.183125608f,
                                -0.653698751f, -0.179237458f, -0.112130224f, 0.00916688358f, 0.126033854f, 0.248259235f, 0.274252332f,
                                0.167705791f, -0.019888976f, -0.39956747f, -0.581449179f, -0.482330311f, -0.15011266f, -0.737378735f,
                                -0.850051323f, -0.551914297f, 0.0129497996f});
}

TEST(EvalKernelsAttention, ThreeDimensionalGqaCausalWithPastCache) {
    // reference port: q_num_heads 4, kv_num_heads 2, head size 2, one cached step, bottom-right causal
    auto out = runOp(23, "Attention",
                     {seq({1, 2, 8}, 0.3), seq({1, 2, 4}, 0.45, 0.5), seq({1, 2, 4}, 0.6, 1.5), nullptr, seq({1, 2, 1, 2}, 0.8, 0.2),
                      seq({1, 2, 1, 2}, 0.9, 0.7)},
                     {Attribute::makeInt("q_num_heads", 4), Attribute::makeInt("kv_num_heads", 2), Attribute::makeInt("is_causal", 1)}, 3);
    ASSERT_EQ(out[0]->dims, (std::vector<int64_t>{1, 2, 8}));
    expectNear(floats(out[0]), {0.820338558f, 0.931591346f, 0.829377445f, 0.928102356f, 0.499268096f, -0.198836607f, 0.50102378f,
                                -0.199840147f, 0.305753547f, 0.267649292f, 0.289086271f, 0.255585467f, -0.281588565f, -0.400020171f,
                                -0.469721547f, -0.445026967f});
    ASSERT_EQ(out[1]->dims, (std::vector<int64_t>{1, 2, 3, 2}));
    expectNear(floats(out[1]), {0.198669331f, 0.841470985f, 0.479425539f, 0.813415505f, 0.745705212f, 0.381660992f, 0.973847631f,
                                0.515501372f, 0.98544973f, 0.961275203f, -0.0583741434f, -0.486786649f});
    EXPECT_EQ(out[2]->dims, (std::vector<int64_t>{1, 2, 3, 2}));
}

TEST(EvalKernelsAttention, BoolMaskSoftcapAndFullyMaskedRow) {
    // reference port: row 1 of the mask is all False → a zero output row (the spec's errata), and
    // qk_matmul_output_mode 3 returns the softmax with that row zero too
    auto q = seq({1, 1, 3, 2}, 0.9), k = seq({1, 1, 4, 2}, 0.4, 1), v = seq({1, 1, 4, 3}, 0.5, 2);
    auto mask = boolTensor({3, 4}, {true, false, true, true, false, false, false, false, true, true, true, false});
    auto out = runOp(23, "Attention", {q, k, v, mask},
                     {Attribute::makeFloat("scale", 0.7f), Attribute::makeFloat("softcap", 2.0f), Attribute::makeInt("qk_matmul_output_mode", 3)},
                     4);
    expectNear(floats(out[0]), {0.188792981f, 0.207083123f, 0.174672095f, 0, 0, 0, -0.31701865f, -0.387050132f, -0.362318242f});
    expectNear(floats(out[3]), {0.485282241f, 0, 0.309357153f, 0.205360607f, 0, 0, 0, 0, 0.254944104f, 0.272327475f, 0.47272842f, 0});
    for (float f : floats(out[0])) EXPECT_FALSE(std::isnan(f));
}

TEST(EvalKernelsAttention, FloatMaskAndQkOutputWithBias) {
    // reference port: additive mask 2·sin(1.3 i), qk_matmul_output_mode 2 (scores + mask)
    auto q = seq({1, 1, 3, 2}, 0.9), k = seq({1, 1, 4, 2}, 0.4, 1), v = seq({1, 1, 4, 3}, 0.5, 2);
    auto out = runOp(23, "Attention", {q, k, v, seq({3, 4}, 1.3, 0, 2)}, {Attribute::makeInt("qk_matmul_output_mode", 2)}, 4);
    expectNear(floats(out[0]), {-0.32317801f, -0.581559532f, -0.697554999f, -0.677613207f, -0.576301557f, -0.333891186f, 0.0635031813f,
                                0.471377157f, 0.763841564f});
    expectNear(floats(out[3]), {0.545836437f, 2.37493911f, 1.10916852f, -1.71443782f, -0.889654316f, 1.34517556f, 2.39471521f, 0.277322057f,
                                -2.60011772f, -2.38754047f, 0.581484234f, 2.47643239f});
}

TEST(EvalKernelsAttention, RefusesWhatItDoesNotImplement) {
    auto q = seq({1, 1, 2, 2}, 0.9), k = seq({1, 1, 2, 2}, 0.4), v = seq({1, 1, 2, 2}, 0.5);
    auto why = refusal(23, "Attention", {q, k, v}, {Attribute::makeInt("qk_matmul_output_mode", 4)}, 4);
    EXPECT_NE(why.find("qk_matmul_output_mode=4"), std::string::npos) << why;
    why = refusal(23, "Attention", {q, k, v}, {Attribute::makeFloat("softcap", 5.0f)}, 4);
    EXPECT_NE(why.find("softcap"), std::string::npos) << why;
    // integer additive masks are outside what the kernel computes
    try {
        runOp(23, "Attention", {q, k, v, typed<int32_t>(DataType::Int32, {2, 2}, {0, 0, 0, 0})});
        ADD_FAILURE() << "expected Unsupported";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
        EXPECT_NE(std::string(e.what()).find("attn_mask"), std::string::npos) << e.what();
    }
    expectBadInput([&] { runOp(23, "Attention", {seq({1, 2, 4}, 0.3), seq({1, 2, 4}, 0.3), seq({1, 2, 4}, 0.3)}); }, "q_num_heads");
    expectBadInput([&] { runOp(23, "Attention", {q, k, v, nullptr, seq({1, 1, 1, 2}, 0.1)}); }, "together");
    // Attention is an opset-23 op
    Model m = oneOp(22, "Attention", {q, k, v});
    EXPECT_FALSE(eval::isSupported(m, m.graph.node(m.graph.nodeOrder()[0])));
}

TEST(EvalKernelsAttention, RotaryEmbeddingWithPositionIdsAndInterleaved) {
    // reference port (op_rotary_embedding.py): 4-D input with position ids into a 5-row cache
    auto x = seq({1, 2, 3, 4}, 0.3);
    auto angles = floats(seq({5, 2}, 0.7));
    std::vector<float> c, s;
    for (float a : angles) { c.push_back(std::cos(a)); s.push_back(std::sin(a)); }
    auto out = runOp(23, "RotaryEmbedding", {x, floatTensor({5, 2}, c), floatTensor({5, 2}, s), int64Tensor({1, 3}, {4, 0, 2})});
    expectNear(floats(out[0]), {0.333233786f, 0.282308275f, 0.45582493f, 0.788184799f, 0.932039086f, 0.279146582f, 0.973847631f,
                                1.28926485f, 0.591522694f, 0.347147398f, 0.35533965f, -0.29500161f, -0.871614105f, -0.671233624f,
                                -0.442444936f, -0.98895543f, -0.996164609f, -0.409526576f, -0.772764488f, -0.996330957f, -0.366305675f,
                                0.214561248f, 0.202364015f, 0.537437196f});
    // 3-D input, num_heads 2, interleaved, only the first 2 of 6 head dims rotated, caches [1, 3, 1]
    auto a3 = floats(seq({1, 3, 1}, 0.9));
    std::vector<float> c3, s3;
    for (float a : a3) { c3.push_back(std::cos(a)); s3.push_back(std::sin(a)); }
    out = runOp(23, "RotaryEmbedding", {seq({1, 3, 12}, 0.25), floatTensor({1, 3, 1}, c3), floatTensor({1, 3, 1}, s3)},
                {Attribute::makeInt("interleaved", 1), Attribute::makeInt("rotary_embedding_dim", 2), Attribute::makeInt("num_heads", 2)});
    expectNear(floats(out[0]), {0, 0.247403959f, 0.479425539f, 0.68163876f, 0.841470985f, 0.948984619f, 0.997494987f, 0.983985947f,
                                0.909297427f, 0.778073197f, 0.598472144f, 0.381660992f, 0.176340271f, 0.0229162053f, -0.350783228f,
                                -0.571561319f, -0.756802495f, -0.894989358f, 0.0124932515f, -1.39785376f, -0.958924275f, -0.858934493f,
                                -0.705540326f, -0.508279077f, -0.129624433f, -0.249742642f, 0.215119988f, 0.450044074f, 0.656986599f,
                                0.823080879f, -0.295317608f, 1.33486261f, 0.989358247f, 0.92260421f, 0.798487113f, 0.624723954f});
    expectBadInput([&] { runOp(23, "RotaryEmbedding", {x, floatTensor({5, 2}, c), floatTensor({5, 2}, s), int64Tensor({1, 3}, {4, 0, 5})}); },
                   "position id 5");
    expectBadInput([&] { runOp(23, "RotaryEmbedding", {seq({1, 3, 12}, 0.25), floatTensor({1, 3, 1}, c3), floatTensor({1, 3, 1}, s3)}); },
                   "num_heads");
}

// ---------------- Bitwise ----------------

TEST(EvalKernelsBitwise, AndOrXorNotWithBroadcast) {
    auto a = typed<int32_t>(DataType::Int32, {2, 2}, {0b1100, 0b1010, -1, 7});
    auto b = typed<int32_t>(DataType::Int32, {2}, {0b1010, 0b0110});
    EXPECT_EQ(ints(runOp(18, "BitwiseAnd", {a, b})[0]), (std::vector<int64_t>{0b1000, 0b0010, 0b1010, 6}));
    EXPECT_EQ(ints(runOp(18, "BitwiseOr", {a, b})[0]), (std::vector<int64_t>{0b1110, 0b1110, -1, 7}));
    EXPECT_EQ(ints(runOp(18, "BitwiseXor", {a, b})[0]), (std::vector<int64_t>{0b0110, 0b1100, ~0b1010, 1}));
    auto u = typed<uint8_t>(DataType::UInt8, {3}, {0, 0x0F, 0xFF});
    auto out = runOp(18, "BitwiseNot", {u});
    EXPECT_EQ(out[0]->dtype, DataType::UInt8);
    EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{0xFF, 0xF0, 0}));
    // float inputs are not a bitwise type
    try {
        runOp(18, "BitwiseAnd", {floatTensor({1}, {1}), floatTensor({1}, {1})});
        ADD_FAILURE() << "expected Unsupported";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
        EXPECT_NE(std::string(e.what()).find("float"), std::string::npos) << e.what();
    }
}

// ---------------- Spatial ----------------

TEST(EvalKernelsSpatial, CenterCropPadCropsAndPadsAroundTheCentre) {
    // 1-D by hand: [1..5] cropped to 2 → start (5-2)/2 = 1 → [2, 3]; padded to 8 → start 3/2 = 1
    auto x = floatTensor({5}, {1, 2, 3, 4, 5});
    expectNear(floats(runOp(18, "CenterCropPad", {x, int64Tensor({1}, {2})})[0]), {2, 3});
    expectNear(floats(runOp(18, "CenterCropPad", {x, int64Tensor({1}, {8})})[0]), {0, 1, 2, 3, 4, 5, 0, 0});
    // 2-D with axes: crop rows 3 → 1 (middle row), pad columns 2 → 4 (one zero each side)
    auto m = typed<int64_t>(DataType::Int64, {3, 2}, {1, 2, 3, 4, 5, 6});
    auto out = runOp(18, "CenterCropPad", {m, int64Tensor({2}, {4, 1})}, {Attribute::makeInts("axes", {1, 0})});
    EXPECT_EQ(out[0]->dims, (std::vector<int64_t>{1, 4}));
    EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{0, 3, 4, 0}));
}

TEST(EvalKernelsSpatial, Col2ImSumsOverlappingBlocks) {
    // image 1×3, blocks 1×2, stride 1: columns [[a0, a1], [b0, b1]] (rows = kernel taps) →
    // pixel 0 = a0, pixel 1 = b0 + a1, pixel 2 = b1
    auto x = floatTensor({1, 2, 2}, {1, 2, 10, 20});
    auto out = runOp(18, "Col2Im", {x, int64Tensor({2}, {1, 3}), int64Tensor({2}, {1, 2})});
    EXPECT_EQ(out[0]->dims, (std::vector<int64_t>{1, 1, 1, 3}));
    expectNear(floats(out[0]), {1, 12, 20});
    // the spec's example: 5×5 image from 1×5 blocks with 5 positions; every pixel covered once
    std::vector<float> cols(25);
    for (int i = 0; i < 25; ++i) cols[i] = float(i + 1);
    out = runOp(18, "Col2Im", {floatTensor({1, 5, 5}, cols), int64Tensor({2}, {5, 5}), int64Tensor({2}, {1, 5})});
    // tap k of block l lands on row l, column k: y[l][k] = cols[k*5 + l]
    auto y = floats(out[0]);
    for (int l = 0; l < 5; ++l)
        for (int k = 0; k < 5; ++k) EXPECT_EQ(y[l * 5 + k], cols[k * 5 + l]);
    expectBadInput([&] { runOp(18, "Col2Im", {x, int64Tensor({2}, {1, 4}), int64Tensor({2}, {1, 2})}); }, "blocks");
}

TEST(EvalKernelsSpatial, LpPoolByHand) {
    // 1×1×2×2 window over [3, 4; 0, 0]: L2 = 5, L1 = 7; opset 18 ceil_mode on a 1×3 input with a 1×2
    // window, stride 2 → windows [0,1] and [2] → sqrt(1+4)=√5 and 3
    auto x = floatTensor({1, 1, 2, 2}, {3, 4, 0, 0});
    auto ks = Attribute::makeInts("kernel_shape", {2, 2});
    expectNear(floats(runOp(11, "LpPool", {x}, {ks})[0]), {5});
    expectNear(floats(runOp(11, "LpPool", {x}, {ks, Attribute::makeInt("p", 1)})[0]), {7});
    auto row = floatTensor({1, 1, 1, 3}, {1, -2, 3});
    auto out = runOp(18, "LpPool", {row}, {Attribute::makeInts("kernel_shape", {1, 2}), Attribute::makeInts("strides", {1, 2}),
                                           Attribute::makeInt("ceil_mode", 1)});
    ASSERT_EQ(out[0]->dims, (std::vector<int64_t>{1, 1, 1, 2}));
    expectNear(floats(out[0]), {std::sqrt(5.0f), 3});
    // dilations 2 on [1, -2, 3]: one window over elements 0 and 2 → sqrt(10)
    out = runOp(18, "LpPool", {row}, {Attribute::makeInts("kernel_shape", {1, 2}), Attribute::makeInts("dilations", {1, 2})});
    expectNear(floats(out[0]), {std::sqrt(10.0f)});
}

TEST(EvalKernelsSpatial, AveragePoolDilationsAtOpset19) {
    // [1, 2, 3, 4, 5] with a 2-wide window dilated by 2: windows {1,3}, {2,4}, {3,5} → 2, 3, 4
    auto x = floatTensor({1, 1, 5}, {1, 2, 3, 4, 5});
    auto out = runOp(19, "AveragePool", {x}, {Attribute::makeInts("kernel_shape", {2}), Attribute::makeInts("dilations", {2})});
    expectNear(floats(out[0]), {2, 3, 4});
}

TEST(EvalKernelsSpatial, GridSampleModeNamesByOpset) {
    auto x = seq({1, 2, 3, 4}, 0.7);
    auto grid = seq({1, 2, 3, 2}, 1.1, 0.3, 1.2);
    for (auto [old, now] : {std::pair<const char*, const char*>{"bilinear", "linear"}, {"bicubic", "cubic"}, {"nearest", "nearest"}}) {
        auto a = floats(runOp(16, "GridSample", {x, grid}, {Attribute::makeString("mode", old)})[0]);
        auto b = floats(runOp(20, "GridSample", {x, grid}, {Attribute::makeString("mode", now)})[0]);
        expectNear(b, a, 0);
    }
    auto why = refusal(20, "GridSample", {x, grid}, {Attribute::makeString("mode", "bilinear")});
    EXPECT_NE(why.find("mode 'bilinear'"), std::string::npos) << why;
    why = refusal(16, "GridSample", {x, grid}, {Attribute::makeString("mode", "linear")});
    EXPECT_NE(why.find("mode 'linear'"), std::string::npos) << why;
    why = refusal(20, "GridSample", {x, grid}, {Attribute::makeString("padding_mode", "wrap")});
    EXPECT_NE(why.find("padding_mode 'wrap'"), std::string::npos) << why;
}

TEST(EvalKernelsSpatial, GridSampleVolumetricIdentityAndMidpoints) {
    // 5-D input (opset 20): an identity grid with align_corners=1 reproduces the input exactly
    auto x = seq({1, 1, 2, 2, 3}, 0.9);
    std::vector<float> g;
    for (int d = 0; d < 2; ++d)
        for (int h = 0; h < 2; ++h)
            for (int w = 0; w < 3; ++w) {
                g.push_back(-1.0f + float(w));  // x along W: -1, 0, 1
                g.push_back(-1.0f + 2.0f * float(h));
                g.push_back(-1.0f + 2.0f * float(d));
            }
    auto out = runOp(20, "GridSample", {x, floatTensor({1, 2, 2, 3, 3}, g)}, {Attribute::makeInt("align_corners", 1)});
    expectNear(floats(out[0]), floats(x));
    // the centre point (0, 0, 0) is the mean of the eight corners around W index 1
    out = runOp(20, "GridSample", {x, floatTensor({1, 1, 1, 1, 3}, {0.0f, 0.0f, 0.0f})}, {Attribute::makeInt("align_corners", 1)});
    auto xv = floats(x);
    const float want = (xv[1] + xv[4] + xv[7] + xv[10]) / 4;  // W index 1 of the four (d, h) rows
    expectNear(floats(out[0]), {want});
    // 5-D is not allowed at opset 16
    expectBadInput([&] { runOp(16, "GridSample", {x, floatTensor({1, 1, 1, 1, 3}, {0, 0, 0})}); }, "4-D");
}

TEST(EvalKernelsSpatial, AffineGridMatchesReference) {
    // reference port (op_affine_grid.py), size [1, 1, 2, 3]
    auto theta = floatTensor({1, 2, 3}, {0.9f, -0.2f, 0.1f, 0.3f, 1.1f, -0.4f});
    auto out = runOp(20, "AffineGrid", {theta, int64Tensor({4}, {1, 1, 2, 3})});
    ASSERT_EQ(out[0]->dims, (std::vector<int64_t>{1, 2, 3, 2}));
    expectNear(floats(out[0]), {-0.4f, -1.15f, 0.2f, -0.95f, 0.8f, -0.75f, -0.6f, -0.05f, 0, 0.15f, 0.6f, 0.35f});
    out = runOp(20, "AffineGrid", {theta, int64Tensor({4}, {1, 1, 2, 3})}, {Attribute::makeInt("align_corners", 1)});
    expectNear(floats(out[0]), {-0.6f, -1.8f, 0.3f, -1.5f, 1.2f, -1.2f, -1, 0.4f, -0.1f, 0.7f, 0.8f, 1});
    expectBadInput([&] { runOp(20, "AffineGrid", {theta, int64Tensor({5}, {1, 1, 2, 3, 4})}); }, "theta");
}

// ---------------- Einsum ----------------

TEST(EvalKernelsEinsum, ExplicitImplicitEllipsisAndDiagonal) {
    auto a = floatTensor({2, 3}, {1, 2, 3, 4, 5, 6});
    auto b = floatTensor({3, 2}, {1, 0, 0, 1, 1, 1});
    auto eq = [](const char* e) { return std::vector<Attribute>{Attribute::makeString("equation", e)}; };
    // [1 2 3; 4 5 6] · [1 0; 0 1; 1 1] = [4 5; 10 11]
    expectNear(floats(runOp(12, "Einsum", {a, b}, eq("ij,jk->ik"))[0]), {4, 5, 10, 11});
    expectNear(floats(runOp(12, "Einsum", {a, b}, eq("ij,jk"))[0]), {4, 5, 10, 11});  // implicit: i, k
    expectNear(floats(runOp(12, "Einsum", {a}, eq("ij->ji"))[0]), {1, 4, 2, 5, 3, 6});
    expectNear(floats(runOp(12, "Einsum", {a}, eq("ij->"))[0]), {21});
    auto sq = floatTensor({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    expectNear(floats(runOp(12, "Einsum", {sq}, eq("ii->i"))[0]), {1, 5, 9});
    expectNear(floats(runOp(12, "Einsum", {sq}, eq("ii"))[0]), {15});  // trace
    // batched with a broadcast ellipsis: [2,1,2,3] · [3,2] per batch
    auto batch = floatTensor({2, 1, 2, 3}, {1, 2, 3, 4, 5, 6, 0, 1, 0, 1, 0, 0});
    auto out = runOp(12, "Einsum", {batch, b}, eq("...ij,jk->...ik"));
    EXPECT_EQ(out[0]->dims, (std::vector<int64_t>{2, 1, 2, 2}));
    expectNear(floats(out[0]), {4, 5, 10, 11, 0, 1, 1, 0});
    // integer einsum stays integer
    auto ia = typed<int64_t>(DataType::Int64, {2}, {3, 4});
    auto io = runOp(12, "Einsum", {ia, ia}, eq("i,i->"));
    EXPECT_EQ(io[0]->dtype, DataType::Int64);
    EXPECT_EQ(ints(io[0]), (std::vector<int64_t>{25}));
    expectBadInput([&] { runOp(12, "Einsum", {a, a}, eq("ij,jk->ik")); }, "label 'j'");
    expectBadInput([&] { runOp(12, "Einsum", {a}, eq("ijk->i")); }, "rank");
}

// ---------------- Version changes of existing kernels ----------------

TEST(EvalKernelsVersions, ScatterReductions) {
    auto data = floatTensor({4}, {1, 5, 3, 0});
    auto idx = int64Tensor({3}, {1, 1, 3});
    auto upd = floatTensor({3}, {2, 7, -1});
    auto red = [](const char* r) { return std::vector<Attribute>{Attribute::makeString("reduction", r)}; };
    // index 1 gets 5 ⊕ 2 ⊕ 7, index 3 gets 0 ⊕ -1
    expectNear(floats(runOp(16, "ScatterElements", {data, idx, upd}, red("add"))[0]), {1, 14, 3, -1});
    expectNear(floats(runOp(16, "ScatterElements", {data, idx, upd}, red("mul"))[0]), {1, 70, 3, -0.0f});
    expectNear(floats(runOp(18, "ScatterElements", {data, idx, upd}, red("max"))[0]), {1, 7, 3, 0});
    expectNear(floats(runOp(18, "ScatterElements", {data, idx, upd}, red("min"))[0]), {1, 2, 3, -1});
    // ScatterND rows of a 2×2: row 0 max [9, 0], row 1 min [0, 0]
    auto m = floatTensor({2, 2}, {1, 2, 3, 4});
    auto ndIdx = int64Tensor({2, 1}, {0, 1});
    auto ndUpd = floatTensor({2, 2}, {9, 0, 0, 0});
    expectNear(floats(runOp(18, "ScatterND", {m, ndIdx, ndUpd}, red("max"))[0]), {9, 2, 3, 4});
    expectNear(floats(runOp(18, "ScatterND", {m, ndIdx, ndUpd}, red("min"))[0]), {1, 0, 0, 0});
    // max/min do not exist before opset 18
    const auto why = refusal(16, "ScatterElements", {data, idx, upd}, red("max"));
    EXPECT_NE(why.find("reduction 'max'"), std::string::npos) << why;
}

TEST(EvalKernelsVersions, ReduceMaxMinOnBool) {
    auto b = boolTensor({2, 2}, {true, false, false, false});
    auto axes = int64Tensor({1}, {1});
    auto mx = runOp(20, "ReduceMax", {b, axes}, {Attribute::makeInt("keepdims", 0)});
    EXPECT_EQ(mx[0]->dtype, DataType::Bool);
    EXPECT_EQ(ints(mx[0]), (std::vector<int64_t>{1, 0}));
    auto mn = runOp(20, "ReduceMin", {boolTensor({2, 2}, {true, true, true, false}), axes}, {Attribute::makeInt("keepdims", 0)});
    EXPECT_EQ(ints(mn[0]), (std::vector<int64_t>{1, 0}));
}

TEST(EvalKernelsVersions, SplitNumOutputsUnevenLastChunk) {
    // 5 along axis 0 into 3: ceil(5/3) = 2 → 2, 2, 1
    auto out = runOp(18, "Split", {floatTensor({5}, {1, 2, 3, 4, 5})}, {Attribute::makeInt("num_outputs", 3)}, 3);
    expectNear(floats(out[0]), {1, 2});
    expectNear(floats(out[1]), {3, 4});
    expectNear(floats(out[2]), {5});
    expectBadInput([&] { runOp(18, "Split", {floatTensor({4}, {1, 2, 3, 4})}, {Attribute::makeInt("num_outputs", 3)}, 2); }, "num_outputs=3");
}

TEST(EvalKernelsVersions, PadAxesInputAndWrapMode) {
    auto x = floatTensor({2, 3}, {1, 2, 3, 4, 5, 6});
    // opset 18: pads only for axis 1 ([1, 2] begin/end), wrap (19) takes from the other end
    auto out = runOp(19, "Pad", {x, int64Tensor({2}, {1, 2}), nullptr, int64Tensor({1}, {1})}, {Attribute::makeString("mode", "wrap")});
    EXPECT_EQ(out[0]->dims, (std::vector<int64_t>{2, 6}));
    expectNear(floats(out[0]), {3, 1, 2, 3, 1, 2, 6, 4, 5, 6, 4, 5});
    out = runOp(18, "Pad", {x, int64Tensor({2}, {1, 0}), floatTensor({}, {9}), int64Tensor({1}, {-2})});
    expectNear(floats(out[0]), {9, 9, 9, 1, 2, 3, 4, 5, 6});
}

TEST(EvalKernelsVersions, ResizeAxesMatchesFullScales) {
    auto x = seq({1, 1, 3, 5}, 0.7, 0, 3);
    auto viaAxes = runOp(18, "Resize", {x, nullptr, floatTensor({2}, {1.7f, 2.0f})},
                         {Attribute::makeString("mode", "linear"), Attribute::makeInts("axes", {2, 3})});
    auto full = runOp(18, "Resize", {x, nullptr, floatTensor({4}, {1, 1, 1.7f, 2.0f})}, {Attribute::makeString("mode", "linear")});
    EXPECT_EQ(viaAxes[0]->dims, (std::vector<int64_t>{1, 1, 5, 10}));
    expectNear(floats(viaAxes[0]), floats(full[0]), 0);
    expectBadInput([&] { runOp(18, "Resize", {x, nullptr, floatTensor({4}, {1, 1, 2, 2})}, {Attribute::makeInts("axes", {2, 3})}); },
                   "one entry per axis");
}

TEST(EvalKernelsVersions, ResizeHalfPixelSymmetric) {
    // reference port (op_resize.py), opset 19
    auto x = seq({3, 5}, 0.7, 0, 3);
    auto out = runOp(19, "Resize", {x, nullptr, floatTensor({2}, {1.7f, 2.0f})},
                     {Attribute::makeString("mode", "linear"), Attribute::makeString("coordinate_transformation_mode", "half_pixel_symmetric")});
    ASSERT_EQ(out[0]->dims, (std::vector<int64_t>{5, 10}));
    expectNear(floats(out[0]),
               {0, 0.483163265f, 1.4494898f, 2.18857709f, 2.70042516f, 2.86466892f, 2.68130837f, 2.19346219f, 1.40113036f, 1.00496445f,
                -0.433320458f, -0.309939764f, -0.0631783764f, 0.176504489f, 0.409108831f, 0.579935922f, 0.688985762f, 0.71061443f,
                0.644821924f, 0.611925671f, -1.05234968f, -1.44294409f, -2.22413291f, -2.69788495f, -2.86420021f, -2.68396836f,
                -2.15718939f, -1.40773951f, -0.435618702f, 0.0504417015f, 0.726067658f, 0.711344211f, 0.681897317f, 0.574004849f,
                0.387666808f, 0.166702038f, -0.0888894588f, -0.319003346f, -0.523639624f, -0.625957763f, 1.9709598f, 2.21934602f,
                2.71611848f, 2.86432771f, 2.66397372f, 2.16217131f, 1.3589205f, 0.443111968f, -0.585254269f, -1.09943739f},
               2e-5f);
    std::vector<float> grid(16);
    for (int i = 0; i < 16; ++i) grid[i] = float(i + 1);
    out = runOp(19, "Resize", {floatTensor({4, 4}, grid), nullptr, floatTensor({2}, {0.6f, 0.6f})},
                {Attribute::makeString("mode", "linear"), Attribute::makeString("coordinate_transformation_mode", "half_pixel_symmetric")});
    expectNear(floats(out[0]), {4.33333333f, 6, 11, 12.6666667f}, 2e-5f);
    // not a mode before opset 19
    const auto why = refusal(18, "Resize", {x, nullptr, floatTensor({2}, {2, 2})},
                             {Attribute::makeString("coordinate_transformation_mode", "half_pixel_symmetric")});
    EXPECT_NE(why.find("half_pixel_symmetric"), std::string::npos) << why;
}

TEST(EvalKernelsVersions, ResizeKeepAspectRatioPolicy) {
    // sizes (2, 6) on 3×5: not_larger → scale min(2/3, 6/5) = 2/3 → 2×3; not_smaller → 1.2 → 4×6
    // (reference port for the values)
    auto x = seq({3, 5}, 0.7, 0, 3);
    auto sizes = int64Tensor({2}, {2, 6});
    auto out = runOp(18, "Resize", {x, nullptr, nullptr, sizes},
                     {Attribute::makeString("mode", "linear"), Attribute::makeString("keep_aspect_ratio_policy", "not_larger")});
    ASSERT_EQ(out[0]->dims, (std::vector<int64_t>{2, 3}));
    expectNear(floats(out[0]), {0.00163642617f, 1.30926882f, 1.29316176f, 1.30377349f, 1.28193024f, -0.0196009012f}, 2e-5f);
    out = runOp(18, "Resize", {x, nullptr, nullptr, sizes},
                {Attribute::makeString("mode", "linear"), Attribute::makeString("keep_aspect_ratio_policy", "not_smaller")});
    ASSERT_EQ(out[0]->dims, (std::vector<int64_t>{4, 6}));
    expectNear(floats(out[0]), {0, 1.4494898f, 2.52980914f, 2.80354874f, 2.19346219f, 1.00496445f, -0.789262262f, -1.30572723f,
                                -1.47411906f, -1.18039434f, -0.507439085f, 0.289072389f, 0.711247513f, 0.657680399f, 0.422624978f,
                                0.0599225373f, -0.328076148f, -0.620321101f, 1.9709598f, 2.71611848f, 2.73075838f, 1.89442104f,
                                0.443111968f, -1.09943739f},
               2e-5f);
    const auto why = refusal(18, "Resize", {x, nullptr, nullptr, sizes}, {Attribute::makeString("keep_aspect_ratio_policy", "fit")});
    EXPECT_NE(why.find("keep_aspect_ratio_policy 'fit'"), std::string::npos) << why;
}

TEST(EvalKernelsVersions, ResizeAntialiasDownsampling) {
    // reference port: 4×4 of 1..16, scales 0.6, half_pixel
    std::vector<float> g(16);
    for (int i = 0; i < 16; ++i) g[i] = float(i + 1);
    auto x = floatTensor({1, 1, 4, 4}, g);
    auto scales = floatTensor({4}, {1, 1, 0.6f, 0.6f});
    auto out = runOp(18, "Resize", {x, nullptr, scales}, {Attribute::makeString("mode", "linear"), Attribute::makeInt("antialias", 1)});
    expectNear(floats(out[0]), {2.875f, 4.5f, 9.375f, 11}, 1e-4f);
    out = runOp(18, "Resize", {x, nullptr, scales}, {Attribute::makeString("mode", "cubic"), Attribute::makeInt("antialias", 1)});
    expectNear(floats(out[0]), {2.51807229f, 4.2858864f, 9.58932874f, 11.3571429f}, 1e-4f);
    // upsampling with antialias is plain interpolation
    auto up = floatTensor({4}, {1, 1, 2, 2});
    expectNear(floats(runOp(18, "Resize", {x, nullptr, up}, {Attribute::makeString("mode", "linear"), Attribute::makeInt("antialias", 1)})[0]),
               floats(runOp(18, "Resize", {x, nullptr, up}, {Attribute::makeString("mode", "linear")})[0]), 0);
    const auto why = refusal(18, "Resize", {x, nullptr, scales}, {Attribute::makeInt("antialias", 1)});  // nearest
    EXPECT_NE(why.find("antialias"), std::string::npos) << why;
}

TEST(EvalKernelsVersions, RegistryListsTheNewOps) {
    for (const char* op : {"NonMaxSuppression", "RoiAlign", "GroupNormalization", "RMSNormalization", "RotaryEmbedding", "Attention",
                           "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "CenterCropPad", "Col2Im", "LpPool", "GridSample",
                           "AffineGrid", "LpNormalization", "MeanVarianceNormalization", "Einsum"}) {
        Model m = oneOp(23, op, {});
        std::string why;
        EXPECT_TRUE(eval::isSupported(m, m.graph.node(m.graph.nodeOrder()[0]), &why)) << op << ": " << why;
    }
}

}  // namespace
}  // namespace passlens
