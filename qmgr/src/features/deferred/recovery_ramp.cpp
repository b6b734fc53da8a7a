#include "recovery_ramp.hpp"

#include "cqmgr/queuefile/queue_layout.hpp"
#include "log.hpp"
#include "scan.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

namespace {
// A bucket's key for messages not in the index.
const std::string unknown_destination;

int64_t micros(const protocol::TimeVal& t) {
    return static_cast<int64_t>(t.sec) * 1000000 + t.usec;
}
} // namespace

RecoveryRamp::RecoveryRamp(asio::io_context& io, const conf::QmgrParams& params,
                           const WallClock& clock, std::function<void()> rescan)
    : params_(params), clock_(clock), rescan_(std::move(rescan)),
      rate_(static_cast<double>(params.cqmgr_recovery_rate)),
      cap_(static_cast<int>(std::min<int64_t>(2 * params.cqmgr_recovery_rate, 1 << 30))),
      rescan_timer_(io) {}

void RecoveryRamp::deferred(const Message& m) {
    if (!on() && !params_.cqmgr_dead_backlog) return;
    DeferredIndex::Times times;
    times.arrival = m.env.create_time;
    times.warn_time = m.env.warn_time;
    times.null_sender = m.env.sender().value_or("").empty();
    index_.add(m.id, m.destinations(), clock_.now(), times);
}

TokenBucket& RecoveryRamp::bucket(const std::string& destination, int64_t now_us) {
    // One second's worth of burst, and at least one token, so that a rate
    // below 1/s still lets a message through now and then.
    return buckets_.try_emplace(destination, rate_, std::max(rate_, 1.0), now_us).first->second;
}

bool RecoveryRamp::may_pass(const std::string& destination, int64_t now_us, bool take) {
    auto it = outstanding_.find(destination);
    if (it != outstanding_.end() && it->second >= cap_) return false;
    TokenBucket& b = bucket(destination, now_us);
    return take ? b.take(now_us) : b.ready(now_us);
}

template <class F> void RecoveryRamp::for_each_bucket(const std::string& id, F f) {
    const DeferredIndex::Destinations* d = index_.find(id, clock_.now());
    if (d && !d->empty()) {
        for (const std::string* dest : *d)
            f(*dest);
    } else {
        f(unknown_destination);
    }
}

void RecoveryRamp::begin_pass() {
    if (in_pass_) return;
    in_pass_ = true;
    pass_begun_ = std::chrono::steady_clock::now();
}

bool RecoveryRamp::hold_unseen(const std::string& id) {
    if (!on() || !ramp_only_pass_) return false;
    begin_pass();
    int64_t now_us = micros(clock_.precise());
    bool any = false;
    for_each_bucket(id, [&](const std::string& b) { any = any || may_pass(b, now_us, false); });
    if (any) return false;
    ++held_;
    return true;
}

bool RecoveryRamp::admit(const std::string& id, int scan_flags, mode_t mode) {
    using namespace queuefile;
    admitted_id_.clear();
    if (!on() || (scan_flags & scan_flag::all) || (mode & (qmode::unthrottle | qmode::expire)))
        return true;
    begin_pass();
    int64_t now_us = micros(clock_.precise());
    admitted_from_.clear();
    for_each_bucket(id, [&](const std::string& b) {
        if (may_pass(b, now_us)) admitted_from_.push_back(b);
    });
    if (admitted_from_.empty()) {
        ++held_;
        return false;
    }
    admitted_id_ = id;
    return true;
}

void RecoveryRamp::promoted(const std::string& id) {
    index_.erase(id);
    // Only what the buckets let through counts against them (not what A,
    // g+r or g+x took, nor anything while the ramp is off).
    if (id != admitted_id_) return;
    for (const auto& dest : admitted_from_)
        ++outstanding_[dest];
    charged_[id] = std::move(admitted_from_);
    admitted_id_.clear();
    admitted_from_.clear();
}

void RecoveryRamp::left_active(const std::string& id) {
    auto it = charged_.find(id);
    if (it == charged_.end()) return;
    for (const auto& dest : it->second) {
        auto o = outstanding_.find(dest);
        if (o != outstanding_.end() && --o->second <= 0) outstanding_.erase(o);
    }
    charged_.erase(it);
}

void RecoveryRamp::pass_done() {
    sweep(); // the dead backlog's entries too
    if (!on()) return;
    bool asked = in_pass_;
    in_pass_ = false;
    if (held_ == 0) {
        if (episode_) log::debug("recovery ramp: every due deferred message promoted");
        episode_ = false;
        return;
    }
    if (!episode_)
        log::info("recovery ramp: deferred mail promoted at " +
                  std::to_string(params_.cqmgr_recovery_rate) + "/s per destination (" +
                  std::to_string(held_) + " messages waiting)");
    episode_ = true;
    held_ = 0;
    if (rescan_armed_) return;
    rescan_armed_ = true;
    // A second after the pass began, the buckets have refilled what the
    // pass took: waiting a second after its end would lose what came in
    // during the pass, and the rate would fall short of R.
    auto now = std::chrono::steady_clock::now();
    rescan_timer_.expires_at(asked ? std::max(now, pass_begun_ + std::chrono::seconds(1))
                                   : now + std::chrono::seconds(1));
    rescan_timer_.async_wait([this](const error_code& ec) {
        rescan_armed_ = false;
        if (!ec) rescan_();
    });
}

void RecoveryRamp::sweep() {
    int64_t now = clock_.now();
    if (now - last_sweep_ < params_.queue_run_delay) return;
    last_sweep_ = now;
    // No file waits longer than its backoff (with room for a jitter on
    // top) plus a queue run or two before a scan looks it up again.
    int64_t longest = std::max(params_.maximal_backoff_time, params_.minimal_backoff_time);
    index_.sweep(now - 2 * longest - 2 * params_.queue_run_delay);
    int64_t now_us = micros(clock_.precise());
    for (auto it = buckets_.begin(); it != buckets_.end();)
        it = it->second.full(now_us) ? buckets_.erase(it) : std::next(it);
}

} // namespace cqmgr::qmgr
