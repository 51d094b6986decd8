#include "pipeline/PipelineText.h"

#include <algorithm>
#include <cctype>

#include "ir/Error.h"

namespace passlens::passes {

namespace {

std::string trimmed(const std::string& s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

/// The elements of `text`: split at the commas outside braces (option values may hold commas).
std::vector<std::string> splitElements(const std::string& text) {
    std::vector<std::string> out;
    std::string current;
    bool inBraces = false;
    for (char c : text) {
        if (c == '{') {
            if (inBraces) throwBadInput("pipeline '" + text + "': '{' inside the options of '" + trimmed(current) + "'");
            inBraces = true;
        } else if (c == '}') {
            if (!inBraces) throwBadInput("pipeline '" + text + "': '}' without '{' after '" + trimmed(current) + "'");
            inBraces = false;
        } else if (c == ',' && !inBraces) {
            out.push_back(trimmed(current));
            current.clear();
            continue;
        }
        current += c;
    }
    if (inBraces) throwBadInput("pipeline '" + text + "': missing '}' after '" + trimmed(current) + "'");
    out.push_back(trimmed(current));
    return out;
}

std::string validNames(const PassRegistry& registry) {
    std::string s;
    for (const auto& n : registry.names()) s += (s.empty() ? "" : ", ") + n;
    return s;
}

/// "name=value name=value" (the inside of the braces of `element`).
PassArgs parseOptions(const std::string& inside, const std::string& element) {
    PassArgs args;
    std::string token;
    auto flush = [&] {
        if (token.empty()) return;
        const size_t eq = token.find('=');
        if (eq == std::string::npos || eq == 0)
            throwBadInput("pipeline element '" + element + "': expected name=value, got '" + token + "'");
        args.emplace_back(token.substr(0, eq), token.substr(eq + 1));
        token.clear();
    };
    for (char c : inside) {
        if (std::isspace(static_cast<unsigned char>(c))) flush();
        else token += c;
    }
    flush();
    return args;
}

}  // namespace

std::vector<PipelineElement> parsePipeline(const std::string& text, const PassRegistry& registry) {
    std::vector<PipelineElement> out;
    if (trimmed(text).empty()) return out;  // no passes (--passes "", Python passes=[])
    for (const std::string& element : splitElements(text)) {
        if (element.empty()) throwBadInput("pipeline '" + text + "': an empty element (two commas in a row, or one at an end)");
        const size_t brace = element.find('{'), colon = element.find(':');
        const size_t nameEnd = std::min(brace, colon);
        const std::string name = trimmed(element.substr(0, nameEnd));
        if (isLevelName(name)) {
            if (nameEnd != std::string::npos) throwBadInput("pipeline element '" + element + "': a level takes no options");
            for (const auto& pass : registry.pipeline(parseLevel(name))) out.push_back({pass, {}});
            continue;
        }
        const PassInfo* info = registry.find(name);
        if (!info)
            throwBadInput("unknown pass '" + name + "'; valid passes: " + validNames(registry) +
                          "; or a level: none, basic, extended, all");
        PipelineElement e{name, {}};
        if (brace < colon) {
            if (element.back() != '}') throwBadInput("pipeline element '" + element + "': text after the closing '}'");
            e.args = parseOptions(element.substr(brace + 1, element.size() - brace - 2), element);
        } else if (colon != std::string::npos) {
            if (info->options.size() != 1)
                throwBadInput("pipeline element '" + element + "': '" + name + ":VALUE' needs a pass with one option; " +
                              name + " has " + std::to_string(info->options.size()) + " (write " + name + "{name=value})");
            e.args.emplace_back(info->options.front().name, trimmed(element.substr(colon + 1)));
        }
        PassOptions checked;
        applyPassArgs(*info->factory(), e.args, checked);
        out.push_back(std::move(e));
    }
    return out;
}

void addPipeline(PassManager& pm, const std::string& text) {
    for (const auto& e : parsePipeline(text, pm.registry())) pm.addPass(e.pass, e.args);
}

std::string pipelineText(const std::vector<PipelineElement>& elements) {
    std::string s;
    for (const auto& e : elements) {
        s += (s.empty() ? "" : ",") + e.pass;
        if (e.args.empty()) continue;
        s += "{";
        for (size_t i = 0; i < e.args.size(); ++i) s += (i ? " " : "") + e.args[i].first + "=" + e.args[i].second;
        s += "}";
    }
    return s;
}

}  // namespace passlens::passes
