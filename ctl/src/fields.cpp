#include "fields.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>

namespace cqmgr::ctl {

namespace {

const json& empty_object() {
    static const json value = json::object();
    return value;
}

const json& empty_array() {
    static const json value = json::array();
    return value;
}

} // namespace

const json* field(const json& obj, std::string_view key) {
    if (!obj.is_object()) return nullptr;
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    return &*it;
}

const json& object_of(const json& obj, std::string_view key) {
    const json* f = field(obj, key);
    return f && f->is_object() ? *f : empty_object();
}

const json& array_of(const json& obj, std::string_view key) {
    const json* f = field(obj, key);
    return f && f->is_array() ? *f : empty_array();
}

std::string string_of(const json& obj, std::string_view key, std::string_view absent) {
    const json* f = field(obj, key);
    if (!f) return std::string(absent);
    if (f->is_string()) return f->get<std::string>();
    if (f->is_number()) return number_text(f->get<double>());
    if (f->is_boolean()) return f->get<bool>() ? "yes" : "no";
    return f->dump();
}

std::optional<double> number_of(const json& obj, std::string_view key) {
    const json* f = field(obj, key);
    if (!f || !f->is_number()) return std::nullopt;
    return f->get<double>();
}

bool bool_of(const json& obj, std::string_view key) {
    const json* f = field(obj, key);
    return f && f->is_boolean() && f->get<bool>();
}

std::string count_of(const json& obj, std::string_view key) {
    auto n = number_of(obj, key);
    return n ? number_text(*n) : "-";
}

std::string number_text(double value) {
    char buf[64];
    if (std::nearbyint(value) == value && std::fabs(value) < 1e15)
        std::snprintf(buf, sizeof buf, "%.0f", value);
    else
        std::snprintf(buf, sizeof buf, "%.3g", value);
    return buf;
}

std::string format_seconds(double seconds) {
    char buf[64];
    if (seconds < 0) seconds = 0;
    if (seconds < 10)
        std::snprintf(buf, sizeof buf, "%.2gs", seconds);
    else if (seconds < 60)
        std::snprintf(buf, sizeof buf, "%.0fs", std::floor(seconds));
    else {
        const auto s = static_cast<int64_t>(seconds);
        if (s < 3600)
            std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60),
                          static_cast<long long>(s % 60));
        else if (s < 86400)
            std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600),
                          static_cast<long long>(s % 3600 / 60));
        else
            std::snprintf(buf, sizeof buf, "%lldd%02lldh", static_cast<long long>(s / 86400),
                          static_cast<long long>(s % 86400 / 3600));
    }
    return buf;
}

std::string format_time(int64_t unix_seconds) {
    const std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string format_until(const json& obj, std::string_view key, int64_t now,
                         std::string_view none) {
    auto until = number_of(obj, key);
    if (!until) return std::string(none);
    const auto t = static_cast<int64_t>(*until);
    if (t <= now) return format_time(t) + " (ending)";
    return format_time(t) + " (in " + format_seconds(static_cast<double>(t - now)) + ")";
}

std::string format_rate(double per_second) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", per_second);
    return buf;
}

} // namespace cqmgr::ctl
