// The training graph of a torchvision Faster R-CNN export (tests/models/fasterrcnn_tiny_static.onnx)
// against central finite differences of its mse loss over `boxes`. RoiAlign gives its regions no
// gradient (as torchvision's roi_align), so the finite differences must see the same regions: the
// regions this run computes are frozen into RoiAlign's input first. Then the backbone's gradient
// reaches the loss only through RoiAlign's feature map, and the heads' through the two-MLP head and
// the box decoding (Exp, Clip, the TopK/NonMaxSuppression/Gather selection): the RoiAlign rule inside
// a real detection graph. PyTorch is no reference here: torchvision's roi_align and ONNX's RoiAlign
// disagree on these features (tests/models/generate.py), so the references are finite differences.
#include <gtest/gtest.h>

#include <cmath>

#include "AutodiffTestSupport.h"
#include "eval/Interpreter.h"
#include "ir/Tensor.h"
#include "onnx/Import.h"

using namespace passlens;
using namespace passlens::ir;

TEST(AutodiffDetection, FasterRcnnGradientsThroughRoiAlignMatchFiniteDifferences) {
    const Model forward = onnxio::importModelFile(std::string(PASSLENS_FIXTURES_DIR) + "/fasterrcnn_tiny_static.onnx");
    std::vector<float> pixels(3 * 64 * 64);
    for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = float(std::sin(0.37 * double(i) + 1.0));
    const TensorPtr image = makeTensorOf<float>(DataType::Float, {3, 64, 64}, pixels);

    // The target must have the run's number of detections; with none the check could not fail.
    const auto outs = eval::run(forward, {image});
    const std::vector<int64_t> boxesDims = outs[0]->dims;
    ASSERT_EQ(boxesDims.size(), 2u);
    ASSERT_GT(boxesDims[0], 0) << "no detections on the formula image";
    std::vector<float> target(size_t(boxesDims[0] * 4));
    for (size_t i = 0; i < target.size(); ++i) target[i] = float(0.5 * std::cos(0.29 * double(i) + 2.0));

    // Freeze the regions RoiAlign reads (a value the run computes) into an initializer.
    Model frozen = forward;
    NodeId roiAlign = kNone;
    for (NodeId n : frozen.graph.nodeOrder())
        if (frozen.graph.node(n).opType == "RoiAlign") roiAlign = n;
    ASSERT_NE(roiAlign, kNone);
    const ValueId rois = frozen.graph.node(roiAlign).inputs[1];
    Model probe = forward;
    probe.graph.markOutput(rois);
    const TensorPtr roisNow = eval::run(probe, {image}).back();
    ASSERT_GT(roisNow->dims.at(0), 0);
    frozen.graph.setNodeInput(roiAlign, 1, frozen.graph.addInitializer("frozen_rois", roisNow));

    test::GradCheck check;
    check.inputs = {{"image", image}, {"boxes_target", makeTensorOf<float>(DataType::Float, boxesDims, target)}};
    check.maxElementsPerTensor = 24;
    const auto report = test::expectGradientsMatch(
        frozen, "mse", {"net.backbone.0.weight", "net.backbone.2.weight", "net.roi_heads.box_head.fc6.weight", "net.roi_heads.box_predictor.bbox_pred.weight"},
        check, "boxes");
    EXPECT_GT(report.checked, 60u);
    std::cout << "Faster R-CNN: " << report.checked << " gradient elements, worst " << report.worstRel << " (" << report.worst << ")\n";
}
