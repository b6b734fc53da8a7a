// Parsing cqmgr_redis_server (see redis_address.hpp).
#include "cqmgr/cluster/redis_address.hpp"

#include <charconv>

namespace cqmgr::cluster {

std::string RedisAddress::text() const {
    if (is_unix()) return "unix:" + path;
    if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
    return host + ":" + std::to_string(port);
}

std::optional<RedisAddress> parse_redis_address(std::string_view text) {
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
    a.port = 6379;
    if (!port.empty() || text.ends_with(":")) {
        int p = 0;
        auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
        if (ec != std::errc{} || end != port.data() + port.size() || p < 1 || p > 65535)
            return std::nullopt;
        a.port = p;
    }
    return a;
}

} // namespace cqmgr::cluster
