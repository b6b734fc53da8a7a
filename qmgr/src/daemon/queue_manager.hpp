// The queue manager proper: the coordinator of the daemon's parts and the
// scheduler core's driver.  It owns the messages in the active queue and
// moves each through its phases (message.hpp): the feeder offers ready
// files, the intake claims, reads and assigns them, the scheduler and the
// delivery part deliver their entries, and the message's end is worked out
// once nothing is in flight.  The features hear of deliveries, queues and
// messages through its list of observers (delivery_observer.hpp); none is
// wired to another.
#pragma once

#include "clock.hpp"
#include "control_queries.hpp"
#include "core_requests.hpp"
#include "counters.hpp"
#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "cqmgr/core/scheduler.hpp"
#include "cqmgr/queuefile/active_queue.hpp"
#include "dead_backlog.hpp"
#include "delivery.hpp"
#include "delivery_metrics.hpp"
#include "delivery_observer.hpp"
#include "destination_state.hpp"
#include "fast_flush.hpp"
#include "features.hpp"
#include "feedback_debug.hpp"
#include "feeder.hpp"
#include "intake.hpp"
#include "log.hpp"
#include "master_link.hpp"
#include "message.hpp"
#include "message_end.hpp"
#include "queue_metrics.hpp"
#include "recovery_ramp.hpp"
#include "resolver.hpp"
#include "scheduler_config.hpp"
#include "self_defer.hpp"
#include "service_slots.hpp"
#include "store_retry.hpp"
#include "transport_settings.hpp"
#include "warning_limiter.hpp"

#include <memory>
#include <string>
#include <unordered_set>

namespace cqmgr::qmgr {

class ControlCommands;

class QueueManager : public core::Driver {
  public:
    // `state_store`: the state store (open_state_store()), for the
    // destination state, or nullptr.
    // `reply_rules`: the table of cqmgr_adaptive_reply_rules, read before
    // the jail (or none).
    QueueManager(asio::io_context& io, const conf::MainCf& cf, const conf::QmgrParams& params,
                 const WallClock& clock, const FlushDomains& flush_domains, MasterLink& master,
                 std::shared_ptr<state::Store> state_store = nullptr,
                 std::optional<RegexTable> reply_rules = std::nullopt,
                 ClusterLimits::Tables limit_tables = {});

    // Restores the kept control settings (use_control()) and destination
    // state, recovers active/ and starts the scans.
    void start();
    // Before a clean exit: commits the destination state's last changes.
    void save_state() { dest_state_.finish(); }
    // The process is about to exit: what must not wait for the loop.
    void exiting() { features_.exiting(); }
    // Handles the bytes of one trigger request.
    void on_trigger(std::string_view bytes) { feeder_.on_trigger(bytes); }
    // The priority lanes' tables (priority_class.hpp), before start().
    void use_priorities(PriorityTables tables) { intake_.use_priorities(std::move(tables)); }
    // The sender limits' tables (sender_groups.hpp), before start().
    void use_senders(SenderGroups tables) { intake_.use_senders(std::move(tables)); }
    // The control socket's commands (ControlSurface), or nullptr: they
    // restore their kept settings in start() and hear when the scheduler
    // ends one.
    void use_control(ControlCommands* commands) {
        control_ = commands;
        features_.use_control(commands);
    }
    // The reply rules that act (cqmgr_reply_actions), before start()
    // (Features::use_reply_actions()); the sender scopes' group, when not
    // given, is the message's sender group as the intake named it, and a
    // group's number by name the intake's.
    void use_reply_actions(RegexTable rules, ReplyActions::Scopes scopes = {}) {
        if (!scopes.sender_group)
            scopes.sender_group = [this](const core::Entry& e) {
                return intake_.sender_group_name(e.message->sender_group);
            };
        if (!scopes.sender_number)
            scopes.sender_number = [this](const std::string& name) {
                return intake_.sender_group_number(name);
            };
        features_.use_reply_actions(std::move(rules), std::move(scopes), observers_);
    }
    // The features beyond stock.
    Features& features() { return features_; }
    const Features& features() const { return features_; }
    // The scheduler's state, for the control socket's queries and the
    // metrics (read only, on the loop thread).
    const core::Scheduler& scheduler() const { return sched_; }
    // The scheduler, for the control socket's commands.
    core::Scheduler& scheduler() { return sched_; }
    // The connections qmgr opens for itself (the control flushes' too).
    ServiceSlots& service_slots() { return service_slots_; }
    // What the control socket's queries read (references into this object).
    ControlSources control_sources() const;

    // For the metrics and the health endpoints (on the loop thread): the
    // feed (its scans' census; whether the start-up scans are done), the
    // earliest arrival in the active queue, and whether trivial-rewrite
    // has answered; probe_rewrite() asks it once without waiting for mail.
    const Feeder& feeder() const { return feeder_; }
    std::optional<protocol::TimeVal> oldest_active() const { return arrivals_.oldest(); }
    bool rewrite_answered() const { return resolver_.answered(); }
    // The sizes and oldest ages of incoming, active (with the files a
    // predecessor left there, still to be taken) and deferred, for the
    // metrics and the summary.
    std::array<std::optional<MetricsSnapshot::Queue>, 3> queue_gauges() const {
        return qmgr::queue_gauges(feeder_.incoming_census(),
                                  messages_.size() + feeder_.leftovers_waiting(),
                                  arrivals_.oldest(), feeder_.deferred_census(), clock_.precise());
    }
    void probe_rewrite() { resolver_.probe(); }

    // What the daemon has done since it started.
    const Counters& counters() const { return counters_; }
    // The state store's side (for the metrics).
    const DestinationState& destination_state() const { return dest_state_; }
    // Messages in the active queue (in memory).
    int messages_in_active() const { return static_cast<int>(messages_.size()); }

  private:
    // Whether the feeder is paused or scanning (the control socket's
    // queries).
    FeedState feed_state() const { return {feeder_.paused(), feeder_.scanning(), queue_gauges()}; }
    // The feeder's offer of a ready file.
    Feeder::Taken take(const std::string& id, const std::string& queue, int scan_flags,
                       mode_t mode);
    // Assigns the batch just read, then lets the message wait for its entries.
    awaitable<void> assign_batch(Message& m);
    // Starts assigning the batch just read into `b`: true when it is with
    // the scheduler already, false when assign_rest(m, b) must finish it.
    bool start_batch(Message& m, Intake::Batch& b);
    // Finishes a batch that start_batch() could not.
    awaitable<void> assign_rest(Message& m, Intake::Batch b);
    // A batch is with the scheduler: the message waits for its entries.
    void batch_assigned(Message& m);
    // Starts the end of `m` when nothing of it is in flight.
    void maybe_finish(Message& m);
    // Runs the end of `m` and acts on its outcome.
    awaitable<void> finish(Message& m);
    // Forgets a message whose file has left active.
    void forget(Message& m);
    // postqueue -f's F: every dead transport and queue comes back.
    void flush_dead();
    void arm_scheduler_timer();
    void scheduler_timer_fired(const error_code& ec);
    // The observers, in order (delivery_observer.hpp).
    void add_observers();

    // core::Driver
    void refill(core::Message& m, int limit) override;
    void message_done(core::Message& m) override { maybe_finish(static_cast<Message&>(m)); }
    void defer_recipients(core::Message& m, const std::vector<queuefile::Recipient>& rcpts,
                          const core::Dsn& dsn) override {
        self_defer_.defer(static_cast<Message&>(m), rcpts, dsn);
    }
    void wakeup() override {
        delivery_.pump();
        arm_scheduler_timer();
    }
    void warn(const std::string& text) override { log::warn(text); }
    int active_messages() const override { return intake_.admitted(); }
    void queue_feedback(const core::Queue& q, bool positive, double step) override {
        if (params_.destination_concurrency_feedback_debug || log::verbose())
            log_queue_feedback(q, positive, step);
    }
    void queue_window(const core::Queue& q, bool positive) override;
    void trace(const std::string& line) override { log::debug(line); }
    void admin_expired(core::AdminKind kind, const core::AdminTarget& target) override;
    void sender_rule_expired(const core::AdminTarget& target, core::SenderGroup g) override {
        features_.sender_rule_expired(target, g);
    }
    std::optional<int> queue_gate(const core::Queue& q) override {
        return observers_.queue_born(q);
    }
    uint32_t queue_provider(const core::Queue& q) override { return features_.provider_number(q); }
    void queue_freed(const core::Queue& q) override { observers_.queue_freed(q); }

    asio::io_context& io_;
    const conf::QmgrParams& params_;
    const WallClock& clock_;
    // Before the parts that count into it.
    Counters counters_;
    queuefile::ActiveQueue store_;
    WarningLimiter limiter_;
    StoreRetry retry_;
    Resolver resolver_;
    TransportSettings transport_settings_;
    core::Scheduler sched_;
    // What the features ask of the scheduler, out of its callbacks.
    CoreRequests requests_;
    // The features' observers, in the order they hear (add_observers()).
    DeliveryObservers observers_;
    DeliveryMetrics metrics_;
    DestinationState dest_state_;
    // The features beyond stock; before the delivery part, which hears
    // of deliveries after them.
    Features features_;
    Delivery delivery_;
    // The connections to Postfix's services that qmgr opens for itself.
    ServiceSlots service_slots_;
    SelfDefer self_defer_;
    RecoveryRamp ramp_;
    DeadBacklog backlog_;
    Intake intake_;
    MessageEnd end_;
    Feeder feeder_;
    ControlCommands* control_ = nullptr;
    asio::steady_timer sched_timer_;
    int64_t sched_timer_due_ = 0;
    MessageTable messages_;
    ArrivalIndex arrivals_; // of messages_
    // Dead destinations, to tell a revival from a success in queue_window()
    // (compared, never dereferenced).
    std::unordered_set<const core::Queue*> dead_queues_;
};

} // namespace cqmgr::qmgr
