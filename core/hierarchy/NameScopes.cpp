// Scope paths from PyTorch's name_scopes metadata and from '/'-separated node names.
#include "hierarchy/Hierarchy.h"

namespace passlens::hierarchy {

std::vector<std::string> parseNameScopes(std::string_view s) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < s.size()) {
        const char q = s[i];
        if (q != '\'' && q != '"') { ++i; continue; }
        std::string item;
        size_t j = i + 1;
        bool closed = false;
        for (; j < s.size(); ++j) {
            if (s[j] == '\\' && j + 1 < s.size()) { item += s[++j]; continue; }
            if (s[j] == q) { closed = true; break; }
            item += s[j];
        }
        if (!closed) break;
        if (!item.empty()) out.push_back(std::move(item));
        i = j + 1;
    }
    return out;
}

std::vector<std::string> scopesFromNodeName(std::string_view name) {
    std::vector<std::string> out;
    if (name.find('/') == std::string_view::npos) return out;
    size_t start = 0;
    while (start <= name.size()) {
        size_t slash = name.find('/', start);
        if (slash == std::string_view::npos) break;  // the rest names the node itself
        if (slash > start) out.emplace_back(name.substr(start, slash - start));
        start = slash + 1;
    }
    return out;
}

}  // namespace passlens::hierarchy
