#include "onnx/InferenceGuards.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace passlens::onnxio {

namespace {

/// What the ONNX spec requires of one input's rank: exactly `rank`, or at least `minRank`.
struct RankRule {
    int input;
    int rank;     // -1: no exact rank
    int minRank;  // 0: no lower bound
    const char* what;
};

const std::unordered_map<std::string_view, std::vector<RankRule>>& rankRules() {
    static const std::unordered_map<std::string_view, std::vector<RankRule>> rules = {
        {"Gemm", {{0, 2, 0, "a 2-D matrix"}, {1, 2, 0, "a 2-D matrix"}}},
        {"MatMul", {{0, -1, 1, "at least a vector"}, {1, -1, 1, "at least a vector"}}},
        {"Conv", {{0, -1, 3, "N x C x D1 x ... (rank >= 3)"}, {1, -1, 3, "M x C/group x k1 x ... (rank >= 3)"}}},
        {"ConvTranspose", {{0, -1, 3, "N x C x D1 x ... (rank >= 3)"}, {1, -1, 3, "C x M/group x k1 x ... (rank >= 3)"}}},
        {"RNN", {{0, 3, 0, "seq x batch x input"}, {1, 3, 0, "a 3-D weight"}, {2, 3, 0, "a 3-D weight"}}},
        {"GRU", {{0, 3, 0, "seq x batch x input"}, {1, 3, 0, "a 3-D weight"}, {2, 3, 0, "a 3-D weight"}}},
        {"LSTM", {{0, 3, 0, "seq x batch x input"}, {1, 3, 0, "a 3-D weight"}, {2, 3, 0, "a 3-D weight"}}},
        {"MaxRoiPool", {{0, 4, 0, "N x C x H x W"}, {1, 2, 0, "num_rois x 5"}}},
        {"RoiAlign", {{0, 4, 0, "N x C x H x W"}, {1, 2, 0, "num_rois x 4"}, {2, 1, 0, "a 1-D batch index"}}},
        {"DepthToSpace", {{0, 4, 0, "N x C x H x W"}}},
        {"SpaceToDepth", {{0, 4, 0, "N x C x H x W"}}},
    };
    return rules;
}

/// Inputs the spec requires to have one rank (data and weight of a convolution): libonnx's
/// convolution inference takes the kernel's size from the weight and indexes the data with it.
struct SameRank {
    int a, b;
};

const std::unordered_map<std::string_view, SameRank>& sameRankRules() {
    static const std::unordered_map<std::string_view, SameRank> rules = {
        {"Conv", {0, 1}}, {"ConvTranspose", {0, 1}}, {"ConvInteger", {0, 1}}, {"QLinearConv", {0, 3}}};
    return rules;
}

/// Ops whose libonnx inference divides by strides and dilations and sizes the output from
/// kernel_shape: a 0 (or negative) element there is a division by zero inside InferShapes.
bool hasWindowAttributes(std::string_view op) {
    return op == "Conv" || op == "ConvTranspose" || op == "ConvInteger" || op == "QLinearConv" || op == "MaxPool" ||
           op == "AveragePool" || op == "LpPool" || op == "MaxUnpool" || op == "DeformConv";
}

using RankMap = std::unordered_map<std::string, int>;

/// A node as the messages name it: its name, else its first output, else its op.
std::string nodeLabel(const onnx::NodeProto& n) {
    return n.name().empty() ? n.output_size() ? n.output(0) : n.op_type() : n.name();
}

void declare(RankMap& ranks, const onnx::ValueInfoProto& vi) {
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape())
        ranks[vi.name()] = vi.type().tensor_type().shape().dim_size();
}

std::optional<std::string> check(const onnx::GraphProto& g, RankMap ranks) {
    for (const auto& vi : g.input()) declare(ranks, vi);
    for (const auto& vi : g.value_info()) declare(ranks, vi);
    for (const auto& vi : g.output()) declare(ranks, vi);
    for (const auto& t : g.initializer()) ranks[t.name()] = t.dims_size();
    for (const auto& n : g.node())
        if (n.op_type() == "Constant" && n.output_size() == 1)
            for (const auto& a : n.attribute())
                if (a.name() == "value" && a.has_t()) ranks[n.output(0)] = a.t().dims_size();

    for (const auto& n : g.node()) {
        if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
        if (hasWindowAttributes(n.op_type()))
            for (const auto& a : n.attribute()) {
                if (a.name() != "strides" && a.name() != "dilations" && a.name() != "kernel_shape") continue;
                for (int64_t v : a.ints())
                    if (v <= 0)
                        return "node '" + nodeLabel(n) + "' (" + n.op_type() + "): " + a.name() + " has " + std::to_string(v) +
                               "; every element of " + a.name() + " must be positive";
            }
        if (auto same = sameRankRules().find(n.op_type()); same != sameRankRules().end()) {
            const auto [a, b] = same->second;
            if (std::max(a, b) < n.input_size()) {
                auto ra = ranks.find(n.input(a));
                auto rb = ranks.find(n.input(b));
                if (ra != ranks.end() && rb != ranks.end() && ra->second != rb->second)
                    return "node '" + nodeLabel(n) + "' (" +
                           n.op_type() + "): input '" + n.input(a) + "' has rank " + std::to_string(ra->second) + " and weight '" +
                           n.input(b) + "' rank " + std::to_string(rb->second) + "; " + n.op_type() + " takes equal ranks";
            }
        }
        auto rules = rankRules().find(n.op_type());
        if (rules == rankRules().end()) continue;
        for (const RankRule& rule : rules->second) {
            if (rule.input >= n.input_size() || n.input(rule.input).empty()) continue;
            auto known = ranks.find(n.input(rule.input));
            if (known == ranks.end()) continue;
            int rank = known->second;
            if ((rule.rank >= 0 && rank != rule.rank) || rank < rule.minRank)
                return "node '" + nodeLabel(n) + "' (" +
                       n.op_type() + "): input '" + n.input(rule.input) + "' has rank " + std::to_string(rank) + ", " +
                       n.op_type() + " takes " + rule.what;
        }
    }
    for (const auto& n : g.node())
        for (const auto& a : n.attribute()) {
            if (a.has_g())
                if (auto hazard = check(a.g(), ranks)) return hazard;
            for (const auto& sub : a.graphs())
                if (auto hazard = check(sub, ranks)) return hazard;
        }
    return std::nullopt;
}

}  // namespace

std::optional<std::string> findRankHazard(const onnx::GraphProto& graph) { return check(graph, {}); }

}  // namespace passlens::onnxio
