#include "memory/ShapeAssist.h"

#include <cstring>
#include <unordered_map>

#include "memory/MemoryPlan.h"
#include "onnx/ShapeInference.h"
#include "ir/CheckedMath.h"

namespace passlens::memory {

namespace {

using ir::kNone;
using ir::ValueId;
using Ints = std::vector<int64_t>;

std::optional<Ints> intsOf(const ir::Tensor& t) {
    if (t.dims.size() > 1) return std::nullopt;
    Ints out;
    auto n = static_cast<size_t>(t.elementCount());
    if (t.dtype == ir::DataType::Int64 && t.byteSize() == n * 8) out.assign(t.as<int64_t>(), t.as<int64_t>() + n);
    else if (t.dtype == ir::DataType::Int32 && t.byteSize() == n * 4) out.assign(t.as<int32_t>(), t.as<int32_t>() + n);
    else return std::nullopt;
    return out;
}

int64_t clampIndex(int64_t i, int64_t size) {
    if (i < 0) i += size;
    return std::max<int64_t>(0, std::min(i, size));
}

/// Small integer vectors computed from static shapes: the Shape -> Slice/Gather -> Concat -> Reshape
/// chains exporters emit. Returns the Reshape outputs whose shape became known.
std::unordered_map<ValueId, ir::TypeInfo> resolveReshapes(const ir::Model& m) {
    const auto& g = m.graph;
    std::unordered_map<ValueId, Ints> known;
    auto get = [&](ValueId v) -> const Ints* {
        if (v == kNone) return nullptr;
        if (auto it = known.find(v); it != known.end()) return &it->second;
        if (g.value(v).initializer)
            if (auto i = intsOf(*g.value(v).initializer)) return &(known[v] = *i);
        return nullptr;
    };
    std::unordered_map<ValueId, ir::TypeInfo> out;
    int64_t opset = m.opsetFor("");
    for (ir::NodeId id : g.nodeOrder()) {
        const auto& n = g.node(id);
        if (!n.domain.empty() || n.outputs.empty() || n.outputs[0] == kNone) continue;
        ValueId y = n.outputs[0];
        const auto& op = n.opType;
        auto in = [&](size_t i) { return i < n.inputs.size() ? get(n.inputs[i]) : nullptr; };
        if (op == "Shape") {
            const auto& t = g.value(n.inputs[0]).type;
            if (!t.shape || !t.shape->isStatic()) continue;
            Ints d = t.shape->staticDims();
            auto r = static_cast<int64_t>(d.size());
            int64_t s = clampIndex(n.attrInt("start", 0), r), e = clampIndex(n.attrInt("end", r), r);
            known[y] = s < e ? Ints(d.begin() + s, d.begin() + e) : Ints{};
        } else if (op == "Cast" || op == "Identity" || op == "Squeeze" || op == "Unsqueeze") {
            if (auto* a = in(0)) known[y] = *a;
        } else if (op == "Concat") {
            Ints all;
            bool ok = true;
            for (size_t i = 0; i < n.inputs.size() && ok; ++i)
                if (auto* a = in(i)) all.insert(all.end(), a->begin(), a->end());
                else ok = false;
            if (ok) known[y] = all;
        } else if (op == "Gather") {
            auto *data = in(0), *idx = in(1);
            if (!data || !idx) continue;
            Ints r;
            for (int64_t i : *idx) {
                int64_t k = i < 0 ? i + static_cast<int64_t>(data->size()) : i;
                if (k < 0 || k >= static_cast<int64_t>(data->size())) { r.clear(); break; }
                r.push_back((*data)[static_cast<size_t>(k)]);
            }
            if (r.size() == idx->size()) known[y] = r;
        } else if (op == "Slice") {
            auto* data = in(0);
            if (!data) continue;
            Ints starts, ends, steps{1};
            if (opset < 10) {
                starts = n.attrInts("starts");
                ends = n.attrInts("ends");
            } else {
                auto *s = in(1), *e = in(2);
                if (!s || !e) continue;
                starts = *s;
                ends = *e;
                if (n.inputs.size() > 4 && n.inputs[4] != kNone) {
                    auto* st = in(4);
                    if (!st) continue;
                    steps = *st;
                }
            }
            if (starts.size() != 1 || ends.size() != 1 || steps.size() != 1 || steps[0] != 1) continue;
            auto size = static_cast<int64_t>(data->size());
            int64_t s = clampIndex(starts[0], size), e = clampIndex(ends[0], size);
            known[y] = s < e ? Ints(data->begin() + s, data->begin() + e) : Ints{};
        } else if (op == "Reshape") {
            const auto& xt = g.value(n.inputs[0]).type;
            auto* shape = in(1);
            if (!shape || !xt.shape || !xt.shape->isStatic() || tensorBytes(g.value(y).type)) continue;
            Ints xd = xt.shape->staticDims(), d = *shape;
            auto totalCount = ir::checkedProduct(xd);
            if (!totalCount) continue;
            int64_t total = *totalCount, minus = -1;
            Ints others;  // the target dims other than the one -1
            bool bad = false;
            for (size_t i = 0; i < d.size(); ++i) {
                if (d[i] == 0 && n.attrInt("allowzero", 0) == 0) {
                    if (i >= xd.size()) { bad = true; break; }
                    d[i] = xd[i];
                }
                if (d[i] == -1 && minus < 0) minus = static_cast<int64_t>(i);
                else others.push_back(d[i]);
            }
            auto prodCount = bad ? std::nullopt : ir::checkedProduct(others);
            if (!prodCount || *prodCount <= 0) continue;
            const int64_t prod = *prodCount;
            if (minus >= 0) {
                if (total % prod != 0) continue;
                d[static_cast<size_t>(minus)] = total / prod;
            } else if (prod != total) {
                continue;
            }
            ir::Shape s;
            for (int64_t v : d) s.dims.push_back(ir::Dim::of(v));
            out[y] = ir::TypeInfo::tensor(xt.elemType, s);
        }
    }
    return out;
}

}  // namespace

int completeShapesViaLiftedConstants(ir::Model& m) {
    // Only values of unknown size can gain one; when there are none (the common case for pinned
    // or static models) the copy and the inference rounds below would change nothing.
    auto unknownSize = [](const ir::Value& val) {
        return !(val.isOuterScope || val.isGraphInput || val.initializer || tensorBytes(val.type));
    };
    bool anyUnknown = false;
    for (ValueId v : m.graph.valueIds())
        if (unknownSize(m.graph.value(v))) {
            anyUnknown = true;
            break;
        }
    if (!anyUnknown) return 0;
    ir::Model copy = m;
    auto& g = copy.graph;
    std::vector<ir::NodeId> constants;
    for (ir::NodeId n : g.nodeOrder())
        if (g.node(n).opType == "Constant" && g.node(n).domain.empty() && g.node(n).outputs.size() == 1)
            if (const auto* a = g.node(n).attr("value"); a && a->t) constants.push_back(n);
    for (ir::NodeId n : constants) {
        ValueId out = g.node(n).outputs[0];
        auto tensor = g.node(n).attr("value")->t;
        g.eraseNode(n);
        if (!g.value(out).isGraphOutput) g.setInitializer(out, tensor);
    }
    // Alternate: resolve Reshape targets from shape arithmetic, then let libonnx carry the new
    // shapes downstream; stop when a round resolves nothing new.
    std::unordered_map<ValueId, ir::TypeInfo> pinned;
    for (int round = 0; round < 6; ++round) {
        auto found = resolveReshapes(copy);
        size_t before = pinned.size();
        for (auto& [v, t] : found) pinned[v] = t;
        if (round > 0 && pinned.size() == before) break;
        std::vector<std::pair<std::string, ir::TypeInfo>> pins;
        for (const auto& [v, t] : pinned) pins.emplace_back(g.value(v).name, t);
        const auto types = onnxio::libonnxTypesWithPins(copy, pins);
        if (!types) break;  // best effort: whatever stays unknown is reported by the planner
        for (ValueId v : g.valueIds()) {
            auto& val = g.value(v);
            if (val.isOuterScope || val.isGraphInput || val.initializer || tensorBytes(val.type)) continue;
            if (auto it = types->find(val.name); it != types->end() && it->second.known()) val.type = it->second;
        }
        for (const auto& [v, t] : pinned) g.value(v).type = t;
    }
    int gained = 0;
    for (ValueId v : m.graph.valueIds()) {
        auto& val = m.graph.value(v);
        if (!unknownSize(val)) continue;
        auto other = g.findValue(val.name);
        if (!other || !tensorBytes(g.value(*other).type)) continue;
        val.type = g.value(*other).type;
        ++gained;
    }
    return gained;
}

}  // namespace passlens::memory
