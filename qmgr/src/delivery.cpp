#include "delivery.hpp"

#include "cqmgr/core/pooled.hpp"
#include "delivery_request.hpp"
#include "log.hpp"
#include "message.hpp"
#include "probes.hpp"

namespace cqmgr::qmgr {

Delivery::Delivery(asio::io_context& io, const conf::QmgrParams& params, const WallClock& clock,
                   core::Scheduler& sched, Counters& counters)
    : io_(io), params_(params), clock_(clock), sched_(sched), record_(sched), counters_(counters) {}

// Pooled: one is made and freed for every delivery.
class Delivery::Call : public protocol::AgentCall, public core::Pooled<Delivery::Call> {
  public:
    Call(Delivery& d, core::Transport* t) : AgentCall(d.io_.get_executor()), transport(t), d_(d) {}

    core::Transport* transport;
    // Once the agent has it: the entry, its queue's deliveries in flight
    // then (itself included), its message's defer log mark for the
    // adaptive limits, and when the request went out.
    core::Entry* entry = nullptr;
    int busy_at_start = 0;
    int64_t defer_mark = 0;
    int64_t started_ms = -1; // when the request went, on the adaptive limits' clock
    std::chrono::steady_clock::time_point started{};
    // The call in the record of deliveries in flight.
    DeliveryRecord::InFlight flight;
    // The transport rate delay's wait, when there is one.
    std::unique_ptr<asio::steady_timer> pause;

  private:
    void on_announced(bool ok) override { d_.announced(*this, ok); }
    void on_replied(protocol::DeliveryOutcome&& out) override { d_.replied(*this, std::move(out)); }

    Delivery& d_;
};

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
            // loop picks it again, as in stock.  Otherwise the call holds
            // itself until it is done.
            boost::intrusive_ptr<Call> call(new Call(*this, t));
            if (!call->start("private/" + t->name, timeouts())) {
                log::warn(call->failure().warning);
                sched_.connection_failed(*t, core::transport_unavailable());
            }
        }
    });
}

void Delivery::announced(Call& c, bool ok) {
    if (!c.announcement_warning().empty()) log::warn(c.announcement_warning());
    sched_.set_time(clock_.now());
    if (int delay = c.transport->cfg.transport_rate_delay; delay > 0) {
        // Space deliveries over this transport; it stays locked meanwhile.
        // As in stock, the wait comes before the agent's answer is looked
        // at, so a failed connection also waits it out.
        c.pause = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(delay));
        c.pause->async_wait([this, call = boost::intrusive_ptr<Call>(&c), ok](const error_code&) {
            sched_.set_time(clock_.now());
            go(*call, ok);
        });
        return;
    }
    go(c, ok);
}

void Delivery::go(Call& c, bool ok) {
    core::Transport* t = c.transport;
    if (!ok) {
        log::warn(c.failure().warning);
        sched_.connection_failed(*t, core::transport_unavailable());
        pump();
        return;
    }
    sched_.connection_ready(*t);
    core::Entry* e = sched_.select_entry(*t);
    if (!e) {
        // The work went elsewhere meanwhile; the agent just sees EOF.  No
        // pump: a connection asked for now would find nothing either.
        trace_idle(*t);
        c.close();
        return;
    }
    if (limits_) limits_->started(*e->queue);
    pump();
    c.entry = e;
    c.busy_at_start = e->queue->busy_count();
    if (adaptive_ && adaptive_->covers(*t)) {
        c.defer_mark = adaptive_->defer_log_mark(e->message->id);
        c.started_ms = now_ms();
        adaptive_->started(*e, c.busy_at_start, c.started_ms);
    }
    trace_request(*e);
    record_.started(c.flight, *e, clock_);
    CQMGR_PROBE_DELIVERY_START(t->name.c_str(), e->queue->name.c_str(), e->message->id.c_str(),
                               e->rcpts.size());
    c.started = std::chrono::steady_clock::now();
    c.send(encoded_request_for(*e));
}

void Delivery::replied(Call& c, protocol::DeliveryOutcome&& out) {
    sched_.set_time(clock_.now());
    report(c, std::move(out));
    pump();
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

int64_t Delivery::now_ms() const {
    return clock_.now_ms();
}

void Delivery::report(Call& c, protocol::DeliveryOutcome&& out) {
    core::Entry* e = c.entry;
    const auto started = c.started;
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
    record_.finished(c.flight, hop, clock_);
    if (ended_ && out.kind != Kind::unavailable) ended_(*e->queue, hop);
    if (adaptive_ && adaptive_->covers(*e->queue->transport))
        result.unseen = !adaptive_->delivered(*e, c.busy_at_start, result, now_ms(), c.defer_mark,
                                              c.started_ms);
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

std::string_view Delivery::encoded_request_for(const core::Entry& e) {
    // A request for many recipients should not keep its room for good.
    if (request_buf_.capacity() > 64 * 1024) request_buf_ = std::string();
    request_buf_.clear();
    encode_delivery_request(request_buf_, static_cast<const Message&>(*e.message), e,
                            params_.smtputf8_enable, &request_heads_);
    return request_buf_;
}

} // namespace cqmgr::qmgr
