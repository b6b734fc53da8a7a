#include "delivery.hpp"

#include "delivery_request.hpp"
#include "log.hpp"
#include "message.hpp"
#include "probes.hpp"

namespace cqmgr::qmgr {

Delivery::Delivery(asio::io_context& io, const conf::QmgrParams& params, const WallClock& clock,
                   core::Scheduler& sched, Counters& counters)
    : io_(io), params_(params), clock_(clock), sched_(sched), record_(sched), counters_(counters) {}

void Delivery::pump() {
    if (posted_) return;
    posted_ = true;
    asio::post(io_, [this] {
        posted_ = false;
        sched_.set_time(clock_.now());
        if (adaptive_) adaptive_->sweep(now_ms());
        if (isolation_) isolation_->sweep(now_ms());
        if (limits_) limits_->refresh();
        while (core::Transport* t = sched_.select_transport()) {
            if (log::verbose()) log::debug("qmgr_transport_select: " + t->name);
            // The connect is tried now: when it fails at once (no such
            // service, nobody listening), the transport is dead before the
            // loop picks it again, as in stock.
            protocol::AgentSession session(io_.get_executor());
            if (!session.start("private/" + t->name, timeouts())) {
                log::warn(session.failure().warning);
                sched_.connection_failed(*t, core::transport_unavailable());
                continue;
            }
            asio::co_spawn(io_, run_connection(t, std::move(session)), asio::detached);
        }
    });
}

awaitable<void> Delivery::run_connection(core::Transport* t, protocol::AgentSession session) {
    // Only what must live across a suspension is declared here: this
    // coroutine runs once per delivery, and a frame above about 1 kB takes
    // the allocator's slow path every time.
    bool ok = co_await session.finish_open();
    if (!session.announcement_warning().empty()) log::warn(session.announcement_warning());
    sched_.set_time(clock_.now());
    if (int delay = t->cfg.transport_rate_delay; delay > 0) {
        // Space deliveries over this transport; it stays locked meanwhile.
        // As in stock, the wait comes before the agent's answer is looked
        // at, so a failed connection also waits it out.
        co_await rate_pause(delay);
        sched_.set_time(clock_.now());
    }
    if (!ok) {
        log::warn(session.failure().warning);
        sched_.connection_failed(*t, core::transport_unavailable());
        pump();
        co_return;
    }
    sched_.connection_ready(*t);
    core::Entry* e = sched_.select_entry(*t);
    if (!e) {
        // The work went elsewhere meanwhile; the agent just sees EOF.  No
        // pump: a connection asked for now would find nothing either.
        trace_idle(*t);
        session.close();
        co_return;
    }
    if (limits_) limits_->started(*e->queue);
    pump();
    int busy_at_start = e->queue->busy_count();
    int64_t defer_mark = 0;
    if (adaptive_ && adaptive_->covers(*t)) {
        defer_mark = adaptive_->defer_log_mark(e->message->id);
        adaptive_->started(*e, busy_at_start, now_ms());
    }
    trace_request(*e);
    record_.started(*e, clock_);
    CQMGR_PROBE_DELIVERY_START(t->name.c_str(), e->queue->name.c_str(), e->message->id.c_str(),
                               e->rcpts.size());
    co_await deliver(e, session, busy_at_start, defer_mark);
    pump();
}

awaitable<void> Delivery::deliver(core::Entry* e, protocol::AgentSession& session,
                                  int busy_at_start, int64_t defer_mark) {
    // Its own coroutine so that the outcome (some 300 bytes) is not in
    // run_connection's frame as well as the session: together they made
    // that frame just over 1 kB, past glibc's per-thread cache, for every
    // delivery.
    auto started = std::chrono::steady_clock::now();
    protocol::DeliveryOutcome out = co_await session.deliver_encoded(encoded_request_for(*e));
    sched_.set_time(clock_.now());
    report(e, std::move(out), started, busy_at_start, defer_mark);
}

void Delivery::trace_idle(const core::Transport& t) const {
    if (log::verbose())
        log::debug("qmgr_deliver: transport " + t.name +
                   ": no entry for the agent, connection closed");
}

void Delivery::trace_request(const core::Entry& e) const {
    if (log::verbose())
        log::debug("qmgr_deliver: " + e.message->id + ": site `" + e.queue->name + "' (" +
                   std::to_string(e.rcpts.size()) + " recipients)");
}

protocol::DeliveryTimeouts Delivery::timeouts() const {
    return protocol::DeliveryTimeouts::from_settings(std::chrono::seconds(params_.qmgr_ipc_timeout),
                                                     std::chrono::seconds(params_.daemon_timeout));
}

awaitable<void> Delivery::rate_pause(int seconds) {
    asio::steady_timer pause(io_, std::chrono::seconds(seconds));
    error_code ec;
    co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

int64_t Delivery::now_ms() const {
    return clock_.now_ms();
}

void Delivery::report(core::Entry* e, protocol::DeliveryOutcome&& out,
                      std::chrono::steady_clock::time_point started, int busy_at_start,
                      int64_t defer_mark) {
    using Kind = protocol::DeliveryOutcome::Kind;
    observe(*e, out, started);
    // Stock's attribute scanner speaks first (what was wrong with the
    // bytes), then qmgr (what it makes of that).  A reply can carry the
    // first alone: stock accepts an attribute after the status.
    if (!out.detail.empty()) log::warn(out.detail);
    if (out.kind != Kind::replied) log::warn(out.warning);
    using R = core::DeliveryResult::Kind;
    // The reply's strings move on: nothing below reads them from `out`.
    core::DeliveryResult result{out.kind == Kind::replied       ? R::replied
                                : out.kind == Kind::unavailable ? R::unavailable
                                                                : R::crashed,
                                out.reply.status,
                                {std::move(out.reply.hop.status), std::move(out.reply.hop.reason)}};
    // A reference, not a copy of the hop status for each listener.
    static const core::Dsn no_hop;
    const core::Dsn& hop = out.kind == Kind::replied ? result.hop : no_hop;
    record_.finished(*e, hop, clock_);
    if (ended_ && out.kind != Kind::unavailable) ended_(*e->queue, hop);
    if (adaptive_ && adaptive_->covers(*e->queue->transport))
        adaptive_->delivered(*e, busy_at_start, result, now_ms(), defer_mark);
    if (isolation_)
        isolation_->delivered(*e, result,
                              std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::steady_clock::now() - started)
                                  .count(),
                              now_ms());
    if (!limits_) {
        sched_.delivery_done(e, result);
        return;
    }
    std::string transport = e->queue->transport->name, queue = e->queue->name;
    sched_.delivery_done(e, result); // may free the queue
    limits_->finished(transport, queue);
}

void Delivery::observe(const core::Entry& e, const protocol::DeliveryOutcome& out,
                       std::chrono::steady_clock::time_point started) {
    using Kind = protocol::DeliveryOutcome::Kind;
    using Result = Counters::Result;
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                  std::chrono::steady_clock::now() - started)
                  .count();
    Result result = out.kind == Kind::unavailable ? Result::unavailable
                    : out.kind == Kind::crashed   ? Result::crashed
                    : out.reply.status == 0       ? Result::done
                                                  : Result::deferred;
    // Only a reply carries a hop status.
    const char* dsn = out.kind == Kind::replied ? out.reply.hop.status.c_str() : "";
    const auto& env = static_cast<const Message&>(*e.message).env;
    protocol::TimeVal now = clock_.precise();
    double queue_delay = static_cast<double>(now.sec - env.arrival_sec) +
                         static_cast<double>(now.usec - env.arrival_usec) / 1e6;
    counters_.count_delivery(e.queue->transport->name, result, dsn, static_cast<double>(us) / 1e6,
                             queue_delay);
    int status = out.kind == Kind::unavailable ? -2
                 : out.kind == Kind::crashed   ? -1
                                               : out.reply.status;
    CQMGR_PROBE_DELIVERY_END(e.queue->transport->name.c_str(), e.queue->name.c_str(),
                             e.message->id.c_str(), us, status, dsn);
}

std::string Delivery::encoded_request_for(const core::Entry& e) const {
    return encode_delivery_request(static_cast<const Message&>(*e.message), e,
                                   params_.smtputf8_enable);
}

} // namespace cqmgr::qmgr
