// AgentCall behind an awaitable interface (see delivery_client.hpp).
#include "cqmgr/test/delivery_client.hpp"

#include <optional>

namespace cqmgr::protocol {

// What the call says is kept until the waiting coroutine looks; each time,
// the signal timer is cancelled to wake it.
class AgentSession::Bridge : public AgentCall {
  public:
    explicit Bridge(asio::any_io_executor ex)
        : AgentCall(ex), signal(ex, std::chrono::steady_clock::time_point::max()) {}

    asio::steady_timer signal;
    std::optional<bool> announced;
    std::optional<DeliveryOutcome> outcome;

  private:
    void on_announced(bool ok) override {
        announced = ok;
        signal.cancel();
    }
    void on_replied(DeliveryOutcome&& o) override {
        outcome = std::move(o);
        signal.cancel();
    }
};

AgentSession::AgentSession(asio::any_io_executor ex) : ex_(std::move(ex)) {}

AgentSession::AgentSession(AgentSession&&) noexcept = default;
AgentSession& AgentSession::operator=(AgentSession&&) noexcept = default;

AgentSession::~AgentSession() {
    close();
}

void AgentSession::close() {
    if (call_) call_->close();
    call_.reset();
}

const DeliveryOutcome& AgentSession::failure() const {
    return call_ ? call_->failure() : failure_;
}

const std::string& AgentSession::announcement_warning() const {
    return call_ ? call_->announcement_warning() : failure_.detail;
}

awaitable<void> AgentSession::wait() {
    call_->signal.expires_at(std::chrono::steady_clock::time_point::max());
    error_code ec;
    co_await call_->signal.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

awaitable<bool> AgentSession::open(std::string path, DeliveryTimeouts timeouts) {
    if (!start(std::move(path), timeouts)) co_return false;
    co_return co_await finish_open();
}

bool AgentSession::start(std::string path, DeliveryTimeouts timeouts) {
    close();
    path_ = path;
    call_ = new Bridge(ex_);
    return call_->start(std::move(path), timeouts);
}

awaitable<bool> AgentSession::finish_open() {
    if (!call_) co_return false;
    boost::intrusive_ptr<Bridge> call = call_;
    while (!call->announced && call->failure().warning.empty())
        co_await wait();
    co_return call->announced.value_or(false);
}

awaitable<DeliveryOutcome> AgentSession::deliver(DeliveryRequest request) {
    co_return co_await deliver_encoded(request.encode());
}

awaitable<DeliveryOutcome> AgentSession::deliver_encoded(std::string request) {
    if (!call_) {
        DeliveryOutcome o;
        o.kind = DeliveryOutcome::Kind::unavailable;
        o.reply.hop.status = "4.3.0";
        o.reply.hop.reason = "mail transport unavailable";
        o.reply.status = -1;
        std::string t =
            path_.substr(path_.rfind('/') == std::string::npos ? 0 : path_.rfind('/') + 1);
        o.warning = "write to process (" + t + "): session is not open";
        co_return o;
    }
    boost::intrusive_ptr<Bridge> call = call_;
    call->send(request);
    while (!call->outcome)
        co_await wait();
    DeliveryOutcome o = std::move(*call->outcome);
    call->outcome.reset();
    close();
    co_return o;
}

awaitable<DeliveryOutcome> deliver_once(std::string path, DeliveryRequest request,
                                        DeliveryTimeouts timeouts) {
    AgentSession s(co_await asio::this_coro::executor);
    if (!co_await s.open(std::move(path), timeouts)) co_return s.failure();
    co_return co_await s.deliver(std::move(request));
}

} // namespace cqmgr::protocol
