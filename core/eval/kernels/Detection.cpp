// Detection post-processing kernels: NonMaxSuppression and RoiAlign, with the semantics of the ONNX
// reference implementation (which ONNX Runtime follows), so `optimize --verify` agrees with it on
// detection exports.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "eval/Kernel.h"

namespace passlens::eval {

using namespace passlens::ir;

namespace {

struct Box {
    float x1, y1, x2, y2;  ///< min/max corners
    float area() const { return (x2 - x1) * (y2 - y1); }
};

/// Corner boxes from the raw 4 values: [y1, x1, y2, x2] (either diagonal) or [x_c, y_c, w, h].
Box boxAt(const float* b, bool centerPoint) {
    if (centerPoint) return {b[0] - b[2] / 2, b[1] - b[3] / 2, b[0] + b[2] / 2, b[1] + b[3] / 2};
    return {std::min(b[1], b[3]), std::min(b[0], b[2]), std::max(b[1], b[3]), std::max(b[0], b[2])};
}

/// True when `a` and `b` overlap by more than `threshold` (IoU); empty boxes never suppress.
bool suppresses(const Box& a, const Box& b, float threshold) {
    const float ix1 = std::max(a.x1, b.x1), ix2 = std::min(a.x2, b.x2);
    if (ix2 <= ix1) return false;
    const float iy1 = std::max(a.y1, b.y1), iy2 = std::min(a.y2, b.y2);
    if (iy2 <= iy1) return false;
    const float inter = (ix2 - ix1) * (iy2 - iy1);
    const float areaA = a.area(), areaB = b.area(), uni = areaA + areaB - inter;
    if (inter <= 0 || areaA <= 0 || areaB <= 0 || uni <= 0) return false;
    return inter / uni > threshold;
}

std::vector<TensorPtr> nonMaxSuppression(KernelContext& c) {
    const Tensor& boxesT = c.t(0);
    const Tensor& scoresT = c.t(1);
    if (boxesT.dims.size() != 3 || boxesT.dims[2] != 4) c.fail("boxes must have shape [batch, boxes, 4], got " + shapeText(boxesT.dims));
    if (scoresT.dims.size() != 3) c.fail("scores must have shape [batch, classes, boxes], got " + shapeText(scoresT.dims));
    const int64_t B = boxesT.dims[0], N = boxesT.dims[1], C = scoresT.dims[1];
    if (scoresT.dims[0] != B || scoresT.dims[2] != N)
        c.fail("scores " + shapeText(scoresT.dims) + " do not match boxes " + shapeText(boxesT.dims));
    // Omitted or empty optional inputs: no boxes per class, IoU threshold 0, no score filter.
    int64_t maxPerClass = 0;
    if (c.has(2) && c.t(2).elementCount() > 0) maxPerClass = std::max<int64_t>(0, toInt64s(c.t(2))[0]);
    float iou = 0;
    if (c.has(3) && c.t(3).elementCount() > 0) iou = toFloats(c.t(3))[0];
    const bool filterScores = c.has(4) && c.t(4).elementCount() > 0;
    const float scoreThreshold = filterScores ? toFloats(c.t(4))[0] : 0.0f;
    if (iou < 0 || iou > 1) c.fail("iou_threshold " + std::to_string(iou) + " is outside [0, 1]");
    const bool centerPoint = c.node.attrInt("center_point_box", 0) == 1;
    const auto boxes = toFloats(boxesT), scores = toFloats(scoresT);

    std::vector<int64_t> selected;  // triples (batch, class, box)
    std::vector<int64_t> order;
    std::vector<Box> kept;
    for (int64_t b = 0; b < B; ++b) {
        std::vector<Box> bb(static_cast<size_t>(N));
        for (int64_t i = 0; i < N; ++i) bb[i] = boxAt(boxes.data() + (b * N + i) * 4, centerPoint);
        for (int64_t cl = 0; cl < C; ++cl) {
            const float* s = scores.data() + (b * C + cl) * N;  // no element to index when N = 0
            order.clear();
            for (int64_t i = 0; i < N; ++i)
                if (!filterScores || s[i] > scoreThreshold) order.push_back(i);
            // highest score first; equal scores keep the lower box index first
            std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return s[i] > s[j]; });
            kept.clear();
            for (int64_t i : order) {
                if (int64_t(kept.size()) >= maxPerClass) break;
                bool keep = true;
                for (const Box& k : kept)
                    if (suppresses(bb[i], k, iou)) { keep = false; break; }
                if (!keep) continue;
                kept.push_back(bb[i]);
                selected.insert(selected.end(), {b, cl, i});
            }
        }
    }
    return {int64Tensor(selected, {int64_t(selected.size() / 3), 3})};
}

/// RoiAlign: bilinear samples on a regular grid in each bin, averaged or (ONNX reference / ONNX
/// Runtime semantics) the maximum of the weighted corner values per sample point.
std::vector<TensorPtr> roiAlign(KernelContext& c) {
    const Tensor& x = c.t(0);
    const Tensor& roisT = c.t(1);
    const Tensor& idxT = c.t(2);
    if (x.dims.size() != 4) c.fail("X must be 4-D [N, C, H, W], got " + shapeText(x.dims));
    if (roisT.dims.size() != 2 || roisT.dims[1] != 4) c.fail("rois must have shape [num_rois, 4], got " + shapeText(roisT.dims));
    const int64_t R = roisT.dims[0];
    if (idxT.elementCount() != R) c.fail("batch_indices must have one entry per roi");
    const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
    const int64_t OH = c.node.attrInt("output_height", 1), OW = c.node.attrInt("output_width", 1);
    const int64_t sampling = c.node.attrInt("sampling_ratio", 0);
    const double scale = c.node.attrFloat("spatial_scale", 1.0f);
    if (OH < 1 || OW < 1) c.fail("output_height and output_width must be >= 1");
    // Before opset 16 there is no attribute and the behaviour is output_half_pixel.
    const bool halfPixel = c.opset >= 16 && c.node.attrString("coordinate_transformation_mode", "half_pixel") == "half_pixel";
    const bool maxMode = c.node.attrString("mode", "avg") == "max";
    const auto rois = toDoubles(roisT);
    const auto batch = toInt64s(idxT);
    const auto xv = toDoubles(x);
    OutTensor o(x.dtype, {R, C, OH, OW});
    struct Tap { int64_t pos[4]; double w[4]; };
    std::vector<double> out(static_cast<size_t>(R * C * OH * OW));
    for (int64_t r = 0; r < R; ++r) {
        if (batch[r] < 0 || batch[r] >= N) c.fail("batch index " + std::to_string(batch[r]) + " is out of range");
        const double off = halfPixel ? 0.5 : 0.0;
        const double sw = rois[r * 4 + 0] * scale - off, sh = rois[r * 4 + 1] * scale - off;
        double rw = rois[r * 4 + 2] * scale - off - sw, rh = rois[r * 4 + 3] * scale - off - sh;
        if (!halfPixel) {
            rw = std::max(rw, 1.0);
            rh = std::max(rh, 1.0);
        }
        const double bh = rh / double(OH), bw = rw / double(OW);
        const int64_t gh = sampling > 0 ? sampling : int64_t(std::ceil(rh / double(OH)));
        const int64_t gw = sampling > 0 ? sampling : int64_t(std::ceil(rw / double(OW)));
        const double count = double(std::max<int64_t>(gh * gw, 1));
        // sample taps per output bin, shared by every channel
        std::vector<Tap> taps;
        taps.reserve(static_cast<size_t>(std::max<int64_t>(0, OH * OW * gh * gw)));
        for (int64_t ph = 0; ph < OH; ++ph)
            for (int64_t pw = 0; pw < OW; ++pw)
                for (int64_t iy = 0; iy < gh; ++iy) {
                    const double yy = sh + double(ph) * bh + (double(iy) + 0.5) * bh / double(gh);
                    for (int64_t ix = 0; ix < gw; ++ix) {
                        double xx = sw + double(pw) * bw + (double(ix) + 0.5) * bw / double(gw);
                        double y = yy;
                        Tap t{{0, 0, 0, 0}, {0, 0, 0, 0}};
                        if (y < -1.0 || y > double(H) || xx < -1.0 || xx > double(W)) {
                            taps.push_back(t);
                            continue;
                        }
                        y = std::max(y, 0.0);
                        xx = std::max(xx, 0.0);
                        int64_t yl = int64_t(y), xl = int64_t(xx), yh, xh;
                        if (yl >= H - 1) { yh = yl = H - 1; y = double(yl); } else yh = yl + 1;
                        if (xl >= W - 1) { xh = xl = W - 1; xx = double(xl); } else xh = xl + 1;
                        const double ly = y - double(yl), lx = xx - double(xl), hy = 1 - ly, hx = 1 - lx;
                        t = {{yl * W + xl, yl * W + xh, yh * W + xl, yh * W + xh}, {hy * hx, hy * lx, ly * hx, ly * lx}};
                        taps.push_back(t);
                    }
                }
        for (int64_t ch = 0; ch < C; ++ch) {
            const double* img = xv.data() + (batch[r] * C + ch) * H * W;
            size_t ti = 0;
            for (int64_t bin = 0; bin < OH * OW; ++bin) {
                double acc = 0;
                bool first = true;
                for (int64_t s = 0; s < gh * gw; ++s, ++ti) {
                    const Tap& t = taps[ti];
                    if (maxMode) {
                        double v = t.w[0] * img[t.pos[0]];
                        for (int k = 1; k < 4; ++k) v = std::max(v, t.w[k] * img[t.pos[k]]);
                        acc = first ? v : std::max(acc, v);
                        first = false;
                    } else {
                        acc += t.w[0] * img[t.pos[0]] + t.w[1] * img[t.pos[1]] + t.w[2] * img[t.pos[2]] + t.w[3] * img[t.pos[3]];
                    }
                }
                out[((r * C + ch) * OH * OW) + bin] = maxMode ? acc : acc / count;
            }
        }
    }
    dispatchFloat(x.dtype, "RoiAlign", [&](auto tag) {
        using T = decltype(tag);
        for (size_t i = 0; i < out.size(); ++i) o.data<T>()[i] = static_cast<T>(out[i]);
    });
    return {o.finish()};
}

}  // namespace

void registerDetection(KernelRegistry& r) {
    {
        KernelInfo k;
        k.types = {DataType::Float, DataType::Float16};
        k.sinceMin = 10;
        k.fn = nonMaxSuppression;
        k.check = [](const Node& n, int64_t, std::string* why) {
            const int64_t cpb = n.attrInt("center_point_box", 0);
            if (cpb == 0 || cpb == 1) return true;
            if (why) *why = "center_point_box=" + std::to_string(cpb) + " is not supported (0 or 1)";
            return false;
        };
        r.add("", "NonMaxSuppression", std::move(k));
    }
    {
        KernelInfo k;
        k.types = kFloatTypes;
        k.sinceMin = 10;
        k.fn = roiAlign;
        k.check = [](const Node& n, int64_t opset, std::string* why) {
            const auto mode = n.attrString("mode", "avg");
            if (mode != "avg" && mode != "max") {
                if (why) *why = "mode '" + mode + "' is not supported (avg or max)";
                return false;
            }
            const auto ct = n.attrString("coordinate_transformation_mode", "half_pixel");
            if (opset >= 16 && ct != "half_pixel" && ct != "output_half_pixel") {
                if (why) *why = "coordinate_transformation_mode '" + ct + "' is not supported";
                return false;
            }
            return true;
        };
        r.add("", "RoiAlign", std::move(k));
    }
}

}  // namespace passlens::eval
