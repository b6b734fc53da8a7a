// The control socket's suspensions and throttles as the state store keeps
// them (and as cqmgr-control.json, which earlier versions wrote to
// data_directory, held them), and the actions of the reply rules in force
// (cqmgr_reply_actions): one JSON document,
//
//   {"version":1,
//    "suspend":[{"transport":T,"destination":D,"until":U|null,"reason":R,"uid":N},...],
//    "throttle":[{"transport":T,"destination":D,"concurrency":C,"until":U|null,"uid":N},...],
//    "rule":[{"transport":T,"destination":D,"action":A,"rule":W,"reason":R,"since":S,
//             "until":U|null,"deliveries":N|null[,"sender":G]},...]}
//
// where a bare destination has no "transport" and a whole transport no
// "destination"; a rule's action always has a transport, and one on a
// sender group's mail alone (a sender scope) names the group ("sender")
// and a destination.  "rule" is
// optional (a document without it has none).  Each suspension and
// throttle may also have "since":S, when it was set (documents of
// earlier versions have none).  One limit, max_control_bytes, holds for what is
// written and what is read back: a list that would be longer is not written (the command that would
// make it so is refused), and a longer document is not read.
#pragma once

#include "cqmgr/common/result.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::state {

struct ControlSetting {
    enum class Kind { suspend, throttle, rule };
    Kind kind = Kind::suspend;
    std::string transport;   // "" = every transport (throttle only)
    std::string destination; // "" = the whole transport (suspend and rule only)
    int64_t until = 0;       // when it ends by itself (Unix seconds); 0 = never
    std::string reason;      // suspend; rule: the reply that made it act
    int concurrency = 0;     // throttle only, >= 1
    int64_t uid = 0;         // who set it (not for a rule)
    // When it was set, or a rule's action began (Unix seconds); 0 = not
    // known (a suspension or throttle kept by an earlier version).
    int64_t since = 0;
    // A rule's action only: its result as written, the rule ("TABLE, line
    // N"), and how many deliveries end it (0: none).
    std::string action;
    std::string rule;
    int64_t deliveries = 0;
    // A rule's action on one sender group's mail only: the group's name
    // ("": the destination's whole mail).
    std::string sender;

    bool operator==(const ControlSetting&) const = default;
};

// The most bytes the document may have.
inline constexpr size_t max_control_bytes = size_t{4} << 20;

// The document for `settings` (one line and a newline).
std::string encode_control_settings(const std::vector<ControlSetting>& settings);

// Why a text is not a settings document.
struct SettingsError {
    enum class Kind {
        too_long,  // longer than max_control_bytes
        malformed, // not JSON, or not this document's shape
    };
    Kind kind = Kind::malformed;
    std::string detail; // malformed: the parser's words

    // "longer than 4194304 bytes", or the parser's words.
    std::string message() const;
};

// The settings in `text`, or why it is not such a document.
Result<std::vector<ControlSetting>, SettingsError> decode_control_settings(std::string_view text);

} // namespace cqmgr::state
