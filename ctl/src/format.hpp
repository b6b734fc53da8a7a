// The human form of the daemon's replies (docs/control-protocol.md): one
// pure function per request, from the parsed JSON reply to the text that
// `cqmgrctl COMMAND` prints without --json.  `now` (Unix seconds) turns
// "until" times into "in 5m00s"; tests pass a fixed one.
#pragma once

#include "table.hpp"

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

namespace cqmgr::ctl {

using nlohmann::json;

// The text for the reply to `request` (its first word, any case).  Requests
// this version does not know print their JSON, indented.
std::string format_reply(std::string_view request, const json& reply, int64_t now);

std::string format_summary(const json& reply);
std::string format_queues(const json& reply, int64_t now);
std::string format_jobs(const json& reply);
std::string format_message(const json& reply, int64_t now);
std::string format_deliveries(const json& reply);
std::string format_providers(const json& reply);
// Why a destination's mail goes or waits: per queue, its effective
// concurrency and rate, and one line per limit with the binding one
// marked "*" (and those not in force "-").
std::string format_explain(const json& reply, int64_t now);
// The reply of a command (suspend, resume, flush, throttle, unthrottle):
// what it changed.
std::string format_changed(const json& reply, int64_t now);
std::string format_help(const json& reply);
std::string format_generic(const json& reply);

// The items of an object of counters as "N name, N name" (`suffix` after
// each name), "-" when there are none.  The names in `order` come first, in
// that order (the protocol's order; JSON objects have none), then the
// others by name.
std::string counter_list(const json& counters, std::span<const std::string_view> order,
                         std::string_view suffix = "");
// The orders of summary's delivery and message counters.
inline constexpr std::array<std::string_view, 4> delivery_counters = {"done", "deferred", "crashed",
                                                                      "unavailable"};
inline constexpr std::array<std::string_view, 4> message_counters = {"removed", "deferred",
                                                                     "bounced", "expired"};
// The queue directories of a `summary` reply: "incoming 0, active 6
// (oldest 3s), deferred 12 (oldest 2h05m)"; "-" for what is not known.
std::string mail_queues(const json& queues);
// The requests that failed at the destination, by the class of the hop
// status: "3 4.x.x, 1 5.x.x".
std::string destination_failures(const json& counters);
// The feed's state in a `summary` reply: "paused", "scanning incoming",
// "idle", with the in-flow tokens written.
std::string feed_state(const json& feed);

// The destinations of a `queues` reply, flattened: what `top` and the
// queues table show.
struct QueueRow {
    std::string transport;
    std::string queue; // "*" for the transport itself
    const json* entry; // the transport or queue object of the reply
    double load;       // busy + todo
};
std::vector<QueueRow> queue_rows(const json& queues_reply, bool with_transports);

// The table of transports and destinations that are dead, suspended or
// (with `throttled`) throttled, with their reasons and ends.
Table condition_table(const json& queues_reply, int64_t now, bool throttled);
// The busiest-destinations table: WINDOW, BUSY, TODO, LAST, STATE.
Table queue_table(const std::vector<QueueRow>& rows);

} // namespace cqmgr::ctl
