#include "resolver.hpp"

#include "log.hpp"

namespace cqmgr::qmgr {

namespace {
// Answers are reused for this long, as Postfix's resolve cache does.
constexpr auto cache_ttl = std::chrono::seconds(30);
constexpr size_t cache_max = 10000;
} // namespace

Resolver::Resolver(asio::any_io_executor ex, std::string service, std::chrono::seconds ipc_timeout)
    : ex_(ex), service_(service),
      client_(ex, "private/" + service,
              protocol::RewriteTimeouts{ipc_timeout, std::chrono::seconds(5), std::chrono::seconds(1000)}) {}

awaitable<void> Resolver::pause_after(const std::string& error) {
    log::warn("problem talking to service " + service_ + ": " + error);
    asio::steady_timer pause(ex_, std::chrono::seconds(1));
    error_code ec;
    co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

awaitable<protocol::ResolveReply> Resolver::resolve(std::string request_class, std::string sender,
                                                    std::string address) {
    std::string key = request_class + '\0' + sender + '\0' + address;
    if (!address.empty()) {
        if (auto it = cache_.find(key); it != cache_.end() && Clock::now() - it->second.when < cache_ttl)
            co_return it->second.reply;
    }
    // A resolver outage delays mail; it never loses it: ask until answered.
    for (;;) {
        auto r = co_await client_.resolve(request_class, sender, address);
        if (r.ok) {
            if (!address.empty()) {
                if (cache_.size() >= cache_max) cache_.clear();
                cache_[key] = Cached{r.reply, Clock::now()};
            }
            co_return r.reply;
        }
        co_await pause_after(r.error);
    }
}

awaitable<std::string> Resolver::rewrite(std::string rule, std::string address) {
    for (;;) {
        auto r = co_await client_.rewrite(rule, address);
        if (r.ok) co_return r.address;
        co_await pause_after(r.error);
    }
}

} // namespace cqmgr::qmgr
