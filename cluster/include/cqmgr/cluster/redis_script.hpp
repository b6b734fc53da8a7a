// A Lua script run on the Redis server: sent by its SHA1 (EVALSHA), and in
// full (EVAL) only when the server does not know it yet (NOSCRIPT: first
// use, or after a restart of Redis, which forgets its scripts).
#pragma once

#include "cqmgr/cluster/redis_client.hpp"

#include <string>
#include <vector>

namespace cqmgr::cluster {

class RedisScript {
  public:
    explicit RedisScript(std::string text);
    const std::string& text() const { return text_; }
    const std::string& sha1() const { return sha1_; }

    // Runs the script with `keys` and `args`; `done` gets its reply.
    void run(RedisClient& client, const std::vector<std::string>& keys,
             const std::vector<std::string>& args, RedisClient::Callback done) const;

  private:
    std::vector<std::string> command(const char* verb, const std::string& body,
                                     const std::vector<std::string>& keys,
                                     const std::vector<std::string>& args) const;
    std::string text_;
    std::string sha1_;
};

// The SHA1 of `text` in lowercase hex, as Redis names scripts.
std::string sha1_hex(const std::string& text);

} // namespace cqmgr::cluster
