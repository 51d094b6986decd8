#pragma once
// Errors the engine reports to its users. The category decides the CLI exit code:
// BadInput → 2 (the file or the arguments are wrong), CheckFailed → 1, Unsupported → 2.
#include <stdexcept>
#include <string>

namespace passlens {

enum class ErrorKind { BadInput, Unsupported, CheckFailed, Cancelled, Internal };

class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    ErrorKind kind() const { return kind_; }

private:
    ErrorKind kind_;
};

[[noreturn]] inline void throwBadInput(const std::string& message) { throw Error(ErrorKind::BadInput, message); }
[[noreturn]] inline void throwUnsupported(const std::string& message) { throw Error(ErrorKind::Unsupported, message); }

}  // namespace passlens
