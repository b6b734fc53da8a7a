// The shared dead marks, leases and rate cells in Redis (see
// redis_shared_state.hpp).
#include "cqmgr/cluster/redis_shared_state.hpp"

#include "cqmgr/cluster/redis_replies.hpp"

#include <charconv>
#include <hiredis/hiredis.h>

namespace cqmgr::cluster {

namespace {

// Redis's clock in milliseconds, with fractions (TIME is seconds and
// microseconds).  Scripts that write after calling TIME are fine since
// Redis 5 (effects replication), and the default in Redis 7.
constexpr const char* now_ms = R"(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
)";

// KEYS[1]: the cell; ARGV[1]: the interval (ms, may be fractional);
// ARGV[2]: the burst; ARGV[3]: how far ahead a start may be booked (ms);
// ARGV[4]: the asking host's own TAT, as ms from now (the cell is taken to
// be at least there: a cell that Redis lost in a restart starts again from
// the host's last start, not from nothing).
// Returns {1, "<ms until the start is due>"} when it is granted ("0": now),
// else {0, "<ms until one could be had>"}.  The arithmetic is gcra_take()'s.
const std::string gcra_text = std::string(now_ms) + R"(
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local horizon = math.max(tonumber(ARGV[3] or '0') or 0, 0)
local tat = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local own = now + (tonumber(ARGV[4] or '0') or 0)
if tat < own then tat = own end
if tat < now then tat = now end
local wait = tat - interval * (burst - 1) - now
if wait > horizon then
  return {0, tostring(wait - horizon)}
end
local nxt = tat + interval
redis.call('SET', KEYS[1], string.format('%.3f', nxt), 'PX', math.ceil(nxt - now) + 1)
return {1, tostring(math.max(wait, 0))}
)";

// Sets the lease set's own expiry to its last lease's, so an abandoned set
// goes away.
constexpr const char* lease_expiry = R"(
local function expire_set(key, now)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then
    redis.call('PEXPIRE', key, math.max(1, math.ceil(tonumber(last[2]) - now)))
  end
end
)";

// The store's own memory of which Redis server (its run_id) the cluster
// last used.  A step that finds another there (the key missing: a first
// use or a restart without persistence; another run_id: a restart, or a
// failover to a replica, which had the key replicated) may be on a store
// that lost leases still in use.  It sets the fence: for one lease time no
// new lease is granted, while hosts take again the leases they hold
// (renew, limit-checked).  A lease taken before the loss has by then been
// taken again or has expired on its host, which counts a lease as valid
// only for the lease time after the step that last renewed it was sent.
// KEYS[2]: the instance key, KEYS[3]: the fence key; the server's run_id
// and the lease time (ms).  Returns the fence's ms left (0: none).
constexpr const char* lease_fence = R"(
local function fence(ikey, fkey, run_id, ttl)
  if redis.call('GET', ikey) ~= run_id then
    redis.call('SET', ikey, run_id)
    redis.call('SET', fkey, '1', 'PX', ttl)
  end
  return math.max(redis.call('PTTL', fkey), 0)
end
)";

// KEYS: the lease set, the instance key, the fence key; ARGV: id, limit,
// ttl (ms), run_id.  Returns {granted 0/1, live leases, ms of the fence
// left when refused for it}.
const std::string lease_acquire_text = std::string(now_ms) + lease_expiry + lease_fence + R"(
local ttl = tonumber(ARGV[3])
local wait = fence(KEYS[2], KEYS[3], ARGV[4], ttl)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
local live = redis.call('ZCARD', KEYS[1])
if not held then
  if wait > 0 then return {0, live, wait} end
  if live >= tonumber(ARGV[2]) then return {0, live, 0} end
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
expire_set(KEYS[1], now)
return {1, redis.call('ZCARD', KEYS[1]), 0}
)";

// KEYS: the lease set, the instance key, the fence key; ARGV: ttl (ms),
// limit, run_id, ids...  Each id still held is renewed; one the set lost
// is taken again only while the live leases of every host together are
// fewer than the limit.  Returns {live, "1101..."} (1: held now).
const std::string lease_renew_text = std::string(now_ms) + lease_expiry + lease_fence + R"(
local ttl = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
fence(KEYS[2], KEYS[3], ARGV[3], ttl)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local live = redis.call('ZCARD', KEYS[1])
local kept = {}
for i = 4, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('ZADD', KEYS[1], now + ttl, ARGV[i])
    kept[#kept + 1] = '1'
  elseif live < limit then
    redis.call('ZADD', KEYS[1], now + ttl, ARGV[i])
    live = live + 1
    kept[#kept + 1] = '1'
  else
    kept[#kept + 1] = '0'
  end
end
expire_set(KEYS[1], now)
return {live, table.concat(kept)}
)";

// KEYS[1]: the dead mark.  Returns nil, or {value, ms left}.
const std::string dead_get_text = R"(
local v = redis.call('GET', KEYS[1])
if not v then return nil end
return {v, redis.call('PTTL', KEYS[1])}
)";

// `v` as the shortest decimal that reads back as it.
std::string number_text(double v) {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, res.ptr);
}

auto ok_only(std::function<void(bool)> done) {
    return [done = std::move(done)](const RedisReply& r) {
        if (done) done(r.ok());
    };
}

} // namespace

const RedisScript& gcra_script() {
    static const RedisScript s(gcra_text);
    return s;
}
const RedisScript& lease_acquire_script() {
    static const RedisScript s(lease_acquire_text);
    return s;
}
const RedisScript& lease_renew_script() {
    static const RedisScript s(lease_renew_text);
    return s;
}
const RedisScript& dead_get_script() {
    static const RedisScript s(dead_get_text);
    return s;
}

RedisSharedState::RedisSharedState(std::shared_ptr<RedisClient> client, std::string prefix)
    : client_(std::move(client)), prefix_(std::move(prefix)) {}

void RedisSharedState::start(StateFn state) {
    client_->on_state(std::move(state));
    client_->start();
}

void RedisSharedState::close() {
    client_->close();
}

bool RedisSharedState::release_blocking(const Leases& leases) {
    // The server connected to last (with Sentinel, the master it named).
    RedisOptions o = client_->options();
    o.address = client_->server();
    if (!o.address.is_unix() && o.address.host.empty()) return false;
    return release_leases_blocking(o, prefix_, leases);
}

void RedisSharedState::dead_set(const std::string& transport, const std::string& queue,
                                const DeadMark& mark, int64_t ttl_ms,
                                std::function<void(bool)> done) {
    client_->command({"SET", dead_key(transport, queue), mark.status + "\t" + mark.reason, "PX",
                      std::to_string(std::max<int64_t>(ttl_ms, 1))},
                     ok_only(std::move(done)));
}

void RedisSharedState::dead_get(const std::string& transport, const std::string& queue,
                                std::function<void(bool, std::optional<DeadMark>)> done) {
    dead_get_script().run(*client_, {dead_key(transport, queue)}, {},
                          [done = std::move(done)](const RedisReply& r) {
                              auto [failed, mark] = read_dead_mark(r);
                              done(failed, std::move(mark));
                          });
}

void RedisSharedState::dead_clear(const std::string& transport, const std::string& queue) {
    client_->command({"DEL", dead_key(transport, queue)}, {});
}

void RedisSharedState::lease_acquire(const std::string& scope, const std::string& id, int limit,
                                     int64_t ttl_ms, std::function<void(const LeaseAnswer&)> done) {
    lease_acquire_script().run(
        *client_, {lease_key(scope), instance_key(), fence_key()},
        {id, std::to_string(limit), std::to_string(ttl_ms), client_->instance()},
        [done = std::move(done)](const RedisReply& r) { done(read_lease_answer(r)); });
}

void RedisSharedState::lease_renew(const std::string& scope, const std::vector<std::string>& ids,
                                   int limit, int64_t ttl_ms,
                                   std::function<void(const RenewAnswer&)> done) {
    std::vector<std::string> args{std::to_string(ttl_ms), std::to_string(limit),
                                  client_->instance()};
    args.insert(args.end(), ids.begin(), ids.end());
    lease_renew_script().run(*client_, {lease_key(scope), instance_key(), fence_key()}, args,
                             [n = ids.size(), done = std::move(done)](const RedisReply& r) {
                                 done(read_renew_answer(r, n));
                             });
}

void RedisSharedState::lease_release(const std::string& scope, const std::string& id,
                                     std::function<void(bool)> done) {
    client_->command({"ZREM", lease_key(scope), id}, ok_only(std::move(done)));
}

void RedisSharedState::rate_take(const std::string& scope, const RateSpec& rate, double horizon_ms,
                                 double own_tat_ms, std::function<void(const RateAnswer&)> done) {
    gcra_script().run(*client_, {rate_key(scope)},
                      {number_text(rate.interval_ms()), std::to_string(rate.burst),
                       number_text(horizon_ms), number_text(own_tat_ms)},
                      [done = std::move(done)](const RedisReply& r) { done(read_rate_answer(r)); });
}

bool release_leases_blocking(const RedisOptions& options, const std::string& prefix,
                             const SharedState::Leases& leases) {
    if (leases.empty()) return true;
    auto ms = options.command_timeout.count();
    timeval tv{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>(ms % 1000 * 1000)};
    const RedisAddress& a = options.address;
    redisContext* c = a.is_unix() ? redisConnectUnixWithTimeout(a.path.c_str(), tv)
                                  : redisConnectWithTimeout(a.host.c_str(), a.port, tv);
    if (!c) return false;
    bool ok = !c->err && redisSetTimeout(c, tv) == REDIS_OK;
    if (ok) guard_reader(c->reader);
    // Pipelined: every ZREM goes out, then the replies are read.
    for (size_t i = 0; ok && i < leases.size(); i++) {
        std::string key = prefix + "lease:" + leases[i].first;
        const char* argv[] = {"ZREM", key.c_str(), leases[i].second.c_str()};
        size_t lens[] = {4, key.size(), leases[i].second.size()};
        ok = redisAppendCommandArgv(c, 3, argv, lens) == REDIS_OK;
    }
    for (size_t i = 0; ok && i < leases.size(); i++) {
        void* reply = nullptr;
        ok = redisGetReply(c, &reply) == REDIS_OK && reply;
        if (reply) freeReplyObject(reply);
    }
    redisFree(c);
    return ok;
}

} // namespace cqmgr::cluster
