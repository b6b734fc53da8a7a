#include "delivery.hpp"

#include "cqmgr/core/pooled.hpp"
#include "delivery_request.hpp"
#include "log.hpp"
#include "message.hpp"

namespace cqmgr::qmgr {

Delivery::Delivery(asio::io_context& io, const conf::QmgrParams& params, const WallClock& clock,
                   core::Scheduler& sched, DeliveryObservers& observers)
    : io_(io), params_(params), clock_(clock), sched_(sched), record_(sched),
      observers_(observers) {}

// Pooled: one is made and freed for every delivery.
class Delivery::Call : public protocol::AgentCall, public core::Pooled<Delivery::Call> {
  public:
    Call(Delivery& d, core::Transport* t) : AgentCall(d.io_.get_executor()), transport(t), d_(d) {}

    core::Transport* transport;
    // Once the agent has it: the delivery as the observers see it.
    DeliveryEvent ev;
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
        observers_.before_selection(clock_);
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
    pump();
    c.ev.clock = &clock_;
    c.ev.entry = e;
    c.ev.busy_at_start = e->queue->busy_count();
    observers_.delivery_started(c.ev);
    trace_request(*e);
    record_.started(c.flight, *e, clock_);
    c.ev.started = std::chrono::steady_clock::now();
    c.send(encoded_request_for(*e, c.ev));
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

void Delivery::report(Call& c, protocol::DeliveryOutcome&& out) {
    DeliveryEvent& ev = c.ev;
    ev.elapsed_us = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now() - ev.started)
                        .count();
    // Stock's attribute scanner speaks first (what was wrong with the
    // bytes), then qmgr (what it makes of that).  A reply can carry the
    // first alone: stock accepts an attribute after the status.
    if (!out.detail.empty()) log::warn(out.detail);
    if (out.kind != protocol::DeliveryOutcome::Kind::replied) log::warn(out.warning);
    ev.result = delivery_result(std::move(out));
    record_.finished(c.flight, ev.hop(), clock_);
    observers_.delivery_ended(ev);
    sched_.delivery_done(ev.entry, ev.result); // may free the queue
    ev.entry = nullptr;
    observers_.delivery_reported(ev);
}

core::DeliveryResult delivery_result(protocol::DeliveryOutcome&& out) {
    using Kind = protocol::DeliveryOutcome::Kind;
    using R = core::DeliveryResult::Kind;
    return {out.kind == Kind::replied       ? R::replied
            : out.kind == Kind::unavailable ? R::unavailable
                                            : R::crashed,
            out.reply.status,
            {std::move(out.reply.hop.status), std::move(out.reply.hop.reason)}};
}

std::string_view Delivery::encoded_request_for(const core::Entry& e, const DeliveryEvent& ev) {
    // A request for many recipients should not keep its room for good.
    if (request_buf_.capacity() > 64 * 1024) request_buf_ = std::string();
    request_buf_.clear();
    encode_delivery_request(request_buf_, static_cast<const Message&>(*e.message), e,
                            params_.smtputf8_enable, &request_heads_, ev.no_session_store);
    return request_buf_;
}

} // namespace cqmgr::qmgr
