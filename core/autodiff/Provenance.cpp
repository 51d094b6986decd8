// Provenance of loss and backward nodes: node metadata_props (in memory) and the doc_string
// (which ONNX files of every IR version keep), one "key: value" per line.
#include <sstream>

#include "autodiff/Autodiff.h"

namespace passlens::autodiff {

using namespace passlens::ir;

namespace {
constexpr const char* kRoleKey = "passlens.autodiff.role";
constexpr const char* kOfKey = "passlens.autodiff.of";
constexpr const char* kSavedKey = "passlens.autodiff.saved";
constexpr const char* kNoteKey = "passlens.autodiff.note";
constexpr const char* kDocHeader = "passlens autodiff";

Role parseRole(const std::string& s) {
    if (s == "backward") return Role::Backward;
    if (s == "loss") return Role::Loss;
    if (s == "recompute") return Role::Recompute;
    return Role::Forward;
}

std::vector<std::string> splitLines(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string line; std::getline(ss, line);) out.push_back(line);
    return out;
}
}  // namespace

std::string_view roleName(Role r) {
    switch (r) {
    case Role::Forward: return "forward";
    case Role::Loss: return "loss";
    case Role::Backward: return "backward";
    case Role::Recompute: return "recompute";
    }
    return "?";
}

void setProvenance(passes::Rewriter& rw, NodeId id, const NodeProvenance& p) {
    std::vector<StringPair> props = rw.graph().node(id).metadataProps;
    std::erase_if(props, [](const StringPair& kv) { return kv.key.rfind("passlens.autodiff.", 0) == 0; });
    props.push_back({kRoleKey, std::string(roleName(p.role))});
    std::string doc = std::string(kDocHeader) + "\nrole: " + std::string(roleName(p.role));
    if (!p.forwardNode.empty()) {
        props.push_back({kOfKey, p.forwardNode});
        doc += "\nof: " + p.forwardNode;
    }
    std::string saved;
    for (const auto& s : p.saved) {
        saved += (saved.empty() ? "" : "\n") + s;
        doc += "\nsaved: " + s;
    }
    if (!p.saved.empty()) props.push_back({kSavedKey, saved});
    if (!p.note.empty()) {
        props.push_back({kNoteKey, p.note});
        doc += "\nnote: " + p.note;
    }
    rw.setNodeAnnotations(id, std::move(props), std::move(doc));
}

NodeProvenance provenanceOf(const Node& n) {
    NodeProvenance p;
    bool found = false;
    for (const auto& kv : n.metadataProps) {
        if (kv.key == kRoleKey) { p.role = parseRole(kv.value); found = true; }
        else if (kv.key == kOfKey) p.forwardNode = kv.value;
        else if (kv.key == kSavedKey) p.saved = splitLines(kv.value);
        else if (kv.key == kNoteKey) p.note = kv.value;
    }
    if (found || n.docString.rfind(kDocHeader, 0) != 0) return p;
    // Imported from a file: the doc string carries the same lines.
    for (const auto& line : splitLines(n.docString)) {
        auto colon = line.find(": ");
        if (colon == std::string::npos) continue;
        const std::string key = line.substr(0, colon), value = line.substr(colon + 2);
        if (key == "role") p.role = parseRole(value);
        else if (key == "of") p.forwardNode = value;
        else if (key == "saved") p.saved.push_back(value);
        else if (key == "note") p.note = value;
    }
    return p;
}

}  // namespace passlens::autodiff
