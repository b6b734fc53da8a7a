#include "adaptive_policy.hpp"

#include <algorithm>
#include <cmath>

namespace cqmgr::qmgr {

namespace {
// At most this many delivery ends are kept per destination for the rate.
constexpr size_t max_history = 4096;
} // namespace

int AdaptivePolicy::rate_delay(const Dest& d, int64_t now_ms) const {
    double keep = (100 - std::clamp(s_.rate_margin, 0, 99)) / 100.0;
    double pause;
    if (d.limit.rate_delay > 0) {
        // The pace that was refused: one delivery every delivery time plus
        // the pause.  The minute's rate would mostly be the slower pace
        // before the last probe, which the receiver took: learning from it
        // would lengthen the pause a little more at every probe.
        double mean = d.mean_ms / 1000.0;
        pause = std::max((mean + d.limit.rate_delay) / keep - mean, d.limit.rate_delay + 1.0);
    } else {
        // The first pause: under the rate of the window (n deliveries ended
        // within it: n per span, the span at least a second so that a burst
        // does not read as an infinite rate), less the time a delivery
        // takes, which the pause comes on top of.
        double n = static_cast<double>(d.done.size());
        int64_t span_ms = d.done.empty() ? 0 : now_ms - d.done.front();
        double span = std::max(static_cast<double>(span_ms) / 1000.0, 1.0);
        double target = n / span * keep;
        if (target <= 0) return 1;
        pause = 1.0 / target - d.mean_ms / 1000.0;
    }
    return static_cast<int>(std::clamp(std::ceil(pause), 1.0, 3600.0));
}

AdaptivePolicy::Dest& AdaptivePolicy::dest_of(const std::string& dest) {
    auto [it, fresh] = dests_.try_emplace(dest);
    if (fresh) it->second.ramping = s_.slow_start;
    return it->second;
}

void AdaptivePolicy::started(const std::string& dest, int busy, int ceiling, int64_t now_ms) {
    Dest& d = dest_of(dest);
    d.last_start = now_ms;
    d.ceiling = ceiling;
    if (d.ramping) d.top = std::max(d.top, busy);
}

void AdaptivePolicy::ramp_success(Dest& d, int busy) {
    // The deliveries already in flight were let out by the window before
    // anything was known; above them, one more than what has succeeded.
    d.top = std::max(d.top, busy);
    d.ok = std::max(d.ok, busy);
    int cap = std::max(d.ok + 1, d.top);
    if (d.ceiling > 0 && cap > d.ceiling) {
        d.ramping = false;
        d.limit = Limit{};
        return;
    }
    d.limit.concurrency = cap;
}

std::optional<AdaptivePolicy::Change> AdaptivePolicy::delivery(const std::string& dest,
                                                               std::optional<ReplyClass> cls,
                                                               int busy_at_start, int64_t now_ms,
                                                               int64_t started_ms) {
    Dest& d = dest_of(dest);
    int64_t start = started_ms >= 0 ? std::min(started_ms, now_ms) : now_ms;
    if (!cls) {
        // What a delivery takes (the receiver's own time included), for the
        // pace a pause gives; and the receiver took one since the last cut.
        if (started_ms >= 0) {
            auto took = static_cast<double>(now_ms - start);
            d.mean_ms = d.mean_ms > 0 ? d.mean_ms * 0.8 + took * 0.2 : took;
        }
        if (start >= d.last_cut) d.proven = true;
    }
    d.done.push_back(now_ms);
    while (!d.done.empty() &&
           (d.done.front() < now_ms - s_.rate_window_ms || d.done.size() > max_history))
        d.done.pop_front();
    Limit before = d.limit;
    // A strike ends a slow start: what it teaches replaces the ramp's cap,
    // and is news even where the number is the same.
    bool ends_ramp =
        d.ramping && (cls == ReplyClass::connection_limit || cls == ReplyClass::rate_limit);
    if (ends_ramp) {
        d.ramping = false;
        d.limit = Limit{};
    }
    if (cls == ReplyClass::connection_limit) {
        int at = std::max(busy_at_start - 1, 1);
        d.limit.concurrency = d.limit.concurrency > 0 ? std::min(d.limit.concurrency, at) : at;
        d.last_strike = now_ms;
        d.successes = 0;
    } else if (cls == ReplyClass::rate_limit) {
        // One step down the pace, whatever the minute's rate: fewer
        // deliveries at once by the margin (at least one fewer), down to
        // one at a time; from there a pause after each, then a longer one.
        // A refusal of a delivery sent before the last step down, or
        // before the receiver took one at the new pace, is the count of
        // the faster pace still at work in the receiver's window: it
        // teaches nothing about the new one.
        if (start >= d.last_cut && d.proven) {
            Limit was = d.limit;
            int fewer = busy_at_start * (100 - std::clamp(s_.rate_margin, 0, 99)) / 100;
            if (d.limit.rate_delay == 0 && busy_at_start > 1) {
                int at = std::max(fewer, 1);
                d.limit.concurrency =
                    d.limit.concurrency > 0 ? std::min(d.limit.concurrency, at) : at;
            } else {
                d.limit.rate_delay = std::max(d.limit.rate_delay, rate_delay(d, now_ms));
            }
            if (d.limit != was) {
                d.last_cut = now_ms;
                d.proven = false;
            }
        }
        d.last_strike = now_ms;
        d.successes = 0;
    } else if (!cls && d.ramping) {
        ramp_success(d, busy_at_start);
        if (d.limit == before) return std::nullopt;
        return Change{dest, before, d.limit, Change::Why::ramp};
    } else if (!cls && d.limit.any()) {
        // Probe only where the limit is what holds deliveries back: a
        // success at the concurrency limit, or any success under a pause.
        bool at_limit = d.limit.rate_delay > 0 ||
                        (d.limit.concurrency > 0 && busy_at_start >= d.limit.concurrency);
        if (at_limit) d.successes++;
        bool by_count = s_.probe_deliveries > 0 && d.successes >= s_.probe_deliveries;
        bool by_time =
            s_.probe_time_ms > 0 && at_limit && now_ms - d.last_strike >= s_.probe_time_ms;
        if (by_count || by_time) {
            if (d.limit.rate_delay > 0)
                d.limit.rate_delay--;
            else
                d.limit.concurrency++;
            d.last_strike = now_ms;
            d.successes = 0;
            return Change{dest, before, d.limit, Change::Why::probe};
        }
    }
    if (d.limit == before && !ends_ramp) return std::nullopt;
    return Change{dest, before, d.limit, Change::Why::strike};
}

std::vector<AdaptivePolicy::Change> AdaptivePolicy::sweep(int64_t now_ms) {
    std::vector<Change> out;
    for (auto it = dests_.begin(); it != dests_.end();) {
        Dest& d = it->second;
        int64_t last = std::max(d.done.empty() ? 0 : d.done.back(), d.last_start);
        bool idle = last < now_ms - s_.rate_window_ms;
        if (!d.ramping && d.limit.any() && now_ms - d.last_strike >= s_.forget_time_ms) {
            // Forgotten while mail still flows: a slow start from where the
            // limit was, so that the window (grown under the limit) does
            // not let a burst out at once.
            Limit before = d.limit;
            d.limit = Limit{};
            if (s_.slow_start && !idle) {
                d.ramping = true;
                d.ok = d.top = std::max(before.concurrency, 1);
                ramp_success(d, d.ok);
            }
            out.push_back(Change{it->first, before, d.limit, Change::Why::forget});
        }
        if (idle && (d.ramping || !d.limit.any())) {
            // An idle slow start starts over next time.
            if (d.limit.any())
                out.push_back(Change{it->first, d.limit, Limit{}, Change::Why::ramp});
            it = dests_.erase(it);
        } else {
            ++it;
        }
    }
    return out;
}

void AdaptivePolicy::restore(const std::string& dest, const Limit& limit, int64_t since_ms) {
    Dest& d = dests_[dest];
    d.limit = limit;
    d.last_strike = since_ms;
    d.successes = 0;
}

AdaptivePolicy::Limit AdaptivePolicy::limit(const std::string& dest) const {
    auto it = dests_.find(dest);
    return it == dests_.end() ? Limit{} : it->second.limit;
}

bool AdaptivePolicy::ramping(const std::string& dest) const {
    auto it = dests_.find(dest);
    return it != dests_.end() && it->second.ramping;
}

} // namespace cqmgr::qmgr
