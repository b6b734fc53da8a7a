// One Redis reply, copied out of hiredis's reply tree, or the reason there
// is none (the server is down, the deadline passed, the connection broke).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct redisReply;
struct redisReader;

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

// The most elements an array in a reply may have: cqmgr's replies have a
// handful.
constexpr long max_reply_elements = 65536;

// Guards hiredis's reply reader `r`: it makes an array's table of elements
// as soon as it reads the count, before any element has come (hiredis 0.14
// sets no bound), so "*4000000000" from a server would allocate 32 GB.
// With these functions, an array of more than max_reply_elements is a
// protocol error instead (the connection is dropped).
void guard_reader(redisReader* r);

// A copy of hiredis's reply tree (what its reader made of the bytes).
RedisReply from_hiredis(const redisReply* r);

// The text of a reply for log lines and tests ("OK", "(nil)", "3", "[a, b]").
std::string describe(const RedisReply& r);

} // namespace cqmgr::cluster
