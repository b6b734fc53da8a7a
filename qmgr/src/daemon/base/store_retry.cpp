#include "store_retry.hpp"

#include "log.hpp"

#include <algorithm>

namespace cqmgr::qmgr {

namespace {
constexpr int first_delay = 1; // seconds
constexpr int max_delay = 60;
} // namespace

struct StoreRetry::Attempt {
    std::string kind;
    Op op;
    Done done;
    asio::steady_timer timer;
    int delay = first_delay;
};

StoreRetry::StoreRetry(asio::io_context& io, const WallClock& clock, WarningLimiter& limiter)
    : io_(io), clock_(clock), limiter_(limiter) {}

void StoreRetry::warn_if_failed(const queuefile::StoreResult& r) {
    if (r) log::warn(r->text);
}

void StoreRetry::retry(std::string_view kind, const queuefile::StoreError& e, Op op, Done done) {
    report(kind, e);
    auto a = std::make_shared<Attempt>(Attempt{std::string(kind), std::move(op), std::move(done),
                                               asio::steady_timer(io_), first_delay});
    ++pending_;
    schedule(std::move(a));
}

void StoreRetry::schedule(std::shared_ptr<Attempt> a) {
    a->timer.expires_after(std::chrono::seconds(a->delay));
    a->timer.async_wait([this, a](const error_code& ec) {
        if (ec) return;
        queuefile::StoreResult r = a->op();
        if (r && !r->gone()) {
            report(a->kind, *r);
            a->delay = std::min(a->delay * 2, max_delay);
            schedule(a);
            return;
        }
        --pending_;
        a->done(r);
    });
}

awaitable<void> StoreRetry::backoff(int failures) {
    int delay = first_delay;
    for (int i = 1; i < failures && delay < max_delay; ++i)
        delay = std::min(delay * 2, max_delay);
    asio::steady_timer t(io_, std::chrono::seconds(delay));
    co_await t.async_wait(asio::use_awaitable);
}

void StoreRetry::report(std::string_view kind, const queuefile::StoreError& e) {
    if (auto text = limiter_.filter(std::string(kind) + "/" + std::to_string(e.sys_errno), e.text,
                                    clock_.now()))
        log::warn(*text);
}

} // namespace cqmgr::qmgr
