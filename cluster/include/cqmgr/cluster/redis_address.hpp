// Where the Redis server is (cqmgr_redis_server): `host:port`,
// `[ipv6]:port`, `host` (port 6379) or `unix:/path`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cqmgr::cluster {

struct RedisAddress {
    std::string host; // empty for a unix socket
    int port = 0;
    std::string path; // the unix socket, else empty

    bool is_unix() const { return !path.empty(); }
    // As written in main.cf, for log lines.
    std::string text() const;
};

// Parses an address; nullopt when it is not one.
std::optional<RedisAddress> parse_redis_address(std::string_view text);

} // namespace cqmgr::cluster
