// What cqmgr makes of Redis's replies (see redis_replies.hpp).
#include "cqmgr/cluster/redis_replies.hpp"

#include <charconv>
#include <cmath>

namespace cqmgr::cluster {

namespace {

using Type = RedisReply::Type;

// Element `i` of array `r` as an integer in [lo, hi].
std::optional<int64_t> integer_at(const RedisReply& r, size_t i, int64_t lo, int64_t hi) {
    if (r.type != Type::array || i >= r.elements.size()) return std::nullopt;
    const RedisReply& e = r.elements[i];
    if (e.type != Type::integer || e.integer < lo || e.integer > hi) return std::nullopt;
    return e.integer;
}

// A wait in ms written as a decimal string (the scripts' numbers with
// fractions): finite, in [0, max_reply_wait_ms].
std::optional<double> wait_of(const RedisReply& e) {
    if (e.type != Type::string && e.type != Type::status) return std::nullopt;
    double v = 0;
    const char* end = e.str.data() + e.str.size();
    auto [ptr, ec] = std::from_chars(e.str.data(), end, v);
    if (ec != std::errc{} || ptr != end || !std::isfinite(v) || v < 0 || v > max_reply_wait_ms)
        return std::nullopt;
    return v;
}

// Lease counts beyond this are not a cluster's.
constexpr int64_t max_live = 1'000'000'000;

bool printable(const std::string& s) {
    for (unsigned char c : s)
        if (c < 0x20 || c == 0x7f) return false;
    return true;
}

// "4.x.y" with one to three digits in each of x and y.
bool deferral_status(const std::string& s) {
    auto digits = [&](size_t& i) {
        size_t from = i;
        while (i < s.size() && i - from < 4 && s[i] >= '0' && s[i] <= '9')
            i++;
        return i > from && i - from <= 3;
    };
    if (s.size() < 5 || s[0] != '4' || s[1] != '.') return false;
    size_t i = 2;
    if (!digits(i) || i >= s.size() || s[i] != '.') return false;
    i++;
    return digits(i) && i == s.size();
}

} // namespace

LeaseAnswer read_lease_answer(const RedisReply& r) {
    LeaseAnswer a;
    auto granted = integer_at(r, 0, 0, 1);
    auto live = integer_at(r, 1, 0, max_live);
    if (!granted || !live) return LeaseAnswer{true};
    a.granted = *granted == 1;
    a.live = *live;
    if (r.elements.size() > 2) {
        auto wait = integer_at(r, 2, 0, static_cast<int64_t>(max_reply_wait_ms));
        if (!wait) return LeaseAnswer{true};
        a.retry_after_ms = static_cast<double>(*wait);
    }
    return a;
}

RenewAnswer read_renew_answer(const RedisReply& r, size_t ids) {
    RenewAnswer a, failed;
    failed.failed = true;
    auto live = integer_at(r, 0, 0, max_live);
    if (!live || r.elements.size() < 2) return failed;
    const RedisReply& flags = r.elements[1];
    if (flags.type != Type::string || flags.str.size() != ids) return failed;
    a.live = *live;
    a.kept.reserve(ids);
    for (char c : flags.str) {
        if (c != '0' && c != '1') return failed;
        a.kept.push_back(c == '1');
    }
    return a;
}

RateAnswer read_rate_answer(const RedisReply& r) {
    RateAnswer a;
    auto allowed = integer_at(r, 0, 0, 1);
    if (!allowed || r.elements.size() < 2) return RateAnswer{true};
    auto ms = wait_of(r.elements[1]);
    if (!ms) return RateAnswer{true};
    a.allowed = *allowed == 1;
    (a.allowed ? a.wait_ms : a.retry_after_ms) = *ms;
    return a;
}

std::pair<bool, std::optional<DeadMark>> read_dead_mark(const RedisReply& r) {
    if (r.type == Type::nil) return {false, std::nullopt};
    if (r.type != Type::array || r.elements.size() != 2 || r.elements[0].type != Type::string)
        return {true, std::nullopt};
    auto left = integer_at(r, 1, INT64_MIN, INT64_MAX);
    if (!left) return {true, std::nullopt};
    // A mark with no time left (or none at all, -1) is no mark.
    if (*left <= 0) return {false, std::nullopt};
    const std::string& v = r.elements[0].str;
    auto tab = v.find('\t');
    DeadMark m;
    m.status = v.substr(0, tab);
    if (tab != std::string::npos) m.reason = v.substr(tab + 1);
    if (!deferral_status(m.status) || !printable(m.reason) || m.reason.size() > 2000)
        return {true, std::nullopt};
    m.remaining_ms = std::min<int64_t>(*left, static_cast<int64_t>(max_reply_wait_ms));
    return {false, std::move(m)};
}

namespace {

// Digits only, at most 18 (no overflow), as a number.
std::optional<int64_t> decimal(std::string_view s) {
    if (s.empty() || s.size() > 18) return std::nullopt;
    int64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
    }
    return v;
}

// A board record stored as "SINCE ENDED EXPIRES\nID\nVALUE" (the value
// may hold tabs, nothing else below a blank).
std::optional<BoardRecord> board_record(const std::string& field, const std::string& stored) {
    if (field.empty() || field.size() > max_board_text || !printable(field) ||
        stored.size() > max_board_text)
        return std::nullopt;
    size_t nl1 = stored.find('\n');
    size_t nl2 = nl1 == std::string::npos ? nl1 : stored.find('\n', nl1 + 1);
    if (nl2 == std::string::npos) return std::nullopt;
    std::string_view head(stored.data(), nl1);
    size_t sp1 = head.find(' ');
    size_t sp2 = sp1 == std::string_view::npos ? sp1 : head.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos) return std::nullopt;
    auto since = decimal(head.substr(0, sp1));
    std::string_view ended = head.substr(sp1 + 1, sp2 - sp1 - 1);
    auto expires = decimal(head.substr(sp2 + 1));
    BoardRecord r;
    r.field = field;
    r.id = stored.substr(nl1 + 1, nl2 - nl1 - 1);
    r.value = stored.substr(nl2 + 1);
    if (!since || !expires || (ended != "0" && ended != "1") || r.id.empty() || !printable(r.id))
        return std::nullopt;
    for (unsigned char c : r.value)
        if ((c < 0x20 && c != '\t') || c == 0x7f) return std::nullopt;
    r.since_ms = *since;
    r.ended = ended == "1";
    r.expires_ms = *expires;
    return r;
}

} // namespace

BoardAnswer read_board_answer(const RedisReply& r) {
    BoardAnswer a;
    auto changed = integer_at(r, 1, 0, 1);
    if (!changed || r.elements[0].type != Type::string || r.elements[0].str.size() > 256 ||
        !printable(r.elements[0].str) || r.elements.size() % 2 != 0 ||
        (*changed == 0 && r.elements.size() != 2))
        return BoardAnswer::failure();
    a.version = r.elements[0].str;
    a.changed = *changed == 1;
    for (size_t i = 2; i + 1 < r.elements.size() && a.records.size() < max_board_records; i += 2) {
        const RedisReply& f = r.elements[i];
        const RedisReply& v = r.elements[i + 1];
        if (f.type != Type::string || v.type != Type::string) continue;
        if (auto rec = board_record(f.str, v.str)) a.records.push_back(std::move(*rec));
    }
    return a;
}

std::optional<RedisAddress> read_master_address(const RedisReply& r) {
    if (r.type != Type::array || r.elements.size() != 2) return std::nullopt;
    const RedisReply& host = r.elements[0];
    const RedisReply& port = r.elements[1];
    if (host.type != Type::string || port.type != Type::string) return std::nullopt;
    if (host.str.empty() || host.str.size() > 255 ||
        host.str.find_first_of(" \t\r\n/[]") != std::string::npos || !printable(host.str))
        return std::nullopt;
    int p = 0;
    const char* end = port.str.data() + port.str.size();
    auto [ptr, ec] = std::from_chars(port.str.data(), end, p);
    if (ec != std::errc{} || ptr != end || p < 1 || p > 65535) return std::nullopt;
    RedisAddress a;
    a.host = host.str;
    a.port = p;
    return a;
}

std::string read_role(const RedisReply& r) {
    if (r.type != Type::array || r.elements.empty()) return {};
    const RedisReply& e = r.elements[0];
    if (e.type != Type::string && e.type != Type::status) return {};
    if (e.str == "master" || e.str == "slave" || e.str == "sentinel") return e.str;
    return {};
}

std::optional<std::string> read_run_id(const RedisReply& r) {
    if (r.type != Type::string && r.type != Type::status) return std::nullopt;
    const std::string& s = r.str;
    const std::string key = "run_id:";
    size_t at = 0;
    for (;;) {
        at = s.find(key, at);
        if (at == std::string::npos) return std::nullopt;
        if (at == 0 || s[at - 1] == '\n') break;
        at += key.size();
    }
    at += key.size();
    size_t end = at;
    while (end < s.size() && std::isxdigit(static_cast<unsigned char>(s[end])))
        end++;
    if (end - at != 40 || (end < s.size() && s[end] != '\r' && s[end] != '\n')) return std::nullopt;
    return s.substr(at, 40);
}

} // namespace cqmgr::cluster
