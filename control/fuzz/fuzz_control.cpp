// libFuzzer target for the control protocol: the input is a byte stream
// from a client, cut into reads of varying size (the first byte chooses the
// sizes), split into lines by LineFramer and parsed by parse_request(), and
// each reply line is built with nlohmann::json.  Besides the sanitizers it
// checks:
//   * no line handed out is longer than the limit, and none holds '\n';
//   * a refused line has an error text, a parsed one none;
//   * a parsed request keeps its bounds (duration, concurrency, names);
//   * format_request() of a parsed request parses back to the same request;
//   * every reply is one line of JSON that parses back.
#include "cqmgr/control/framing.hpp"
#include "cqmgr/control/reply.hpp"
#include "cqmgr/control/request.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace cqmgr::control;

namespace {

// Aborts with a message: a finding.
[[noreturn]] void finding(const char* what) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
}

void check_request(const Request& r) {
    if (r.duration && (*r.duration < 1 || *r.duration > max_duration_seconds))
        finding("duration out of bounds");
    if (r.verb == Verb::throttle && r.concurrency < 1) finding("throttle without a concurrency");
    if (!r.is_query() && (!r.target || r.target->text.empty())) finding("command without target");
    if (r.target && r.target->transport.empty() && r.target->destination.empty())
        finding("target names nothing");
    if (r.reason.find('\t') != std::string::npos) finding("tab in the reason");
    // The formatted form spells a duration in seconds ("for 1h" becomes
    // "for 3600"), so a request just under the line limit may format to
    // one over it; such a form is not a request a client could send.
    std::string formatted = format_request(r);
    if (formatted.size() >= max_request_bytes) return;
    Parsed again = parse_request(formatted);
    if (!again.ok()) finding("formatted request does not parse");
    if (!(*again.request == r)) finding("formatted request parses differently");
}

// The reply the daemon would send for a refused or parsed line.
void check_reply(const Parsed& p) {
    Json reply =
        p.ok() ? Json{{"ok", true}, {"request", format_request(*p.request)}} : error_reply(p.error);
    std::string line = reply_line(reply);
    if (line.empty() || line.back() != '\n' || line.find('\n') != line.size() - 1)
        finding("reply is not one line");
    if (!nlohmann::json::accept(line)) finding("reply is not JSON");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    size_t chunk = 1 + data[0] % 64 * 97; // 1 .. 6112 bytes per read
    std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
    LineFramer framer;
    std::string line;
    bool too_long = false;
    for (size_t at = 0; at < in.size() && !too_long; at += chunk) {
        framer.append(in.substr(at, chunk));
        for (;;) {
            auto st = framer.next(line);
            if (st == LineFramer::Status::need_more) break;
            if (st == LineFramer::Status::too_long) {
                check_reply(Parsed{std::nullopt, "request too long"});
                too_long = true;
                break;
            }
            if (line.size() >= max_request_bytes) finding("line over the limit");
            if (line.find('\n') != std::string::npos) finding("newline inside a line");
            Parsed p = parse_request(line);
            if (p.ok() != p.error.empty()) finding("error text and result disagree");
            if (p.ok()) check_request(*p.request);
            check_reply(p);
        }
    }
    return 0;
}
