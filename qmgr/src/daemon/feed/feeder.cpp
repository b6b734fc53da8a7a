#include "feeder.hpp"

#include "log.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

namespace {
constexpr int max_pause = 60; // seconds
// With the due index, one pass in this many seconds' worth of periodic
// passes is a full one, so that a file whose time another program changed
// in place waits no more than that.
constexpr int64_t full_pass_every = 3600;
// Names the due index passes over in one feed pass at most (they cost no
// system call; the other scan gets its turn in between).
constexpr int pass_over_batch = 256;
} // namespace

Feeder::Feeder(asio::io_context& io, const conf::QmgrParams& params, const WallClock& clock,
               const queuefile::ActiveQueue& store, StoreRetry& retry, FlowTokens& tokens,
               Hooks hooks, Counters& counters, RecoveryRamp& ramp, DeadBacklog& backlog)
    : io_(io), params_(params), clock_(clock), store_(store), retry_(retry), tokens_(tokens),
      hooks_(std::move(hooks)), counters_(counters), ramp_(ramp), backlog_(backlog),
      pause_timer_(io), deferred_timer_(io) {}

void Feeder::start() {
    // Whatever a previous queue manager left in active is taken up again
    // where it is, in the incoming scan's turns and before new mail.  Stock
    // moves each file back to incoming first (a utime and a rename) and
    // renames it into active again when its turn comes; the outcome is the
    // same, and a restart with a full active queue skips two renames per
    // message and delivers the first one without waiting for them all.
    leftovers_ = store_.leftovers();
    leftover_next_ = 0;
    scans_[incoming].request(scan_flag::start);
    if (params_.cqmgr_deferred_due_index) scans_[deferred].watch_directories();
    request_deferred(scan_flag::start | scan_flag::full);
    arm_deferred_timer();
    wake();
}

void Feeder::arm_deferred_timer() {
    deferred_timer_.expires_after(std::chrono::seconds(params_.queue_run_delay));
    deferred_timer_.async_wait([this](const error_code& ec) {
        if (ec) return;
        int64_t every =
            std::max<int64_t>(1, full_pass_every / std::max<int64_t>(1, params_.queue_run_delay));
        ++timer_passes_;
        request_deferred(scan_flag::start | (timer_passes_ % every == 0 ? scan_flag::full : 0));
        arm_deferred_timer();
        wake();
    });
}

void Feeder::on_trigger(std::string_view bytes) {
    // Identical requests since the last look collapse into one, as in stock.
    int incoming_flags = 0, deferred_flags = 0;
    bool flush = false;
    for (char c : bytes) {
        log::debug("request: " + std::to_string(static_cast<int>(c)) + " (" +
                   (std::isalnum(static_cast<unsigned char>(c)) ? std::string(1, c) : "?") + ")");
        switch (c) {
        case 'W':
        case 'I':
            incoming_flags |= scan_flag::start;
            break;
        case 'D':
            // Asked for from outside (postqueue -f, sendmail -q): every
            // file is looked at, whatever the due index knows.
            deferred_flags |= scan_flag::start | scan_flag::full;
            break;
        case 'F':
            flush = true;
            incoming_flags |= scan_flag::flush;
            deferred_flags |= scan_flag::flush;
            break;
        case 'A':
            incoming_flags |= scan_flag::all;
            deferred_flags |= scan_flag::all;
            break;
        default:
            log::debug("request ignored");
            break; // e.g. the NUL trigger clients append
        }
    }
    if (flush) hooks_.flush_dead();
    if (incoming_flags) scans_[incoming].request(incoming_flags);
    if (deferred_flags) request_deferred(deferred_flags);
    wake();
}

void Feeder::request_deferred(int flags) {
    // Whatever else asks for the scan sees every file (see RecoveryRamp).
    ramp_.pass_requested(false);
    scans_[deferred].request(flags);
}

void Feeder::wake() {
    if (posted_) return;
    posted_ = true;
    asio::post(io_, [this] { feed(); });
}

void Feeder::feed() {
    posted_ = false;
    bool offered = false, taken = false;
    int last = first_;
    bool room = hooks_.active_count() < params_.qmgr_message_active_limit;
    if (room && !paused_) {
        for (int k = 0; k < 2 && !paused_; ++k) {
            last = (first_ + k) % 2;
            if (last == incoming && offer_leftover(taken))
                offered = true;
            else if (offer(scans_[last], taken))
                offered = true;
            if (taken) break;
        }
    }
    // The scans take turns; with the active queue full, new mail goes first.
    room = hooks_.active_count() < params_.qmgr_message_active_limit;
    first_ = room ? (last + 1) % 2 : incoming;
    counters_.in_flow_tokens += tokens_.feed_tokens(flow_token_change(
        params_.in_flow_delay, tokens_.tokens(), static_cast<int>(params_.default_process_limit),
        taken && last == incoming, scans_[incoming].running()));
    if (offered && !paused_) wake();
}

std::optional<std::string> Feeder::next_name(Scan& s) {
    bool from_deferred = &s == &scans_[deferred];
    if (from_deferred) pass_seen(s);
    unsigned ended = s.passes_ended();
    auto id = s.next();
    if (from_deferred && s.passes_ended() != ended) {
        ramp_.pass_done();
        backlog_.pass_done();
        if (params_.cqmgr_deferred_due_index) {
            due_.pass_ended(due_complete_);
            log::debug("deferred queue scan: " + std::to_string(s.dirs_listed()) +
                       " directories listed, " + std::to_string(s.dirs_unchanged()) +
                       " unchanged; due index: " + std::to_string(due_.size()) + " files");
        }
    }
    if (from_deferred) pass_seen(s);
    return id;
}

void Feeder::pass_seen(const Scan& s) {
    if (!params_.cqmgr_deferred_due_index || s.passes_begun() == due_pass_) return;
    // A pass began (the one before ended, or was abandoned after a pause
    // or for an A): what the one before noted joins the order.
    due_pass_ = s.passes_begun();
    due_complete_ = !s.partial();
    due_.unpark();
}

bool Feeder::uses_due_index(const Scan& s) const {
    return params_.cqmgr_deferred_due_index && &s == &scans_[deferred] && s.running() &&
           s.partial() && !(s.flags() & scan_flag::all);
}

std::optional<std::string> Feeder::next_deferred(Scan& s, Known& k, bool& more) {
    // The files that are due by the index first, one per turn.
    if (uses_due_index(s)) {
        if (auto d = due_.take_due(clock_.now())) {
            k = {d->time, d->born, false};
            return std::move(d->id);
        }
    }
    k = {};
    auto id = next_name(s);
    // Names in the directories that changed: those the index knows are its
    // business (taken when due), and are passed over a batch at a time;
    // what -v logs for a file not due is what a look would log.
    for (int n = 0; id && uses_due_index(s); ++n) {
        int64_t born = 0;
        auto t = due_.known(*id, &born);
        if (!t) break;
        s.born_last(born); // it stays, as far as the census knows
        if (log::verbose() && *t > clock_.now() + 1) {
            log::debug("qmgr_active_feed: queue " + s.queue());
            log::debug("qmgr_active_feed: " + store_.path(s.queue(), *id));
            log::debug("qmgr_active_feed: skip " + *id + " (" + std::to_string(*t - clock_.now()) +
                       " seconds)");
        }
        if (n + 1 == pass_over_batch) {
            more = true; // the other scan's turn, then on with this one
            return std::nullopt;
        }
        id = next_name(s);
    }
    return id;
}

bool Feeder::offer(Scan& s, bool& taken) {
    bool from_deferred = &s == &scans_[deferred];
    bool indexed = from_deferred && params_.cqmgr_deferred_due_index;
    // What the index knows of the file (nothing: times 0), and whether a
    // batch of names was passed over without one to offer.
    Known known;
    bool more = false;
    auto id = indexed ? next_deferred(s, known, more) : next_name(s);
    if (!id) return more;
    // A file that stays in deferred is noted (due_index.hpp); the scan's
    // census counts what stays, and not what leaves.
    auto stays = [&](int64_t time) {
        if (indexed) due_.note(*id, time, known.born);
        if (known.listed) s.born_last(known.born);
        return true;
    };
    auto leaves = [&] {
        if (!known.listed) {
            std::string dir = store_.path(s.queue(), *id);
            dir.resize(dir.rfind('/'));
            s.left(dir);
        } else {
            s.left_last();
        }
    };
    if (hooks_.in_memory(*id)) return stays(known.time);
    if (from_deferred && ramp_.hold_unseen(*id)) return stays(known.time);
    if (log::verbose()) log::debug("qmgr_active_feed: queue " + s.queue());
    auto ready = store_.check(s.queue(), *id);
    if (ready.born) known.born = ready.born;
    if (!ready.warning.empty()) log::warn(ready.warning);
    if (!ready.ready) {
        // Missing: nothing to note.  Otherwise looked at again next pass.
        if (ready.mode == 0 && ready.warning.empty()) {
            leaves();
            return true;
        }
        return stays(0);
    }
    if (log::verbose()) log::debug("qmgr_active_feed: " + store_.path(s.queue(), *id));
    // Files with a not-before time in the future cool down, unless A.
    if (!(s.flags() & scan_flag::all) && ready.mtime > clock_.now() + 1) {
        if (log::verbose())
            log::debug("qmgr_active_feed: skip " + *id + " (" +
                       std::to_string(ready.mtime - clock_.now()) + " seconds)");
        return stays(ready.mtime);
    }
    // A due file whose destinations are all still dead may wait in place
    // (with a new mtime, which the next pass looks at).
    if (from_deferred && backlog_.postpone(*id, s.flags(), ready.mode)) return stays(0);
    // The recovery ramp may leave a due deferred file for a later pass.
    if (from_deferred && !ramp_.admit(*id, s.flags(), ready.mode)) return stays(ready.mtime);
    Taken t = take(*id, s.queue(), s.flags(), ready.mode);
    taken = t == Taken::yes;
    if (taken) leaves();
    if (taken && from_deferred) ramp_.promoted(*id);
    // After a pause the file stays where it is; a later pass sees it again.
    if (t == Taken::pause) s.restart_later();
    // Not taken: still there or gone; the next pass looks.
    if (!taken) stays(0);
    return true;
}

Feeder::Taken Feeder::take(const std::string& id, const std::string& queue, int scan_flags,
                           mode_t mode) {
    Taken t = hooks_.take(id, queue, scan_flags, mode);
    if (t == Taken::yes) pause_seconds_ = 0;
    // An entry left from an earlier file of the same name must not hold
    // this message back once it is deferred (queue IDs come round again).
    if (t == Taken::yes && params_.cqmgr_deferred_due_index) due_.forget(id);
    if (t == Taken::pause) pause();
    return t;
}

bool Feeder::offer_leftover(bool& taken) {
    if (leftover_next_ >= leftovers_.size()) {
        if (!leftovers_.empty()) std::vector<std::string>().swap(leftovers_);
        leftover_next_ = 0;
        return false;
    }
    const std::string id = leftovers_[leftover_next_];
    if (hooks_.in_memory(id)) {
        ++leftover_next_;
        return true;
    }
    auto ready = store_.check("active", id);
    if (!ready.warning.empty()) log::warn(ready.warning);
    if (!ready.ready) {
        // Gone meanwhile (postsuper -d), or not a complete queue file: as
        // stock, the file goes back to incoming, whose scan waits for it.
        ++leftover_next_;
        if (ready.mode != 0)
            retry_.run("qmgr_move", [this, id] { return store_.recover(id, clock_.now()); });
        return true;
    }
    if (log::verbose()) log::debug("qmgr_active_feed: " + store_.path("active", id));
    Taken t = take(id, "active", scan_flag::start, ready.mode);
    taken = t == Taken::yes;
    // After a pause it is offered again (if it is still in active).
    if (t != Taken::pause) ++leftover_next_;
    return true;
}

void Feeder::pause() {
    paused_ = true;
    pause_seconds_ = pause_seconds_ == 0 ? 1 : std::min(pause_seconds_ * 2, max_pause);
    log::debug("feed paused for " + std::to_string(pause_seconds_) + "s");
    pause_timer_.expires_after(std::chrono::seconds(pause_seconds_));
    pause_timer_.async_wait([this](const error_code& ec) {
        if (ec) return;
        paused_ = false;
        wake();
    });
}

} // namespace cqmgr::qmgr
