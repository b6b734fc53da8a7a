// Where the Redis server is (cqmgr_redis_server): `host:port`,
// `[ipv6]:port`, `host` (port 6379) or `unix:/path`; or, with Redis
// Sentinel, `sentinel:NAME@host:port,host:port,...`: the sentinels (port
// 26379 by default) that know which server is the master called NAME.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cqmgr::cluster {

struct RedisAddress {
    std::string host; // empty for a unix socket
    int port = 0;
    std::string path; // the unix socket, else empty

    bool is_unix() const { return !path.empty(); }
    // As written in main.cf, for log lines.
    std::string text() const;
    bool operator==(const RedisAddress&) const = default;
};

// Parses an address; nullopt when it is not one.  `default_port` is the
// port of an address that names none.
std::optional<RedisAddress> parse_redis_address(std::string_view text, int default_port = 6379);

// cqmgr_redis_server: one server, or the master that sentinels name.
struct RedisTarget {
    RedisAddress server;                 // without Sentinel
    std::string master_name;             // with Sentinel: the master's name
    std::vector<RedisAddress> sentinels; // with Sentinel: whom to ask, in order

    bool via_sentinel() const { return !sentinels.empty(); }
};

// Parses cqmgr_redis_server; nullopt when it is not a server or a
// sentinel list (a sentinel cannot be a unix socket).
std::optional<RedisTarget> parse_redis_target(std::string_view text);

} // namespace cqmgr::cluster
