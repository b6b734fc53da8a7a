#include "request.hpp"

#include "cqmgr/control/request.hpp"
#include "usage_error.hpp"

namespace cqmgr::ctl {

namespace {

// True when every byte is printable ASCII (the protocol's rule; a space
// inside an argument is allowed: it separates words of a reason text).
bool printable(const std::string& text) {
    for (unsigned char c : text)
        if (c < 0x20 || c > 0x7e) return false;
    return true;
}

} // namespace

std::string request_line(const std::string& name, const std::vector<std::string>& args) {
    if (const control::VerbSpec* spec = control::find_verb(name)) {
        if (args.size() < spec->min_args || args.size() > spec->max_args)
            throw UsageError("usage: cqmgrctl " + std::string(spec->usage));
    }
    std::string line = name;
    if (!printable(name) || name.empty() || name.find(' ') != std::string::npos)
        throw UsageError("invalid request name");
    for (const auto& arg : args) {
        if (arg.empty()) throw UsageError("empty argument to " + name);
        if (!printable(arg))
            throw UsageError("argument of " + name + " holds a control or non-ASCII byte");
        line += ' ' + arg;
    }
    if (line.size() + 1 > control::max_request_bytes)
        throw UsageError("request longer than " + std::to_string(control::max_request_bytes) +
                         " bytes");
    return line;
}

} // namespace cqmgr::ctl
