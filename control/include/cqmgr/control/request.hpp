// One request of the control socket (docs/control-protocol.md), parsed from
// its line into a typed Request, or refused with a text for the error reply.
// This is the protocol's one grammar: the daemon parses every line with it
// (and checks nothing again), cqmgrctl checks its command line against the
// same table of requests before it sends anything.  Pure code: no I/O, no
// daemon state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::control {

// A request line may hold this many bytes, its newline included.
inline constexpr size_t max_request_bytes = 4096;
// The longest duration a suspension or throttle may have (365 days).
inline constexpr int64_t max_duration_seconds = 365 * 86400;

enum class Verb {
    help,
    summary,
    queues,
    jobs,
    message,
    deliveries,
    providers,
    explain,
    suspend,
    resume,
    flush,
    throttle,
    unthrottle,
};

// What the grammar says of one request: its name on the wire, its usage
// line, and how many words may follow the name.
struct VerbSpec {
    Verb verb;
    std::string_view name;
    std::string_view usage;
    size_t min_args;
    size_t max_args; // SIZE_MAX: the rest of the line is free text
};

// Every request, in the order of docs/control-protocol.md.
std::span<const VerbSpec> verbs();
// The request named `name` (any case), or nullptr.
const VerbSpec* find_verb(std::string_view name);

// What a command acts on: `TRANSPORT`, `TRANSPORT:DESTINATION`, or (for
// flush, throttle and unthrottle) a bare `DESTINATION` on every transport.
// What explain explains: `TRANSPORT:DESTINATION`, or a bare word that
// names a destination on every transport or a provider.
struct Target {
    std::string text;        // as written
    std::string transport;   // empty: every transport that has the destination
    std::string destination; // empty: the whole transport

    bool operator==(const Target&) const = default;
};

struct Request {
    Verb verb = Verb::help;
    std::string transport;           // queues, jobs: only this transport (empty: all)
    std::string queue_id;            // message
    std::optional<Target> target;    // the commands; explain: what it explains
    std::optional<int64_t> duration; // suspend, throttle: "for DURATION", in seconds
    std::string reason;              // suspend: "reason TEXT..." (empty: none)
    std::string sender;              // resume: "sender GROUP" (empty: every group's and the rest)
    int concurrency = 0;             // throttle

    bool operator==(const Request&) const = default;
    // True for the requests that only read state (help included).
    bool is_query() const { return verb < Verb::suspend; }
};

// A parsed request, or why the line was refused.
struct Parsed {
    std::optional<Request> request;
    std::string error; // set when request is empty

    bool ok() const { return request.has_value(); }
};

// Parses one request line, without its newline (a trailing '\r' is
// ignored).  Errors name what was wrong, e.g. "unknown request: frob".
Parsed parse_request(std::string_view line);

// Parses a duration in Postfix's time units: digits and an optional unit
// letter s, m, h, d or w (none: seconds), from 1 s to 365 days.
std::optional<int64_t> parse_duration(std::string_view text);

// The request's name as written on the wire ("summary", "suspend", ...).
std::string_view verb_name(Verb v);

// A line (without newline) that parse_request() turns into `r` again.
std::string format_request(const Request& r);

// One usage line per request, for `help`.
const std::vector<std::string>& usage_lines();

} // namespace cqmgr::control
