// Parsing cqmgr_redis_server (see redis_address.hpp).
#include "cqmgr/cluster/redis_address.hpp"

#include <charconv>

namespace cqmgr::cluster {

std::string RedisAddress::text() const {
    if (is_unix()) return "unix:" + path;
    if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
    return host + ":" + std::to_string(port);
}

std::optional<RedisAddress> parse_redis_address(std::string_view text, int default_port) {
    RedisAddress a;
    if (text.starts_with("unix:")) {
        a.path = std::string(text.substr(5));
        if (a.path.empty() || a.path.front() != '/') return std::nullopt;
        return a;
    }
    std::string_view port;
    if (text.starts_with("[")) {
        auto close = text.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        a.host = std::string(text.substr(1, close - 1));
        std::string_view rest = text.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return std::nullopt;
            port = rest.substr(1);
        }
    } else if (auto colon = text.rfind(':'); colon != std::string_view::npos) {
        a.host = std::string(text.substr(0, colon));
        port = text.substr(colon + 1);
    } else {
        a.host = std::string(text);
    }
    if (a.host.empty() || a.host.find_first_of(" \t/") != std::string::npos) return std::nullopt;
    a.port = default_port;
    if (!port.empty() || text.ends_with(":")) {
        int p = 0;
        auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
        if (ec != std::errc{} || end != port.data() + port.size() || p < 1 || p > 65535)
            return std::nullopt;
        a.port = p;
    }
    return a;
}

std::optional<RedisTarget> parse_redis_target(std::string_view text) {
    RedisTarget t;
    constexpr std::string_view sentinel = "sentinel:";
    // (A host called "sentinel" has no '@' after its port.)
    if (!text.starts_with(sentinel) || text.find('@') == std::string_view::npos) {
        auto a = parse_redis_address(text);
        if (!a) return std::nullopt;
        t.server = *a;
        return t;
    }
    text.remove_prefix(sentinel.size());
    auto at = text.find('@');
    if (at == 0) return std::nullopt;
    t.master_name = std::string(text.substr(0, at));
    if (t.master_name.find_first_of(" \t,") != std::string::npos) return std::nullopt;
    text.remove_prefix(at + 1);
    for (;;) {
        auto comma = text.find(',');
        auto a = parse_redis_address(text.substr(0, comma), 26379);
        if (!a || a->is_unix()) return std::nullopt;
        t.sentinels.push_back(*a);
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
    }
    return t;
}

} // namespace cqmgr::cluster
