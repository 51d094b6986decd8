#pragma once
// What a graph drawing shows, decided once for the app and the CLI: which boxes exist (operators,
// graph inputs/outputs, constants unless folded), what each says, their category colors, and the
// edges with their tensor labels. Plain data, no Qt.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/Graph.h"
#include "layout/Layout.h"

namespace passlens::layout {

enum class OpCategory {
    Input, Output, Constant, Convolution, MatMul, Normalization, Activation, Elementwise,
    Reduction, Pooling, Shape, ControlFlow, Other,
};

struct CategoryStyle {
    const char* name;    ///< legend text
    const char* fill;    ///< "#rrggbb"
    const char* border;
};

OpCategory categorize(std::string_view opType, std::string_view domain = {});
const CategoryStyle& styleOf(OpCategory c);
/// Categories in legend order.
std::span<const OpCategory> allCategories();

struct DisplayOptions {
    bool foldConstants = true;  ///< initializers, Constant nodes and Identities of a weight become lines in their consumers
    int64_t opset = 17;         ///< ai.onnx opset, to name folded inputs after the schema ("W", "B")
    /// Unfolded only: a constant with several readers is drawn once per reader (a long edge from
    /// one shared box across the graph reads badly and makes `dot` slow).
    bool copySharedConstants = true;
};

/// Key ranges: operator boxes use their NodeId; other boxes put a tag in the top bits.
inline constexpr uint32_t kInputKeyTag = 0x80000000u;
inline constexpr uint32_t kOutputKeyTag = 0x40000000u;
inline constexpr uint32_t kConstantKeyTag = 0xC0000000u;
inline constexpr uint32_t kKeyTagMask = 0xC0000000u;
/// Per-reader copies of a shared constant: constant-tagged keys counted down from here (value ids
/// never get this high; the builder stops copying before a copy key could meet one).
inline constexpr uint32_t kFirstCopyKey = 0xFFFFFFFEu;

/// Boxes and frames of groups (core/hierarchy) use keys in the operator range that node ids never
/// reach: kGroupKeyBase | group id.
inline constexpr uint32_t kGroupKeyBase = 0x3F000000u;
inline constexpr bool isGroupKey(uint32_t key) { return (key & 0xFF000000u) == kGroupKeyBase; }
inline constexpr uint32_t groupKey(uint32_t group) { return kGroupKeyBase | group; }
inline constexpr uint32_t groupOfKey(uint32_t key) { return key & 0x00FFFFFFu; }
/// An operator box: not tagged and not a group.
inline constexpr bool isOpKey(uint32_t key) { return (key & kKeyTagMask) == 0 && !isGroupKey(key); }

struct DisplayNode {
    /// Group: a collapsed group of nodes (core/hierarchy), drawn as one box.
    enum class Kind { Op, Input, Output, Constant, Group };
    uint32_t key = 0;
    Kind kind = Kind::Op;
    ir::NodeId node = ir::kNone;    ///< for Op
    ir::ValueId value = ir::kNone;  ///< for Input / Output / Constant
    std::string title;              ///< op type, or the value name
    std::string subtitle;           ///< node name, or the value's type
    std::vector<std::string> foldedLines;  ///< "W ⟨8×3×3×3⟩"
    OpCategory category = OpCategory::Other;
    bool hasSubgraphs = false;
    /// For a per-reader copy of a shared constant: the key of the box it repeats (the initializer's
    /// box or the Constant node's box, which keeps the first reader); 0 otherwise.
    uint32_t copyOf = 0;
    uint32_t group = UINT32_MAX;    ///< for Group: the hierarchy's group id
};

struct DisplayEdge {
    uint32_t from = 0, to = 0;
    ir::ValueId value = ir::kNone;
    std::string label;              ///< "1×8×16×16 float32"
};

struct DisplayGraph {
    std::vector<DisplayNode> nodes;
    std::vector<DisplayEdge> edges;
    size_t opBoxCount = 0;          ///< boxes that are operator nodes
    size_t foldedConstantNodes = 0; ///< Constant nodes and Identities of a weight drawn inside their consumers, or not at all when unread
    size_t constantCopies = 0;      ///< extra boxes drawn for shared constants (unfolded mode)

    /// The value a non-operator box shows (input, output, constant or a constant's copy);
    /// kNone for operator boxes and unknown keys.
    ir::ValueId valueOfKey(uint32_t key) const;
};

DisplayGraph buildDisplayGraph(const ir::Graph& g, const DisplayOptions& options = {});

/// "1×8×16×16" (symbolic dims by name, unknown as "?"), "" when the rank is unknown.
std::string shapeText(const ir::TypeInfo& t);
/// "1×8×16×16 float32", or just the type when the shape is unknown.
std::string edgeLabel(const ir::TypeInfo& t);

/// Text size estimate for a box in points: (lines of text) → width/height. The app passes
/// real font metrics; the CLI uses estimateBoxSize.
using BoxSizer = std::function<std::pair<double, double>(const DisplayNode&)>;
std::pair<double, double> estimateBoxSize(const DisplayNode& n);

/// Edge weight of data edges when constants are boxes (constant edges weigh 1).
inline constexpr int kDataEdgeWeight = 10;
/// Lowest x-coordinate nslimit used when constants are boxes (see LayoutOptions::nslimit).
inline constexpr double kConstantBoxesNslimit = 2.0;

/// The layout request for a display graph; with `styled`, labels and colors for Graphviz's renderers.
LayoutRequest toLayoutRequest(const DisplayGraph& dg, const BoxSizer& sizer, bool styled = false,
                              LayoutOptions options = {});

}  // namespace passlens::layout
