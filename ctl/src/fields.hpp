// Reading fields of the daemon's JSON replies without trusting their shape,
// and showing values for humans.  A field that is absent, null or of an
// unexpected type reads as absent, so a reply from a newer or older cqmgr
// still prints (with "-" where a value is missing) instead of throwing.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace cqmgr::ctl {

using nlohmann::json;

// The member `key` of `obj`, or nullptr when `obj` is not an object or the
// member is absent or null.
const json* field(const json& obj, std::string_view key);
// `obj[key]` as an object, array or string; an empty one when absent or of
// another type.
const json& object_of(const json& obj, std::string_view key);
const json& array_of(const json& obj, std::string_view key);
std::string string_of(const json& obj, std::string_view key, std::string_view absent = "-");
// `obj[key]` as a number, or nullopt.
std::optional<double> number_of(const json& obj, std::string_view key);
// `obj[key]` as a boolean (absent is false).
bool bool_of(const json& obj, std::string_view key);
// `obj[key]` as an integer count for a table cell, "-" when absent.
std::string count_of(const json& obj, std::string_view key);
// A number without a trailing ".0" when it is integral ("3", "0.42").
std::string number_text(double value);

// A duration for humans: "0.42s", "12.3s", "42s", "5m03s", "2h05m", "3d04h".
std::string format_seconds(double seconds);
// Unix seconds as UTC ISO 8601, as the daemon's log lines show them.
std::string format_time(int64_t unix_seconds);
// An "until" value: "2026-11-24T06:00:00Z (in 10m00s)", or `none` when
// null or absent.  `now` is the current Unix time.
std::string format_until(const json& obj, std::string_view key, int64_t now,
                         std::string_view none = "-");
// A rate per second with one decimal ("12.0").
std::string format_rate(double per_second);

} // namespace cqmgr::ctl
