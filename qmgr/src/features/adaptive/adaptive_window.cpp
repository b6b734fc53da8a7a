#include "adaptive_window.hpp"

namespace cqmgr::qmgr {

int64_t AdaptiveWindow::end_of(int64_t start_ms) const {
    // The receiver stamps the window's start with a whole second no later
    // than that of the start plus the edge; the window is over once that
    // second plus the window (the unit and the strict comparison's
    // second) has come.
    return (start_ms + s_.edge_ms) / 1000 + window_seconds();
}

core::LearnedLimit AdaptiveWindow::part(const Dest& d, int64_t now_ms) const {
    core::LearnedLimit l;
    if (d.quota > 0) {
        l.quota = d.quota;
        l.window = window_seconds();
    }
    if (d.held && d.end_s * 1000 > now_ms) l.held_until = d.end_s;
    if (d.alone) l.concurrency = 1;
    return l;
}

std::optional<AdaptiveWindow::Change> AdaptiveWindow::told(const std::string& dest, Dest& d,
                                                           Change::Why why) {
    if (d.quota == d.told) return std::nullopt;
    Change c{dest, d.told, d.quota, why};
    d.told = d.quota;
    return c;
}

AdaptiveWindow::Step AdaptiveWindow::started(const std::string& dest, int64_t now_ms) {
    Dest& d = dests_[dest];
    core::LearnedLimit before = part(d, now_ms);
    d.last_active = now_ms;
    Step step;
    if (d.start_ms < 0 || d.closed || now_ms >= d.end_s * 1000) {
        // A new window: the receiver's began at this start or later.
        d.start_ms = now_ms;
        d.end_s = end_of(now_ms);
        d.closed = d.held = d.struck = d.full = d.contact = false;
        d.starts = d.ok = 0;
        d.alone = d.quota > 0;
        // A quota the last window's late successes raised.
        step.change = told(dest, d, Change::Why::strike);
    }
    if (++d.starts >= d.quota && d.quota > 0) d.held = d.full = true;
    step.core = part(d, now_ms) != before;
    return step;
}

void AdaptiveWindow::strike(Dest& d, int64_t now_ms) {
    d.last_strike = now_ms;
    d.successes = 0;
    if (d.ok == 0) {
        // The receiver's window has not ended: wait for its next second
        // once, then for a whole window from the refusal.
        d.end_s = now_ms / 1000 + (d.early++ == 0 ? 1 : window_seconds());
        d.closed = d.held = true;
        d.alone = false;
        return;
    }
    d.quota = d.ok;
    d.struck = true;
    d.alone = false;
    if (now_ms < d.end_s * 1000) d.held = true;
}

bool AdaptiveWindow::success(Dest& d, int64_t now_ms) {
    d.ok++;
    d.early = 0;
    d.alone = false;
    // The window that taught the quota counts its late successes.
    if (d.struck) {
        if (d.ok > d.quota) d.quota = d.ok;
        return false;
    }
    if (d.quota == 0 || !d.full) return false;
    d.successes++;
    bool by_count = s_.probe_deliveries > 0 && d.successes >= s_.probe_deliveries;
    bool by_time = s_.probe_time_ms > 0 && now_ms - d.last_strike >= s_.probe_time_ms;
    if (!by_count && !by_time) return false;
    // One more in this window, to find out whether the receiver takes it.
    d.quota++;
    d.last_strike = now_ms;
    d.successes = 0;
    if (d.starts < d.quota) d.held = d.full = false;
    return true;
}

AdaptiveWindow::Step AdaptiveWindow::delivery(const std::string& dest,
                                              std::optional<ReplyClass> cls, int64_t started_ms,
                                              int64_t now_ms) {
    auto it = dests_.find(dest);
    if (it == dests_.end()) return {};
    Dest& d = it->second;
    core::LearnedLimit before = part(d, now_ms);
    d.last_active = now_ms;
    if (started_ms < 0) started_ms = now_ms;
    Step step;
    // A delivery of an earlier window was counted in the receiver's
    // earlier window: it says nothing about this one.
    if (in_window(d, started_ms)) {
        if (!d.contact && (!cls || *cls == ReplyClass::rate_limit)) {
            // The receiver stamped its window before this session: the
            // window ends counted from this second at the latest.
            d.contact = true;
            d.end_s = now_ms / 1000 + window_seconds();
        }
        if (!cls) {
            if (success(d, now_ms)) step.change = told(dest, d, Change::Why::probe);
        } else if (*cls == ReplyClass::rate_limit) {
            strike(d, now_ms);
            step.change = told(dest, d, Change::Why::strike);
        }
    }
    step.core = part(d, now_ms) != before;
    return step;
}

std::vector<AdaptiveWindow::Change> AdaptiveWindow::sweep(int64_t now_ms) {
    std::vector<Change> out;
    for (auto it = dests_.begin(); it != dests_.end();) {
        Dest& d = it->second;
        if (d.quota > 0 && now_ms - d.last_strike >= s_.forget_time_ms) {
            out.push_back(Change{it->first, d.told, 0, Change::Why::forget});
            d.quota = d.told = 0;
            d.alone = false;
        }
        bool idle = now_ms - d.last_active >= s_.window_ms && d.end_s * 1000 <= now_ms;
        if (d.quota == 0 && idle)
            it = dests_.erase(it);
        else
            ++it;
    }
    return out;
}

void AdaptiveWindow::restore(const std::string& dest, int quota, int64_t since_ms) {
    Dest& d = dests_[dest];
    d.quota = d.told = quota;
    d.last_strike = since_ms;
    d.last_active = since_ms;
    d.successes = 0;
}

int AdaptiveWindow::quota(const std::string& dest) const {
    auto it = dests_.find(dest);
    return it == dests_.end() ? 0 : it->second.quota;
}

core::LearnedLimit AdaptiveWindow::core_part(const std::string& dest, int64_t now_ms) const {
    auto it = dests_.find(dest);
    return it == dests_.end() ? core::LearnedLimit{} : part(it->second, now_ms);
}

} // namespace cqmgr::qmgr
