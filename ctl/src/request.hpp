// The requests of the control protocol (docs/control-protocol.md) as
// cqmgrctl sends them: their names and argument counts, for a usage check
// before anything is sent, and the request line made from the command line.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::ctl {

struct RequestSpec {
    std::string_view name;
    size_t min_args;
    size_t max_args; // SIZE_MAX: the rest of the line is free text
    std::string_view usage;
};

// Every request this version knows, in the order of the spec.
std::span<const RequestSpec> request_specs();
// The spec of `name` (any case), or nullptr.
const RequestSpec* find_request(std::string_view name);

// The line to send (without its '\n') for `name` and `args`.  Throws
// UsageError when the arguments do not fit the request, when an argument
// holds a byte the protocol refuses (which would also let an argument smuggle
// a second request in with a newline), or when the line is too long.
// Unknown request names pass unchecked, for a daemon newer than cqmgrctl.
std::string request_line(const std::string& name, const std::vector<std::string>& args);

// The longest request line, newline included (the daemon closes the
// connection on a longer one).
inline constexpr size_t max_request_bytes = 4096;

} // namespace cqmgr::ctl
