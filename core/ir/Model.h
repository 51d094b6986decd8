#pragma once
// A whole model: the main graph plus what the file says around it. Fields the engine never
// interprets (training info) are kept as serialized bytes so export loses nothing.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/Graph.h"

namespace passlens::ir {

struct OpsetImport {
    std::string domain;  ///< "" = ai.onnx
    int64_t version = 0;
    /// Whether the file spelled out an empty domain (`domain: ""`), so export writes it back the
    /// same way; not part of equality.
    bool domainWritten = true;
    bool operator==(const OpsetImport& o) const { return domain == o.domain && version == o.version; }
};

/// A model-local function (FunctionProto). Its body is a Graph whose inputs/outputs are the
/// function's formal parameters (untyped).
struct Function {
    std::string name;
    std::string domain;
    std::string docString;
    /// Fields of a newer ONNX than libonnx 1.12 parses (IR 9–11), in wire format, written back verbatim.
    std::string unknownFields;
    std::vector<std::string> attributeNames;
    std::vector<std::string> rawAttributeProtos;  ///< attribute_proto defaults (newer ONNX), verbatim
    std::vector<OpsetImport> opsetImports;
    std::shared_ptr<Graph> body;
};

struct Model {
    int64_t irVersion = 8;
    std::string producerName;
    std::string producerVersion;
    std::string domain;
    int64_t modelVersion = 0;
    std::string docString;
    /// Fields of a newer ONNX than libonnx 1.12 parses (IR 9–11), in wire format, written back verbatim.
    std::string unknownFields;
    std::vector<OpsetImport> opsetImports;
    std::vector<StringPair> metadataProps;
    std::vector<std::string> trainingInfo;  ///< serialized TrainingInfoProto, verbatim
    std::vector<Function> functions;
    Graph graph;
    std::string sourcePath;                 ///< file it came from (external data resolves beside it)
    std::vector<std::string> warnings;      ///< non-fatal import findings (e.g. shape inference)

    int64_t opsetFor(const std::string& domain) const;  ///< 0 when not imported
    void setOpset(const std::string& domain, int64_t version);
    const Function* findFunction(const std::string& domain, const std::string& name) const;
};

/// Normalizes "ai.onnx" to "".
inline std::string canonicalDomain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

}  // namespace passlens::ir
