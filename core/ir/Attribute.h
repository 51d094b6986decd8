#pragma once
// Node attributes of every ONNX kind. Graph attributes (If/Loop/Scan bodies) own their subgraph;
// kinds the engine never interprets (sparse tensors, type protos) are kept as serialized bytes.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/Tensor.h"

namespace passlens::ir {

class Graph;

enum class AttrKind : int32_t {
    Undefined = 0, Float = 1, Int = 2, String = 3, Tensor = 4, Graph = 5, Floats = 6, Ints = 7,
    Strings = 8, Tensors = 9, Graphs = 10, SparseTensor = 11, SparseTensors = 12, TypeProto = 13,
    TypeProtos = 14,
};

struct Attribute {
    std::string name;
    AttrKind kind = AttrKind::Undefined;
    std::string refAttrName;  ///< set inside function bodies: value comes from the caller
    std::string docString;

    float f = 0;
    int64_t i = 0;
    std::string s;
    TensorPtr t;
    std::shared_ptr<Graph> g;
    std::vector<float> floats;
    std::vector<int64_t> ints;
    std::vector<std::string> strings;
    std::vector<TensorPtr> tensors;
    std::vector<std::shared_ptr<Graph>> graphs;
    std::vector<std::string> opaque;  ///< serialized SparseTensorProto / TypeProto entries

    static Attribute makeInt(std::string n, int64_t v) { Attribute a; a.name = std::move(n); a.kind = AttrKind::Int; a.i = v; return a; }
    static Attribute makeFloat(std::string n, float v) { Attribute a; a.name = std::move(n); a.kind = AttrKind::Float; a.f = v; return a; }
    static Attribute makeString(std::string n, std::string v) { Attribute a; a.name = std::move(n); a.kind = AttrKind::String; a.s = std::move(v); return a; }
    static Attribute makeInts(std::string n, std::vector<int64_t> v) { Attribute a; a.name = std::move(n); a.kind = AttrKind::Ints; a.ints = std::move(v); return a; }
    static Attribute makeFloats(std::string n, std::vector<float> v) { Attribute a; a.name = std::move(n); a.kind = AttrKind::Floats; a.floats = std::move(v); return a; }
    static Attribute makeTensor(std::string n, TensorPtr v) { Attribute a; a.name = std::move(n); a.kind = AttrKind::Tensor; a.t = std::move(v); return a; }
    static Attribute makeGraph(std::string n, std::shared_ptr<Graph> v) { Attribute a; a.name = std::move(n); a.kind = AttrKind::Graph; a.g = std::move(v); return a; }

    /// Short human form for the UI and remarks: "[1, 1]", "0.5", "<tensor float32[64]>".
    std::string valueToString(size_t maxItems = 8) const;
};

std::string_view attrKindName(AttrKind k);

}  // namespace passlens::ir
