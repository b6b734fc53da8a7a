#include "destination_state.hpp"

#include "log.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

namespace {
constexpr auto flush_interval = std::chrono::seconds(1);
constexpr int64_t min_horizon = 86400;
// Records of destinations without a queue are dropped from memory after
// this long without a change; the sweep runs this often.
constexpr int64_t idle_forget = 600;
constexpr int64_t forget_interval = 60;
// How often the end of a delivery alone marks its destination's record.
constexpr int64_t routine_interval = 60;
} // namespace

int64_t state_horizon(const conf::QmgrParams& params) {
    return std::max(params.maximal_backoff_time, min_horizon);
}

DestinationState::DestinationState(asio::io_context& io, const WallClock& clock)
    : clock_(clock), timer_(io) {}

DestinationState::DestinationState(asio::io_context& io, const WallClock& clock,
                                   std::shared_ptr<state::Store> store, int64_t horizon,
                                   std::string retry_transport)
    : clock_(clock), horizon_(horizon), retry_transport_(std::move(retry_transport)), timer_(io),
      store_(std::move(store)), self_(std::make_shared<DestinationState*>(this)) {}

DestinationState::~DestinationState() {
    finish();
}

std::vector<const core::Queue*> DestinationState::restore(core::Scheduler& sched,
                                                          const LearnedRestore& learned) {
    std::vector<const core::Queue*> dead;
    if (!store_) return dead;
    sched_ = &sched;
    const int64_t now = clock_.now();
    next_forget_ = now + forget_interval;
    size_t n_learned = 0;
    std::vector<state::DestinationRecord> loaded =
        store_->load(now - horizon_, [](const std::string& w) { log::warn(w); }).records;
    // The writer's thread asks the loop to hand everything over again
    // after the store replaced a damaged file.
    writer_ = std::make_unique<StateWriter>(
        store_, horizon_,
        [ex = timer_.get_executor(), self = std::weak_ptr<DestinationState*>(self_)] {
            asio::post(ex, [self] {
                if (auto alive = self.lock()) (*alive)->resync();
            });
        });
    for (state::DestinationRecord& r : loaded) {
        if (r.transport == retry_transport_) continue;
        if (r.dead_until > now) {
            core::Dsn dsn{r.dead_status, r.dead_reason};
            if (const core::Queue* q = sched.queue_restore_dead(r.transport, r.destination,
                                                                r.nexthop, dsn, r.dead_until)) {
                dead.push_back(q);
                log::debug("state: " + r.transport + " " + r.destination + " dead until " +
                           std::to_string(r.dead_until) + ": " + dsn.status + " " + dsn.reason);
            }
        } else {
            sched.queue_remember(r.transport, r.destination,
                                 core::QueueMemory{r.window, r.last_delivery});
        }
        if (r.learned_at > 0) {
            core::LearnedLimit limit{r.learned_concurrency, r.learned_rate_delay, r.learned_quota,
                                     r.learned_window};
            // Not taken up (adaptive limits off for the transport, or the
            // limit's time is over): the record's next write drops it.
            LearnedReply reply{r.learned_class, r.learned_status, r.learned_reason};
            if (!learned || !learned(core::AdminTarget{r.transport, r.destination}, limit,
                                     r.learned_at, reply)) {
                r.learned_concurrency = r.learned_rate_delay = 0;
                r.learned_quota = r.learned_window = 0;
                r.learned_at = 0;
                r.learned_class.clear();
                r.learned_status.clear();
                r.learned_reason.clear();
            } else {
                n_learned++;
            }
        }
        std::string key = state::record_key(r.transport, r.destination);
        records_.emplace(std::move(key), Kept{std::move(r), false});
    }
    log::debug("state: " + std::to_string(records_.size()) + " destinations restored, " +
               std::to_string(dead.size()) + " of them dead, " + std::to_string(n_learned) +
               " with a learned limit");
    return dead;
}

DestinationState::Records::value_type* DestinationState::node(const core::Queue& q) {
    if (!writer_) return nullptr;
    // The queue's slot keeps its record's place until the queue is freed:
    // records of destinations with a queue are never dropped
    // (forget_idle), and map nodes stay put.
    if (q.slot < by_slot_.size() && by_slot_[q.slot]) return by_slot_[q.slot];
    Records::value_type* kv = node(q.transport->name, q.name);
    if (kv) {
        kv->second.record.nexthop = q.nexthop;
        if (q.slot >= by_slot_.size()) by_slot_.resize(q.slot + 1);
        by_slot_[q.slot] = kv;
    }
    return kv;
}

DestinationState::Records::value_type* DestinationState::node(const std::string& transport,
                                                              const std::string& destination) {
    if (!writer_ || transport == retry_transport_) return nullptr;
    // The key is built in a buffer kept for it, and the record is copied
    // (emplaced) only when new.
    state::record_key(key_, transport, destination);
    auto it = records_.find(key_);
    if (it == records_.end()) {
        it = records_.try_emplace(key_).first;
        it->second.record.transport = transport;
        it->second.record.destination = destination;
    }
    return &*it;
}

state::DestinationRecord* DestinationState::touch(const core::Queue& q) {
    Records::value_type* kv = node(q);
    if (!kv) return nullptr;
    state::DestinationRecord& r = mark(*kv);
    if (r.nexthop != q.nexthop) r.nexthop = q.nexthop;
    return &r;
}

state::DestinationRecord* DestinationState::touch(const std::string& transport,
                                                  const std::string& destination) {
    Records::value_type* kv = node(transport, destination);
    return kv ? &mark(*kv) : nullptr;
}

state::DestinationRecord& DestinationState::mark(Records::value_type& kv) {
    Kept& k = kv.second;
    k.record.updated_at = clock_.now();
    if (!k.changed) {
        k.changed = true;
        changed_.push_back(&kv);
    }
    if (!armed_) {
        armed_ = true;
        timer_.expires_after(flush_interval);
        timer_.async_wait([this](const error_code& ec) {
            armed_ = false;
            if (!ec) flush();
        });
    }
    return k.record;
}

void DestinationState::queue_changed(const core::Queue& q) {
    Records::value_type* kv = node(q);
    if (!kv) return;
    state::DestinationRecord& r = kv->second.record;
    // Called after every delivery's feedback: only a change of what is
    // kept marks the record.
    int64_t dead_until = 0;
    const std::string* status = nullptr;
    const std::string* reason = nullptr;
    int window = r.window;
    if (q.dead() && q.dsn && q.timer_due > 0 && !q.dsn->status.empty()) {
        dead_until = q.timer_due;
        status = &q.dsn->status;
        reason = &q.dsn->reason;
        // A revived destination starts afresh, as stock's does.
        window = 0;
    } else if (!q.dead()) {
        window = q.window;
    }
    static const std::string none;
    const std::string& new_status = status ? *status : none;
    const std::string& new_reason = reason ? *reason : none;
    const bool death_changed = r.dead_until != dead_until || r.dead_reason != new_reason;
    if (!death_changed && r.dead_status == new_status && r.window == window &&
        r.nexthop == q.nexthop)
        return;
    mark(*kv);
    r.nexthop = q.nexthop;
    r.dead_until = dead_until;
    r.dead_status = new_status;
    r.dead_reason = new_reason;
    r.window = window;
    if (!death_changed) return;
    // A death, or a revival, goes to the writer now rather than with the
    // next batch, so that a queue manager killed right after it leaves it
    // behind (docs/design.md, "Destination state").  The loop does not
    // wait for the commit: a mass outage kills many destinations in a
    // row, and a few milliseconds of disk time each would add up to a
    // stall of delivery.
    flush();
}

void DestinationState::learned_changed(const core::AdminTarget& target,
                                       const core::LearnedLimit& limit, const LearnedReply& reply) {
    state::DestinationRecord* r = touch(target.transport, target.queue);
    if (!r) return;
    r->learned_concurrency = limit.concurrency;
    r->learned_rate_delay = limit.rate_delay;
    // A quota goes with its window; a hold is no learned limit.
    r->learned_quota = limit.quota > 0 && limit.window > 0 ? limit.quota : 0;
    r->learned_window = r->learned_quota > 0 ? limit.window : 0;
    bool any = limit.concurrency > 0 || limit.rate_delay > 0 || r->learned_quota > 0;
    r->learned_at = any ? clock_.now() : 0;
    // The record holds a reply only with a limit (its decoder refuses
    // anything else).
    bool keep = any;
    r->learned_class = keep ? reply.cls : "";
    r->learned_status = keep ? reply.status : "";
    r->learned_reason = keep ? reply.text : "";
}

void DestinationState::delivery_ended(const core::Queue& q, const core::Dsn& hop) {
    Records::value_type* kv = node(q);
    if (!kv) return;
    state::DestinationRecord& r = kv->second.record;
    const int64_t now = clock_.now();
    // The end of a delivery marks the record only now and then (once per
    // routine_interval), unless what it says matters at a restart: a new
    // kind of outcome, or the time of the last delivery where a destination
    // rate delay counts from it.  Otherwise the record is updated in memory
    // and written with its next change: a busy destination is not written
    // every second for its delivery times alone.
    const bool matters = q.transport->cfg.dest_rate_delay > 0 ||
                         (!hop.status.empty() && hop.status != r.last_dsn_status) ||
                         now - r.updated_at >= routine_interval;
    if (matters) mark(*kv);
    r.last_delivery = now;
    if (!hop.status.empty()) {
        if (r.last_dsn_status != hop.status) r.last_dsn_status = hop.status;
        if (r.last_dsn_text != hop.reason) r.last_dsn_text = hop.reason;
    }
}

void DestinationState::flush() {
    log_writer_warnings();
    if (writer_ && clock_.now() >= next_forget_) {
        next_forget_ = clock_.now() + forget_interval;
        forget_idle(idle_forget);
    }
    if (!writer_ || changed_.empty()) return;
    std::vector<state::DestinationRecord> batch;
    batch.reserve(changed_.size());
    for (Records::value_type* kv : changed_) {
        batch.push_back(kv->second.record);
        kv->second.changed = false;
    }
    changed_.clear();
    writer_->submit(std::move(batch), clock_.now());
}

void DestinationState::resync() {
    if (!writer_) return;
    for (auto& kv : records_)
        if (!kv.second.changed) {
            kv.second.changed = true;
            changed_.push_back(&kv);
        }
    flush();
}

bool DestinationState::has_queue(const state::DestinationRecord& r) const {
    if (!sched_) return false;
    auto t = sched_->transports().find(r.transport);
    return t != sched_->transports().end() && t->second->queue_by_name.contains(r.destination);
}

void DestinationState::forget_idle(int64_t idle) {
    const int64_t before = clock_.now() - idle;
    std::erase_if(records_, [&](const auto& kv) {
        const state::DestinationRecord& r = kv.second.record;
        return r.updated_at < before && !kv.second.changed && !has_queue(r);
    });
}

void DestinationState::finish() {
    if (!writer_) return;
    timer_.cancel();
    flush();
    writer_->finish();
    log_writer_warnings();
    writer_.reset();
}

void DestinationState::log_writer_warnings() {
    if (!writer_) return;
    for (const std::string& w : writer_->take_warnings())
        log::warn(w);
}

} // namespace cqmgr::qmgr
