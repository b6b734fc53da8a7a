#include "queue_manager.hpp"

#include "control_commands.hpp"
#include "learned_state.hpp"
#include "log.hpp"
#include "probes.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

QueueManager::QueueManager(asio::io_context& io, const conf::MainCf& cf,
                           const conf::QmgrParams& params, const WallClock& clock,
                           const FlushDomains& flush_domains, MasterLink& master,
                           std::shared_ptr<state::Store> state_store,
                           std::optional<RegexTable> reply_rules,
                           ClusterLimits::Tables limit_tables)
    : io_(io), params_(params), clock_(clock),
      store_(queuefile::QueueLayout(params.hash_queue_names,
                                    static_cast<int>(params.hash_queue_depth)),
             params.dont_remove != 0),
      retry_(io, clock, limiter_),
      resolver_(io.get_executor(), params.rewrite_service_name,
                std::chrono::seconds(params.qmgr_ipc_timeout), counters_,
                params.cqmgr_resolve_cache_limit > 0
                    ? resolve_cache_config(static_cast<size_t>(params.cqmgr_resolve_cache_limit),
                                           resolver_settings(cf, params))
                    : ResolveCacheConfig{}),
      transport_settings_(cf, params),
      sched_(
          scheduler_config(params, log::verbose() > 0),
          [this](const std::string& t) { return transport_settings_(t); }, *this),
      requests_(io, sched_), metrics_(counters_, clock),
      dest_state_(io, clock, state_store, state_horizon(params),
                  core::SchedulerConfig{}.retry_transport),
      features_(io, params, clock, sched_, requests_, store_, std::move(reply_rules),
                std::move(limit_tables)),
      delivery_(io, params, clock, sched_, observers_),
      service_slots_(io.get_executor(), service_slot_limit),
      self_defer_(io, params, clock, flush_domains, service_slots_,
                  [this](Message& m) { maybe_finish(m); }),
      ramp_(io, params, clock, [this] { feeder_.scan_deferred(); }),
      backlog_(params, clock, store_, sched_, ramp_.index()),
      intake_(params, clock, store_, retry_, resolver_, sched_,
              [this](Message& m, const std::vector<queuefile::Recipient>& rcpts,
                     const core::Dsn& dsn) { self_defer_.defer(m, rcpts, dsn); }),
      end_(params, clock, store_, retry_, intake_, sched_, counters_, ramp_, service_slots_),
      feeder_(io, params, clock, store_, retry_, master,
              {.active_count = [this] { return static_cast<int>(messages_.size()); },
               .in_memory = [this](const std::string& id) { return messages_.contains(id); },
               .take = [this](const std::string& id, const std::string& queue, int flags,
                              mode_t mode) { return take(id, queue, flags, mode); },
               .flush_dead = [this] { flush_dead(); }},
              counters_, ramp_, backlog_),
      sched_timer_(io) {
    sched_.set_time(clock_.now());
    add_observers();
}

void QueueManager::add_observers() {
    // Counted and probed first; the destination state before the
    // features whose changes it keeps; the delivery part last, as the
    // cluster limits hear the end of a delivery only once the scheduler
    // has it.
    observers_.add(&metrics_);
    if (dest_state_.enabled()) observers_.add(&dest_state_);
    features_.add_observers(observers_);
    observers_.add(&delivery_);
    features_.keep_state(dest_state_);
}

void QueueManager::start() {
    features_.start();
    if (control_) control_->restore();
    features_.restore_actions();
    sched_.set_time(clock_.now());
    for (const core::Queue* q :
         dest_state_.restore(sched_, restore_learned(features_.adaptive(), clock_))) {
        dead_queues_.insert(q);
        // Dead since an earlier run: probed when it comes back, as if it
        // had died in this one.
        features_.restored_dead(*q, clock_.now_ms());
    }
    arm_scheduler_timer();
    feeder_.start();
}

ControlSources QueueManager::control_sources() const {
    ControlSources s{
        .sched = sched_,
        .messages = messages_,
        .arrivals = arrivals_,
        .deliveries = delivery_.record(),
        .counters = counters_,
        .clock = clock_,
        .feed = [this] { return feed_state(); },
        .message_active_limit = params_.qmgr_message_active_limit,
        .message_recipient_limit = params_.qmgr_message_recipient_limit,
        .deferred = ramp_.on() || params_.cqmgr_dead_backlog ? &ramp_.index() : nullptr,
    };
    features_.describe(s, &intake_.senders());
    return s;
}

Feeder::Taken QueueManager::take(const std::string& id, const std::string& queue, int scan_flags,
                                 mode_t mode) {
    Intake::Claimed c = intake_.claim(id, queue, scan_flags, mode);
    if (c.corrupt) end_.quarantine(id);
    if (!c.message) return c.pause ? Feeder::Taken::pause : Feeder::Taken::no;
    Message& m = messages_.add(std::move(c.message));
    arrivals_.add(m);
    counters_.messages_activated++;
    CQMGR_PROBE_MESSAGE_ACTIVATE(m.id.c_str(), queue.c_str());
    if (c.keep_defer_log) {
        // Force-expired with reasons on file: its end, without deliveries.
        m.phase = Message::Phase::waiting;
        maybe_finish(m);
    } else {
        // Assigned at once when every answer is at hand, as stock does
        // (take() is not called from inside the scheduler).
        Intake::Batch b;
        if (!start_batch(m, b)) asio::co_spawn(io_, assign_rest(m, std::move(b)), asio::detached);
    }
    return Feeder::Taken::yes;
}

awaitable<void> QueueManager::assign_batch(Message& m) {
    Intake::Batch b;
    if (!start_batch(m, b)) co_await assign_rest(m, std::move(b));
}

bool QueueManager::start_batch(Message& m, Intake::Batch& b) {
    m.phase = Message::Phase::reading;
    if (!intake_.assign_now(m, b)) return false;
    batch_assigned(m);
    return true;
}

awaitable<void> QueueManager::assign_rest(Message& m, Intake::Batch b) {
    co_await intake_.assign_rest(m, std::move(b));
    batch_assigned(m);
}

void QueueManager::batch_assigned(Message& m) {
    m.phase = Message::Phase::waiting;
    sched_.batch_done(m, m.env.rcpt_offset != 0, m.env.rcpt_unread);
    delivery_.pump();
    maybe_finish(m);
}

void QueueManager::refill(core::Message& cm, int limit) {
    auto& m = static_cast<Message&>(cm);
    CQMGR_PROBE_REFILL(m.id.c_str(), limit);
    if (m.phase != Message::Phase::waiting || m.env.rcpt_offset == 0) {
        sched_.batch_done(m, m.env.rcpt_offset != 0, m.env.rcpt_unread);
        return;
    }
    m.phase = Message::Phase::reading;
    if (intake_.read_batch(m, limit) == Intake::BatchRead::ok) {
        asio::co_spawn(io_, assign_batch(m), asio::detached);
        return;
    }
    // Unreadable now: the rest waits for the message's end, which tries
    // again (and, for a file that is damaged or gone, quarantines it, as
    // stock does).
    m.phase = Message::Phase::waiting;
    sched_.batch_done(m, false, 0);
    maybe_finish(m);
}

void QueueManager::maybe_finish(Message& m) {
    if (!m.may_finish()) return;
    m.phase = Message::Phase::finishing;
    if (log::verbose()) log::debug("qmgr_active_done: " + m.id);
    // Forgetting the message waits for the next turn either way: we may be
    // inside a scheduler callback that still uses it.
    if (end_.finish_now(m))
        asio::post(io_, [this, mp = &m] { forget(*mp); });
    else
        asio::co_spawn(io_, finish(m), asio::detached);
}

awaitable<void> QueueManager::finish(Message& m) {
    // Awaited in a statement of its own, not in a condition (GCC 12).
    MessageEnd::Outcome outcome = co_await end_.finish(m);
    if (outcome == MessageEnd::Outcome::more)
        co_await assign_batch(m);
    else
        forget(m);
}

void QueueManager::forget(Message& m) {
    intake_.forget(m);
    ramp_.left_active(m.id);
    sched_.message_free(m);
    arrivals_.remove(m);
    observers_.message_ended(m);
    messages_.remove(m); // destroys m
    feeder_.wake();
}

void QueueManager::queue_window(const core::Queue& q, bool positive) {
    QueueTurn turn = QueueTurn::none;
    if (!positive && q.dead() && q.dsn && dead_queues_.insert(&q).second)
        turn = QueueTurn::died;
    else if (positive && !dead_queues_.empty() && dead_queues_.erase(&q))
        turn = QueueTurn::revived;
    observers_.queue_window(q, positive, turn);
    if (params_.destination_concurrency_feedback_debug || log::verbose())
        log_queue_window(q, positive);
}

void QueueManager::admin_expired(core::AdminKind kind, const core::AdminTarget& target) {
    if (kind == core::AdminKind::rule) {
        features_.rule_expired(target);
    } else if (control_) {
        control_->expired(kind, target);
    }
}

void QueueManager::arm_scheduler_timer() {
    auto due = sched_.next_timer();
    if (!due || (sched_timer_due_ != 0 && sched_timer_due_ <= *due)) return;
    sched_timer_due_ = *due;
    // Just after the due second begins, not up to a second after it: a hold
    // that ends with a receiver's window lets mail go when the window does.
    // Not at its very start: time(2), which the core's clock and receivers
    // such as anvil read, turns a few milliseconds after gettimeofday(2)
    // (and a remote receiver's clock may be a little behind ours), so the
    // core would not see the second yet, nor the receiver its window's end.
    constexpr int64_t slack_ms = 250;
    sched_timer_.expires_after(
        std::chrono::milliseconds(std::max<int64_t>(*due * 1000 + slack_ms - clock_.now_ms(), 0)));
    sched_timer_.async_wait([this](const error_code& ec) { scheduler_timer_fired(ec); });
}

void QueueManager::scheduler_timer_fired(const error_code& ec) {
    if (ec) return;
    sched_timer_due_ = 0;
    sched_.set_time(clock_.now());
    delivery_.pump();
    arm_scheduler_timer();
}

void QueueManager::flush_dead() {
    sched_.set_time(clock_.now());
    sched_.flush_dead();
}

} // namespace cqmgr::qmgr
