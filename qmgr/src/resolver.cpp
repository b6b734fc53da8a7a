#include "resolver.hpp"

#include "log.hpp"

namespace cqmgr::qmgr {

namespace {
// The last answer is reused for this long, as Postfix's resolve client does.
constexpr auto cache_ttl = std::chrono::seconds(30);
} // namespace

Resolver::Resolver(asio::any_io_executor ex, std::string service, std::chrono::seconds ipc_timeout,
                   Counters& counters)
    : ex_(ex), service_(service),
      client_(ex, "private/" + service,
              protocol::RewriteTimeouts{ipc_timeout, std::chrono::seconds(5),
                                        std::chrono::seconds(1000)}),
      counters_(counters) {}

awaitable<void> Resolver::take_turn() {
    while (busy_) {
        asio::steady_timer turn(ex_, std::chrono::steady_clock::time_point::max());
        waiters_.push_back(&turn);
        error_code ec;
        co_await turn.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    busy_ = true;
}

void Resolver::release_turn() {
    busy_ = false;
    if (!waiters_.empty()) {
        waiters_.front()->cancel();
        waiters_.pop_front();
    }
}

awaitable<void> Resolver::pause_after(const std::string& error) {
    // Stock's client says "connect #N to subsystem private/rewrite: ..." and
    // waits 10 s between connection attempts; any other trouble is "problem
    // talking to service" and a 1 s pause.  (Stock gives up after 10 failed
    // connects and exits; we keep trying: the mail is waiting for us.)
    std::string prefix = "connect to private/" + service_ + ": ";
    auto wait = std::chrono::seconds(1);
    if (error.rfind(prefix, 0) == 0) {
        ++connect_failures_;
        log::warn("connect #" + std::to_string(connect_failures_) + " to subsystem private/" +
                  service_ + ": " + error.substr(prefix.size()));
        wait = std::chrono::seconds(10);
    } else {
        connect_failures_ = 0;
        log::warn("problem talking to service " + service_ + ": " + error);
    }
    asio::steady_timer pause(ex_, wait);
    error_code ec;
    co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

awaitable<protocol::ResolveReply> Resolver::resolve(std::string request_class, std::string sender,
                                                    std::string address) {
    if (!address.empty() && last_ && last_->address == address &&
        last_->request_class == request_class && last_->sender == sender &&
        std::chrono::steady_clock::now() - last_->when < cache_ttl) {
        counters_.resolver_cache_hits++;
        co_return last_->reply;
    }
    // A resolver outage delays mail; it never loses it: ask until answered.
    // One caller at a time, so an outage costs one wait, not one per caller.
    co_await take_turn();
    for (;;) {
        counters_.resolver_requests++;
        auto r = co_await client_.resolve(request_class, sender, address);
        if (r.ok) {
            connect_failures_ = 0;
            release_turn();
            last_ = Last{std::move(request_class), std::move(sender), std::move(address), r.reply,
                         std::chrono::steady_clock::now()};
            co_return r.reply;
        }
        co_await pause_after(r.error);
    }
}

awaitable<std::string> Resolver::rewrite(std::string rule, std::string address) {
    co_await take_turn();
    for (;;) {
        auto r = co_await client_.rewrite(rule, address);
        if (r.ok) {
            connect_failures_ = 0;
            release_turn();
            co_return r.address;
        }
        co_await pause_after(r.error);
    }
}

} // namespace cqmgr::qmgr
