// Lua scripts by SHA1 with a fallback to the full text (see redis_script.hpp).
#include "cqmgr/cluster/redis_script.hpp"

#include <boost/uuid/detail/sha1.hpp>
#include <cstdio>

namespace cqmgr::cluster {

std::string sha1_hex(const std::string& text) {
    boost::uuids::detail::sha1 h;
    h.process_bytes(text.data(), text.size());
    boost::uuids::detail::sha1::digest_type d;
    h.get_digest(d);
    char out[41];
    for (int i = 0; i < 5; i++)
        std::snprintf(out + 8 * i, 9, "%08x", d[i]);
    return std::string(out, 40);
}

RedisScript::RedisScript(std::string text) : text_(std::move(text)), sha1_(sha1_hex(text_)) {}

std::vector<std::string> RedisScript::command(const char* verb, const std::string& body,
                                              const std::vector<std::string>& keys,
                                              const std::vector<std::string>& args) const {
    std::vector<std::string> cmd{verb, body, std::to_string(keys.size())};
    cmd.insert(cmd.end(), keys.begin(), keys.end());
    cmd.insert(cmd.end(), args.begin(), args.end());
    return cmd;
}

void RedisScript::run(RedisClient& client, const std::vector<std::string>& keys,
                      const std::vector<std::string>& args, RedisClient::Callback done) const {
    auto again = command("EVAL", text_, keys, args);
    auto weak = client.weak_from_this();
    client.command(command("EVALSHA", sha1_, keys, args),
                   [weak, again = std::move(again), done = std::move(done)](const RedisReply& r) {
                       auto c = weak.lock();
                       if (c && r.type == RedisReply::Type::error && r.str.starts_with("NOSCRIPT"))
                           c->command(std::move(again), done);
                       else
                           done(r);
                   });
}

} // namespace cqmgr::cluster
