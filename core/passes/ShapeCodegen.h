#pragma once
// Builds a small int64 vector (a Reshape target, Pad's pads, a Range limit) from its elements'
// DimExprs with few nodes (issue #27): constants; dims read as Shape(t, start, end) slices of
// values that exist before the reader (one node gives consecutive dims); elementwise Add, Sub,
// Mul, Div, Mod, Neg, Min, Max over whole vectors, so elements of the same form cost one node
// together (Mod(-[h, w], 4) is one Neg and one Mod over Shape(x, 1, 3)); a Concat, or a Concat
// and a Gather, to put the pieces in order. cost() is a dry run of emit(), so a caller replaces
// a chain only when that removes more nodes than it adds.
//
// Integer semantics: Div is emitted only where the numerator is provably >= 0 and the divisor
// >= 1 (ONNX truncates, DimExpr floors); Mod (fmod = 0) takes the divisor's sign like DimExpr's.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "passes/Rewriter.h"
#include "shape/ShapeEngine.h"

namespace passlens::passes {

class ShapeCodegen {
public:
    /// `opset`: the model's ai.onnx version (Shape start/end needs 15, Squeeze's axes input 13).
    explicit ShapeCodegen(int64_t opset) : opset_(opset) {}

    /// Makes the dims of `v` available as leaves to programs whose readers come after `position`
    /// (the topological index of v's producer; -1 for a graph input). Call in topological order:
    /// of several values with the same dim, the earliest is read.
    void addSource(ir::ValueId v, int64_t position, const std::vector<shape::Dim>& dims);
    /// Makes the elements of an int64 vector `v` available the same way: the whole vector is read
    /// as it is (no node), a part or one element with a Gather. For vectors no program can build
    /// (sizes cast from float32), which a rebuilt vector would otherwise compute again.
    void addElementSource(ir::ValueId v, int64_t position, const std::vector<shape::DimExpr>& elements);
    /// Makes an int64 vector the graph computes already available as it is (no node) to programs
    /// that need exactly its elements and whose readers come after `position`: a rule that adds a
    /// program next to existing shape arithmetic never computes such a vector again (the next run's
    /// merge-equal-symbolic-values would merge the copy). The first of equal vectors is read.
    void addExistingVector(ir::ValueId v, int64_t position, const std::vector<shape::DimExpr>& elements);

    struct Request {
        std::vector<shape::DimExpr> elements;
        bool scalar = false;          ///< a 0-d result (one element)
        int64_t before = INT64_MAX;   ///< read only sources at positions < before
        /// Sources to read first when they have the dims (those the replaced chain read), then
        /// values already read, then the latest before the reader.
        std::vector<ir::ValueId> prefer;
    };
    /// Nodes emit() would add for these requests in this order (vectors an earlier emit() made, or
    /// an earlier request here needs, count once); nullopt when an element cannot be built.
    std::optional<size_t> cost(const std::vector<Request>& requests) const;
    /// Adds the nodes for `r` through `rw` and returns the value (kNone when it cannot be built).
    /// `origins`: the nodes the program stands for (provenance of what is added).
    ir::ValueId emit(Rewriter& rw, const Request& r, const std::string& nameHint, const std::string& why,
                     const std::vector<ir::NodeId>& origins = {});

    struct Made {
        ir::ValueId value = ir::kNone;  ///< kNone in a dry run
        int64_t lastSource = -1;        ///< position of the latest source it reads
        int64_t index = -1;             ///< memo entries for one element: its index in `value`
    };
    using Memo = std::unordered_map<std::string, Made>;

private:
    friend class ProgramBuilder;
    struct Leaf {
        int64_t position;
        ir::ValueId value;
        size_t dim;
        bool elements = false;  ///< an element of `value` itself, not a dim of its shape
    };
    int64_t opset_;
    std::unordered_map<uint64_t, std::vector<Leaf>> leaves_;  ///< by expression id, earliest first
    std::map<ir::ValueId, std::vector<shape::Dim>> sourceDims_;  ///< dims, or elements of element sources
    Memo made_;  ///< vectors emitted so far, by their elements
    /// Decisions between two programs, taken once by dry runs (they nest, and cost() and emit()
    /// must decide alike): one Reduce or elementwise; runs in place or one Gather.
    mutable std::unordered_map<std::string, bool> choices_;
};

}  // namespace passlens::passes
