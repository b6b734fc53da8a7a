#include "end_plan.hpp"

#include "cqmgr/protocol/messages.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <sys/random.h>
#include <unistd.h>

namespace cqmgr::qmgr {

bool wants_trace(const queuefile::Envelope& env) {
    using namespace protocol::del_flag;
    return (env.tflags & (usr_vrfy | record | rec_dly_sent)) ||
           (env.rflags & (queuefile::dsn_notify::success << 1));
}

Undelivered undelivered_fate(const queuefile::Envelope& env, bool force_expire, int64_t now,
                             const conf::QmgrParams& p) {
    return undelivered_fate(env.sender().value_or("").empty(), env.create_time, env.warn_time,
                            force_expire, now, p);
}

Undelivered undelivered_fate(bool null_sender, int64_t arrival, int64_t warn_time,
                             bool force_expire, int64_t now, const conf::QmgrParams& p) {
    if (force_expire) return Undelivered::force_expired;
    // Bounces (null sender) have their own, usually shorter, lifetime.
    int64_t life = null_sender ? p.bounce_queue_lifetime : p.maximal_queue_lifetime;
    if (now >= arrival + life) return Undelivered::expired;
    // A warning is due from one second before its time, as in stock.
    if (warn_time > 0 && now >= warn_time - 1) return Undelivered::warn;
    return Undelivered::keep;
}

const char* expiry_word(Undelivered fate) {
    return fate == Undelivered::force_expired ? "force-expired" : "expired";
}

int64_t backoff(const queuefile::Envelope& env, int64_t now, const conf::QmgrParams& p) {
    return backoff(env.create_time, now, p);
}

int64_t backoff(int64_t arrival, int64_t now, const conf::QmgrParams& p) {
    if (arrival <= 0) return p.minimal_backoff_time;
    // Capped first, then raised: with a minimum above the maximum (a
    // configuration stock accepts) the minimum wins, as in stock.
    int64_t delay = std::min(now - arrival, p.maximal_backoff_time);
    return std::max(delay, p.minimal_backoff_time);
}

int64_t jittered_backoff(int64_t delay, int64_t percent, double u, const conf::QmgrParams& p) {
    if (percent <= 0) return delay;
    double spread = static_cast<double>(delay) * static_cast<double>(percent) / 100.0;
    double offset = spread * (2.0 * std::clamp(u, 0.0, 1.0) - 1.0);
    int64_t moved = delay + static_cast<int64_t>(std::llround(offset));
    // The same bounds, in the same order, as backoff().
    return std::max(std::min(moved, p.maximal_backoff_time), p.minimal_backoff_time);
}

int64_t next_attempt_delay(int64_t arrival, int64_t now, const conf::QmgrParams& p,
                           std::mt19937_64& random) {
    int64_t delay = backoff(arrival, now, p);
    if (p.cqmgr_backoff_jitter > 0)
        delay = jittered_backoff(delay, p.cqmgr_backoff_jitter,
                                 std::uniform_real_distribution<double>(0.0, 1.0)(random), p);
    return delay;
}

uint64_t random_seed() {
    uint64_t seed = 0;
    if (::getrandom(&seed, sizeof seed, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof seed))
        return seed;
    return static_cast<uint64_t>(::time(nullptr)) * 1000003u ^ static_cast<uint64_t>(::getpid());
}

} // namespace cqmgr::qmgr
