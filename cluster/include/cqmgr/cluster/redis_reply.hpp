// One Redis reply, copied out of hiredis's reply tree, or the reason there
// is none (the server is down, the deadline passed, the connection broke).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cqmgr::cluster {

struct RedisReply {
    enum class Type { failed, error, nil, integer, string, status, array };
    Type type = Type::failed;
    int64_t integer = 0;
    std::string str; // string, status or error text; for `failed`, why
    std::vector<RedisReply> elements;

    // The server answered, and not with an error.
    bool ok() const { return type != Type::failed && type != Type::error; }
    // No answer came: Redis is down, slow or away.
    bool failed() const { return type == Type::failed; }

    static RedisReply failure(std::string why) {
        RedisReply r;
        r.str = std::move(why);
        return r;
    }
};

} // namespace cqmgr::cluster
