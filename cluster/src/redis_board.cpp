// The shared boards in Redis (see redis_shared_state.hpp): the reply rules'
// actions in force across the cluster.
//
//   <prefix>board:<name>           a hash: field -> "SINCE ENDED EXPIRES\nID\nVALUE"
//   <prefix>board:<name>:expiry    a sorted set of the fields, scored by EXPIRES
//   <prefix>board:<name>:version   "TOKEN:N", one more at each change
//
// Both scripts first drop the records whose time is over (by Redis's
// clock), and each key expires with the board's last record, so a board
// nobody writes goes away by itself.  TOKEN is the writer's, when it finds
// no version: a board Redis lost (a restart) starts another count, which
// the hosts' known versions never match.
#include "cqmgr/cluster/redis_replies.hpp"
#include "cqmgr/cluster/redis_shared_state.hpp"

namespace cqmgr::cluster {

namespace {

constexpr const char* board_sweep = R"(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for _, f in ipairs(gone) do redis.call('HDEL', KEYS[1], f) end
if #gone > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now) end
)";

// KEYS: the board, its expiry set, its version; ARGV: field, since, id,
// ended (0/1), expires, value, token.  Returns 1 when put, else 0.
const std::string board_put_text = std::string(board_sweep) + R"(
local since, id, ended, expires = tonumber(ARGV[2]), ARGV[3], ARGV[4], tonumber(ARGV[5])
if expires <= now then return 0 end
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local csince, cended, _, cid = string.match(cur, '^(%d+) ([01]) (%d+)\n([^\n]*)\n')
  if cid == id then
    if cended == '1' or ended == '0' then return 0 end
  elseif csince and (tonumber(csince) > since or (tonumber(csince) == since and cid > id)) then
    return 0
  end
end
redis.call('HSET', KEYS[1], ARGV[1],
           ARGV[2] .. ' ' .. ended .. ' ' .. ARGV[5] .. '\n' .. id .. '\n' .. ARGV[6])
redis.call('ZADD', KEYS[2], expires, ARGV[1])
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
local ttl = math.max(1, math.ceil(tonumber(last[2]) - now))
local v = redis.call('GET', KEYS[3])
local token, n = ARGV[7], 0
if v then
  local tk, c = string.match(v, '^(.*):(%d+)$')
  if tk then token, n = tk, tonumber(c) end
end
redis.call('SET', KEYS[3], token .. ':' .. (n + 1), 'PX', ttl)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return 1
)";

// KEYS: the board, its expiry set, its version; ARGV: the version known.
// Returns {version, 0} when it is the one known, else {version, 1, field,
// record, field, record, ...}.
const std::string board_read_text = std::string(board_sweep) + R"(
local v = redis.call('GET', KEYS[3]) or ''
if v == ARGV[1] then return {v, 0} end
local out = redis.call('HGETALL', KEYS[1])
table.insert(out, 1, 1)
table.insert(out, 1, v)
return out
)";

} // namespace

const RedisScript& board_put_script() {
    static const RedisScript s(board_put_text);
    return s;
}
const RedisScript& board_read_script() {
    static const RedisScript s(board_read_text);
    return s;
}

void RedisSharedState::board_put(const std::string& board, const BoardRecord& r,
                                 std::function<void(bool)> done) {
    const std::string key = board_key(board);
    board_put_script().run(*client_, {key, key + ":expiry", key + ":version"},
                           {r.field, std::to_string(r.since_ms), r.id, r.ended ? "1" : "0",
                            std::to_string(r.expires_ms), r.value, client_->instance()},
                           [done = std::move(done)](const RedisReply& reply) {
                               if (done) done(reply.type == RedisReply::Type::integer);
                           });
}

void RedisSharedState::board_read(const std::string& board, const std::string& known,
                                  std::function<void(const BoardAnswer&)> done) {
    const std::string key = board_key(board);
    board_read_script().run(
        *client_, {key, key + ":expiry", key + ":version"}, {known},
        [done = std::move(done)](const RedisReply& reply) { done(read_board_answer(reply)); });
}

} // namespace cqmgr::cluster
