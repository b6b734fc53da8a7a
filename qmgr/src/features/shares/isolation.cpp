#include "isolation.hpp"

#include "log.hpp"

#include <algorithm>
#include <cstdio>

namespace cqmgr::qmgr {

namespace {

// Milliseconds as seconds with one decimal ("30.1s").
std::string seconds(int64_t ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms) / 1000);
    return buf;
}

std::string agents(int n) {
    return std::to_string(n) + (n == 1 ? " agent" : " agents");
}

} // namespace

IsolationSettings isolation_settings(const conf::QmgrParams& p) {
    IsolationSettings s;
    // A lowered share outlives the longest retry of a deferred message, so
    // that mail coming back to a tarpit finds it still lowered.
    s.forget_ms = std::max<int64_t>(3600, p.maximal_backoff_time) * 1000;
    return s;
}

Isolation::Isolation(const conf::QmgrParams& params, CoreRequests& core, const WallClock& clock)
    : policy_(isolation_settings(params)), core_(core), clock_(clock),
      forget_seconds_(isolation_settings(params).forget_ms / 1000) {}

void Isolation::delivered(const core::Entry& e, const core::DeliveryResult& r, int64_t elapsed_ms,
                          int64_t now_ms) {
    if (r.kind != core::DeliveryResult::Kind::replied) return; // no word from the receiver
    const core::Queue& q = *e.queue;
    const core::Transport& t = *q.transport;
    if (!covers(t)) return;
    using Outcome = IsolationPolicy::Outcome;
    Outcome outcome = Outcome::success;
    if (!r.hop.reason.empty())
        outcome = classifier_.classify(r.hop.status, r.hop.reason) == ReplyClass::timeout
                      ? Outcome::timeout
                      : Outcome::failure;
    // What it may have in flight, its share aside: its window, or what it
    // has earned of its share if less (its slow start, share.cpp).
    int window = std::min(q.window, q.share_earned);
    auto change = policy_.delivered({t.name, q.name}, core::share_full(t), window, outcome,
                                    elapsed_ms, now_ms);
    if (change) apply(*change, &t, r.hop.reason);
}

void Isolation::delivery_ended(DeliveryEvent& ev) {
    delivered(*ev.entry, ev.result, ev.elapsed_us / 1000, clock_.now_ms());
}

void Isolation::queue_window(const core::Queue& q, bool, QueueTurn turn) {
    if (turn == QueueTurn::died) died(q, clock_.now_ms());
}

void Isolation::died(const core::Queue& q, int64_t now_ms) {
    const core::Transport& t = *q.transport;
    if (!covers(t)) return;
    if (auto change = policy_.died({t.name, q.name}, core::share_full(t), now_ms))
        apply(*change, &t, "");
}

void Isolation::sweep(int64_t now_ms) {
    if (now_ms - last_sweep_ms_ < 1000) return;
    last_sweep_ms_ = now_ms;
    for (const auto& change : policy_.sweep(now_ms)) {
        const auto& transports = core_.scheduler().transports();
        auto it = transports.find(change.dest.first);
        apply(change, it == transports.end() ? nullptr : it->second.get(), "");
    }
}

void Isolation::apply(const IsolationPolicy::Change& change, const core::Transport* t,
                      const std::string& words) {
    using Why = IsolationPolicy::Change::Why;
    int full = t ? core::share_full(*t) : 0;
    auto shown = [&](int share) { return share == 0 ? agents(full) : agents(share); };
    std::string what = "destination share ";
    if (change.after == 0) {
        what += "restored to " + agents(full) + " (from " + shown(change.before) + ")";
    } else if (change.before == 0 || change.after < change.before) {
        what += "lowered from " + shown(change.before) + " to " + shown(change.after);
    } else {
        what += "raised from " + shown(change.before) + " to " + shown(change.after);
    }
    switch (change.why) {
    case Why::slow:
        what += ": a delivery took " + seconds(change.elapsed_ms) + ", the transport's typical " +
                seconds(policy_.typical_ms(change.dest.first));
        break;
    case Why::timeout:
        what += ": \"" + words + "\" after " + seconds(change.elapsed_ms);
        break;
    case Why::probe:
        what += change.after == 1 ? ": the destination died; 1 delivery until one succeeds"
                                  : ": a probe delivery succeeded in " + seconds(change.elapsed_ms);
        break;
    case Why::fast:
        what += ": a delivery took " + seconds(change.elapsed_ms);
        break;
    case Why::forget:
        what += ": no delivery for " + std::to_string(forget_seconds_) + "s";
        break;
    }
    log::info("cqmgr: " + change.dest.first + ":" + change.dest.second + ": " + what);
    core_.set_limit(core::AdminTarget{change.dest.first, change.dest.second},
                    core::LimitChange::share(change.after, policy_.probing(change.dest)));
}

} // namespace cqmgr::qmgr
