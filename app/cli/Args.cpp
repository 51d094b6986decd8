#include <algorithm>
#include <ostream>
#include <stdexcept>

#include "cli/Command.h"

namespace passlens::cli {

std::map<std::string, Command>& commandRegistry() {
    static std::map<std::string, Command> registry;
    return registry;
}

Args::Args(std::vector<std::string> argv, const std::vector<std::string>& valueOptions) {
    std::vector<std::string> withValue = valueOptions;
    withValue.push_back("--dim");
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a.size() > 1 && a[0] == '-' && a != "-") {
            std::string name = a, inlineValue;
            bool hasInline = false;
            if (auto eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
                name = a.substr(0, eq);
                inlineValue = a.substr(eq + 1);
                hasInline = true;
            }
            if (std::find(withValue.begin(), withValue.end(), name) != withValue.end()) {
                if (hasInline) options_.emplace(name, inlineValue);
                else if (i + 1 < argv.size()) options_.emplace(name, argv[++i]);
                else throw UsageError{"option " + name + " needs a value"};
            } else {
                if (hasInline) throw UsageError{"flag " + name + " takes no value"};
                flags_.push_back(name);
            }
        } else {
            positionals_.push_back(a);
        }
    }
}

bool Args::flag(const std::string& name) const { return std::find(flags_.begin(), flags_.end(), name) != flags_.end(); }

std::optional<std::string> Args::option(const std::string& name) const {
    auto range = options_.equal_range(name);
    if (range.first == range.second) return std::nullopt;
    return std::prev(range.second)->second;
}

std::vector<std::string> Args::options(const std::string& name) const {
    std::vector<std::string> out;
    auto range = options_.equal_range(name);
    for (auto it = range.first; it != range.second; ++it) out.push_back(it->second);
    return out;
}

std::vector<std::pair<std::string, int64_t>> Args::dims() const {
    std::vector<std::pair<std::string, int64_t>> out;
    for (const auto& d : options("--dim")) {
        auto eq = d.find('=');
        if (eq == std::string::npos || eq == 0) throw UsageError{"--dim expects NAME=VALUE, got '" + d + "'"};
        int64_t v = 0;
        try {
            size_t used = 0;
            v = std::stoll(d.substr(eq + 1), &used);
            if (used != d.size() - eq - 1 || v < 0) throw std::invalid_argument("bad");
        } catch (const std::exception&) {
            throw UsageError{"--dim " + d + ": value must be a non-negative integer"};
        }
        out.emplace_back(d.substr(0, eq), v);
    }
    return out;
}

void Args::expectOnly(const std::vector<std::string>& known) const {
    for (const auto& f : flags_)
        if (std::find(known.begin(), known.end(), f) == known.end()) throw UsageError{"unknown flag " + f};
    for (const auto& [name, value] : options_)
        if (name != "--dim" && std::find(known.begin(), known.end(), name) == known.end())
            throw UsageError{"unknown option " + name};
}

void Args::refuse(const std::string& name, const std::string& why) const {
    if (flag(name) || option(name)) throw UsageError{name + " " + why};
}

void Args::noteNoEffect(const std::string& name, const std::string& why, std::ostream& err) const {
    if (flag(name) || option(name)) err << "note: " << name << " has no effect here: it " << why << "\n";
}

const std::string& Args::positional(size_t i, const std::string& what) const {
    if (i >= positionals_.size()) throw UsageError{"missing " + what};
    return positionals_[i];
}

uint64_t Args::unsignedOption(const std::string& name, uint64_t dflt) const {
    auto s = option(name);
    if (!s) return dflt;
    try {
        size_t used = 0;
        if (s->empty() || (*s)[0] == '-') throw std::invalid_argument("negative");
        auto v = std::stoull(*s, &used);
        if (used != s->size()) throw std::invalid_argument("trailing");
        return v;
    } catch (const std::exception&) {
        throw UsageError{name + " expects a non-negative integer, got '" + *s + "'"};
    }
}

double Args::nonNegativeOption(const std::string& name, double dflt) const {
    auto s = option(name);
    if (!s) return dflt;
    try {
        size_t used = 0;
        double v = std::stod(*s, &used);
        if (used != s->size() || !(v >= 0)) throw std::invalid_argument("bad");
        return v;
    } catch (const std::exception&) {
        throw UsageError{name + " expects a non-negative number, got '" + *s + "'"};
    }
}

}  // namespace passlens::cli
