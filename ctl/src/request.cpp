#include "request.hpp"

#include "usage_error.hpp"

#include <array>
#include <cstdint>
#include <strings.h>

namespace cqmgr::ctl {

namespace {

constexpr std::array specs{
    RequestSpec{"help", 0, 0, "help"},
    RequestSpec{"summary", 0, 0, "summary"},
    RequestSpec{"queues", 0, 1, "queues [TRANSPORT]"},
    RequestSpec{"jobs", 0, 1, "jobs [TRANSPORT]"},
    RequestSpec{"message", 1, 1, "message QUEUE_ID"},
    RequestSpec{"deliveries", 0, 0, "deliveries"},
    RequestSpec{"suspend", 1, SIZE_MAX,
                "suspend TRANSPORT[:DESTINATION] [for DURATION] [reason TEXT...]"},
    RequestSpec{"resume", 1, 1, "resume TRANSPORT[:DESTINATION]"},
    RequestSpec{"flush", 1, 1, "flush [TRANSPORT:]DESTINATION"},
    RequestSpec{"throttle", 2, 4, "throttle [TRANSPORT:]DESTINATION CONCURRENCY [for DURATION]"},
    RequestSpec{"unthrottle", 1, 1, "unthrottle [TRANSPORT:]DESTINATION"},
};

// True when every byte is printable ASCII (the protocol's rule; a space
// inside an argument is allowed: it separates words of a reason text).
bool printable(const std::string& text) {
    for (unsigned char c : text)
        if (c < 0x20 || c > 0x7e) return false;
    return true;
}

} // namespace

std::span<const RequestSpec> request_specs() {
    return specs;
}

const RequestSpec* find_request(std::string_view name) {
    for (const auto& spec : specs)
        if (name.size() == spec.name.size() &&
            strncasecmp(name.data(), spec.name.data(), name.size()) == 0)
            return &spec;
    return nullptr;
}

std::string request_line(const std::string& name, const std::vector<std::string>& args) {
    if (const RequestSpec* spec = find_request(name)) {
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
    if (line.size() + 1 > max_request_bytes)
        throw UsageError("request longer than " + std::to_string(max_request_bytes) + " bytes");
    return line;
}

} // namespace cqmgr::ctl
