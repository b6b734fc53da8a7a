// The arithmetic of `cqmgrctl explain` (docs/control-protocol.md): every
// limit that bounds a destination, each as one line with its source, and
// which of them binds now.  The lines come from many places (main.cf, the
// adaptive limits, the administrator, the cluster, the shares, a provider,
// a reply rule, a sender group); what they mean together is decided here
// alone, so that it can be tested without a daemon.
//
// A line bounds one of three things:
//   stop         no new delivery starts at all (dead, suspended, a gate
//                that admits none): the effective concurrency is 0
//   concurrency  deliveries in flight at once
//   rate         deliveries per second
// A line that is not in force now (a share while no other destination
// waits, an initial concurrency) is shown and never binds.  The effective
// concurrency is the smallest value among the stop and concurrency lines
// in force; the effective rate the smallest among the rate lines in force
// (none: no rate limit).  Among equal values the line listed first binds:
// the contributors list the more specific limits before the transport's
// concurrency window, which every other limit narrows.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cqmgr::qmgr {

struct LimitLine {
    enum class Bound { stop, concurrency, rate };
    Bound bound = Bound::concurrency;
    // stop: 0; concurrency: deliveries at once; rate: deliveries per second.
    double value = 0;
    // Where it comes from: "main.cf", "learned", "admin", "cluster",
    // "share", "dead", "provider", "reply-rule", "sender-group", ...
    std::string source;
    // What it is, in words: the parameter, the reply, who set it and until
    // when.
    std::string detail;
    bool in_force = true;
    bool binds = false; // set by bind_limits()

    bool operator==(const LimitLine&) const = default;
};

// The name of a bound as the reply writes it.
const char* bound_name(LimitLine::Bound b);

// What selection works with, from the lines.
struct EffectiveLimits {
    int concurrency = 0;
    std::optional<double> rate; // deliveries per second; none: no rate limit
    // The lines that bind them (indexes into the lines), if any.
    std::optional<size_t> concurrency_line;
    std::optional<size_t> rate_line;
};

// Works out the effective concurrency and rate of `lines` and marks the
// lines that bind them (LimitLine::binds; every other line's is cleared).
// A destination with no concurrency line at all has no bound: its
// effective concurrency is `unbounded`.
EffectiveLimits bind_limits(std::vector<LimitLine>& lines, int unbounded = 0);

// A rate in words: "1/5s" for one delivery every 5 s, "12/s", "0.5/s".
std::string rate_text(double per_second);

} // namespace cqmgr::qmgr
