#pragma once
// The graph facts ONNX Runtime's transformers test, in its terms, so each fusion of the
// `onnxruntime` profile reads like the ONNX Runtime source it reproduces (GetOutputEdgesCount,
// NodeProducesGraphOutput, GetConstantInitializer, optimizer_utils::IsScalar, ...), and the words
// every refusal uses to name the node and the edge.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/Model.h"
#include "passes/Rewriter.h"

namespace passlens::passes::ort {

inline constexpr const char* kMSDomain = "com.microsoft";

/// Node.GetOutputEdgesCount(): input slots of other nodes reading any output of `n` (graph
/// outputs are not edges).
size_t outputEdges(const ir::Graph& g, ir::NodeId n);
/// The nodes at the ends of those edges, one per edge, in order.
std::vector<ir::NodeId> outputNodes(const ir::Graph& g, ir::NodeId n);
/// Graph::NodeProducesGraphOutput(): some output of `n` is a graph output.
bool producesGraphOutput(const ir::Graph& g, ir::NodeId n);
/// The node producing `v` when it is a default-domain `opType`, else kNone.
ir::NodeId producer(const ir::Graph& g, ir::ValueId v, const std::string& opType);
/// A default-domain node of that type.
bool isOp(const ir::Graph& g, ir::NodeId n, const std::string& opType);
/// optimizer_utils::IsScalar: the shape is known and is [] or [1].
bool isScalarShape(const ir::Graph& g, ir::ValueId v);
/// The single element of a constant initializer (float, double, float16 as double; int64, int32).
std::optional<double> constantScalar(const ir::Graph& g, ir::ValueId v);
/// optimizer_utils::CheckConstantInput / IsInitializerWithExpectedValue: a constant with one
/// element equal to `expected` (relative 1e-5).
bool constantEquals(const ir::Graph& g, ir::ValueId v, double expected);
/// The element type is one of `types` ("float", "float16", ...) as ONNX Runtime spells them.
bool elemTypeIn(const ir::Graph& g, ir::ValueId v, const std::vector<ir::DataType>& types);
/// Every present input of `n` has one of `types` (the fusions' type constraints).
bool inputsTypedIn(const ir::Graph& g, ir::NodeId n, const std::vector<ir::DataType>& types);
/// The only reader of `n`'s output when it is an `opType` node, else kNone.
ir::NodeId soleReader(const ir::Graph& g, ir::NodeId n, const std::string& opType);
/// NodeArg::Shape(): the dims of `v` as ONNX Runtime's graph knows them (nullopt when the rank is
/// unknown): a constant's own dims; inside an OrtShapeScope, what ONNX shape inference alone gives
/// (see there); otherwise the value's type.
std::optional<ir::Shape> shapeOf(const ir::Graph& g, ir::ValueId v);

/// shapeOf for a value of any graph of `m`: an outer-scope value of a subgraph has the shape of
/// the enclosing graph's value of that name (they are one NodeArg in ONNX Runtime).
std::optional<ir::Shape> shapeOf(const ir::Model& m, const ir::Graph& g, ir::ValueId v);
/// IsConstantInitializer(check_outer_scope): the tensor of an enclosing graph's initializer (or
/// Constant node: an initializer once ONNX Runtime loads the model) that subgraph `g` reads as
/// `v`; null otherwise.
ir::TensorPtr outerScopeConstant(const ir::Model& m, const ir::Graph& g, ir::ValueId v);

/// While alive, shapeOf() answers with the shapes ONNX Runtime's graph holds for `model`: ONNX
/// Runtime resolves a graph with ONNX's inference functions and no partial data propagation, so a
/// Reshape to a computed target has no shape there even where PassLens's symbolic engine knows
/// every dim, and the transformers that read shapes (TransposeOptimizer's cost, NoopElimination,
/// ReshapeFusion, ...) decide on less. Computed on the first shapeOf() call (libonnx's inference
/// on a copy of the model, onnxio::resetToOnnxInferredShapes), once per transformer: ONNX Runtime
/// resolves the graph between transformers. Values created after that keep their own types.
class OrtShapeScope {
public:
    explicit OrtShapeScope(const ir::Model& model);
    ~OrtShapeScope();
    OrtShapeScope(const OrtShapeScope&) = delete;
    OrtShapeScope& operator=(const OrtShapeScope&) = delete;

    /// The shape ONNX Runtime knows for `v` of `g`; nullopt when the scope has no answer (a value
    /// newer than the inference, a graph outside the model), std::optional<Shape>{} when unknown.
    std::optional<std::optional<ir::Shape>> lookup(const ir::Graph& g, ir::ValueId v);

private:
    void compute();
    const ir::Model& model_;
    bool computed_ = false;
    std::map<const ir::Graph*, std::vector<std::optional<std::optional<ir::Shape>>>> shapes_;
    OrtShapeScope* previous_;
};

/// "`/ln_2/Add`": a node as refusals name it.
std::string q(const ir::Graph& g, ir::NodeId n);
/// "`/ln_2/Add_output_0`": an edge (value) as refusals name it.
std::string qv(const ir::Graph& g, ir::ValueId v);
/// "read by 2 nodes (`A`, `B`)" / "read by 1 node (`A`)" / "read by no node".
std::string readBy(const ir::Graph& g, ir::NodeId n);

/// Rewriter::missed, unless a later step of ONNX Runtime's transformer loop is running (the
/// refusal was reported by the first step already; see QuietRefusals).
void refuse(Rewriter& rw, const std::vector<ir::NodeId>& nodes, const std::string& message,
            const std::vector<ir::ValueId>& blockingValues = {});
/// While alive, refuse() records nothing: the repeated steps of GraphTransformerManager's loop
/// (ort-level2-repeat) would otherwise report every refusal of the first step again.
class QuietRefusals {
public:
    QuietRefusals();
    ~QuietRefusals();
    QuietRefusals(const QuietRefusals&) = delete;
    QuietRefusals& operator=(const QuietRefusals&) = delete;

private:
    bool previous_;
};

/// Declares the com.microsoft opset (version 1) the contrib ops need.
void useMicrosoftDomain(Rewriter& rw);

}  // namespace passlens::passes::ort
