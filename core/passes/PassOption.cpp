// Pass options: their type text (`passes`) and the check of pipeline-text values against them.
#include <algorithm>
#include <cctype>

#include "ir/Error.h"
#include "passes/Pass.h"

namespace passlens::passes {

std::string typeText(const PassOption& o) {
    switch (o.type) {
    case PassOption::Type::Int: return "int";
    case PassOption::Type::Text: return "text";
    case PassOption::Type::Choice: {
        std::string s;
        for (const auto& c : o.choices) s += (s.empty() ? "" : "|") + c;
        return s;
    }
    }
    return "?";
}

namespace {

std::string joined(const std::vector<std::string>& items) {
    std::string s;
    for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
    return s;
}

bool isInteger(const std::string& v) {
    size_t i = v.size() > 1 && (v[0] == '-' || v[0] == '+') ? 1 : 0;
    if (i == v.size() || v.size() > 18) return false;  // 18 digits always fit an int64
    for (; i < v.size(); ++i)
        if (!std::isdigit(static_cast<unsigned char>(v[i]))) return false;
    return true;
}

}  // namespace

void applyPassArgs(const Pass& pass, const PassArgs& args, PassOptions& options) {
    const std::vector<PassOption> declared = pass.options();
    for (const auto& [name, value] : args) {
        const PassOption* option = nullptr;
        std::vector<std::string> names;
        for (const auto& o : declared) {
            names.push_back(o.name);
            if (o.name == name) option = &o;
        }
        if (!option)
            throwBadInput("pass '" + pass.name() + "' has no option '" + name + "'; " +
                          (names.empty() ? std::string("it takes none") : "its options: " + joined(names)));
        const std::string where = pass.name() + "{" + name + "=...}: ";
        if (option->type == PassOption::Type::Int && !isInteger(value))
            throwBadInput(where + "expected an integer, got '" + value + "'");
        if (option->type == PassOption::Type::Choice &&
            std::find(option->choices.begin(), option->choices.end(), value) == option->choices.end())
            throwBadInput(where + "'" + value + "' is not one of " + joined(option->choices));
        if (option->type == PassOption::Type::Text && value.empty()) throwBadInput(where + "the value is empty");
        option->apply(options, value);
    }
}

}  // namespace passlens::passes
