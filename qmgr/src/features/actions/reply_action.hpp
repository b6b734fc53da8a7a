// The result of a cqmgr_reply_actions rule (docs/admin-guide.md, "Reply
// rules that act"): what to do when a receiver's reply matches, to what,
// after how many matches and for how long.
//
//   ACTION SCOPE [after N/PERIOD] [for DURATION] [until N delivered]
//
//   ACTION   suspend | throttle N | rate N/PERIOD | backoff PROFILE | warn
//   SCOPE    destination | provider | transport | sender-destination |
//            sender-provider
//
// e.g. `suspend provider after 3/10m for 2h`.  Words are case-insensitive;
// the clauses after the scope may come in any order, each at most once.
// A PERIOD or DURATION is a count and a unit as in cqmgr_rate_limits (ms,
// s, m, min, h, d, ...; `10m`, `2h`).  A suspension needs `for` (nothing
// is delivered while it lasts, so no delivery could end it); a throttle or
// a rate needs `for` or `until N delivered` (whichever comes first ends
// it); a warning takes neither.  Without `after`, every match acts.
//
// The text is the admin's, from a table, but the parser is pure and
// bounded all the same (every number has a range, the text at most
// max_action_text bytes), and fuzzed (qmgr/fuzz/fuzz_reply_action.cpp).
#pragma once

#include "cqmgr/cluster/rate_spec.hpp"
#include "cqmgr/common/result.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cqmgr::qmgr {

struct ReplyAction {
    enum class Kind { suspend, throttle, rate, backoff, warn };
    enum class Scope { destination, provider, transport, sender_destination, sender_provider };

    // The most matches a threshold may count (each is a time kept).
    static constexpr int max_after = 1000;
    // The longest period, duration or pause: a week.
    static constexpr int64_t max_period_ms = int64_t{7} * 86'400'000;
    // The most deliveries `until` may wait for, and the largest throttle.
    static constexpr int64_t max_count = 1'000'000;
    // The longest profile name.
    static constexpr size_t max_profile_name = 64;

    Kind kind = Kind::warn;
    Scope scope = Scope::destination;
    // throttle N; for a backoff, its profile's concurrency (0: none) once
    // with_profile() gave it.
    int concurrency = 0;
    // rate N/PERIOD: N and PERIOD; for a backoff, its profile's rate (0:
    // none) once with_profile() gave it.
    int64_t rate_count = 0;
    int64_t rate_period_ms = 0;
    std::string profile;         // backoff PROFILE (lower case)
    int after_count = 1;         // after N/PERIOD: N (1: every match)
    int64_t after_period_ms = 0; //   and PERIOD (0: none given)
    int64_t duration_ms = 0;     // for DURATION (0: none)
    int64_t until_delivered = 0; // until N delivered (0: none)

    // The pause after each delivery that keeps to `rate N/PERIOD`: the
    // spacing PERIOD/N rounded up to whole seconds (the core's pause is
    // in seconds), at least 1.
    int pause_seconds() const;
    // The duration in whole seconds, rounded up (0: none).
    int64_t duration_seconds() const { return (duration_ms + 999) / 1000; }
    // As the grammar writes it, with periods in milliseconds; parsing it
    // gives this action again (a backoff's limits are its profile's, not
    // written).
    std::string text() const;
    bool operator==(const ReplyAction&) const = default;
};

// The name of a kind or scope as the grammar writes it ("sender-provider").
const char* action_kind_name(ReplyAction::Kind k);
const char* action_scope_name(ReplyAction::Scope s);

// The longest result text the parser reads.
inline constexpr size_t max_action_text = 512;

// Why a rule's result is not an action.
struct ActionError {
    std::string detail; // e.g. "unknown scope \"host\""
    std::string message() const { return detail; }
};

// Parses a rule's result.
Result<ReplyAction, ActionError> parse_reply_action(std::string_view text);

// The grammar's bounded words, for the values that name limits
// (backoff_profile.hpp): `N/PERIOD` as cqmgr_rate_limits writes it, without
// a burst, with N at most `max_n` and PERIOD at most a week (`what` names
// it in the error); and a count of 1 to `max`.
Result<cluster::RateSpec, ActionError> parse_action_rate(const std::string& word, int64_t max_n,
                                                         const char* what);
std::optional<int64_t> parse_action_count(const std::string& word, int64_t max);

} // namespace cqmgr::qmgr
