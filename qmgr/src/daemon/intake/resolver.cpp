#include "resolver.hpp"

#include "cqmgr/conf/main_cf.hpp"
#include "cqmgr/conf/master_cf.hpp"
#include "cqmgr/conf/qmgr_params.hpp"
#include "log.hpp"

namespace cqmgr::qmgr {

ResolverSettings resolver_settings(const conf::MainCf& cf, const conf::QmgrParams& params) {
    ResolverSettings s;
    s.transport_maps = cf.str("transport_maps");
    s.relocated_maps = cf.str("relocated_maps");
    s.sender_dependent_default_transport_maps = cf.str("sender_dependent_default_transport_maps");
    s.sender_dependent_relayhost_maps = cf.str("sender_dependent_relayhost_maps");
    conf::MasterCf master;
    if (master.load_dir(params.config_directory)) {
        if (const conf::MasterService* svc = master.find(params.rewrite_service_name)) {
            s.rewrite_service_found = svc->command == "trivial-rewrite";
            s.rewrite_service_overrides = !svc->overrides().empty();
        }
    }
    return s;
}

Resolver::Resolver(asio::any_io_executor ex, std::string service, std::chrono::seconds ipc_timeout,
                   Counters& counters, ResolveCacheConfig cache)
    : ex_(ex), service_(service),
      client_(ex, "private/" + service,
              protocol::RewriteTimeouts{ipc_timeout, std::chrono::seconds(5),
                                        std::chrono::seconds(1000)}),
      counters_(counters), cache_(cache) {}

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

awaitable<void> Resolver::pause_after(const protocol::RewriteError& error) {
    // Stock's client says "connect #N to subsystem private/rewrite: ..." and
    // waits 10 s between connection attempts; any other trouble is "problem
    // talking to service" and a 1 s pause.  (Stock gives up after 10 failed
    // connects and exits; we keep trying: the mail is waiting for us.)
    auto wait = std::chrono::seconds(1);
    if (error.kind == protocol::RewriteError::Kind::connect) {
        ++connect_failures_;
        log::warn("connect #" + std::to_string(connect_failures_) + " to subsystem private/" +
                  service_ + ": " + error.detail);
        wait = std::chrono::seconds(10);
    } else {
        connect_failures_ = 0;
        log::warn("problem talking to service " + service_ + ": " + error.message());
    }
    asio::steady_timer pause(ex_, wait);
    error_code ec;
    co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

std::optional<protocol::ResolveReply> Resolver::cached(std::string_view request_class,
                                                       std::string_view sender,
                                                       std::string_view address) {
    auto hit = cache_.find(request_class, sender, address, std::chrono::steady_clock::now(),
                           static_cast<uint64_t>(client_.connects()));
    if (hit) counters_.resolver_cache_hits++;
    return hit;
}

awaitable<protocol::ResolveReply> Resolver::resolve(std::string request_class, std::string sender,
                                                    std::string address) {
    if (auto hit = cached(request_class, sender, address)) co_return std::move(*hit);
    // A resolver outage delays mail; it never loses it: ask until answered.
    // One caller at a time, so an outage costs one wait, not one per caller.
    co_await take_turn();
    for (;;) {
        counters_.resolver_requests++;
        auto r = co_await client_.resolve(request_class, sender, address);
        if (r) {
            connect_failures_ = 0;
            answered_ = true;
            release_turn();
            cache_.store(request_class, sender, address, *r, std::chrono::steady_clock::now(),
                         static_cast<uint64_t>(client_.connects()));
            co_return std::move(*r);
        }
        co_await pause_after(r.error());
    }
}

awaitable<std::string> Resolver::rewrite(std::string rule, std::string address) {
    co_await take_turn();
    for (;;) {
        auto r = co_await client_.rewrite(rule, address);
        if (r) {
            connect_failures_ = 0;
            answered_ = true;
            release_turn();
            co_return std::move(*r);
        }
        co_await pause_after(r.error());
    }
}

void Resolver::probe() {
    asio::co_spawn(ex_, resolve("resolve", "", "postmaster"), asio::detached);
}

} // namespace cqmgr::qmgr
